#include "gui/MainWindow.h"

#include "gui/SetPinsCommand.h"
#include "io/JsonGraph.h"
#include "io/PlanReport.h"
#include "io/RelayWriter.h"
#include "plan/PlannedGraph.h"
#include "views/CopyBadgeItem.h"
#include "views/DevicePalette.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/NodeItem.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QSvgGenerator>
#include <QTextBrowser>
#include <QToolBar>
#include <QUndoStack>
#include <QUndoView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace placer::gui {

namespace {

QString html(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent), m_document(new views::PlacementDocument(this)),
      m_scene(new views::GraphScene(m_document, this)), m_view(new views::GraphView(m_scene, this)),
      m_undo(new QUndoStack(this)) {
    setWindowTitle(tr("Placement Explorer"));
    setCentralWidget(m_view);
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
    connect(m_document, &views::PlacementDocument::modelReset, this, &MainWindow::startLayout);
    connect(m_document, &views::PlacementDocument::modelReset, m_undo, &QUndoStack::clear);
    connect(m_document, &views::PlacementDocument::modelReset, this, &MainWindow::refreshRules);
    connect(m_document, &views::PlacementDocument::planChanged, this,
            &MainWindow::refreshConflicts);
    connect(m_document, &views::PlacementDocument::planChanged, this, &MainWindow::refreshStatus);
    connect(m_document, &views::PlacementDocument::planChanged, this,
            &MainWindow::refreshProperties);
    connect(m_document, &views::PlacementDocument::planChanged, this, [this] {
        if (!m_rules->hasFocus()) // never overwrite what the user is typing
            refreshRules();
    });
    connect(m_scene, &QGraphicsScene::selectionChanged, this, &MainWindow::onSelectionChanged);
    connect(m_view, &views::GraphView::deviceDropped, this, &MainWindow::pinNodes);
    resize(1400, 900);
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
}

MainWindow::~MainWindow() {
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

    auto* rules = new QWidget(this);
    auto* rulesLayout = new QVBoxLayout(rules);
    rulesLayout->setContentsMargins(4, 4, 4, 4);
    rulesLayout->addWidget(new QLabel(tr("Op-name rules, one OP=DEVICE a line (globs, first match "
                                         "wins):"),
                                      rules));
    m_rules = new QPlainTextEdit(rules);
    m_rules->setPlaceholderText(QStringLiteral("nn.conv2d=gpu\nnn.dense=gpu"));
    m_rules->setMaximumHeight(110);
    rulesLayout->addWidget(m_rules);
    auto* form = new QFormLayout;
    m_fallback = new QComboBox(rules);
    form->addRow(tr("Fallback device:"), m_fallback);
    rulesLayout->addLayout(form);
    auto* apply = new QPushButton(tr("Apply rules"), rules);
    apply->setObjectName(QStringLiteral("applyRules"));
    connect(apply, &QPushButton::clicked, this, &MainWindow::applyRules);
    rulesLayout->addWidget(apply);
    rulesLayout->addStretch(1);
    dock(tr("Rules"), QStringLiteral("rules"), rules, Qt::LeftDockWidgetArea);

    m_conflicts = new QListWidget(this);
    m_conflicts->setWordWrap(true);
    connect(m_conflicts, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        m_view->showNode(NodeId(item->data(Qt::UserRole).toUInt()));
    });
    dock(tr("Conflicts"), QStringLiteral("conflicts"), m_conflicts, Qt::RightDockWidgetArea);
    m_properties = new QTextBrowser(this);
    dock(tr("Properties"), QStringLiteral("properties"), m_properties, Qt::RightDockWidgetArea);
    auto* history = new QUndoView(m_undo, this);
    history->setEmptyLabel(tr("<opened>"));
    dock(tr("History"), QStringLiteral("history"), history, Qt::RightDockWidgetArea);
}

void MainWindow::createActions() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    QAction* open = file->addAction(tr("&Open…"), this, &MainWindow::chooseFile);
    open->setShortcut(QKeySequence::Open);
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    updateRecentMenu();
    file->addAction(tr("Open the &Example"), this, &MainWindow::openExample);
    QMenu* exportMenu = file->addMenu(tr("&Export"));
    const std::pair<QString, QString> exports[] = {
        {tr("Image (PNG)…"), QStringLiteral("png")},
        {tr("Vector image (SVG)…"), QStringLiteral("svg")},
        {tr("Relay text with placement…"), QStringLiteral("relay")},
        {tr("JSON graph…"), QStringLiteral("graph")},
        {tr("Plan report (JSON)…"), QStringLiteral("report")}};
    for (const auto& [label, kind] : exports)
        exportMenu->addAction(label, this, [this, kind] { exportAs(kind); });
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
    viewMenu->addAction(tr("Zoom &In"), m_view, &views::GraphView::zoomIn)
        ->setShortcut(QKeySequence::ZoomIn);
    viewMenu->addAction(tr("Zoom &Out"), m_view, &views::GraphView::zoomOut)
        ->setShortcut(QKeySequence::ZoomOut);

    QToolBar* tools = addToolBar(tr("Main"));
    tools->setObjectName(QStringLiteral("mainToolBar"));
    tools->addAction(open);
    tools->addAction(undo);
    tools->addAction(redo);
    tools->addAction(fit);
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
    QString error;
    if (!m_document->open(path, &error)) {
        showError(tr("Cannot open %1").arg(QFileInfo(path).fileName()), error);
        return false;
    }
    addRecentFile(path);
    setWindowTitle(tr("%1 — Placement Explorer").arg(QFileInfo(path).fileName()));
    for (const QString& warning : m_document->warnings())
        statusBar()->showMessage(warning, 8000);
    return true;
}

bool MainWindow::openExample() {
    QFile example(QStringLiteral(":/examples/residual_block.relay"));
    QString error;
    if (!example.open(QIODevice::ReadOnly) ||
        !m_document->openText(example.readAll().toStdString(),
                              QStringLiteral("residual_block.relay"), &error)) {
        showError(tr("Cannot open the example"), error);
        return false;
    }
    setWindowTitle(tr("%1 — Placement Explorer").arg(QStringLiteral("residual_block.relay")));
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
    ++m_layoutGeneration;
    const views::LayoutRequest request = m_scene->layoutRequest();
    m_progress->show();
    m_cancel->show();
    m_layoutWatcher.setFuture(QtConcurrent::run(views::computeLayout, request));
}

bool MainWindow::isLayingOut() const {
    return m_layoutWatcher.isRunning();
}

void MainWindow::layoutNow() {
    m_layoutWatcher.waitForFinished();
    ++m_layoutGeneration;
    m_scene->applyLayout(views::computeLayout(m_scene->layoutRequest()));
    m_progress->hide();
    m_cancel->hide();
    m_view->fitAll();
    emit layoutFinished();
}

void MainWindow::layoutDone() {
    const int generation = m_layoutGeneration;
    const views::LayoutResult result = m_layoutWatcher.result();
    if (generation != m_layoutGeneration)
        return;
    m_progress->hide();
    m_cancel->hide();
    m_scene->applyLayout(result);
    m_view->fitAll();
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
    refreshProperties();
}

void MainWindow::refreshConflicts() {
    m_conflicts->clear();
    const Plan& plan = m_document->plan();
    for (const Conflict& conflict : plan.conflicts) {
        QString text = QString::fromStdString(conflict.message);
        if (!conflict.suggestion.empty())
            text += QStringLiteral("\n→ ") + QString::fromStdString(conflict.suggestion);
        auto* item = new QListWidgetItem(text, m_conflicts);
        item->setForeground(QColor(0xb0, 0x10, 0x10));
        if (!conflict.nodes.empty())
            item->setData(Qt::UserRole, conflict.nodes.front().index);
    }
    if (plan.conflicts.empty())
        new QListWidgetItem(tr("No conflicts."), m_conflicts);
}

void MainWindow::refreshProperties() {
    const std::vector<NodeId> selected = m_scene->selectedNodes();
    if (selected.size() != 1) {
        m_properties->setHtml(
            selected.empty()
                ? tr("<i>Select a node to see its properties and why it runs "
                     "where it does.</i>")
                : tr("%n node(s) selected.", nullptr, static_cast<int>(selected.size())));
        return;
    }
    const NodeId id = selected.front();
    const Graph& graph = m_document->graph();
    const Node& node = graph.node(id);
    const DeviceSet& devices = m_document->devices();
    const Plan& plan = m_document->plan();
    QString text =
        QStringLiteral("<h3>%1 <small>%2</small></h3>").arg(html(node.name), html(node.op->name));
    const DeviceId device = plan.devices[id.index];
    text += QStringLiteral("<p><b>%1</b> %2</p>")
                .arg(tr("Device:"), device.valid() ? html(devices[device].name) : tr("none"));
    text += QStringLiteral("<p><b>%1</b> %2</p>")
                .arg(tr("Why:"), m_document->explain(id).toHtmlEscaped());
    if (node.pin.active())
        text += QStringLiteral("<p><b>%1</b> %2 (%3)</p>")
                    .arg(tr("Pinned:"), html(devices[node.pin.device].name), html(node.pin.origin));
    text += QStringLiteral("<p><b>%1</b><br>").arg(tr("Inputs:"));
    for (const ValueRef input : node.inputs)
        text += html(graph.valueName(input) + "  " + graph.type(input).toShortString()) +
                QStringLiteral("<br>");
    text += QStringLiteral("</p><p><b>%1</b><br>").arg(tr("Outputs:"));
    for (const TensorType& output : node.outputs)
        text += html(output.toShortString() + "  (" + formatBytes(output.bytes()) + ")") +
                QStringLiteral("<br>");
    text += QStringLiteral("</p>");
    if (!node.attrs.empty()) {
        text += QStringLiteral("<p><b>%1</b><br>").arg(tr("Attributes:"));
        for (const auto& [name, value] : node.attrs.entries())
            text += html(name + " = " + formatAttrRelay(value)) + QStringLiteral("<br>");
        text += QStringLiteral("</p>");
    }
    m_properties->setHtml(text);
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

void MainWindow::refreshRules() {
    const PlanOptions& options = m_document->options();
    QStringList lines;
    for (const OpRule& rule : options.rules)
        lines << QString::fromStdString(rule.opPattern + "=" + rule.device);
    m_rules->setPlainText(lines.join(QLatin1Char('\n')));
    m_fallback->clear();
    m_fallback->addItem(tr("(none)"), QString());
    for (const VirtualDevice& device : m_document->devices().devices())
        m_fallback->addItem(QString::fromStdString(device.name),
                            QString::fromStdString(device.name));
    m_fallback->setCurrentIndex(
        std::max(0, m_fallback->findData(QString::fromStdString(options.fallbackDevice))));
}

void MainWindow::applyRules() {
    std::vector<OpRule> rules;
    const QStringList lines = m_rules->toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (const QString& line : lines) {
        const QString trimmed = line.trimmed();
        const int eq = trimmed.indexOf(QLatin1Char('='));
        if (eq <= 0 || eq == trimmed.size() - 1) {
            showError(tr("Bad rule"), tr("'%1' is not of the form OP=DEVICE").arg(trimmed));
            return;
        }
        const std::string device = trimmed.mid(eq + 1).trimmed().toStdString();
        if (!m_document->devices().find(device)) {
            showError(
                tr("Bad rule"),
                tr("'%1' names unknown device '%2'").arg(trimmed, QString::fromStdString(device)));
            return;
        }
        rules.push_back(OpRule{trimmed.left(eq).trimmed().toStdString(), device});
    }
    const std::string fallback = m_fallback->currentData().toString().toStdString();
    if (rules == m_document->options().rules && fallback == m_document->options().fallbackDevice)
        return;
    m_undo->push(new SetRulesCommand(m_document, std::move(rules), fallback));
}

void MainWindow::exportAs(const QString& kind) {
    static const QMap<QString, QString> kFilters = {
        {QStringLiteral("png"), tr("PNG image (*.png)")},
        {QStringLiteral("svg"), tr("SVG image (*.svg)")},
        {QStringLiteral("relay"), tr("Relay text (*.relay)")},
        {QStringLiteral("graph"), tr("JSON graph (*.json)")},
        {QStringLiteral("report"), tr("Plan report (*.json)")}};
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export"), QString(), kFilters[kind]);
    if (path.isEmpty())
        return;
    const QRectF source = m_scene->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    bool ok = true;
    if (kind == QStringLiteral("png")) {
        QImage image((source.size() * 2).toSize(), QImage::Format_ARGB32);
        image.fill(Qt::white);
        QPainter painter(&image);
        painter.setRenderHint(QPainter::Antialiasing);
        m_scene->render(&painter, QRectF(), source);
        painter.end();
        ok = image.save(path);
    } else if (kind == QStringLiteral("svg")) {
        QSvgGenerator svg;
        svg.setFileName(path);
        svg.setSize(source.size().toSize());
        svg.setViewBox(QRectF(QPointF(0, 0), source.size()));
        svg.setTitle(windowTitle());
        QPainter painter(&svg);
        m_scene->render(&painter, QRectF(QPointF(0, 0), source.size()), source);
        ok = painter.end();
    } else {
        const Graph& graph = m_document->graph();
        const DeviceSet& devices = m_document->devices();
        std::string text;
        if (kind == QStringLiteral("report")) {
            text =
                planReportJson(graph, devices, m_document->options(), m_document->plan()).dump() +
                "\n";
        } else {
            const Graph planned = applyPlan(graph, devices, m_document->plan());
            if (kind == QStringLiteral("graph")) {
                text = writeJsonGraph(planned, devices).dump() + "\n";
            } else {
                for (const Node& node : planned.nodes()) {
                    if (node.op->dialect != OpDialect::Relay) {
                        showError(tr("Cannot export Relay"),
                                  tr("'%1' is not a Relay operator; export a JSON graph instead")
                                      .arg(QString::fromStdString(node.op->name)));
                        return;
                    }
                }
                text = writeRelay(planned, devices);
            }
        }
        QFile file(path);
        ok = file.open(QIODevice::WriteOnly | QIODevice::Truncate) &&
             file.write(text.data(), static_cast<qint64>(text.size())) ==
                 static_cast<qint64>(text.size());
    }
    if (!ok)
        showError(tr("Export failed"), tr("Cannot write %1").arg(path));
    else
        statusBar()->showMessage(tr("Exported %1").arg(path), 4000);
}

void MainWindow::closeEvent(QCloseEvent* event) {
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
