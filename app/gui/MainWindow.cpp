// The main window composes the parts: the canvas (views/) with its layout and context menu, the
// docks (devices, rules, conflicts and notes, properties, history, plans, run, timeline), the
// menus and the tool bar. What the parts do lives in them; this file wires them together.
#include "gui/MainWindow.h"

#include "gui/DeviceDialog.h"
#include "gui/Exports.h"
#include "gui/LanguageMenu.h"
#include "gui/ModelOpener.h"
#include "gui/PlanBrowser.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/SplitDialog.h"
#include "gui/UndoCommands.h"
#include "gui/WorkspaceController.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "store/PlanStore.h"
#include "views/ConflictsPanel.h"
#include "views/DevicePalette.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/HintBar.h"
#include "views/LayoutController.h"
#include "views/ModeBox.h"
#include "views/NodeMenu.h"
#include "views/PlanSummary.h"
#include "views/PropertiesPanel.h"
#include "views/RulesPanel.h"
#include "views/TimelineWidget.h"

#include <QAction>
#include <QClipboard>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QEventLoop>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QProgressDialog>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QThread>
#include <QToolBar>
#include <QUndoStack>
#include <QUndoView>
#include <QVBoxLayout>

#include <map>

namespace placer::gui {

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_document(new views::PlacementDocument(this)),
      m_scene(new views::GraphScene(m_document, this)), m_view(new views::GraphView(m_scene, this)),
      m_undo(new QUndoStack(this)), m_run(new RunController(&m_document->session(), this)),
      m_layout(new views::LayoutController(m_document, m_scene, m_view, this)),
      m_opener(new ModelOpener(m_document, this)),
      m_finder(std::make_unique<views::NodeFinder>(m_document, m_scene, m_view)) {
    setWindowTitle(tr("Placement Explorer") + QStringLiteral("[*]"));
    // The canvas, under a hint on how to place work that stays until the user dismisses it.
    auto* centre = new QWidget(this);
    auto* centreLayout = new QVBoxLayout(centre);
    centreLayout->setContentsMargins(0, 0, 0, 0);
    centreLayout->setSpacing(0);
    m_hint = new views::HintBar(
        QStringLiteral("hints/dragDevice"),
        tr("<b>To place work</b>, drag a device chip from the <i>Devices</i> panel onto a node "
           "(or onto a selection). The planner re-infers everything else at once: fills show "
           "each node's device, dots mark pins, badges on edges are the copies the plan needs, "
           "and <i>Conflicts and notes</i> says what it decided. Ctrl+Z undoes."),
        centre);
    centreLayout->addWidget(m_hint);
    centreLayout->addWidget(m_view, 1);
    setCentralWidget(centre);
    setAcceptDrops(true);
    createDocks();
    createActions();
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("planSummary"));
    statusBar()->addPermanentWidget(m_summary, 1);
    statusBar()->addPermanentWidget(m_layout->progressBar());
    statusBar()->addPermanentWidget(m_layout->cancelButton());
    auto showMessage = [this](const QString& text, int timeout) {
        statusBar()->showMessage(text, timeout);
    };
    connect(m_layout, &views::LayoutController::message, this, showMessage);
    connect(m_layout, &views::LayoutController::finished, this, &MainWindow::refreshStatus);
    connect(m_layout, &views::LayoutController::finished, this, &MainWindow::layoutFinished);
    connect(m_opener, &ModelOpener::message, this, showMessage);
    connect(m_opener, &ModelOpener::failed, this, &MainWindow::showError);
    connect(m_opener, &ModelOpener::opened, this, [this](const QString& name) {
        setWindowTitle(tr("%1[*] — Placement Explorer").arg(name));
    });
    connect(m_opener, &ModelOpener::loading, this, [this](const QString& fileName) {
        m_layout->progressBar()->setFormat(tr("loading"));
        m_layout->progressBar()->show();
        statusBar()->showMessage(tr("Reading %1…").arg(fileName));
    });
    connect(m_opener, &ModelOpener::loaded, this, [this] {
        m_layout->progressBar()->hide();
        m_layout->progressBar()->setFormat(tr("laying out"));
        statusBar()->clearMessage();
    });
    connect(m_document, &views::PlacementDocument::modelReset, m_undo, &QUndoStack::clear);
    for (const auto changed :
         {&views::PlacementDocument::planChanged, &views::PlacementDocument::predictionChanged}) {
        connect(m_document, changed, this, &MainWindow::refreshStatus);
        connect(m_document, changed, this,
                [this] { m_properties->showNodes(m_scene->selectedNodes()); });
    }
    connect(m_scene, &QGraphicsScene::selectionChanged, this,
            [this] { m_properties->showNodes(m_scene->selectedNodes()); });
    connect(m_view, &views::GraphView::deviceDropped, this, &MainWindow::pinNodes);
    connect(m_palette, &views::DevicePalette::nodesDropped, this, &MainWindow::pinNodes);
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, [this](const QPoint& position) {
        views::showNodeMenu(m_view, m_scene, *m_document, m_layout, position,
                            {[this](const QString& device, const std::vector<NodeId>& nodes) {
                                 pinNodes(device, nodes);
                             },
                             [this] { clearSelectedPins(); }, [this] { splitSelection(); },
                             [this] { unsplitSelection(); }});
    });
    // Timings belong to the plan that was run: a new plan or graph clears the overlay.
    // Before a run of this plan: the schedule it predicts (which a large graph's plan gets when
    // the window is next idle: PlacementDocument::kDeferredPrediction).
    const auto showPrediction = [this] {
        views::TimelineData predicted;
        addPredictedTimeline(*m_document, &predicted);
        m_timeline->setData(std::move(predicted));
    };
    connect(m_document, &views::PlacementDocument::planChanged, this, [this, showPrediction] {
        m_scene->setNodeTimes({});
        m_scene->setFusion({});
        showPrediction();
    });
    connect(m_document, &views::PlacementDocument::predictionChanged, this, showPrediction);
    connect(m_undo, &QUndoStack::cleanChanged, this,
            [this](bool clean) { setWindowModified(!clean); });
    connect(m_document, &views::PlacementDocument::modelReset, this, [this] {
        m_workspace->forgetPlan(); // a new graph is no saved plan (openPlan names it after)
        setWindowModified(false);
    });
    resize(1400, 900);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    m_workspace->open(settings
                          .value(QStringLiteral("workspace"),
                                 QString::fromStdString(store::PlanStore::defaultPath()))
                          .toString());
    // Plans predict their schedule from this machine's calibration and measured op times.
    m_document->setCostSource([this](const DeviceSet& devices) {
        return std::make_shared<const CostModel>(machineCosts(devices, m_workspace->store()));
    });
}

MainWindow::~MainWindow() = default;

void MainWindow::createDocks() {
    auto dock = [this](const QString& title, const QString& name, QWidget* widget,
                       Qt::DockWidgetArea area) {
        auto* d = new QDockWidget(title, this);
        d->setObjectName(name);
        d->setWidget(widget);
        addDockWidget(area, d);
        return d;
    };
    m_palette = new views::DevicePalette(m_document, this);
    dock(tr("Devices"), QStringLiteral("devices"), m_palette, Qt::LeftDockWidgetArea);

    m_rulesPanel = new views::RulesPanel(m_document, this);
    connect(m_rulesPanel, &views::RulesPanel::applyRequested, this,
            [this](std::vector<OpRule> rules, const std::string& fallback) {
                m_undo->push(new SetRulesCommand(m_document, std::move(rules), fallback));
            });
    connect(m_rulesPanel, &views::RulesPanel::invalid, this,
            [this](const QString& message) { showError(tr("Bad rule"), message); });
    dock(tr("Rules"), QStringLiteral("rules"), m_rulesPanel, Qt::LeftDockWidgetArea);

    m_conflicts = new views::ConflictsPanel(m_document, this);
    connect(m_conflicts, &views::ConflictsPanel::nodeActivated, m_view,
            &views::GraphView::showNode);
    dock(tr("Conflicts and notes"), QStringLiteral("conflicts"), m_conflicts,
         Qt::RightDockWidgetArea);
    m_properties = new views::PropertiesPanel(m_document, this);
    connect(m_properties, &views::PropertiesPanel::nodeActivated, m_view,
            &views::GraphView::showNode);
    dock(tr("Properties"), QStringLiteral("properties"), m_properties, Qt::RightDockWidgetArea);
    auto* history = new QUndoView(m_undo, this);
    history->setEmptyLabel(tr("<opened>"));
    QDockWidget* historyDock =
        dock(tr("History"), QStringLiteral("history"), history, Qt::RightDockWidgetArea);

    m_runPanel = new RunPanel(m_document, m_run, this);
    connect(m_runPanel, &RunPanel::microBatchesChosen, this, [this](int count) {
        m_undo->push(new SetPipelineCountCommand(
            m_document, SetPipelineCountCommand::Count::MicroBatches, count));
    });
    connect(m_runPanel, &RunPanel::streamBatchesChosen, this, [this](int count) {
        m_undo->push(new SetPipelineCountCommand(
            m_document, SetPipelineCountCommand::Count::StreamBatches, count));
    });
    connect(m_runPanel, &RunPanel::finished, this, &MainWindow::runFinished);
    connect(m_runPanel, &RunPanel::generationFinished, this,
            [this](const std::shared_ptr<const GenerationReport>& report) {
                m_timeline->setData(generationTimeline(*report, *m_document));
                m_workspace->recordGeneration(*report, isWindowModified());
                statusBar()->showMessage(
                    tr("Generated %1 tokens: %2 tokens/s after the prompt, first token in %3 ms")
                        .arg(report->tokens.size())
                        .arg(report->decodeTokensPerSecond(), 0, 'f', 1)
                        .arg(report->timeToFirstTokenMs(), 0, 'f', 1));
            });
    connect(m_runPanel, &RunPanel::problem, this, &MainWindow::showError);
    dock(tr("Run"), QStringLiteral("run"), m_runPanel, Qt::LeftDockWidgetArea);
    m_browser = new PlanBrowser(this);
    m_workspace = new WorkspaceController(m_document, m_undo, m_browser, this);
    connect(m_workspace, &WorkspaceController::problem, this, &MainWindow::showError);
    connect(m_workspace, &WorkspaceController::planOpened, this, [this](const QString& name) {
        setWindowModified(false);
        setWindowTitle(tr("%1[*] — Placement Explorer").arg(name));
    });
    connect(m_workspace, &WorkspaceController::draftRestored, this, [this](const QString& name) {
        setWindowModified(true);
        setWindowTitle(tr("%1[*] — Placement Explorer")
                           .arg(name.isEmpty() ? QFileInfo(m_document->path()).fileName() : name));
        statusBar()->showMessage(tr("Restored the unsaved changes"), 4000);
    });
    connect(m_workspace, &WorkspaceController::planSaved, this, [this](const QString& name) {
        setWindowModified(false);
        statusBar()->showMessage(tr("Saved plan '%1'").arg(name), 4000);
    });
    QDockWidget* plansDock =
        dock(tr("Plans"), QStringLiteral("plans"), m_browser, Qt::RightDockWidgetArea);
    tabifyDockWidget(historyDock, plansDock);
    plansDock->raise();

    m_timeline = new views::TimelineWidget(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_timeline);
    scroll->setWidgetResizable(true);
    scroll->setMinimumHeight(110);
    dock(tr("Timeline"), QStringLiteral("timeline"), scroll, Qt::BottomDockWidgetArea);
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, [this] { m_opener->choose(this); });
    open->setShortcut(QKeySequence::Open);
    m_opener->attachRecentMenu(file->addMenu(tr("Open &Recent")));
    file->addAction(tr("Open the &Example"), m_opener, &ModelOpener::openExample);
    file->addSeparator();
    file->addAction(tr("&Save Plan"), this, [this] { savePlan(); })
        ->setShortcut(QKeySequence::Save);
    file->addAction(tr("Save Plan &As…"), this, [this] { m_workspace->saveAsking({}, true); })
        ->setShortcut(QKeySequence::SaveAs);
    file->addAction(tr("Open &Workspace…"), m_workspace, &WorkspaceController::chooseWorkspace);
    file->addAction(tr("Import &Profile…"), this,
                    [this] {
                        const QString path = QFileDialog::getOpenFileName(
                            this, tr("Import Profile"), QString(),
                            tr("ONNX Runtime profiles (*.json);;All files (*)"));
                        if (!path.isEmpty())
                            importProfile(path);
                    })
        ->setObjectName(QStringLiteral("importProfile"));
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    exportMenu->setObjectName(QStringLiteral("exportMenu"));
    for (const ExportKind& kind : exportKinds()) {
        QAction* action = exportMenu->addAction(kind.label, this, [this, kind] {
            const QString path =
                QFileDialog::getSaveFileName(this, tr("Export"), QString(), kind.filter);
            if (!path.isEmpty())
                exportAs(kind.id, path);
        });
        action->setData(kind.id);
    }
    file->addSeparator();
    file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    edit->addAction(tr("&Clear Pins of Selection"), this, &MainWindow::clearSelectedPins)
        ->setShortcut(Qt::Key_Delete);
    QAction* split =
        edit->addAction(tr("&Split Across Devices…"), this, [this] { splitSelection(); });
    split->setObjectName(QStringLiteral("splitSelection"));
    // Megatron's cut of a block in one gesture: select it, shard it.
    edit->addAction(tr("S&hard Across Devices…"), this, [this] { splitSelection(true); })
        ->setObjectName(QStringLiteral("shardSelection"));
    edit->addAction(tr("Remove Split of Selection"), this, &MainWindow::unsplitSelection)
        ->setObjectName(QStringLiteral("unsplitSelection"));
    QAction* copyCommand = edit->addAction(tr("Copy Plan as Command &Line"), this, [this] {
        const QString line = planCommandLine();
        QGuiApplication::clipboard()->setText(line);
        statusBar()->showMessage(tr("Copied: %1").arg(line), 8000);
    });
    copyCommand->setObjectName(QStringLiteral("copyCommandLine"));
    copyCommand->setToolTip(
        tr("The placer run command that plans and runs what this window shows"));
    edit->addSeparator();
    edit->addAction(tr("&Find…"), this,
                    [this] {
                        m_find->setFocus();
                        m_find->selectAll();
                    })
        ->setShortcut(QKeySequence::Find);
    edit->addAction(tr("Find &Next"), this, [this] { findNext(m_find->text()); })
        ->setShortcut(QKeySequence::FindNext);
    edit->addAction(tr("Find &Previous"), this, [this] { findNext(m_find->text(), true); })
        ->setShortcut(QKeySequence::FindPrevious);

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    QAction* fit = viewMenu->addAction(tr("&Fit to Window"), m_view, &views::GraphView::fitAll);
    fit->setShortcut(Qt::CTRL | Qt::Key_0);
    viewMenu->addAction(tr("Fit &Selection"), m_view, &views::GraphView::fitSelection)
        ->setShortcut(Qt::CTRL | Qt::Key_9);
    viewMenu->addSeparator();
    viewMenu->addAction(tr("&Collapse Groups"), m_layout, &views::LayoutController::collapseAll);
    viewMenu->addAction(tr("E&xpand All Groups"), this,
                        [this] { m_layout->setCollapsedScopes({}); });
    viewMenu->addSeparator();
    viewMenu->addAction(tr("Zoom &In"), m_view, &views::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction(tr("Zoom &Out"), m_view, &views::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);
    addLanguageMenu(viewMenu, statusBar());

    QMenu* devicesMenu = menuBar()->addMenu(tr("&Devices"));
    devicesMenu->addAction(tr("&Edit Devices…"), this, &MainWindow::editDevices)
        ->setShortcut(Qt::CTRL | Qt::Key_D);
    devicesMenu->addAction(tr("&Calibrate This Machine…"), this, [this] { calibrate(); })
        ->setObjectName(QStringLiteral("calibrate"));
    devicesMenu
        ->addAction(tr("Plan for a &Machine…"), this,
                    [this] {
                        const QString path = QFileDialog::getOpenFileName(
                            this, tr("Plan for a Machine"), QString(),
                            tr("Machine files (*.json);;All files (*)"));
                        if (!path.isEmpty())
                            openMachine(path);
                    })
        ->setObjectName(QStringLiteral("planForMachine"));
    // Alt+1 … Alt+9: the selection pinned to the palette's first … ninth device, one undo step
    // as a drop is (for the keyboard, screen readers and scripted tests).
    QMenu* pinMenu = devicesMenu->addMenu(tr("&Pin Selection To"));
    for (int i = 0; i < 9; ++i) {
        QAction* action = pinMenu->addAction(tr("Device %1").arg(i + 1));
        action->setObjectName(QStringLiteral("pinToDevice%1").arg(i + 1));
        action->setShortcut(QKeySequence(Qt::ALT | static_cast<Qt::Key>(Qt::Key_1 + i)));
        connect(action, &QAction::triggered, this, [this, i] { pinSelectionToDevice(i); });
    }
    connect(pinMenu, &QMenu::aboutToShow, this, [this, pinMenu] {
        const DeviceSet& devices = m_document->devices();
        const QList<QAction*> actions = pinMenu->actions();
        for (int i = 0; i < actions.size(); ++i) {
            const bool exists = i < devices.size();
            actions[i]->setEnabled(exists);
            actions[i]->setText(exists ? QStringLiteral("&%1  %2").arg(i + 1).arg(
                                             QString::fromStdString(devices[DeviceId(i)].name))
                                       : tr("Device %1 (none)").arg(i + 1));
        }
    });

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    QAction* runAction = runMenu->addAction(tr("&Run the Plan"), m_runPanel, &RunPanel::start);
    runAction->setShortcut(Qt::CTRL | Qt::Key_R);
    runMenu->addAction(tr("&Cancel the Run"), m_run, &RunController::cancel);
    runMenu->addSeparator();
    runMenu->addAction(tr("Run on &Hosts…"), this, [this] { runOnHosts(); })
        ->setObjectName(QStringLiteral("runOnHosts"));

    QMenu* helpMenu = menuBar()->addMenu(tr("&Help"));
    helpMenu->addAction(tr("&About Placement Explorer"), this, [this] { showAbout(); })
        ->setObjectName(QStringLiteral("about"));

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    for (QAction* action : {open, undo, redo, fit, runAction})
        tools->addAction(action);
    tools->addSeparator();
    tools->addWidget(new QLabel(tr("Planner: "), this));
    auto* mode = new views::ModeBox(m_document, this);
    connect(mode, &views::ModeBox::modeChosen, this, [this](PlanMode chosen) {
        if (chosen == PlanMode::Auto)
            offerCalibration();
        m_undo->push(new SetModeCommand(m_document, chosen));
    });
    tools->addWidget(mode);
    tools->addSeparator();
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("find"));
    m_find->setPlaceholderText(tr("Find node, op or attribute (Ctrl+F)"));
    m_find->setClearButtonEnabled(true);
    m_find->setMaximumWidth(280);
    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNext(m_find->text()); });
    connect(m_find, &QLineEdit::textChanged, this, [this] { m_finder->reset(); });
    tools->addWidget(m_find);
}

void MainWindow::showAbout() {
    // Window-modal and not blocking, as showError's boxes are.
    auto* box = new QMessageBox(
        QMessageBox::Information, tr("About Placement Explorer"),
        tr("<b>Placement Explorer %1</b><p>Decides where each operator of a dataflow graph runs "
           "on a machine with several devices, runs the plan and shows where the time went.</p>"
           "<p>Built with Qt %2. The command line is <code>placer</code>, the Python module "
           "<code>placer</code>, and <code>man placer</code> lists the commands.</p>")
            .arg(QStringLiteral(PLACER_VERSION_TEXT), QString::fromLatin1(qVersion())),
        QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("aboutBox"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setWindowModality(Qt::WindowModal);
    box->show();
}

bool MainWindow::openFile(const QString& path) {
    return m_opener->open(path);
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Window-modal and not blocking: the application (and tests) keep running.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::pinSelectionToDevice(int index) {
    const DeviceSet& devices = m_document->devices();
    if (index < 0 || index >= devices.size()) {
        statusBar()->showMessage(
            tr("There is no device %1: the palette has %n device(s)", nullptr, devices.size())
                .arg(index + 1),
            4000);
        return;
    }
    const std::vector<NodeId> nodes = m_scene->selectedNodes();
    if (nodes.empty()) {
        statusBar()->showMessage(tr("Select the nodes to pin first"), 4000);
        return;
    }
    pinNodes(QString::fromStdString(devices[DeviceId(index)].name), nodes);
}

void MainWindow::pinNodes(const QString& device, const std::vector<NodeId>& nodes) {
    if (auto command = pinCommand(m_document, device, nodes))
        m_undo->push(command.release());
}

bool MainWindow::splitSelection(bool tensor) {
    const std::vector<NodeId> nodes = m_scene->selectedNodes();
    bool anyOp = false;
    for (NodeId node : nodes)
        anyOp = anyOp || m_document->graph().node(node).role() == OpRole::Compute;
    if (!anyOp) {
        statusBar()->showMessage(tr("Select the ops to split first"), 4000);
        return false;
    }
    SplitDialog dialog(m_document, nodes, this, tensor);
    dialog.setObjectName(tensor ? QStringLiteral("shardDialog") : QStringLiteral("splitDialog"));
    if (dialog.exec() != QDialog::Accepted)
        return false;
    auto command = splitCommand(m_document, nodes, dialog.shards(), tensor);
    if (!command)
        return false;
    m_undo->push(command.release());
    return true;
}

void MainWindow::unsplitSelection() {
    if (auto command = unsplitCommand(m_document, m_scene->selectedNodes()))
        m_undo->push(command.release());
}

void MainWindow::clearSelectedPins() {
    if (auto command = clearPinsCommand(m_document, m_scene->selectedNodes()))
        m_undo->push(command.release());
}

bool MainWindow::findNext(const QString& text, bool backwards) {
    if (m_finder->next(text, backwards))
        return true;
    if (!text.isEmpty())
        statusBar()->showMessage(tr("No node matches '%1'").arg(text), 4000);
    return false;
}

void MainWindow::refreshStatus() {
    m_summary->setText(views::planSummary(*m_document));
}

bool MainWindow::exportAs(const QString& kind, const QString& path) {
    m_document->settlePrediction(); // the plan report holds the prediction
    ExportSources sources;
    sources.document = m_document;
    sources.scene = m_scene;
    sources.nodeMillis = lastNodeMillis();
    sources.title = windowTitle();
    QString error;
    if (!writeExport(kind, path, sources, &error)) {
        showError(tr("Export failed"), error);
        return false;
    }
    statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
    return true;
}

void MainWindow::closeEvent(QCloseEvent* event) {
    if (isWindowModified()) {
        const auto answer = QMessageBox::question(
            this, tr("Unsaved plan"),
            tr("The plan has changes that are not saved. Save them in the workspace?"),
            QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
        if (answer == QMessageBox::Cancel || (answer == QMessageBox::Save && !savePlan())) {
            event->ignore();
            return;
        }
    }
    // Saved or discarded: a clean exit leaves no draft.
    m_workspace->discardDraft();
    QSettings().setValue(QStringLiteral("window/geometry"), saveGeometry());
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

namespace {

/// Whether `path` holds a profile (a JSON array of trace events, or an object of traceEvents)
/// rather than a model (a JSON graph is an object of nodes).
bool looksLikeProfile(const QString& path) {
    if (!path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive))
        return false;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QByteArray head = file.read(4096).trimmed();
    return head.startsWith('[') || head.contains("\"traceEvents\"");
}

} // namespace

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) {
        event->acceptProposedAction();
        const QString path = urls.front().toLocalFile();
        if (looksLikeProfile(path))
            importProfile(path);
        else
            openFile(path);
    }
}

void MainWindow::setMachine(std::shared_ptr<const MachineFile> machine) {
    if (!machine) {
        m_document->setCostSource([this](const DeviceSet& devices) {
            return std::make_shared<const CostModel>(machineCosts(devices, m_workspace->store()));
        });
        return;
    }
    m_document->setCostSource([machine](const DeviceSet& devices) {
        return std::make_shared<const CostModel>(machineFileCosts(*machine, devices));
    });
    statusBar()->showMessage(tr("Planned for the machine %1 (%n device(s)): its rates and links "
                                "cost every plan",
                                nullptr, static_cast<int>(machine->devices.size()))
                                 .arg(QString::fromStdString(machine->name)),
                             12000);
}

bool MainWindow::openMachine(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        showError(tr("Cannot open the machine file"), tr("%1: %2").arg(path, file.errorString()));
        return false;
    }
    const QByteArray bytes = file.readAll();
    auto machine =
        parseMachineFile(std::string_view(bytes.constData(), bytes.size()), path.toStdString());
    if (!machine) {
        showError(tr("Cannot open the machine file"),
                  QString::fromStdString(machine.error().toString()));
        return false;
    }
    auto devices = DeviceSet::parse(machine.value().deviceSpec());
    if (!devices) {
        showError(tr("Cannot open the machine file"),
                  QString::fromStdString(devices.error().toString()));
        return false;
    }
    const auto count = static_cast<std::size_t>(devices.value().size());
    QString error;
    auto snapshot = m_document->withDevices(devices.value(), std::vector<int>(count, -1),
                                            std::vector<QColor>(count),
                                            std::vector<std::string>(count), &error);
    if (!snapshot) {
        showError(tr("Cannot plan for the machine"), error);
        return false;
    }
    setMachine(std::make_shared<const MachineFile>(machine.take()));
    m_undo->push(new SetDevicesCommand(m_document, std::move(*snapshot)));
    return true;
}

bool MainWindow::importProfile(const QString& path) {
    const Graph& graph = m_document->graph();
    auto imported = m_document->session().importProfile(graph, path.toStdString());
    if (!imported) {
        showError(tr("Cannot import the profile"),
                  QString::fromStdString(imported.error().toString()));
        return false;
    }
    const ProfileImport& profile = imported.value();
    std::vector<double> millis(graph.size(), -1);
    std::vector<NodeId> fusedInto(graph.size());
    for (const ImportedTime& time : profile.times) {
        millis[time.node.index] = time.medianMicros / 1000;
        fusedInto[time.node.index] = time.node;
        for (const NodeId member : time.fused)
            fusedInto[member.index] = time.node;
    }
    m_scene->setNodeTimes(millis);
    m_scene->setFusion(fusedInto);
    // The profile's lanes, one per provider, under the run's: each node where it started in the
    // profile's last run, for its median time.
    views::TimelineData timeline = m_timeline->data();
    std::map<std::string, int> lanes;
    double cursor = 0;
    for (const ImportedTime& time : profile.times) {
        const std::string provider = time.provider.empty() ? "ONNX Runtime" : time.provider;
        auto [lane, fresh] = lanes.emplace(provider, static_cast<int>(timeline.lanes.size()));
        if (fresh) {
            // "CPUExecutionProvider" -> "CPU": the lane's name fits its column.
            QString shortName = QString::fromStdString(provider);
            shortName.remove(QStringLiteral("ExecutionProvider"));
            timeline.lanes.push_back(tr("ONNX Runtime %1").arg(shortName));
        }
        views::TimelineBar bar;
        bar.lane = lane->second;
        bar.start = time.startMicros >= 0 ? time.startMicros : cursor;
        bar.end = bar.start + time.medianMicros;
        cursor = bar.end;
        bar.colour = QColor(0x8e, 0x6c, 0xc8);
        const Node& node = graph.node(time.node);
        bar.label = QString::fromStdString(node.name);
        bar.tooltip =
            tr("%1 (%2): %3 ms in ONNX Runtime's profile, as %4 on %5")
                .arg(QString::fromStdString(node.name), QString::fromStdString(node.op->name))
                .arg(time.medianMicros / 1000, 0, 'f', 3)
                .arg(QString::fromStdString(time.op), QString::fromStdString(provider));
        timeline.duration = std::max(timeline.duration, bar.end);
        timeline.bars.push_back(std::move(bar));
    }
    m_timeline->setData(std::move(timeline));
    statusBar()->showMessage(
        tr("Profile %1 (ONNX Runtime, %n run(s)): %2 of %3 nodes timed, %4 events no node of "
           "the model",
           nullptr, profile.runs)
            .arg(QFileInfo(path).fileName())
            .arg(profile.nodesWithTimes())
            .arg(profile.computeNodes)
            .arg(profile.unmatchedEvents.size()),
        12000);
    for (const std::string& warning : profile.warnings)
        statusBar()->showMessage(QString::fromStdString(warning), 12000);
    return true;
}

bool MainWindow::savePlan(const QString& name) {
    return m_workspace->saveAsking(name);
}

void MainWindow::runFinished(const std::shared_ptr<const RunOutcome>& outcome) {
    // Overlays: per-node median time, per-copy time on the badges.
    const MedianTimes times = userMedianTimes(*outcome);
    if (outcome->userGraph->size() == m_document->graph().size()) {
        m_scene->setNodeTimes(times.nodeMillis);
        m_scene->setCopyTimes(times.copyMillis);
        m_scene->setFusion(outcome->ran->fusedInto);
    }
    // The run's lanes, and under them the schedule the plan predicted.
    views::TimelineData timeline = runTimeline(*outcome, *m_document);
    addPredictedTimeline(*m_document, &timeline);
    m_timeline->setData(std::move(timeline));
    m_palette->setRunDetails(runDeviceLines(*outcome));
    m_workspace->recordRun(*outcome, isWindowModified());
    m_document->costsChanged(); // the run's node times are in the cost table now
    const double measured = median(outcome->result.latencyMicros) / 1000.0;
    if (const auto& prediction = outcome->userPlan.prediction; prediction && measured > 0) {
        const double predicted = prediction->makespanMicros / 1000.0;
        statusBar()->showMessage(tr("Run finished: %1 ms median; predicted %2 ms (%3%4 %)")
                                     .arg(measured, 0, 'f', 3)
                                     .arg(predicted, 0, 'f', 3)
                                     .arg(predicted >= measured ? QStringLiteral("+") : QString())
                                     .arg((predicted / measured - 1) * 100, 0, 'f', 0),
                                 8000);
    } else {
        statusBar()->showMessage(tr("Run finished: %1 ms median").arg(measured, 0, 'f', 3), 6000);
    }
}

void MainWindow::offerCalibration() {
    store::PlanStore* store = m_workspace->store();
    if (m_offeredCalibration || !store)
        return;
    m_offeredCalibration = true;
    auto stored = store->loadCalibration(machineName());
    if (!stored || stored.value())
        return;
    QMessageBox ask(QMessageBox::Question, tr("Calibrate this machine?"),
                    tr("Auto placement predicts each op's time from the devices' speed. This "
                       "machine has not been measured yet, so it assumes typical figures. "
                       "Measure its devices now? It takes a few seconds; Devices ▸ Calibrate "
                       "does it later."),
                    QMessageBox::Yes | QMessageBox::No, this);
    ask.setObjectName(QStringLiteral("offerCalibration"));
    if (ask.exec() == QMessageBox::Yes)
        calibrate();
}

bool MainWindow::calibrate() {
    store::PlanStore* store = m_workspace->store();
    if (!store) {
        QMessageBox::warning(this, tr("Calibrate"), tr("No workspace is open to keep it in."));
        return false;
    }
    QProgressDialog progress(tr("Measuring this machine's devices…"), QString(), 0, 100, this);
    progress.setObjectName(QStringLiteral("calibrationProgress"));
    progress.setWindowModality(Qt::WindowModal);
    progress.setMinimumDuration(0);
    progress.setValue(0);
    // The measurements run on a thread of their own; the dialog follows them.
    std::optional<Result<Calibration>> result;
    QEventLoop loop;
    QThread* worker = QThread::create([&] {
        result = calibrateThisMachine(
            m_calibration, [&progress](int done, int total, const std::string& step) {
                const int value = total > 0 ? done * 100 / total : 100;
                const QString label = QString::fromStdString(step);
                QMetaObject::invokeMethod(&progress, [&progress, value, label] {
                    progress.setValue(value);
                    progress.setLabelText(label);
                });
            });
    });
    connect(worker, &QThread::finished, &loop, &QEventLoop::quit);
    worker->start();
    loop.exec();
    worker->wait();
    delete worker;
    progress.setValue(100);
    if (!result || !result->ok()) {
        const QString why = result ? QString::fromStdString(result->error().message) : QString();
        QMessageBox::warning(this, tr("Calibrate"), tr("Calibration failed: %1").arg(why));
        return false;
    }
    if (Status saved = store->saveCalibration(result->value()); !saved.ok()) {
        QMessageBox::warning(this, tr("Calibrate"),
                             QString::fromStdString(saved.error().toString()));
        return false;
    }
    m_document->costsChanged();
    m_document->setOptions(m_document->options()); // re-plan with the measured rates
    statusBar()->showMessage(tr("Calibrated %1: auto placement now uses its measured rates")
                                 .arg(QString::fromStdString(result->value().machine)),
                             6000);
    return true;
}

void MainWindow::editDevices() {
    auto* dialog = new DeviceDialog(m_document, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    connect(dialog, &QDialog::accepted, this, [this, dialog] {
        QString error;
        if (auto snapshot = dialog->result(&error))
            m_undo->push(new SetDevicesCommand(m_document, std::move(*snapshot)));
    });
    dialog->open();
}

std::vector<double> MainWindow::lastNodeMillis() const {
    const auto outcome = m_run->outcome();
    if (!outcome || !outcome->executor || outcome->cancelled() ||
        outcome->userGraph->size() != m_document->graph().size())
        return {};
    return userMedianTimes(*outcome).nodeMillis;
}

QString MainWindow::planCommandLine() const {
    return QString::fromStdString(shellCommandLine(planCommandWords()));
}

std::vector<std::string> MainWindow::planCommandWords() const {
    std::vector<std::string> words{"placer", "run", m_document->path().toStdString()};
    for (std::string& word : planArguments(m_document->graph(), m_document->devices(),
                                           m_document->options(), m_document->inputShapes()))
        words.push_back(std::move(word));
    // The physical devices chosen in the device editor, as the Run panel maps them.
    const DeviceSet& devices = m_document->devices();
    for (int d = 0; d < devices.size(); ++d) {
        const std::string physical = m_document->physicalDevice(DeviceId(d));
        if (!physical.empty()) {
            words.emplace_back("--map");
            words.push_back(devices[DeviceId(d)].name + "=" + physical);
        }
    }
    QTableWidget* inputs = m_runPanel->inputs();
    for (int row = 0; row < inputs->rowCount(); ++row) {
        const QTableWidgetItem* name = inputs->item(row, 0);
        const QTableWidgetItem* data = inputs->item(row, 1);
        const QString file = data ? data->text().trimmed() : QString();
        if (name && file.endsWith(QStringLiteral(".npy"), Qt::CaseInsensitive)) {
            words.emplace_back("--input");
            words.push_back(name->text().toStdString() + "=" + file.toStdString());
        }
    }
    words.emplace_back("--iterations");
    words.push_back(std::to_string(m_runPanel->iterations()->value()));
    words.emplace_back("--warmup");
    words.push_back(std::to_string(m_runPanel->warmup()->value()));
    return words;
}

bool MainWindow::runOnHosts() {
    if (m_document->isEmpty())
        return false;
    if (m_hosts && m_hosts->running()) {
        statusBar()->showMessage(tr("A run on hosts is already going on"), 5000);
        return false;
    }
    HostsDialog dialog(m_document->devices(), this);
    dialog.setObjectName(QStringLiteral("hostsDialog"));
    if (dialog.exec() != QDialog::Accepted)
        return false;
    startHostsRun(dialog.request());
    return true;
}

void MainWindow::startHostsRun(HostsRunRequest request) {
    if (!m_hosts) {
        m_hosts = new HostsRunner(this);
        connect(m_hosts, &HostsRunner::progress, this, [this](const QString& line) {
            if (m_hostsProgress)
                m_hostsProgress->setLabelText(line.left(160));
        });
        auto done = [this] {
            if (m_hostsProgress) {
                m_hostsProgress->hide();
                m_hostsProgress->deleteLater();
                m_hostsProgress = nullptr;
            }
        };
        connect(m_hosts, &HostsRunner::finished, this,
                [this, done](const std::shared_ptr<const HostsRunResult>& result) {
                    done();
                    const views::PlacementDocument* document = m_document;
                    m_timeline->setData(hostsTimeline(*result, [document](const std::string& name) {
                        const auto id = document->devices().find(name);
                        return id ? document->deviceColor(*id) : QColor(Qt::gray);
                    }));
                    m_runPanel->summary()->setHtml(hostsSummaryHtml(*result));
                    m_palette->setGroups(hostsDeviceGroups(*result));
                    const Json* latency = result->report.find("latency_ms");
                    const Json* median = latency ? latency->find("median") : nullptr;
                    statusBar()->showMessage(
                        tr("Ran on %n rank(s): %1 ms median", nullptr, result->ranks)
                            .arg(median ? median->asDouble() : 0.0, 0, 'f', 3),
                        10000);
                });
        connect(m_hosts, &HostsRunner::failed, this, [this, done](const QString& message) {
            done();
            showError(tr("The run on hosts failed"), message);
        });
        connect(m_hosts, &HostsRunner::cancelled, this, [this, done] {
            done();
            statusBar()->showMessage(tr("The run on hosts was cancelled on every rank"), 8000);
        });
    }
    std::vector<std::string> words = planCommandWords();
    request.runWords.clear();
    for (std::size_t i = 1; i < words.size(); ++i) // without "placer"
        request.runWords << QString::fromStdString(words[i]);
    m_hostsProgress = new QProgressDialog(
        tr("Starting %n rank(s) with mpirun…", nullptr, request.ranks), tr("Cancel"), 0, 0, this);
    m_hostsProgress->setObjectName(QStringLiteral("hostsProgress"));
    m_hostsProgress->setWindowTitle(tr("Run on Hosts"));
    m_hostsProgress->setMinimumDuration(0);
    m_hostsProgress->setAutoClose(false);
    m_hostsProgress->setAutoReset(false);
    connect(m_hostsProgress, &QProgressDialog::canceled, m_hosts, &HostsRunner::cancel);
    m_hostsProgress->show();
    m_hosts->start(request);
}

} // namespace placer::gui
