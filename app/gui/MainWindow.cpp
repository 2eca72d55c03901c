#include "gui/MainWindow.h"

#include "gui/DeviceDialog.h"
#include "gui/Exports.h"
#include "gui/PlanBrowser.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/UndoCommands.h"
#include "gui/WorkspaceController.h"
#include "io/RunReport.h"
#include "plan/Annotations.h"
#include "store/PlanStore.h"
#include "views/ConflictsPanel.h"
#include "views/CopyBadgeItem.h"
#include "views/DevicePalette.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/HintBar.h"
#include "views/NodeItem.h"
#include "views/PropertiesPanel.h"
#include "views/RulesPanel.h"
#include "views/TimelineWidget.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTextBrowser>
#include <QThread>
#include <QToolBar>
#include <QUndoStack>
#include <QUndoView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <map>

namespace placer::gui {

namespace {

/// Graphs with more drawn nodes than this get a quick layout first.
constexpr std::size_t kQuickLayoutNodes = 800;

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_document(new views::PlacementDocument(this)),
      m_scene(new views::GraphScene(m_document, this)), m_view(new views::GraphView(m_scene, this)),
      m_undo(new QUndoStack(this)), m_run(new RunController(this)) {
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
    m_progress = new QProgressBar(this);
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_progress->setFormat(tr("laying out"));
    m_progress->hide();
    m_cancel = new QPushButton(tr("Cancel layout"), this);
    m_cancel->hide();
    statusBar()->addPermanentWidget(m_progress);
    statusBar()->addPermanentWidget(m_cancel);
    connect(m_cancel, &QPushButton::clicked, this, &MainWindow::cancelLayout);
    connect(&m_layoutWatcher, &QFutureWatcher<views::LayoutResult>::finished, this,
            &MainWindow::layoutDone);
    connect(&m_loadWatcher, &QFutureWatcher<std::shared_ptr<Result<LoadedModel>>>::finished, this,
            &MainWindow::loadDone);
    connect(m_document, &views::PlacementDocument::modelReset, this, &MainWindow::startLayout);
    connect(m_document, &views::PlacementDocument::modelReset, m_undo, &QUndoStack::clear);
    connect(m_document, &views::PlacementDocument::planChanged, this, &MainWindow::refreshStatus);
    connect(m_document, &views::PlacementDocument::planChanged, this,
            [this] { m_properties->showNodes(m_scene->selectedNodes()); });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &MainWindow::onSelectionChanged);
    connect(m_view, &views::GraphView::deviceDropped, this, &MainWindow::pinNodes);
    connect(m_palette, &views::DevicePalette::nodesDropped, this, &MainWindow::pinNodes);
    connect(m_view, &views::GraphView::expandRequested, this, [this](const QString& scope) {
        auto scopes = m_scene->collapsed();
        scopes.erase(scope.toStdString());
        setCollapsedScopes(std::move(scopes));
    });
    m_view->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(m_view, &QWidget::customContextMenuRequested, this, &MainWindow::showNodeMenu);
    // Timings belong to the plan that was run: a new plan or graph clears the overlay.
    connect(m_document, &views::PlacementDocument::planChanged, this,
            [this] { m_scene->setNodeTimes({}); });
    connect(m_undo, &QUndoStack::cleanChanged, this,
            [this](bool clean) { setWindowModified(!clean); });
    connect(m_document, &views::PlacementDocument::modelReset, this, [this] {
        m_workspace->forgetPlan(); // a new graph is no saved plan (openPlan names it after)
        setWindowModified(false);
    });
    resize(1400, 900);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    openWorkspace(settings
                      .value(QStringLiteral("workspace"),
                             QString::fromStdString(store::PlanStore::defaultPath()))
                      .toString());
}

MainWindow::~MainWindow() {
    m_loadWatcher.waitForFinished();
    m_layoutWatcher.waitForFinished();
}

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
    dock(tr("Properties"), QStringLiteral("properties"), m_properties, Qt::RightDockWidgetArea);
    auto* history = new QUndoView(m_undo, this);
    history->setEmptyLabel(tr("<opened>"));
    QDockWidget* historyDock =
        dock(tr("History"), QStringLiteral("history"), history, Qt::RightDockWidgetArea);

    m_runPanel = new RunPanel(m_document, m_run, this);
    connect(m_runPanel, &RunPanel::finished, this, &MainWindow::runFinished);
    connect(m_runPanel, &RunPanel::problem, this, &MainWindow::showError);
    dock(tr("Run"), QStringLiteral("run"), m_runPanel, Qt::LeftDockWidgetArea);
    m_browser = new PlanBrowser(this);
    m_workspace = new WorkspaceController(m_document, m_undo, m_browser, this);
    connect(m_workspace, &WorkspaceController::problem, this, &MainWindow::showError);
    connect(m_workspace, &WorkspaceController::planOpened, this, [this](const QString& name) {
        setWindowModified(false);
        setWindowTitle(tr("%1[*] — Placement Explorer").arg(name));
    });
    connect(m_workspace, &WorkspaceController::planSaved, this, [this](const QString& name) {
        setWindowModified(false);
        statusBar()->showMessage(tr("Saved plan '%1'").arg(name), 4000);
    });
    QDockWidget* plansDock =
        dock(tr("Plans"), QStringLiteral("plans"), m_browser, Qt::RightDockWidgetArea);
    tabifyDockWidget(historyDock, plansDock);
    plansDock->raise();
    connect(m_browser, &PlanBrowser::openRequested, m_workspace, &WorkspaceController::openPlan);
    connect(m_browser, &PlanBrowser::renameRequested, this, [this](const QString& name) {
        bool ok = false;
        const QString to = QInputDialog::getText(this, tr("Rename plan"), tr("New name:"),
                                                 QLineEdit::Normal, name, &ok);
        if (ok && !to.isEmpty())
            m_workspace->rename(name, to);
    });
    connect(m_browser, &PlanBrowser::duplicateRequested, this, [this](const QString& name) {
        bool ok = false;
        const QString to =
            QInputDialog::getText(this, tr("Duplicate plan"), tr("Name of the copy:"),
                                  QLineEdit::Normal, name + tr(" copy"), &ok);
        if (ok && !to.isEmpty())
            m_workspace->duplicate(name, to);
    });
    connect(m_browser, &PlanBrowser::deleteRequested, this, [this](const QString& name) {
        if (QMessageBox::question(this, tr("Delete plan"),
                                  tr("Delete the plan '%1' and its runs?").arg(name)) ==
            QMessageBox::Yes)
            m_workspace->remove(name);
    });
    connect(m_browser, &PlanBrowser::compareRequested, this,
            [this](const QString& a, const QString& b) {
                auto* box = new QMessageBox(QMessageBox::NoIcon, tr("Compare plans"),
                                            m_workspace->compare(a, b), QMessageBox::Close, this);
                box->setObjectName(QStringLiteral("compareDialog"));
                box->setAttribute(Qt::WA_DeleteOnClose);
                box->setTextFormat(Qt::RichText);
                box->open();
            });

    m_timeline = new views::TimelineWidget(this);
    auto* scroll = new QScrollArea(this);
    scroll->setWidget(m_timeline);
    scroll->setWidgetResizable(true);
    scroll->setMinimumHeight(110);
    dock(tr("Timeline"), QStringLiteral("timeline"), scroll, Qt::BottomDockWidgetArea);
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::chooseFile);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    file->addAction(tr("Open the &Example"), this, &MainWindow::openExample);
    file->addSeparator();
    QAction* save = file->addAction(tr("&Save Plan"), this, [this] { savePlan(); });
    save->setShortcut(QKeySequence::Save);
    QAction* saveAs = file->addAction(tr("Save Plan &As…"), this, [this] {
        bool ok = false;
        const QString name = QInputDialog::getText(this, tr("Save plan as"), tr("Plan name:"),
                                                   QLineEdit::Normal, m_workspace->planName(), &ok);
        if (ok && !name.isEmpty())
            savePlan(name);
    });
    saveAs->setShortcut(QKeySequence::SaveAs);
    file->addAction(tr("Open &Workspace…"), this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            this, tr("Workspace"), QString(), tr("Workspaces (*.db);;All files (*)"), nullptr,
            QFileDialog::DontConfirmOverwrite);
        if (!path.isEmpty())
            openWorkspace(path);
    });
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
    QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
    quit->setShortcut(QKeySequence::Quit);

    QMenu* edit = menuBar()->addMenu(tr("&Edit"));
    QAction* undo = m_undo->createUndoAction(this, tr("&Undo"));
    undo->setShortcut(QKeySequence::Undo);
    QAction* redo = m_undo->createRedoAction(this, tr("&Redo"));
    redo->setShortcuts({QKeySequence::Redo, QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Z)});
    edit->addAction(undo);
    edit->addAction(redo);
    edit->addSeparator();
    QAction* clearPin =
        edit->addAction(tr("&Clear Pins of Selection"), this, &MainWindow::clearSelectedPins);
    clearPin->setShortcut(Qt::Key_Delete);
    QAction* find = edit->addAction(tr("&Find…"), this, [this] {
        m_find->setFocus();
        m_find->selectAll();
    });
    find->setShortcut(QKeySequence::Find);
    QAction* next = edit->addAction(tr("Find &Next"), this, [this] { findNext(m_find->text()); });
    next->setShortcut(QKeySequence::FindNext);
    QAction* previous =
        edit->addAction(tr("Find &Previous"), this, [this] { findNext(m_find->text(), true); });
    previous->setShortcut(QKeySequence::FindPrevious);

    QMenu* viewMenu = menuBar()->addMenu(tr("&View"));
    QAction* fit = viewMenu->addAction(tr("&Fit to Window"), m_view, &views::GraphView::fitAll);
    fit->setShortcut(Qt::CTRL | Qt::Key_0);
    QAction* fitSelection =
        viewMenu->addAction(tr("Fit &Selection"), m_view, &views::GraphView::fitSelection);
    fitSelection->setShortcut(Qt::CTRL | Qt::Key_9);
    viewMenu->addSeparator();
    viewMenu->addAction(tr("&Collapse Groups"), this, [this] {
        std::set<std::string> scopes;
        for (const Node& node : m_document->graph().nodes()) {
            const auto all = views::GraphScene::scopesOf(node.name);
            if (!all.empty())
                scopes.insert(all.front());
        }
        setCollapsedScopes(std::move(scopes));
    });
    viewMenu->addAction(tr("E&xpand All Groups"), this, [this] { setCollapsedScopes({}); });
    viewMenu->addSeparator();
    viewMenu->addAction(tr("Zoom &In"), m_view, &views::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction(tr("Zoom &Out"), m_view, &views::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);

    QMenu* devicesMenu = menuBar()->addMenu(tr("&Devices"));
    devicesMenu->addAction(tr("&Edit Devices…"), this, &MainWindow::editDevices)
        ->setShortcut(Qt::CTRL | Qt::Key_D);

    QMenu* language = viewMenu->addMenu(tr("&Language"));
    auto* languages = new QActionGroup(this);
    const QString current = QSettings().value(QStringLiteral("language")).toString();
    const std::pair<QString, QString> choices[] = {
        {tr("System Default"), QString()},
        {QStringLiteral("English"), QStringLiteral("en")},
        {QStringLiteral("Deutsch"), QStringLiteral("de")},
        {QStringLiteral("简体中文"), QStringLiteral("zh_CN")}};
    for (const auto& [label, code] : choices) {
        QAction* action = language->addAction(label);
        action->setCheckable(true);
        action->setChecked(code == current);
        languages->addAction(action);
        connect(action, &QAction::triggered, this, [this, code] {
            QSettings().setValue(QStringLiteral("language"), code);
            statusBar()->showMessage(
                tr("The new language applies when Placement Explorer starts again."), 8000);
        });
    }

    QMenu* runMenu = menuBar()->addMenu(tr("&Run"));
    QAction* runAction = runMenu->addAction(tr("&Run the Plan"), this, &MainWindow::startRun);
    runAction->setShortcut(Qt::CTRL | Qt::Key_R);
    runMenu->addAction(tr("&Cancel the Run"), m_run, &RunController::cancel);

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->addAction(open);
    tools->addAction(undo);
    tools->addAction(redo);
    tools->addAction(fit);
    tools->addAction(runAction);
    tools->addSeparator();
    tools->addWidget(new QLabel(tr("Planner: "), this));
    m_mode = new QComboBox(this);
    m_mode->setObjectName(QStringLiteral("mode"));
    m_mode->addItem(tr("demand"), static_cast<int>(PlanMode::Demand));
    m_mode->addItem(tr("unify (TVM)"), static_cast<int>(PlanMode::Unify));
    m_mode->setToolTip(tr("demand: unpinned nodes go where their consumers are; unify: nodes "
                          "joined by hard edges share a device, as in TVM"));
    connect(m_mode, &QComboBox::activated, this, [this](int index) {
        const auto mode = static_cast<PlanMode>(m_mode->itemData(index).toInt());
        if (mode != m_document->options().mode)
            m_undo->push(new SetModeCommand(m_document, mode));
    });
    connect(m_document, &views::PlacementDocument::planChanged, this, [this] {
        m_mode->setCurrentIndex(m_mode->findData(static_cast<int>(m_document->options().mode)));
    });
    tools->addWidget(m_mode);
    tools->addSeparator();
    m_find = new QLineEdit(this);
    m_find->setObjectName(QStringLiteral("find"));
    m_find->setPlaceholderText(tr("Find node, op or attribute (Ctrl+F)"));
    m_find->setClearButtonEnabled(true);
    m_find->setMaximumWidth(280);
    connect(m_find, &QLineEdit::returnPressed, this, [this] { findNext(m_find->text()); });
    connect(m_find, &QLineEdit::textChanged, this, [this] { m_findCursor = -1; });
    tools->addWidget(m_find);
}

bool MainWindow::openFile(const QString& path) {
    const QFileInfo info(path);
    if (info.size() > m_backgroundLoadBytes) {
        // A large model (ONNX weights): read it in the background; the window stays live.
        if (m_loadWatcher.isRunning())
            return false;
        m_progress->setFormat(tr("loading"));
        m_progress->show();
        statusBar()->showMessage(tr("Reading %1…").arg(info.fileName()));
        m_loadingPath = path;
        m_loadWatcher.setFuture(QtConcurrent::run([path] {
            return std::make_shared<Result<LoadedModel>>(
                loadModelFile(path.toStdString(), GraphFormat::Auto, std::nullopt));
        }));
        return true;
    }
    QString error;
    if (!m_document->open(path, &error)) {
        showError(tr("Cannot open %1").arg(info.fileName()), error);
        return false;
    }
    opened(path);
    return true;
}

void MainWindow::opened(const QString& path) {
    addRecentFile(path);
    setWindowTitle(tr("%1[*] — Placement Explorer").arg(QFileInfo(path).fileName()));
    for (const QString& warning : m_document->warnings())
        statusBar()->showMessage(warning, 8000);
}

void MainWindow::loadDone() {
    m_progress->hide();
    m_progress->setFormat(tr("laying out"));
    const auto loaded = m_loadWatcher.result();
    if (!loaded->ok()) {
        showError(tr("Cannot open %1").arg(QFileInfo(m_loadingPath).fileName()),
                  QString::fromStdString(loaded->error().toString()));
        statusBar()->clearMessage();
        return;
    }
    m_document->setModel(std::move(loaded->value()), m_loadingPath);
    opened(m_loadingPath);
}

bool MainWindow::openExample() {
    // A plan that shows what the product does: pins, inferred devices, copies and a note.
    const QString name = QStringLiteral("split_residual_block.relay");
    QFile example(QStringLiteral(":/examples/") + name);
    QString error;
    if (!example.open(QIODevice::ReadOnly) ||
        !m_document->openText(example.readAll().toStdString(), name, &error)) {
        showError(tr("Cannot open the example"), error);
        return false;
    }
    setWindowTitle(tr("%1[*] — Placement Explorer").arg(name));
    return true;
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Window-modal and not blocking: the application (and tests) keep running.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
}

void MainWindow::chooseFile() {
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a graph"), QString(),
                                     tr("Graphs (*.relay *.txt *.onnx *.json);;All files (*)"));
    if (!path.isEmpty())
        openFile(path);
}

void MainWindow::addRecentFile(const QString& path) {
    QSettings settings;
    QStringList recent = settings.value(QStringLiteral("recentFiles")).toStringList();
    const QString absolute = QFileInfo(path).absoluteFilePath();
    recent.removeAll(absolute);
    recent.prepend(absolute);
    while (recent.size() > 10)
        recent.removeLast();
    settings.setValue(QStringLiteral("recentFiles"), recent);
    updateRecentMenu();
}

void MainWindow::updateRecentMenu() {
    m_recentMenu->clear();
    const QStringList recent = QSettings().value(QStringLiteral("recentFiles")).toStringList();
    for (const QString& path : recent)
        m_recentMenu->addAction(path, this, [this, path] { openFile(path); });
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::startLayout() {
    if (m_layoutPath != m_document->path()) { // a new graph: its own groups
        m_layoutPath = m_document->path();
        m_scene->setCollapsed({});
    }
    ++m_layoutGeneration;
    const views::LayoutRequest request = m_scene->layoutRequest();
    m_progress->show();
    m_cancel->show();
    m_runningLayout = m_layoutGeneration;
    if (request.nodeSizes.size() > kQuickLayoutNodes) {
        // A large graph: show a simple ranked layout at once, replaced by dot's when it is done.
        m_scene->applySimpleLayout();
        m_view->fitAll();
        statusBar()->showMessage(tr("Showing a quick layout while Graphviz lays out %n node(s)…",
                                    nullptr, static_cast<int>(request.nodeSizes.size())));
    }
    m_layoutWatcher.setFuture(
        QtConcurrent::run([request] { return views::cachedLayout(request); }));
}

bool MainWindow::isLayingOut() const {
    return m_layoutWatcher.isRunning();
}

void MainWindow::layoutNow() {
    m_layoutWatcher.waitForFinished();
    ++m_layoutGeneration;
    m_scene->applyLayout(views::cachedLayout(m_scene->layoutRequest()));
    m_progress->hide();
    m_cancel->hide();
    m_view->fitAll();
    emit layoutFinished();
}

void MainWindow::layoutDone() {
    const views::LayoutResult result = m_layoutWatcher.result();
    if (m_runningLayout != m_layoutGeneration)
        return; // a newer layout (or a cancel) superseded this one
    m_progress->hide();
    m_cancel->hide();
    const std::vector<NodeId> selected = m_scene->selectedNodes();
    const bool hadQuickLayout = m_scene->hasItems();
    const QTransform zoom = m_view->transform();
    m_scene->applyLayout(result);
    for (NodeId node : selected) // the user may have selected during the quick layout
        if (auto* item = m_scene->nodeItem(node))
            item->setSelected(true);
    if (hadQuickLayout && !selected.empty()) {
        m_view->setTransform(zoom);
        m_view->centerOn(m_scene->nodeItem(selected.front()));
    } else {
        m_view->fitAll();
    }
    if (!result.error.isEmpty())
        statusBar()->showMessage(
            tr("Layout failed (%1); showing a simple ranked layout").arg(result.error), 10000);
    else
        statusBar()->showMessage(tr("Laid out in %1 s").arg(result.seconds, 0, 'f', 2), 4000);
    refreshStatus();
    emit layoutFinished();
}

void MainWindow::cancelLayout() {
    // Graphviz cannot be interrupted: its result is dropped when it comes.
    ++m_layoutGeneration;
    m_progress->hide();
    m_cancel->hide();
    m_scene->layoutRequest();
    m_scene->applySimpleLayout();
    m_view->fitAll();
    statusBar()->showMessage(tr("Layout cancelled; showing a simple ranked layout"), 8000);
    emit layoutFinished();
}

void MainWindow::pinNodes(const QString& device, const std::vector<NodeId>& nodes) {
    const auto id = m_document->devices().find(device.toStdString());
    if (!id || nodes.empty())
        return;
    const QString text =
        nodes.size() == 1
            ? tr("Pin %1 to %2")
                  .arg(QString::fromStdString(m_document->graph().node(nodes[0]).name), device)
            : tr("Pin %n node(s) to %1", nullptr, static_cast<int>(nodes.size())).arg(device);
    m_undo->push(new SetPinsCommand(m_document, nodes, Pin{PinKind::Plain, *id, "gui"}, text));
}

void MainWindow::clearSelectedPins() {
    std::vector<NodeId> pinned;
    for (NodeId node : m_scene->selectedNodes()) {
        if (m_document->pin(node).active())
            pinned.push_back(node);
    }
    if (pinned.empty())
        return;
    m_undo->push(
        new SetPinsCommand(m_document, pinned, Pin{},
                           tr("Clear %n pin(s)", nullptr, static_cast<int>(pinned.size()))));
}

bool MainWindow::findNext(const QString& text, bool backwards) {
    if (text.isEmpty())
        return false;
    const Graph& graph = m_document->graph();
    const int n = static_cast<int>(graph.size());
    auto matches = [&](const Node& node) {
        if (node.isConstant())
            return false;
        if (QString::fromStdString(node.name).contains(text, Qt::CaseInsensitive) ||
            QString::fromStdString(node.op->name).contains(text, Qt::CaseInsensitive))
            return true;
        for (const auto& [name, value] : node.attrs.entries()) {
            const QString attr = QString::fromStdString(name + "=" + formatAttrRelay(value));
            if (attr.contains(text, Qt::CaseInsensitive))
                return true;
        }
        return false;
    };
    for (int step = 1; step <= n; ++step) {
        const int i = ((m_findCursor + (backwards ? -step : step)) % n + n) % n;
        if (matches(graph.nodes()[static_cast<std::size_t>(i)]) &&
            m_scene->nodeItem(NodeId(static_cast<std::uint32_t>(i)))) {
            m_findCursor = i;
            m_view->showNode(NodeId(static_cast<std::uint32_t>(i)));
            return true;
        }
    }
    statusBar()->showMessage(tr("No node matches '%1'").arg(text), 4000);
    return false;
}

void MainWindow::onSelectionChanged() {
    // A copy badge selects the node that reads the copy.
    for (QGraphicsItem* item : m_scene->selectedItems()) {
        if (auto* badge = qgraphicsitem_cast<views::CopyBadgeItem*>(item)) {
            const NodeId consumer = badge->consumer();
            QMetaObject::invokeMethod(
                this, [this, consumer] { m_view->showNode(consumer); }, Qt::QueuedConnection);
            return;
        }
    }
    m_properties->showNodes(m_scene->selectedNodes());
}

void MainWindow::refreshStatus() {
    const Plan& plan = m_document->plan();
    const DeviceSet& devices = m_document->devices();
    int copies = 0;
    for (const CopyPlan& copy : plan.copies)
        copies += copy.isExplicit ? 0 : 1;
    QStringList memory;
    for (const DeviceMemory& device : plan.memory.devices) {
        QString entry = QString::fromStdString(devices[device.device].name + " " +
                                               formatBytes(device.peakBytes));
        if (const auto& capacity = devices[device.device].memoryCapacity)
            entry += QStringLiteral(" / ") + QString::fromStdString(formatBytes(*capacity));
        memory << entry;
    }
    m_summary->setText(tr("%n copy(ies), %1 copied", nullptr, copies)
                           .arg(QString::fromStdString(formatBytes(plan.copiedBytes()))) +
                       QStringLiteral("  ·  ") +
                       tr("peak memory: %1").arg(memory.join(QStringLiteral(", "))) +
                       QStringLiteral("  ·  ") +
                       tr("%n conflict(s)", nullptr, static_cast<int>(plan.conflicts.size())) +
                       QStringLiteral("  ·  ") +
                       tr("planned in %1 ms").arg(m_document->lastPlanMillis(), 0, 'f', 2));
}

bool MainWindow::exportAs(const QString& kind, const QString& path) {
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
    QSettings().setValue(QStringLiteral("window/geometry"), saveGeometry());
    QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    const QList<QUrl> urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.front().isLocalFile()) {
        event->acceptProposedAction();
        openFile(urls.front().toLocalFile());
    }
}

} // namespace placer::gui

namespace placer::gui {

void MainWindow::startRun() {
    m_runPanel->start();
}

bool MainWindow::openWorkspace(const QString& path) {
    return m_workspace->open(path);
}

const QString& MainWindow::planName() const {
    return m_workspace->planName();
}

bool MainWindow::savePlan(const QString& requested) {
    QString name = requested.isEmpty() ? m_workspace->planName() : requested;
    if (name.isEmpty()) {
        bool ok = false;
        name = QInputDialog::getText(this, tr("Save plan"), tr("Plan name:"), QLineEdit::Normal,
                                     QFileInfo(m_document->path()).completeBaseName(), &ok);
        if (!ok || name.isEmpty())
            return false;
    }
    return m_workspace->save(name);
}

QTextBrowser* MainWindow::runSummary() const {
    return m_runPanel->summary();
}

bool MainWindow::exportTrace(const QString& path) {
    return m_runPanel->exportTrace(path);
}

bool MainWindow::exportTimingsCsv(const QString& path) {
    return m_runPanel->exportTimingsCsv(path);
}

void MainWindow::runFinished(const std::shared_ptr<const RunOutcome>& outcome) {
    const Program& program = outcome->executor->program();
    const RunResult& result = outcome->result;
    const Graph& graph = *outcome->graph;
    // Overlays: per-node median time, per-copy time on the badges.
    std::vector<double> nodeMillis(graph.size(), -1);
    std::vector<double> copyMillis(outcome->plan.copies.size(), -1);
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::Invoke)
            nodeMillis[instr.node.index] = median(result.instrMicros[k]) / 1000.0;
        else if (instr.op == Opcode::DeviceCopy && instr.index >= 0)
            copyMillis[static_cast<std::size_t>(instr.index)] =
                median(result.instrMicros[k]) / 1000.0;
    }
    if (graph.size() == m_document->graph().size()) {
        m_scene->setNodeTimes(nodeMillis);
        m_scene->setCopyTimes(copyMillis);
    }
    m_timeline->setData(runTimeline(*outcome, *m_document));
    m_workspace->recordRun(*outcome, isWindowModified());
    statusBar()->showMessage(
        tr("Run finished: %1 ms median").arg(median(result.latencyMicros) / 1000.0, 0, 'f', 3),
        6000);
}

} // namespace placer::gui

namespace placer::gui {

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

} // namespace placer::gui

namespace placer::gui {

std::vector<double> MainWindow::lastNodeMillis() const {
    const auto outcome = m_run->outcome();
    if (!outcome || !outcome->executor || !outcome->error.isEmpty() || outcome->cancelled ||
        outcome->graph->size() != m_document->graph().size())
        return {};
    const Program& program = outcome->executor->program();
    std::vector<double> millis(outcome->graph->size(), -1);
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (program.code[k].op == Opcode::Invoke)
            millis[program.code[k].node.index] = median(outcome->result.instrMicros[k]) / 1000.0;
    }
    return millis;
}

} // namespace placer::gui

namespace placer::gui {

void MainWindow::setCollapsedScopes(std::set<std::string> scopes) {
    m_scene->setCollapsed(std::move(scopes));
    startLayout();
}

void MainWindow::showNodeMenu(const QPoint& position) {
    // The node (or group) under the cursor, or the selection when it is part of it.
    QGraphicsItem* clicked = nullptr;
    views::NodeItem* clickedNode = nullptr;
    views::GroupItem* clickedGroup = nullptr;
    for (QGraphicsItem* item : m_view->items(position)) {
        clickedNode = qgraphicsitem_cast<views::NodeItem*>(item);
        clickedGroup = qgraphicsitem_cast<views::GroupItem*>(item);
        if (clickedNode || clickedGroup) {
            clicked = item;
            break;
        }
    }
    if (!clicked)
        return;
    if (!clicked->isSelected()) {
        m_scene->clearSelection();
        clicked->setSelected(true);
    }
    const std::vector<NodeId> nodes = m_scene->selectedNodes();
    QMenu menu(this);
    QMenu* pinTo = menu.addMenu(tr("Pin to"));
    for (const VirtualDevice& device : m_document->devices().devices()) {
        const QString name = QString::fromStdString(device.name);
        pinTo->addAction(name, this, [this, name, nodes] { pinNodes(name, nodes); });
    }
    QAction* clear = menu.addAction(tr("Clear Pin"), this, &MainWindow::clearSelectedPins);
    bool anyPinned = false;
    for (NodeId node : nodes)
        anyPinned = anyPinned || m_document->pin(node).active();
    clear->setEnabled(anyPinned);
    menu.addSeparator();
    if (clickedGroup) {
        const QString scope = clickedGroup->scope();
        menu.addAction(tr("Expand %1").arg(scope), this, [this, scope] {
            auto scopes = m_scene->collapsed();
            scopes.erase(scope.toStdString());
            setCollapsedScopes(std::move(scopes));
        });
    } else {
        const auto scopes =
            views::GraphScene::scopesOf(m_document->graph().node(clickedNode->node()).name);
        if (!scopes.empty()) {
            QMenu* collapse = menu.addMenu(tr("Collapse"));
            for (const std::string& scope : scopes) {
                collapse->addAction(QString::fromStdString(scope), this, [this, scope] {
                    auto collapsed = m_scene->collapsed();
                    collapsed.insert(scope);
                    setCollapsedScopes(std::move(collapsed));
                });
            }
        }
    }
    menu.addAction(tr("Fit Selection"), m_view, &views::GraphView::fitSelection);
    menu.exec(m_view->viewport()->mapToGlobal(position));
}

} // namespace placer::gui

namespace placer::gui {} // namespace placer::gui

namespace placer::gui {} // namespace placer::gui
