// The canvas contents: node, edge and copy-badge items built from the document and a layout.
// Items are created only when a layout arrives (rebuild) and restyled when the plan changes
// (refreshPlan) — a re-plan never needs a re-layout.
#pragma once

#include "views/GraphvizLayout.h"
#include "views/PlacementDocument.h"
#include "views/ScopeTree.h"

#include <QGraphicsScene>
#include <QImage>
#include <QTransform>

#include <map>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace placer::views {

class NodeItem;
class EdgeItem;
class CopyBadgeItem;
class FrameItem;

class GraphScene : public QGraphicsScene {
    Q_OBJECT

public:
    explicit GraphScene(PlacementDocument* document, QObject* parent = nullptr);
    ~GraphScene() override;

    /// What to lay out for the document's graph: the drawn nodes (constants are not drawn;
    /// they show in the properties of the nodes that read them) and the edges between them.
    LayoutRequest layoutRequest();
    /// Builds the items at the layout's positions. A failed layout (error set) falls back to a
    /// simple ranked layout so the user still has a usable view.
    void applyLayout(const LayoutResult& layout);
    /// Builds items with the simple ranked layout (no Graphviz).
    void applySimpleLayout();

    NodeItem* nodeItem(NodeId node) const;
    /// Whether `node` is drawn inside a collapsed group (it has no item of its own).
    bool inCollapsedGroup(NodeId node) const {
        return node.index < m_layoutIndex.size() && m_layoutIndex[node.index] >= 0 &&
               !m_groupScope[static_cast<std::size_t>(m_layoutIndex[node.index])].empty();
    }
    /// The groups of the document's graph: name scopes and synthetic parts (views/ScopeTree.h),
    /// made again when the graph changes.
    const ScopeTree& scopes() const;
    /// Scopes drawn as one collapsed group each (applies at the next layoutRequest()).
    void setCollapsed(std::set<std::string> scopes);
    const std::set<std::string>& collapsed() const { return m_collapsed; }
    /// Scopes opened from their box: drawn as frames around their contents (views/FrameItem.h),
    /// each laid out on its own (views/CompoundLayout.h). Applies at the next layoutRequest().
    void setOpened(std::set<std::string> scopes);
    const std::set<std::string>& opened() const { return m_opened; }
    /// The frames drawn, one per open scope that holds drawn nodes.
    const std::vector<FrameItem*>& frames() const { return m_frameItems; }
    /// The drawn nodes inside frame `frame` (FrameItem::index), those in closed groups in it
    /// included.
    std::vector<NodeId> frameMembers(int frame) const;
    /// The nodes inside group unit `unit` (empty for a node).
    std::vector<NodeId> groupMembers(int unit) const;
    std::vector<NodeId> selectedNodes() const;
    /// Selects these nodes: their items, or the groups they are drawn in.
    void selectNodes(const std::vector<NodeId>& nodes);
    const std::vector<CopyBadgeItem*>& badges() const { return m_badges; }
    const std::vector<EdgeItem*>& edges() const { return m_edges; }
    /// The split regions drawn (plan/Split.h): per region, a frame around its nodes titled with
    /// its devices and rows; the badges where its Split and Concat sit are among badges(), with
    /// no copy index.
    const std::vector<QGraphicsItem*>& splitFrames() const { return m_splitFrames; }
    bool hasItems() const { return !m_nodeItems.empty(); }
    /// Shows a run's per-node times (ms, by node) as labels and a heat tint; empty clears.
    void setNodeTimes(const std::vector<double>& millisPerNode);
    void setCopyTimes(const std::vector<double>& millisPerCopy);
    /// Per node: the node whose fused kernel computed it in the last run, or an invalid id
    /// (passes/PassManager.h). Empty clears the marks.
    void setFusion(const std::vector<NodeId>& fusedInto);

    /// Paints the overview of the drawn graph into `image` through `toImage` (scene -> image
    /// pixels): each node or group a box in its device's colour (a group's largest share), the
    /// edges as lines under them where there are few enough to tell apart. Cheap at any size:
    /// boxes are written as pixels, not painted as items.
    void paintOverview(QImage* image, const QTransform& toImage) const;

signals:
    /// What paintOverview draws changed: a new layout, or a plan that restyled the nodes.
    void overviewChanged();

public slots:
    /// Restyles nodes (device colour, pins, conflicts) and re-creates the copy badges.
    void refreshPlan();
    /// Highlights the edges into and out of the selected nodes.
    void highlightSelection();

private:
    void clearItems();
    void makeLayers();
    void drawSplits();
    /// The badges of the plan's casts (Plan::casts), remade with the copies' at every restyle.
    void drawCasts();
    void buildItems(const std::vector<QPointF>& centers, const std::vector<QPainterPath>& paths,
                    const std::vector<QRectF>& frames = {});

    PlacementDocument* m_document;
    std::vector<NodeId> m_drawn;    ///< layout index -> node
    std::vector<int> m_layoutIndex; ///< node -> layout index, or -1 when not drawn
    std::vector<std::pair<ValueRef, NodeId>> m_edgeValues; ///< per drawn edge: value, consumer
    std::vector<int> m_laidOutEdge;     ///< per drawn edge: its index in the layout request, or -1
    std::vector<NodeItem*> m_nodeItems; ///< per node, null when not drawn (or collapsed)
    std::vector<QGraphicsItem*> m_unitItems; ///< per layout unit: a node or a group
    std::vector<QRectF> m_unitBoxes;         ///< per unit: its box in the scene (the overview's)
    std::vector<QRgb> m_unitColours;         ///< per unit: its colour in the overview
    std::vector<std::size_t> m_groupUnits;   ///< the units that are groups
    std::vector<std::uint64_t> m_nodeLooks;  ///< per node: its look when last restyled (0: none)
    std::vector<QColor> m_lastColours;       ///< the devices' colours at the last restyle
    bool m_timesShown = false;               ///< a run's times are on the nodes
    bool m_fusionShown = false;              ///< a run's fusion marks are on the nodes
    /// The overlays shown, put on the new items of every layout (opening a group keeps them).
    std::vector<double> m_nodeMillis, m_copyMillis;
    std::vector<NodeId> m_fusedInto;
    std::vector<std::string> m_groupScope; ///< per unit: its scope when a group, else empty
    std::vector<std::vector<NodeId>> m_groupMembers; ///< per unit: a group's nodes
    std::set<std::string> m_collapsed;
    mutable ScopeTree m_scopes;
    std::set<std::string> m_opened;
    std::vector<std::string> m_frameScope;           ///< per frame of the layout request: its scope
    std::vector<std::vector<NodeId>> m_frameMembers; ///< per frame: the drawn nodes inside
    std::vector<FrameItem*> m_frameItems;
    std::vector<EdgeItem*> m_edges;
    /// Per value drawn (valueKey): its edges, indices into m_edges.
    std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> m_edgesOfValue;
    static std::uint64_t valueKey(ValueRef value) {
        return (std::uint64_t{value.node.index} << 32) | value.output;
    }
    std::vector<CopyBadgeItem*> m_badges;
    /// The copies' badges (not the splits') by what they show: text, colours, reader, place.
    using BadgeKey = std::tuple<QString, QRgb, QRgb, std::uint32_t, qreal, qreal>;
    std::map<BadgeKey, CopyBadgeItem*> m_copyBadges;
    std::vector<QGraphicsItem*> m_splitFrames;
    std::vector<QGraphicsItem*> m_splitTabs; ///< per region: its title tab, above the nodes
    QGraphicsItem* m_badgeLayer = nullptr;   ///< the parent of the copy badges
    QGraphicsItem* m_frameLayer = nullptr;   ///< the parent of the split frames
    QGraphicsItem* m_tabLayer = nullptr;     ///< the parent of the split frames' tabs
};

} // namespace placer::views
