// Laying the canvas out in the background: Graphviz's dot up to kLayeredNodes drawn nodes (a
// quick ranked layout shown first above kQuickLayoutNodes), the layered layout above (dot takes
// 25 s at 5,000 nodes and runs out of memory at 50,000; views/LayeredLayout.h); cancelling, and
// the groups (collapsed name scopes) the layout draws. Owns the progress bar and the Cancel
// button the window puts in its status bar.
#pragma once

#include "ir/Graph.h"
#include "views/GraphvizLayout.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <set>
#include <string>

class QGraphicsItem;
class QProgressBar;
class QPushButton;
class QWidget;

namespace placer::views {

class GraphScene;
class ScopeTree;
class GraphView;
class PlacementDocument;

class LayoutController : public QObject {
    Q_OBJECT

public:
    /// Lays `scene` out whenever `document` gets a new model; `parent` owns the widgets.
    LayoutController(PlacementDocument* document, GraphScene* scene, GraphView* view,
                     QWidget* parent);
    ~LayoutController() override;

    QProgressBar* progressBar() const { return m_progress; }
    QPushButton* cancelButton() const { return m_cancel; }
    GraphScene* scene() const { return m_scene; }

    /// Starts a background layout of the current graph (a quick one is shown at once for graphs
    /// of more than kQuickLayoutNodes drawn nodes).
    void start();
    /// Lays out on this thread (for --screenshot and tests).
    void layoutNow();
    /// Drops the running layout and shows a simple ranked layout.
    void cancel();
    bool isRunning() const { return m_watcher.isRunning(); }
    /// Draws these name scopes as collapsed groups, and no scope as an open frame, and lays the
    /// graph out again.
    void setCollapsedScopes(std::set<std::string> scopes);
    /// Collapses every outermost name scope into a group.
    void collapseAll();
    /// Collapses one scope (and closes what was open inside it).
    void collapse(const std::string& scope);
    /// Opens a collapsed scope as Model Explorer opens a layer: a frame around its contents, the
    /// scopes directly inside it collapsed. Only that frame and the levels around it are laid
    /// out again; its siblings' layouts are kept (views/CompoundLayout.h).
    void expand(const std::string& scope);
    /// Opens every collapsed group that holds `node`, lays out again and shows the node
    /// selected (find, conflicts and "why is this here?" reach nodes inside closed groups).
    void reveal(NodeId node);

    /// Graphs with more drawn nodes than this open with name scopes collapsed
    /// (startingScopes), as Model Explorer opens large models.
    static constexpr std::size_t kCollapseAbove = 3000;
    /// The scopes a graph of more than kCollapseAbove drawn nodes starts with collapsed: those
    /// at the shallowest depth that gives at least kLeastGroups units (groups and the nodes
    /// outside them), so that a model under one outer scope ("/model/") opens one level in.
    /// Empty for a graph without name scopes, or a smaller one, or one whose scopes give fewer
    /// units at every depth.
    /// A scope of more than ScopeTree::kMaxChildren children counts as its synthetic parts (an
    /// unscoped graph of 50,000 nodes opens as 50 parts).
    static std::set<std::string> startingScopes(const Graph& graph);
    static std::set<std::string> startingScopes(const Graph& graph, const ScopeTree& tree);
    static constexpr std::size_t kLeastGroups = 24;

    /// Graphs with more drawn nodes than this get a quick layout first (while dot runs).
    static constexpr std::size_t kQuickLayoutNodes = 800;
    /// Graphs with more drawn nodes than this are laid out by the layered layout, not dot.
    static constexpr std::size_t kLayeredNodes = 2000;
    /// The layout the canvas gets for `request`: dot's (through its cache) or the layered one.
    static LayoutResult layoutFor(const LayoutRequest& request);

signals:
    /// A layout finished (or was cancelled) and the canvas shows the graph.
    void finished();
    /// A sentence for the status bar, shown for `timeoutMs` (0: until replaced).
    void message(const QString& text, int timeoutMs);

private:
    void done();
    void setScopes(std::set<std::string> collapsed, std::set<std::string> opened);
    /// The scopes one level inside `scope` holding two drawn nodes or more.
    std::set<std::string> innerScopes(const std::string& scope) const;
    /// Moves `scope` from collapsed to opened, collapsing the scopes inside it but `keepOpen`.
    void open(const std::string& scope, std::set<std::string>* collapsed,
              std::set<std::string>* opened, const std::string& keepOpen) const;
    /// After a layout: the item the view centres on at the same zoom (the group just opened
    /// or closed), or null.
    QGraphicsItem* focusItem();
    /// After a layout: selects and shows the node reveal() asked for.
    void showRevealed();

    PlacementDocument* m_document;
    GraphScene* m_scene;
    GraphView* m_view;
    QProgressBar* m_progress;
    QPushButton* m_cancel;
    QFutureWatcher<LayoutResult> m_watcher;
    QString m_path;       ///< the graph the current layout (and its groups) belongs to
    int m_generation = 0; ///< bumped by every new layout and by cancel
    NodeId m_reveal;      ///< shown when the next layout is done (reveal)
    std::vector<NodeId> m_keepSelected; ///< selected when the running layout started
    std::string m_focusScope;           ///< the group just opened or closed: the view stays on it
    int m_runningGeneration = -1;       ///< the generation the background layout belongs to
};

} // namespace placer::views
