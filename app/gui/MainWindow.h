// The main window: the graph canvas in the centre, devices and rules on the left, conflicts,
// properties (with the reason for each placement) and the undo history on the right.
#pragma once

#include "gui/HostsRun.h"
#include "session/Session.h"

#include "views/ConflictsPanel.h"
#include "views/PlacementDocument.h"
#include "views/PropertiesPanel.h"

#include <QMainWindow>

#include <memory>
#include <vector>

class QLabel;
class QLineEdit;
class QProgressDialog;
class QUndoStack;

namespace placer::views {
class DevicePalette;
class GraphScene;
class GraphView;
class HintBar;
class LayoutController;
class NodeFinder;
class RulesPanel;
class TimelineWidget;
} // namespace placer::views

namespace placer {
struct RunOutcome;
class Session;
} // namespace placer

namespace placer::gui {

class ModelOpener;
class PlanBrowser;
class RunController;
class RunPanel;
class WorkspaceController;

class MainWindow : public QMainWindow {
    Q_OBJECT

public:
    explicit MainWindow(QWidget* parent = nullptr);
    ~MainWindow() override;

    // The parts the window composes.
    views::PlacementDocument* document() const { return m_document; }
    views::GraphScene* scene() const { return m_scene; }
    views::GraphView* view() const { return m_view; }
    views::LayoutController* layout() const { return m_layout; }
    views::DevicePalette* devicePalette() const { return m_palette; }
    QUndoStack* undoStack() const { return m_undo; }
    views::ConflictsPanel* conflictList() const { return m_conflicts; }
    views::PropertiesPanel* properties() const { return m_properties; }
    views::RulesPanel* rulesPanel() const { return m_rulesPanel; }
    QLabel* statusSummary() const { return m_summary; }
    RunController* runController() const { return m_run; }
    RunPanel* runPanel() const { return m_runPanel; }
    views::TimelineWidget* timeline() const { return m_timeline; }
    views::HintBar* hint() const { return m_hint; }
    ModelOpener* opener() const { return m_opener; }
    /// The workspace: saved plans, their runs, and the plan the window shows.
    WorkspaceController* workspace() const { return m_workspace; }
    PlanBrowser* planBrowser() const { return m_browser; }

    /// Opens a model file; a bad file shows an error dialog and leaves the current graph open.
    /// Large files are read in the background (true means started; layoutFinished follows).
    /// Help ▸ About: the name, the version (the project's, as placer --version says it) and Qt's.
    void showAbout();
    bool openFile(const QString& path);
    /// Puts a profile made elsewhere (ONNX Runtime's) on the open graph: its times on the nodes,
    /// its fused groups, its lanes on the timeline beside the run's; a profile that does not fit
    /// shows an error dialog and leaves the overlay as it was (io/ProfileImport.h).
    bool importProfile(const QString& path);
    /// Plans for the machine `machine` describes (plan/MachineFile.h, --machine): its rates and
    /// links cost every plan and prediction, and the status bar says so; null goes back to
    /// this machine's calibration.
    void setMachine(std::shared_ptr<const MachineFile> machine);
    /// Devices ▸ Plan for a Machine…: the open graph planned for the machine file at `path`,
    /// its devices in the palette (one undo step, as the device editor's) and its rates the
    /// costs; a bad file shows an error dialog with its line and changes nothing.
    bool openMachine(const QString& path);
    /// Per node, the median time of the last run in ms (-1 where none); empty without a run of
    /// the current graph.
    std::vector<double> lastNodeMillis() const;
    /// Writes one of File ▸ Export's kinds (gui/Exports.h) to `path`; false, with the reason
    /// shown in an error dialog, when it cannot.
    bool exportAs(const QString& kind, const QString& path);
    /// Saves the current plan under `name` (the current plan's name when empty, asked for when
    /// there is none); one undo-clean point. False (with a message) on failure.
    bool savePlan(const QString& name = QString());
    /// The `placer run` command line that plans what the window shows (its devices, pins,
    /// rules, splits and options) and runs it as the Run panel would (the physical devices
    /// chosen for the devices, iterations, warm-up, the inputs given as .npy files), quoted for
    /// a POSIX shell. Edit ▸ Copy Plan as Command Line
    /// puts it on the clipboard.
    QString planCommandLine() const;
    /// Run ▸ Run on Hosts…: asks where each device runs (HostsDialog), then runs the plan under
    /// mpirun; false when the dialog was cancelled or the plan cannot run.
    bool runOnHosts();
    /// Runs the plan under mpirun as `request` says (its runWords filled in here), with a
    /// progress dialog whose Cancel ends every rank; the report and the timeline follow.
    void startHostsRun(HostsRunRequest request);
    HostsRunner* hostsRunner() const { return m_hosts; }
    /// Opens the device editor; its result is one undoable edit.
    void editDevices();
    /// Devices ▸ Calibrate: measures this machine's devices (Session::calibrate) in the
    /// background with a progress dialog, keeps the result in the workspace, and re-plans with
    /// it. False when it failed (an error dialog says why) or was not possible.
    bool calibrate();
    /// What calibrate() measures with (tests ask for small sizes).
    void setCalibrationOptions(const CalibrationOptions& options) { m_calibration = options; }
    /// Pins `nodes` to `device` as one undoable step.
    /// Pins the selected nodes to the palette's device `index` (0-based; Alt+1 is 0), one undo
    /// step; says why not in the status bar when there is no such device or no selection.
    void pinSelectionToDevice(int index);
    void pinNodes(const QString& device, const std::vector<NodeId>& nodes);
    /// Edit ▸ Split Across Devices (or, `tensor`, Shard Across Devices): asks for the devices
    /// and shares (SplitDialog) and splits the selection's ops across them, on the batch or
    /// inside the ops, as one undoable step; false when nothing was split.
    bool splitSelection(bool tensor = false);
    /// Removes the split regions that hold any selected node, as one undoable step.
    void unsplitSelection();
    /// Selects the next node (or previous) matching the find text; false when none does.
    bool findNext(const QString& text, bool backwards = false);

signals:
    /// A layout finished and the canvas shows the graph.
    void layoutFinished();

protected:
    void closeEvent(QCloseEvent*) override;
    void dragEnterEvent(QDragEnterEvent*) override;
    void dropEvent(QDropEvent*) override;

private:
    /// Before the first auto placement on a machine without a calibration: offers one.
    void offerCalibration();
    CalibrationOptions m_calibration;
    bool m_offeredCalibration = false;

    void createDocks();
    void createActions();
    void refreshStatus();
    void clearSelectedPins();
    void runFinished(const std::shared_ptr<const RunOutcome>& outcome);
    void showError(const QString& title, const QString& message);

    views::PlacementDocument* m_document;
    views::GraphScene* m_scene;
    views::GraphView* m_view;
    QUndoStack* m_undo;
    /// Runs, through the document's session (core/session) and its physical devices.
    RunController* m_run;
    views::LayoutController* m_layout;
    ModelOpener* m_opener;
    std::unique_ptr<views::NodeFinder> m_finder;
    views::DevicePalette* m_palette = nullptr;
    views::ConflictsPanel* m_conflicts = nullptr;
    views::RulesPanel* m_rulesPanel = nullptr;
    views::PropertiesPanel* m_properties = nullptr;
    QLineEdit* m_find = nullptr;
    QLabel* m_summary = nullptr;
    views::HintBar* m_hint = nullptr;
    RunPanel* m_runPanel = nullptr;
    views::TimelineWidget* m_timeline = nullptr;
    PlanBrowser* m_browser = nullptr;
    WorkspaceController* m_workspace = nullptr;
    HostsRunner* m_hosts = nullptr;
    QProgressDialog* m_hostsProgress = nullptr;
    /// planCommandLine()'s words.
    std::vector<std::string> planCommandWords() const;
};

} // namespace placer::gui
