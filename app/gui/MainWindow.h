// The main window: the graph canvas in the centre, devices and rules on the left, conflicts,
// properties (with the reason for each placement) and the undo history on the right.
#pragma once

#include "views/ConflictsPanel.h"
#include "views/GraphvizLayout.h"
#include "views/PlacementDocument.h"
#include "views/PropertiesPanel.h"

#include <QFutureWatcher>
#include <QMainWindow>
#include <QStringList>

#include <functional>
#include <memory>
#include <set>
#include <string>

#include <vector>

class QComboBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QTextBrowser;
class QSpinBox;
class QUndoStack;

namespace placer::views {
class DevicePalette;
class GraphScene;
class GraphView;
class HintBar;
class RulesPanel;
class TimelineWidget;
} // namespace placer::views

namespace placer {
struct RunReportInput;
}

namespace placer::gui {

class PlanBrowser;
class RunController;
class RunPanel;
class WorkspaceController;
struct RunOutcome;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    views::PlacementDocument* document() const { return m_document; }
    views::GraphScene* scene() const { return m_scene; }
    views::GraphView* view() const { return m_view; }
    views::DevicePalette* devicePalette() const { return m_palette; }
    QUndoStack* undoStack() const { return m_undo; }
    views::ConflictsPanel* conflictList() const { return m_conflicts; }
    views::PropertiesPanel* properties() const { return m_properties; }
    views::RulesPanel* rulesPanel() const { return m_rulesPanel; }
    QLabel* statusSummary() const { return m_summary; }
    RunController* runController() const { return m_run; }
    views::TimelineWidget* timeline() const { return m_timeline; }
    QTextBrowser* runSummary() const;
    views::HintBar* hint() const { return m_hint; }

    /// Runs the plan in the background with the iterations and warm-up set in the Run panel.
    void startRun();
    /// Writes the last run as a Chrome trace (JSON) or as CSV timings; false on failure.
    bool exportTrace(const QString& path);
    bool exportTimingsCsv(const QString& path);
    /// Per node, the median time of the last run in ms (-1 where none); empty without a run of
    /// the current graph.
    std::vector<double> lastNodeMillis() const;
    /// Writes one of File ▸ Export's kinds (gui/Exports.h) to `path`; false, with the reason
    /// shown in an error dialog, when it cannot.
    bool exportAs(const QString& kind, const QString& path);
    /// Opens (or creates) a workspace file for saved plans; false with a message shown if not.
    bool openWorkspace(const QString& path);
    /// The workspace: saved plans, their runs, and the plan the window shows.
    WorkspaceController* workspace() const { return m_workspace; }
    PlanBrowser* planBrowser() const { return m_browser; }
    /// The saved plan the window shows ("" when none).
    const QString& planName() const;
    /// Saves the current plan under `name` (the current plan's name when empty, asked for when
    /// there is none); one undo-clean point. False (with a message) on failure.
    bool savePlan(const QString& name = QString());
    /// Draws these name scopes as collapsed groups and lays the graph out again.
    void setCollapsedScopes(std::set<std::string> scopes);
    /// Opens the device editor; its result is one undoable edit.
    void editDevices();

    /// Opens a model file; a bad file shows an error dialog and leaves the current graph open.
    /// Large files are read in the background (true means started; layoutFinished follows).
    bool openFile(const QString& path);
    /// Files larger than this many bytes are read in the background (default 4 MiB).
    void setBackgroundLoadThreshold(qint64 bytes) { m_backgroundLoadBytes = bytes; }
    /// Opens the bundled example.
    bool openExample();
    /// Lays the current graph out on this thread (for --screenshot), not in the background.
    void layoutNow();
    bool isLayingOut() const;
    /// Pins `nodes` to `device` as one undoable step.
    void pinNodes(const QString& device, const std::vector<NodeId>& nodes);
    /// Selects the next node (or previous) matching the find text; false when none does.
    bool findNext(const QString& text, bool backwards = false);

signals:
    /// A layout finished and the canvas shows the graph.
    void layoutFinished();

protected:
    void closeEvent(QCloseEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private slots:
    void startLayout();
    void layoutDone();
    void loadDone();
    void cancelLayout();
    void refreshStatus();
    void clearSelectedPins();
    void onSelectionChanged();
    void chooseFile();
    void runFinished(const std::shared_ptr<const RunOutcome>& outcome);
    void showNodeMenu(const QPoint& position);

private:
    void createActions();
    void opened(const QString& path);
    void createDocks();
    void addRecentFile(const QString& path);
    void updateRecentMenu();
    void showError(const QString& title, const QString& message);

    views::PlacementDocument* m_document;
    views::GraphScene* m_scene;
    views::GraphView* m_view;
    views::DevicePalette* m_palette = nullptr;
    QUndoStack* m_undo;
    views::ConflictsPanel* m_conflicts = nullptr;
    views::RulesPanel* m_rulesPanel = nullptr;
    views::PropertiesPanel* m_properties = nullptr;
    QComboBox* m_mode = nullptr;
    QLineEdit* m_find = nullptr;
    QLabel* m_summary = nullptr;
    views::HintBar* m_hint = nullptr;
    QProgressBar* m_progress = nullptr;
    QPushButton* m_cancel = nullptr;
    QMenu* m_recentMenu = nullptr;
    RunController* m_run = nullptr;
    RunPanel* m_runPanel = nullptr;
    views::TimelineWidget* m_timeline = nullptr;
    QFutureWatcher<views::LayoutResult> m_layoutWatcher;
    QFutureWatcher<std::shared_ptr<Result<LoadedModel>>> m_loadWatcher;
    QString m_loadingPath;
    QString m_layoutPath; ///< the graph the current layout (and its groups) belongs to
    PlanBrowser* m_browser = nullptr;
    WorkspaceController* m_workspace = nullptr;
    qint64 m_backgroundLoadBytes = 4 << 20;
    int m_layoutGeneration = 0; ///< bumped by every new layout and by cancel
    int m_runningLayout = -1;   ///< the generation the background layout belongs to
    int m_findCursor = -1;
};

} // namespace placer::gui
