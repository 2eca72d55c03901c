// The GUI driven like a user: open files, drag a device chip onto nodes, undo and redo, find,
// conflicts, a bad file, the screenshot; offscreen.
#include "gui/DeviceDialog.h"
#include "gui/MainWindow.h"
#include "gui/ModelOpener.h"
#include "gui/PlanBrowser.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "gui/SplitDialog.h"
#include "gui/WorkspaceController.h"
#include "io/Json.h"
#include "io/ModelLoader.h"
#include "plan/Split.h"
#include "report/ModelExplorerData.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "views/LayoutController.h"

#include "ScopedLayers.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "views/CopyBadgeItem.h"
#include "views/DevicePalette.h"
#include "views/EdgeItem.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/HintBar.h"
#include "views/NodeItem.h"
#include "views/PropertiesPanel.h"
#include "views/TimelineWidget.h"
#include "vm/Calibrate.h"

#include <functional>

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStatusBar>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QTranslator>
#include <QUndoStack>
#include <QtTest>

using namespace placer;

namespace {

const QString kExamples = QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/");
const QString kModels = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/");

/// The planned device of every node, for snapshot comparisons.
std::vector<std::uint32_t> placement(const views::PlacementDocument& document) {
    std::vector<std::uint32_t> devices;
    for (DeviceId d : document.plan().devices)
        devices.push_back(d.index);
    return devices;
}

NodeId nodeNamed(const gui::MainWindow& window, const char* name) {
    const auto id = window.document()->graph().find(name);
    if (!id)
        qFatal("no node %s", name);
    return *id;
}

/// Drops the palette's chip for `device` on the canvas at `scenePos` (centred first): the drag
/// and drop events are delivered to the canvas as the windowing system would.
void dropDeviceAt(gui::MainWindow& window, const QString& device, QPointF scenePos) {
    QVERIFY(window.devicePalette()->chip(device));
    window.view()->centerOn(scenePos);
    const QPoint target = window.view()->mapFromScene(scenePos);
    QVERIFY(window.view()->viewport()->rect().contains(target));
    QMimeData mime;
    mime.setData(views::kDeviceMimeType, device.toUtf8());
    QDragEnterEvent enter(target, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.view()->viewport(), &enter);
    QVERIFY(enter.isAccepted());
    QDragMoveEvent move(target, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.view()->viewport(), &move);
    QVERIFY(move.isAccepted());
    QDropEvent drop(QPointF(target), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(window.view()->viewport(), &drop);
    QVERIFY(drop.isAccepted());
}

/// Drops the palette's chip for `device` on the node's item.
void dropDeviceOnNode(gui::MainWindow& window, const QString& device, NodeId node) {
    views::NodeItem* item = window.scene()->nodeItem(node);
    QVERIFY(item);
    dropDeviceAt(window, device, item->scenePos());
}

void openAndWait(gui::MainWindow& window, const QString& path) {
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    QVERIFY(window.openFile(path));
    QVERIFY(laidOut.wait(20000));
    QVERIFY(window.scene()->hasItems());
}

/// Opens test::scopedLayersJson(layers, 41), written to a file in `dir`, as a user opens a
/// file, and waits for its layout.
void openScopedLayers(gui::MainWindow& window, const QTemporaryDir& dir, int layers) {
    const QString path = dir.filePath(QStringLiteral("large.json"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray::fromStdString(test::scopedLayersJson(layers, 41)));
    }
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    QVERIFY(window.openFile(path));
    QVERIFY(laidOut.wait(120000));
}

/// Runs `act`, answering the message box named `name` it opens by clicking `button`; returns
/// whether the box was shown.
bool answeringBox(const QString& name, QMessageBox::StandardButton button,
                  const std::function<void()>& act) {
    bool answered = false;
    QTimer answer;
    answer.setInterval(10);
    QObject::connect(&answer, &QTimer::timeout, [&] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box || answered || box->objectName() != name || !box->isVisible())
            return;
        answered = true;
        QTest::mouseClick(box->button(button), Qt::LeftButton);
    });
    answer.start();
    act();
    answer.stop();
    return answered;
}

/// Triggers `action` and answers the save dialog it opens with `path`, as a user would.
void triggerAndSaveAs(QAction* action, const QString& path) {
    bool answered = false;
    QTimer answer;
    answer.setInterval(10);
    QObject::connect(&answer, &QTimer::timeout, [&] {
        auto* dialog = qobject_cast<QFileDialog*>(QApplication::activeModalWidget());
        auto* name =
            dialog ? dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit")) : nullptr;
        if (!name || answered || !dialog->isVisible())
            return;
        answered = true;
        name->setText(path); // typed into the file name field, then Return
        QTest::keyClick(name, Qt::Key_Return);
    });
    answer.start();
    action->trigger();
    answer.stop();
    QVERIFY2(answered, qPrintable(action->text()));
}

/// Runs the plan with the Run panel's button and waits for the outcome.
std::shared_ptr<const RunOutcome> runAndWait(gui::MainWindow& window) {
    QSignalSpy finished(window.runController(), &gui::RunController::finished);
    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("run")), Qt::LeftButton);
    if (!finished.wait(60000))
        return nullptr;
    return window.runController()->outcome();
}

/// Closes the error dialogs the window shows, returning their texts.
QStringList takeErrorDialogs(gui::MainWindow& window) {
    QStringList texts;
    for (QMessageBox* box : window.findChildren<QMessageBox*>(QStringLiteral("errorDialog"))) {
        texts << box->text();
        box->setObjectName(QString());
        box->close();
        box->deleteLater();
    }
    return texts;
}

/// `source` opened by a session with `request` and put in the window's document, planned there
/// with `options`; true once it is laid out.
bool openInWindow(gui::MainWindow& window, const ModelSource& source, const PlanRequest& request,
                  const PlanOptions& options) {
    Session session;
    auto planned = session.open(source, request);
    if (!planned.ok()) {
        qWarning("%s", planned.error().toString().c_str());
        return false;
    }
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    window.document()->setModel(std::move(planned.value().model),
                                QString::fromStdString(source.path));
    window.document()->setOptions(options);
    return laidOut.wait(20000);
}

/// Selects `names` with the mouse, as a user does: a click on the first, control-clicks on
/// the rest, each centred in the view first.
void clickNodes(gui::MainWindow& window, const std::vector<const char*>& names) {
    for (const char* name : names) {
        views::NodeItem* item = window.scene()->nodeItem(nodeNamed(window, name));
        QVERIFY2(item, name);
        window.view()->centerOn(item);
        QTest::mouseClick(window.view()->viewport(), Qt::LeftButton,
                          name == names.front() ? Qt::NoModifier : Qt::ControlModifier,
                          window.view()->mapFromScene(item->scenePos()));
    }
}

/// Triggers `action` and, once its modal SplitDialog shows, lets `answer` set it up, then
/// presses OK; the dialog's preview as it was before OK, or a null string when none came.
QString answerSplitDialog(QAction* action, const std::function<void(gui::SplitDialog*)>& answer) {
    QString preview;
    bool answered = false;
    QTimer timer;
    timer.setInterval(10);
    QObject::connect(&timer, &QTimer::timeout, [&] {
        auto* dialog = qobject_cast<gui::SplitDialog*>(QApplication::activeModalWidget());
        if (!dialog || answered || !dialog->isVisible())
            return;
        answered = true;
        answer(dialog);
        preview = dialog->preview()->text();
        QTest::mouseClick(dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok),
                          Qt::LeftButton);
    });
    timer.start();
    action->trigger();
    timer.stop();
    return answered ? preview : QString();
}

} // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        // Workspaces and settings of these tests stay in a folder of their own.
        qputenv("XDG_DATA_HOME", m_home.path().toUtf8());
        qputenv("XDG_CONFIG_HOME", m_home.path().toUtf8());
        qputenv("XDG_CACHE_HOME", m_home.path().toUtf8());
    }
    void init() { QCoreApplication::setOrganizationName(QStringLiteral("placer-tests")); }

    void savePlansAndBrowseThem() {
        gui::MainWindow window;
        window.show();
        QTemporaryDir dir;
        QVERIFY(window.workspace()->open(dir.filePath("ws.db")));
        openAndWait(window, kExamples + "residual_block.relay");
        QVERIFY(!window.isWindowModified());
        dropDeviceOnNode(window, QStringLiteral("cpu"), nodeNamed(window, "%9"));
        QVERIFY(window.isWindowModified()); // the unsaved-changes marker
        QVERIFY(window.savePlan(QStringLiteral("mine")));
        QVERIFY(!window.isWindowModified());
        QCOMPARE(window.workspace()->planName(), QStringLiteral("mine"));
        QTableWidget* table = window.planBrowser()->table();
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(table->item(0, 0)->text(), QStringLiteral("mine"));
        QVERIFY(table->item(0, 3)->text().toInt() > 0); // copies
        const auto saved = placement(*window.document());
        // More edits, then back to the saved state with undo: clean again.
        dropDeviceOnNode(window, QStringLiteral("cpu"), nodeNamed(window, "%4"));
        QVERIFY(window.isWindowModified());
        window.undoStack()->undo();
        QVERIFY(!window.isWindowModified());
        // Another graph, then the saved plan again: same pins, same placement.
        openAndWait(window, kModels + "tiny_resnet.onnx");
        QVERIFY(window.workspace()->planName().isEmpty());
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        QVERIFY(window.workspace()->openPlan(QStringLiteral("mine")));
        QVERIFY(laidOut.wait(20000));
        QCOMPARE(placement(*window.document()), saved);
        QVERIFY(window.document()->pin(nodeNamed(window, "%9")).active());
        QVERIFY(!window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))); // unchanged answer
        // Duplicate, rename, compare, delete.
        QVERIFY(window.workspace()->duplicate(QStringLiteral("mine"), QStringLiteral("copy")));
        QVERIFY(!window.workspace()->duplicate(QStringLiteral("mine"), QStringLiteral("copy")));
        window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))->accept();
        QVERIFY(window.workspace()->rename(QStringLiteral("copy"), QStringLiteral("other")));
        QCOMPARE(table->rowCount(), 2);
        window.document()->setRules({{"nn.conv2d", "gpu"}}, "cpu");
        QVERIFY(window.savePlan(QStringLiteral("split")));
        const QString comparison =
            window.workspace()->compare(QStringLiteral("mine"), QStringLiteral("split"));
        QVERIFY2(comparison.contains("moved") && comparison.contains("copies"),
                 qPrintable(comparison));
        QVERIFY(window.workspace()->remove(QStringLiteral("other")));
        QCOMPARE(table->rowCount(), 2);
        // A run of the saved plan is recorded with it and shows in the browser.
        window.findChild<QSpinBox*>(QStringLiteral("iterations"))->setValue(2);
        QSignalSpy finished(window.runController(), &gui::RunController::finished);
        window.runPanel()->start();
        QVERIFY(finished.wait(60000));
        bool shown = false;
        for (int row = 0; row < table->rowCount(); ++row)
            shown = shown || (table->item(row, 0)->text() == window.workspace()->planName() &&
                              table->item(row, 5)->text().endsWith(" ms"));
        QVERIFY(shown);
        QVERIFY(window.workspace()->openPlan(QStringLiteral("mine")));
        QVERIFY(laidOut.wait(20000));
        window.runPanel()->start(); // recorded with "mine": both plans have a run now
        QVERIFY(finished.wait(60000));
        const QString withRuns =
            window.workspace()->compare(QStringLiteral("mine"), QStringLiteral("split"));
        QVERIFY2(withRuns.contains("Last runs") && withRuns.contains("Largest changes"),
                 qPrintable(withRuns));
        // The browser's Open button opens the selected plan.
        window.planBrowser()->select(QStringLiteral("mine"));
        QTest::mouseClick(
            window.planBrowser()->findChild<QPushButton*>(QStringLiteral("plan-open")),
            Qt::LeftButton);
        QCOMPARE(window.workspace()->planName(), QStringLiteral("mine"));
    }

    void opensAFileAndLaysItOut() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const Graph& graph = window.document()->graph();
        int drawn = 0;
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            drawn += window.scene()->nodeItem(NodeId(i)) ? 1 : 0;
        QCOMPARE(drawn, static_cast<int>(graph.size()));
        QVERIFY(!window.scene()->edges().empty());
        // Dataflow goes top to bottom: every edge's consumer is below its producer.
        for (auto* edge : window.scene()->edges())
            QVERIFY(window.scene()->nodeItem(edge->consumer())->y() >
                    window.scene()->nodeItem(edge->value().node)->y());
        QVERIFY(window.statusSummary()->text().contains("copies") ||
                window.statusSummary()->text().contains("copy"));
    }

    void dragDeviceChipOntoNode() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const NodeId relu = nodeNamed(window, "%2");
        const auto gpu = *window.document()->devices().find("gpu");
        const auto cpu = *window.document()->devices().find("cpu");
        QCOMPARE(window.document()->plan().devices[relu.index], gpu); // gpu is the default
        QVERIFY(window.scene()->badges().empty());
        dropDeviceOnNode(window, QStringLiteral("cpu"), relu);
        // The node is pinned, repainted in cpu's colour, and copies appear around it.
        QCOMPARE(window.document()->pin(relu).device, cpu);
        QCOMPARE(window.document()->plan().devices[relu.index], cpu);
        views::NodeItem* item = window.scene()->nodeItem(relu);
        QCOMPARE(item->fill(), window.document()->deviceColor(cpu));
        QVERIFY(item->isPinned());
        QVERIFY(!window.scene()->badges().empty());
        QVERIFY(window.statusSummary()->text().contains("copied"));
        QCOMPARE(window.undoStack()->count(), 1);
        QVERIFY(window.undoStack()->text(0).contains("%2"));
    }

    void oneDragOntoASelectionIsOneUndoStep() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const auto before = placement(*window.document());
        // Rubber-band select a region holding several nodes, then drop on one of them.
        for (const char* name : {"%4", "%5", "%6"})
            window.scene()->nodeItem(nodeNamed(window, name))->setSelected(true);
        dropDeviceOnNode(window, QStringLiteral("cpu"), nodeNamed(window, "%5"));
        const auto cpu = *window.document()->devices().find("cpu");
        for (const char* name : {"%4", "%5", "%6"})
            QCOMPARE(window.document()->pin(nodeNamed(window, name)).device, cpu);
        QCOMPARE(window.undoStack()->count(), 1);
        const auto after = placement(*window.document());
        // redo -> undo -> redo gives the exact plans back.
        window.undoStack()->undo();
        QCOMPARE(placement(*window.document()), before);
        for (const char* name : {"%4", "%5", "%6"})
            QVERIFY(!window.document()->pin(nodeNamed(window, name)).active());
        window.undoStack()->redo();
        QCOMPARE(placement(*window.document()), after);
        window.undoStack()->undo();
        QCOMPARE(placement(*window.document()), before);
        // Keyboard shortcuts reach the same stack.
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier | Qt::ShiftModifier);
        QCOMPARE(placement(*window.document()), after);
        QTest::keyClick(&window, Qt::Key_Z, Qt::ControlModifier);
        QCOMPARE(placement(*window.document()), before);
    }

    // Alt+1 … Alt+9 pin the selection to the palette's devices, one undo step each, as a drop;
    // a device the palette lacks, or no selection, changes nothing.
    void keyboardPinsTheSelection() {
        gui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        openAndWait(window, kExamples + "residual_block.relay");
        const DeviceSet& devices = window.document()->devices();
        QVERIFY(devices.size() >= 2);
        const auto before = placement(*window.document());
        QTest::keyClick(&window, Qt::Key_2, Qt::AltModifier); // nothing selected
        QCOMPARE(window.undoStack()->count(), 0);
        for (const char* name : {"%4", "%5"})
            window.scene()->nodeItem(nodeNamed(window, name))->setSelected(true);
        QTest::keyClick(&window, Qt::Key_2, Qt::AltModifier);
        for (const char* name : {"%4", "%5"})
            QCOMPARE(window.document()->pin(nodeNamed(window, name)).device, DeviceId(1));
        QCOMPARE(window.undoStack()->count(), 1);
        QTest::keyClick(&window, Qt::Key_1, Qt::AltModifier);
        for (const char* name : {"%4", "%5"})
            QCOMPARE(window.document()->pin(nodeNamed(window, name)).device, DeviceId(0));
        QCOMPARE(window.undoStack()->count(), 2);
        QTest::keyClick(&window, Qt::Key_9, Qt::AltModifier); // no ninth device
        QCOMPARE(window.undoStack()->count(), 2);
        // The predicted timeline's bars say what they are when hovered (made then, not at every
        // re-plan): the node, its op, its device and its time.
        const views::TimelineData& predicted = window.timeline()->data();
        const auto bar = std::find_if(predicted.bars.begin(), predicted.bars.end(),
                                      [](const views::TimelineBar& b) { return b.key >= 0; });
        QVERIFY(bar != predicted.bars.end());
        const QString tip = predicted.tooltipOf(*bar);
        QVERIFY2(tip.contains(QStringLiteral(" predicted")) &&
                     tip.contains(predicted.labelOf(*bar)),
                 qPrintable(tip));
        window.undoStack()->undo();
        window.undoStack()->undo();
        QCOMPARE(placement(*window.document()), before);
    }

    // A pipeline in the window: the Run panel's Micro-batches box, typed into, re-plans at once
    // (one undo step); the predicted timeline numbers each micro-batch's bars and shows the
    // second device's bubbles, hatched and named; a run shows the measured micro-batches above
    // the prediction and matches the reference.
    /// A run with one device slowed from its fifth iteration, Adapt ticked in the Run panel:
    /// the timeline marks the re-placement with its reason, the device palette says where each
    /// device ran (by load: bound to a core) and that b was re-placed; a device made to fail
    /// instead is left out and the palette says so.
    void aSlowedDeviceIsReplacedOnTheTimeline() {
        gui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ModelSource source;
        source.path = PLACER_SOURCE_DIR "/tests/models/two_branches.json";
        PlanRequest request;
        QVERIFY(!takePlanOption("devices", "a:vcpu,b:vcpu", &source, &request));
        // Opened in demand mode, auto mode set on the document alone: a session planning in
        // auto mode would calibrate the suites' workspace, which later tests find uncalibrated.
        PlanOptions options = request.options;
        options.mode = PlanMode::Auto;
        QVERIFY(openInWindow(window, source, request, options));
        window.findChild<QSpinBox*>(QStringLiteral("iterations"))->setValue(30);
        auto* adapt = window.findChild<QCheckBox*>(QStringLiteral("adapt"));
        QVERIFY(adapt && !adapt->isChecked());
        QTest::mouseClick(adapt, Qt::LeftButton, {}, QPoint(8, adapt->height() / 2));
        QVERIFY(adapt->isChecked());
        // The speed watch needs three slow iterations in a row against the first ones: on a
        // machine busy with other suites the readings may wander too much for that, so a run
        // that saw no drift is tried again (tst_adaptation checks the watch itself; what is
        // checked here is what the window shows of it). The readings go in the message.
        qputenv("PLACER_SLOW", "b@5:4");
        std::shared_ptr<const RunOutcome> outcome;
        QString readings;
        for (int attempt = 0; attempt < 3 && (!outcome || outcome->events.empty()); ++attempt) {
            outcome = runAndWait(window);
            if (!outcome)
                break;
            for (const StreamInfo& stream : outcome->result.streams) {
                readings += QStringLiteral("\n%1:").arg(QString::fromStdString(stream.physical));
                for (double micros : stream.busyMicros)
                    readings += QStringLiteral(" %1").arg(micros, 0, 'f', 0);
            }
        }
        qunsetenv("PLACER_SLOW");
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        QVERIFY2(!outcome->events.empty(),
                 qPrintable(QStringLiteral("no drift seen; busy µs") + readings));
        const views::TimelineData& timeline = window.timeline()->data();
        QCOMPARE(timeline.lanes.front(), QStringLiteral("iterations"));
        // A re-placement's marker, with its reason and swap. Which device the speed watch names
        // is the machine's to say (b, slowed; and on a busy machine a too, or a alone where a
        // shares b's core): the window shows what the run reported, and that is what is checked.
        QCOMPARE(timeline.markers.size(), outcome->events.size());
        const views::TimelineMarker& marker = timeline.markers.front();
        const RunEvent& event = outcome->events.front();
        QVERIFY2(marker.label.startsWith(QStringLiteral("re-placed: ")) &&
                     marker.label.contains(QString::fromStdString(event.text())),
                 qPrintable(marker.label));
        QVERIFY2(marker.label.contains(QStringLiteral(" than assumed")), qPrintable(marker.label));
        QVERIFY(marker.tooltip.contains(QStringLiteral("Planned again and swapped in")));
        // Each device's chip says where it ran (bound to a core), and a device the event names
        // says when its work was re-placed.
        for (const char* name : {"a", "b"}) {
            const QString chip = window.findChild<QFrame*>(QStringLiteral("chip-%1").arg(name))
                                     ->findChildren<QLabel*>()
                                     .at(1)
                                     ->text();
            QVERIFY2(chip.contains(QStringLiteral(" on core ")), qPrintable(chip));
            const bool named =
                event.reason.starts_with(std::string(name) + " (") ||
                event.reason.find("; " + std::string(name) + " (") != std::string::npos ||
                event.reason.find(", " + std::string(name) + " (") != std::string::npos;
            QCOMPARE(chip.contains(QStringLiteral("re-placed at %1").arg(event.iteration)), named);
        }
        // A device that fails instead: left out, on the timeline and on its chip.
        QTest::mouseClick(adapt, Qt::LeftButton, {}, QPoint(8, adapt->height() / 2));
        qputenv("PLACER_FAULT", "b@3");
        const auto failed = runAndWait(window);
        qunsetenv("PLACER_FAULT");
        QVERIFY2(failed, qPrintable(window.runController()->error()));
        QCOMPARE(failed->events.size(), std::size_t{1});
        QVERIFY(window.timeline()->data().markers.front().label.startsWith(
            QStringLiteral("failed: b (vcpu")));
        QVERIFY(window.timeline()->data().markers.front().label.contains(
            QStringLiteral("failed at iteration 3")));
        QVERIFY(window.findChild<QFrame*>(QStringLiteral("chip-b"))
                    ->findChildren<QLabel*>()
                    .at(1)
                    ->text()
                    .contains(QStringLiteral("failed at 3")));
    }

    void pipelinesInTheRunPanelAndTimeline() {
        gui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        ModelSource source;
        source.path = (kModels + "tiny_encoder_batch4.onnx").toStdString();
        PlanRequest request;
        for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
                 {"devices", "a:vcpu,b:vcpu"}, {"rule", "MatMul=a"}, {"fallback", "b"}})
            QVERIFY(!takePlanOption(name, value, &source, &request));
        QVERIFY(openInWindow(window, source, request, request.options));
        QVERIFY(window.document()->plan().splits.empty());

        auto* box = window.findChild<QSpinBox*>(QStringLiteral("microBatches"));
        QVERIFY(box);
        box->setFocus();
        box->selectAll();
        QTest::keyClicks(box, QStringLiteral("4"));
        QTest::keyClick(box, Qt::Key_Enter);
        QTRY_COMPARE(window.document()->options().microBatches, 4);
        QCOMPARE(window.undoStack()->count(), 1);
        const Plan& plan = window.document()->plan();
        QVERIFY(!plan.splits.empty() && plan.splits.front().microBatched);
        bool status = false;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
            status = status || label->text().contains(QStringLiteral("pipelined in 4"));
        QVERIFY(status);

        const views::TimelineData& predicted = window.timeline()->data();
        const auto count = [](const views::TimelineData& data, const QString& prefix, bool idle) {
            return std::count_if(data.bars.begin(), data.bars.end(), [&](const auto& bar) {
                return bar.idle == idle && data.labelOf(bar).startsWith(prefix);
            });
        };
        for (int wave = 0; wave < 4; ++wave)
            QVERIFY2(count(predicted, QStringLiteral("µb%1 ").arg(wave), false) > 0,
                     qPrintable(QStringLiteral("no predicted bar of micro-batch %1").arg(wave)));
        QVERIFY(count(predicted, QStringLiteral("bubble"), true) > 0);
        const auto fill =
            std::find_if(predicted.bars.begin(), predicted.bars.end(),
                         [](const auto& bar) { return bar.idle && bar.label == "bubble (fill)"; });
        QVERIFY(fill != predicted.bars.end());
        QVERIFY(predicted.tooltipOf(*fill).contains(QStringLiteral("predicted")));

        const auto outcome = runAndWait(window);
        QVERIFY(outcome);
        QVERIFY(outcome->reference && outcome->reference->ok);
        const views::TimelineData& measured = window.timeline()->data();
        QVERIFY(count(measured, QStringLiteral("µb3 "), false) > 0);
        // The measured lanes first, the predicted ones under them.
        QVERIFY(measured.lanes.back().endsWith(QStringLiteral("predicted")));
        QVERIFY(!measured.lanes.front().endsWith(QStringLiteral("predicted")));
        // The summary sets each device's busy and idle time (its bubble) against the prediction.
        bool bubbles = false;
        for (QTextBrowser* browser : window.findChildren<QTextBrowser*>())
            bubbles = bubbles || browser->toPlainText().contains(QStringLiteral("idle, predicted"));
        QVERIFY2(bubbles,
                 "the run panel does not set the devices' idle time against the prediction");

        // Throughput mode: three batches streamed, one undo step, re-predicted at once.
        auto* stream = window.findChild<QSpinBox*>(QStringLiteral("streamBatches"));
        QVERIFY(stream);
        stream->setFocus();
        stream->selectAll();
        QTest::keyClicks(stream, QStringLiteral("3"));
        QTest::keyClick(stream, Qt::Key_Enter);
        QTRY_COMPARE(window.document()->options().streamBatches, 3);
        QCOMPARE(window.undoStack()->count(), 2);
        QVERIFY(streamRegion(window.document()->plan()));
        status = false;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
            status = status || label->text().contains(QStringLiteral("a stream of 3 batch"));
        QVERIFY(status);
        QTRY_VERIFY(count(window.timeline()->data(), QStringLiteral("µb11 "), false) > 0);
        const auto streamed = runAndWait(window);
        QVERIFY(streamed);
        QVERIFY(streamed->reference && streamed->reference->ok);
        const auto figures = streamRunTimes(*streamed);
        QVERIFY(figures && figures->batches == 3 && figures->itemsPerSecond > 0);
        bool said = false;
        for (QLabel* label : window.findChildren<QLabel*>())
            said = said || (label->text().contains(QStringLiteral("Stream")) &&
                            label->text().contains(QStringLiteral("items/s")));
        for (QTextBrowser* browser : window.findChildren<QTextBrowser*>())
            said = said || (browser->toPlainText().contains(QStringLiteral("Stream")) &&
                            browser->toPlainText().contains(QStringLiteral("items/s")));
        QVERIFY2(said, "the run panel does not give the stream's items per second");

        window.undoStack()->undo();
        QCOMPARE(window.document()->options().streamBatches, 1);
        QCOMPARE(stream->value(), 1);
        window.undoStack()->undo();
        QCOMPARE(window.document()->options().microBatches, 1);
        QCOMPARE(box->value(), 1);
    }

    void dragSelectedNodesOntoAChip() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const NodeId a = nodeNamed(window, "%10"), b = nodeNamed(window, "%11");
        window.scene()->nodeItem(a)->setSelected(true);
        window.scene()->nodeItem(b)->setSelected(true);
        views::DeviceChip* chip = window.devicePalette()->chip(QStringLiteral("cpu"));
        QMimeData mime;
        mime.setData(views::kNodesMimeType,
                     QByteArray::number(a.index) + "," + QByteArray::number(b.index) + ",");
        const QPoint at = chip->rect().center();
        QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(chip, &enter);
        QVERIFY(enter.isAccepted());
        QDropEvent drop(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
        QApplication::sendEvent(chip, &drop);
        const auto cpu = *window.document()->devices().find("cpu");
        QCOMPARE(window.document()->pin(a).device, cpu);
        QCOMPARE(window.document()->pin(b).device, cpu);
        QCOMPARE(window.undoStack()->count(), 1);
    }

    void conflictsAreListedAndClickable() {
        gui::MainWindow window;
        window.show();
        // An int32 convolution: the gpu has no int kernel for it.
        QTemporaryDir dir;
        const QString path = dir.filePath("int_conv.relay");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("#[version = \"0.0.5\"]\n"
                   "def @main(%a: Tensor[(1, 1, 4, 4), int32], %w: Tensor[(1, 1, 1, 1), int32]) {\n"
                   "  %0 = nn.conv2d(%a, %w);\n"
                   "  negative(%0)\n"
                   "}\n");
        file.close();
        openAndWait(window, path);
        // "No conflicts.", then the planner's note on the copy the fallback needs.
        QCOMPARE(window.conflictList()->count(), 2);
        QCOMPARE(window.conflictList()->item(0)->text(), QStringLiteral("No conflicts."));
        QVERIFY(window.conflictList()->item(0)->data(Qt::UserRole).isNull());
        QCOMPARE(window.conflictList()->item(1)->text(),
                 QStringLiteral("Note: %0 is used on cpu and gpu: placed on cpu, copied to gpu, "
                                "64 B each"));
        const NodeId conv = nodeNamed(window, "%0");
        dropDeviceOnNode(window, QStringLiteral("gpu"), conv);
        QVERIFY(!window.document()->plan().conflicts.empty());
        QListWidgetItem* first = window.conflictList()->item(0);
        QVERIFY2(first->text().contains("int32"), qPrintable(first->text()));
        QCOMPARE(NodeId(first->data(Qt::UserRole).toUInt()), conv);
        QVERIFY(window.scene()->nodeItem(conv)->isConflicted());
        window.scene()->clearSelection();
        const QRect rect = window.conflictList()->visualItemRect(first);
        QTest::mouseClick(window.conflictList()->viewport(), Qt::LeftButton, {}, rect.center());
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{conv});
        // Undo takes the conflict away again.
        window.undoStack()->undo();
        QVERIFY(window.document()->plan().conflicts.empty());
        QVERIFY(!window.scene()->nodeItem(conv)->isConflicted());
    }

    void propertiesExplainThePlacement() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const NodeId conv = nodeNamed(window, "%4");
        views::NodeItem* item = window.scene()->nodeItem(conv);
        window.view()->centerOn(item);
        const QPoint at = window.view()->mapFromScene(item->scenePos());
        QTest::mouseClick(window.view()->viewport(), Qt::LeftButton, {}, at);
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{conv});
        const QString text = window.properties()->toPlainText();
        QVERIFY2(text.contains("nn.conv2d") && text.contains("Why:"), qPrintable(text));
        QVERIFY2(text.contains("16x16x16") || text.contains("1x16x16x16"), qPrintable(text));
        // Esc clears the selection.
        window.view()->setFocus();
        QTest::keyClick(window.view(), Qt::Key_Escape);
        QVERIFY(window.scene()->selectedNodes().empty());
    }

    void findSelectsAndCentres() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        QVERIFY(window.findNext(QStringLiteral("nn.dense")));
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{nodeNamed(window, "%12")});
        const QPoint shown =
            window.view()->mapFromScene(window.scene()->nodeItem(nodeNamed(window, "%12"))->pos());
        QVERIFY(window.view()->viewport()->rect().contains(shown));
        // By attribute, then next wraps around between the matches.
        QVERIFY(window.findNext(QStringLiteral("pool_size")));
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{nodeNamed(window, "%3")});
        QVERIFY(window.findNext(QStringLiteral("conv2d")));
        const auto first = window.scene()->selectedNodes();
        QVERIFY(window.findNext(QStringLiteral("conv2d")));
        QVERIFY(window.scene()->selectedNodes() != first);
        QVERIFY(!window.findNext(QStringLiteral("no-such-thing")));
        // Typed into the toolbar's field with Enter.
        auto* field = window.findChild<QLineEdit*>(QStringLiteral("find"));
        QVERIFY(field);
        field->setText(QStringLiteral("softmax"));
        QTest::keyClick(field, Qt::Key_Return);
        QCOMPARE(window.document()->graph().node(window.scene()->selectedNodes().front()).op->name,
                 std::string("nn.softmax"));
    }

    void whyIsThisHereLeadsIntoAClosedGroup() {
        QTemporaryDir dir;
        gui::MainWindow window;
        window.show();
        openScopedLayers(window, dir, 100);
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        // Every op follows the output's device, so the input's device was decided by nodes
        // inside closed groups: the Properties panel links them, and a click opens the way.
        const NodeId input = nodeNamed(window, "x");
        const NodeId output = nodeNamed(window, "/layer99/add");
        QVERIFY(window.scene()->nodeItem(input));
        QVERIFY(!window.scene()->nodeItem(output));
        QCOMPARE(window.document()->plan().reasonChain(input).back(), output);
        window.view()->centerOn(window.scene()->nodeItem(input));
        QTest::mouseClick(window.view()->viewport(), Qt::LeftButton, {},
                          window.view()->mapFromScene(window.scene()->nodeItem(input)->pos()));
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{input});
        views::PropertiesPanel* panel = window.properties();
        const QString text = panel->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Decided by:")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("more")), qPrintable(text)); // 4,060 long
        const QTextCursor link = panel->document()->find(QStringLiteral("/layer99/add"));
        QVERIFY(!link.isNull());
        QTextCursor inside = link;
        inside.setPosition(link.selectionStart() + 2);
        panel->setTextCursor(inside);
        const QPoint at = panel->cursorRect(inside).center();
        QTest::mouseClick(panel->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(laidOut.wait(120000));
        QTRY_VERIFY(window.scene()->nodeItem(output));
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{output});
        QVERIFY(!window.scene()->collapsed().count("/layer99/"));
        QVERIFY(window.scene()->opened().count("/layer99/"));
    }

    void aDeviceDroppedOnAnOpenGroupsFramePinsEverythingInside() {
        QTemporaryDir dir;
        gui::MainWindow window;
        window.show();
        openScopedLayers(window, dir, 100);
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        window.layout()->expand("/layer5/");
        QVERIFY(laidOut.wait(120000));
        QCOMPARE(window.scene()->frames().size(), std::size_t(1));
        const views::FrameItem* frame = window.scene()->frames().front();
        const std::vector<NodeId> inside = window.scene()->frameMembers(frame->index());
        QCOMPARE(inside.size(), std::size_t(41));
        // Onto the frame's title, where no node is.
        dropDeviceAt(window, QStringLiteral("cpu"), frame->titleRect().center());
        const DeviceId cpu = *window.document()->devices().find("cpu");
        for (NodeId node : inside) {
            QCOMPARE(window.document()->pin(node).device, cpu);
            QVERIFY(window.scene()->nodeItem(node)->isPinned());
        }
        QCOMPARE(window.undoStack()->count(), 1);
        // Nothing outside it.
        QVERIFY(!window.document()->pin(nodeNamed(window, "/layer6/op0")).active());
    }

    void aNodeInsideAClosedGroupOfALargeGraphIsFoundAndPinned() {
        // 20,500 ops in 500 name scopes: the canvas opens with the scopes collapsed.
        QTemporaryDir dir;
        gui::MainWindow window;
        window.show();
        openScopedLayers(window, dir, 500);
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        QVERIFY(window.document()->graph().size() > 20000);
        QCOMPARE(window.scene()->collapsed().size(), std::size_t(500));
        const NodeId node = nodeNamed(window, "/layer317/op12");
        QVERIFY(!window.scene()->nodeItem(node));
        // Find, typed into the toolbar's field: the node's group opens and the node is shown.
        auto* field = window.findChild<QLineEdit*>(QStringLiteral("find"));
        QVERIFY(field);
        field->setText(QStringLiteral("layer317/op12"));
        QTest::keyClick(field, Qt::Key_Return);
        QVERIFY(laidOut.wait(120000));
        QTRY_VERIFY(window.scene()->nodeItem(node));
        QCOMPARE(window.scene()->selectedNodes(), std::vector<NodeId>{node});
        QVERIFY(!window.scene()->collapsed().count("/layer317/"));
        // Dropped on the cpu by drag and drop: pinned there, and the plan is the planner's for
        // that pin, copies between the cpu and the gpu included.
        const DeviceId cpu = *window.document()->devices().find("cpu");
        dropDeviceOnNode(window, QStringLiteral("cpu"), node);
        const Plan& plan = window.document()->plan();
        QCOMPARE(window.document()->pin(node).device, cpu);
        QCOMPARE(plan.devices[node.index], cpu);
        QCOMPARE(window.undoStack()->count(), 1);
        PlanOptions options = window.document()->options();
        options.costs.reset();
        const Plan expected =
            planDevices(window.document()->graph(), window.document()->devices(), options);
        QCOMPARE(plan.devices, expected.devices);
        QCOMPARE(plan.copies.size(), expected.copies.size());
        QVERIFY(!plan.copies.empty());
        // Its prediction follows (the graph is large), and the timeline shows it.
        QTRY_VERIFY(!window.document()->predictionPending());
        QVERIFY(window.document()->plan().prediction);
        QVERIFY(window.document()->plan().prediction->micros[node.index] > 0);
        QVERIFY(!window.timeline()->data().bars.empty());
    }

    void modeAndRulesAreUndoable() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        auto* rules = window.findChild<QPlainTextEdit*>();
        QVERIFY(rules);
        rules->setPlainText(QStringLiteral("nn.conv2d=gpu\nnn.dense=gpu"));
        auto* fallback = window.findChildren<QComboBox*>().front();
        for (QComboBox* box : window.findChildren<QComboBox*>())
            if (box->objectName() != QStringLiteral("mode"))
                fallback = box;
        fallback->setCurrentIndex(fallback->findData(QStringLiteral("cpu")));
        QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("applyRules")),
                          Qt::LeftButton);
        const auto cpu = *window.document()->devices().find("cpu");
        const auto gpu = *window.document()->devices().find("gpu");
        QCOMPARE(window.document()->plan().devices[nodeNamed(window, "%4").index], gpu);
        QCOMPARE(window.document()->plan().devices[nodeNamed(window, "%9").index], cpu);
        QCOMPARE(window.undoStack()->count(), 1);
        auto* mode = window.findChild<QComboBox*>(QStringLiteral("mode"));
        mode->setCurrentIndex(1);
        emit mode->activated(1);
        QCOMPARE(window.document()->options().mode, PlanMode::Unify);
        QCOMPARE(window.undoStack()->count(), 2);
        window.undoStack()->undo();
        QCOMPARE(window.document()->options().mode, PlanMode::Demand);
        QCOMPARE(mode->currentIndex(), 0);
        window.undoStack()->undo();
        QVERIFY(window.document()->options().rules.empty());

        // Auto-place from the keyboard, one undoable step: the rules' absence leaves every op
        // to the cost model, which explains each choice; the status bar shows the prediction.
        mode->setFocus();
        // The first auto placement on an uncalibrated machine offers a calibration: not now.
        QVERIFY(answeringBox(QStringLiteral("offerCalibration"), QMessageBox::No,
                             [&] { QTest::keyClick(mode, Qt::Key_End); }));
        QCOMPARE(window.document()->options().mode, PlanMode::Auto);
        QCOMPARE(window.undoStack()->undoText(), QStringLiteral("Auto-place"));
        const Plan& plan = window.document()->plan();
        QVERIFY(plan.prediction.has_value());
        const NodeId conv = nodeNamed(window, "%4");
        QCOMPARE(plan.reasons[conv.index].kind, ReasonKind::Auto);
        QVERIFY(QString::fromStdString(plan.explain(window.document()->graph(),
                                                    window.document()->devices(),
                                                    window.document()->options(), conv))
                    .startsWith(QStringLiteral("auto: ")));
        bool shown = false;
        for (QLabel* label : window.statusBar()->findChildren<QLabel*>())
            shown = shown || label->text().contains(QStringLiteral("predicted latency"));
        QVERIFY(shown);
        // Before any run, the timeline shows the predicted schedule, a lane per device.
        auto* timeline = window.findChild<views::TimelineWidget*>();
        QVERIFY(timeline);
        QCOMPARE(timeline->data().lanes.size(), std::size_t{2});
        QCOMPARE(timeline->data().lanes[0], QStringLiteral("cpu predicted"));
        QVERIFY(!timeline->data().bars.empty());
        QCOMPARE(timeline->data().duration, plan.prediction->makespanMicros);
        window.undoStack()->undo();
        QCOMPARE(window.document()->options().mode, PlanMode::Demand);
    }

    void badFileShowsAnErrorAndKeepsTheGraph() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        const std::size_t nodes = window.document()->graph().size();
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.relay");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) {\n  frobnicate(%x)\n}\n");
        file.close();
        QVERIFY(!window.openFile(bad));
        auto* dialog = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(dialog);
        QVERIFY2(dialog->text().contains("bad.relay:3:3"), qPrintable(dialog->text()));
        QVERIFY2(dialog->text().contains("frobnicate"), qPrintable(dialog->text()));
        QCOMPARE(window.document()->graph().size(), nodes);
        QVERIFY(window.scene()->hasItems());
        dialog->accept();
    }

    void collapsedGroupsTakeDropsAndExpand() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kModels + "tiny_resnet.onnx");
        const NodeId member = nodeNamed(window, "/layer1/conv1/Conv");
        QVERIFY(window.scene()->nodeItem(member));
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        window.layout()->setCollapsedScopes({"/layer1/"});
        QVERIFY(laidOut.wait(20000));
        QVERIFY(!window.scene()->nodeItem(member)); // inside the group now
        views::GroupItem* group = nullptr;
        for (QGraphicsItem* item : window.scene()->items())
            if (auto* g = qgraphicsitem_cast<views::GroupItem*>(item))
                group = g;
        QVERIFY(group);
        QCOMPARE(group->scope(), QStringLiteral("/layer1/"));
        const auto members = window.scene()->groupMembers(group->unit());
        QVERIFY(members.size() >= 4);
        // A chip dropped on the group pins every node inside, as one step.
        dropDeviceAt(window, QStringLiteral("cpu"), group->scenePos());
        const auto cpu = *window.document()->devices().find("cpu");
        for (NodeId node : members)
            QCOMPARE(window.document()->pin(node).device, cpu);
        QCOMPARE(window.undoStack()->count(), 1);
        // The group's colour bar is all cpu.
        QCOMPARE(group->shares().size(), std::size_t{1});
        QCOMPARE(group->shares()[0].first, window.document()->deviceColor(cpu));
        // Double-click expands it again.
        const QPoint at = window.view()->mapFromScene(group->scenePos());
        QTest::mouseDClick(window.view()->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(laidOut.wait(20000));
        QVERIFY(window.scene()->nodeItem(member));
        QVERIFY(window.scene()->nodeItem(member)->isPinned());
    }

    void largeFilesLoadInTheBackground() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        window.opener()->setBackgroundThreshold(0); // every file counts as large
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        QVERIFY(window.openFile(kModels + "tiny_mobilenet.onnx"));
        // Still the old graph until the background read is done; the window answers meanwhile.
        QVERIFY(window.document()->path().endsWith("residual_block.relay") ||
                window.document()->path().endsWith("tiny_mobilenet.onnx"));
        QVERIFY(laidOut.wait(20000));
        QVERIFY(window.document()->path().endsWith("tiny_mobilenet.onnx"));
        QVERIFY(window.scene()->hasItems());
        // A bad large file: an error dialog once read, the graph stays.
        QTemporaryDir dir;
        QFile bad(dir.filePath("broken.onnx"));
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("this is not protobuf");
        bad.close();
        QVERIFY(window.openFile(bad.fileName()));
        QTRY_VERIFY(window.findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        QVERIFY(window.document()->path().endsWith("tiny_mobilenet.onnx"));
        window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))->accept();
    }

    void opensOnnxModels() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kModels + "tiny_inception.onnx");
        // The Netron export: the model with each node's placement in its doc_string.
        window.document()->setRules({{"Conv", "cpu"}}, "");
        QTemporaryDir out;
        QVERIFY(window.exportAs(QStringLiteral("netron"), out.filePath("annotated.onnx")));
        QFile annotated(out.filePath("annotated.onnx"));
        QVERIFY(annotated.open(QIODevice::ReadOnly));
        const QByteArray bytes = annotated.readAll();
        QVERIFY(bytes.contains("placement: cpu ("));
        QVERIFY(bytes.contains("placement: device copy"));
        QVERIFY(loadModelFile(out.filePath("annotated.onnx").toStdString(), GraphFormat::Auto,
                              std::nullopt)
                    .ok()); // still a valid model
        QVERIFY(window.scene()->edges().size() > 10);
        // Constants (weights) are not drawn; everything else is.
        int drawn = 0, constants = 0;
        const Graph& graph = window.document()->graph();
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            drawn += window.scene()->nodeItem(NodeId(i)) ? 1 : 0;
            constants += graph.nodes()[i].isConstant() ? 1 : 0;
        }
        QCOMPARE(drawn + constants, static_cast<int>(graph.size()));
    }

    void runFillsTimelineAndOverlays() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        window.document()->setRules({{"nn.conv2d", "gpu"}}, "cpu");
        window.findChild<QSpinBox*>(QStringLiteral("iterations"))->setValue(3);
        QSignalSpy finished(window.runController(), &gui::RunController::finished);
        QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("run")), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        const auto outcome = window.runController()->outcome();
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        QCOMPARE(outcome->result.latencyMicros.size(), std::size_t{3});
        QVERIFY(outcome->reference && outcome->reference->ok);
        // The timeline has a lane per device's compute and bars for every node and copy.
        const views::TimelineData& timeline = window.timeline()->data();
        QVERIFY(timeline.lanes.size() >= 3);
        int nodes = 0;
        for (const Node& node : window.document()->graph().nodes())
            nodes += node.isParameter() || node.isConstant() ? 0 : 1;
        QVERIFY(static_cast<int>(timeline.bars.size()) >= nodes);
        QVERIFY(timeline.duration > 0);
        // Hovering a bar names it.
        const views::TimelineBar& bar = timeline.bars.front();
        QVERIFY(!bar.tooltip.isEmpty());
        // The canvas shows times on nodes and badges; the summary has the latency.
        const NodeId conv = nodeNamed(window, "%4");
        QVERIFY(window.scene()->nodeItem(conv)->timingMillis() > 0);
        QVERIFY(!window.scene()->badges().empty());
        for (const views::CopyBadgeItem* badge : window.scene()->badges())
            QVERIFY2(badge->timing().endsWith("s"), qPrintable(badge->timing())); // µs or ms
        QVERIFY(window.runPanel()->summary()->toPlainText().contains("Latency"));
        QVERIFY(window.runPanel()->summary()->toPlainText().contains("reference"));
        QTemporaryDir dir;
        QVERIFY(window.runPanel()->exportTrace(dir.filePath("trace.json")));
        QVERIFY(window.runPanel()->exportTimingsCsv(dir.filePath("times.csv")));
        QFile csv(dir.filePath("times.csv"));
        QVERIFY(csv.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(csv.readAll());
        QVERIFY(text.startsWith("kind,name,op,device,from,bytes,median_ms"));
        QVERIFY(text.contains("node,\"%4\",\"nn.conv2d\",\"gpu\""));
        QVERIFY(text.contains("copy,"));
        // The Model Explorer overlays: devices as categories, times on a gradient.
        const std::vector<double> millis = window.lastNodeMillis();
        QCOMPARE(millis.size(), window.document()->graph().size());
        Json times = modelExplorerTimeData(window.document()->graph(), millis);
        QVERIFY(times["results"]["%4"]["value"].asDouble() > 0);
        QCOMPARE(times["gradient"].items().size(), std::size_t{3});
        Json devices =
            modelExplorerDeviceData(window.document()->graph(), window.document()->devices(),
                                    window.document()->plan(), {"#111111", "#222222"});
        QCOMPARE(devices["results"]["%4"]["value"].asString(), std::string("gpu"));
        QCOMPARE(devices["results"]["%9"]["bgColor"].asString(), std::string("#111111"));
        // A new plan clears the (now stale) overlay: no node or badge shows a time.
        window.document()->setRules({}, "");
        QVERIFY(window.scene()->nodeItem(conv)->timingMillis() < 0);
        for (const views::CopyBadgeItem* badge : window.scene()->badges())
            QVERIFY(badge->timing().isEmpty());
    }

    // A run on CPUs fuses a convolution with the activation after it: the canvas shows the
    // group's time on the convolution, and the activation, which has no time of its own, as
    // fused into it; a new plan clears both.
    void runMarksFusedNodes() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kModels + "tiny_resnet.onnx");
        window.findChild<QSpinBox*>(QStringLiteral("iterations"))->setValue(1);
        QSignalSpy finished(window.runController(), &gui::RunController::finished);
        QSignalSpy loading(window.runController(), &gui::RunController::loading);
        QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("run")), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        const auto outcome = window.runController()->outcome();
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        // The weights' loading was reported, up to all of them, before the iterations.
        QVERIFY(!loading.isEmpty());
        QCOMPARE(loading.last().at(0).toInt(), 1000);
        const views::NodeItem* conv =
            window.scene()->nodeItem(nodeNamed(window, "/stem/stem.0/Conv"));
        const views::NodeItem* relu =
            window.scene()->nodeItem(nodeNamed(window, "/stem/stem.2/Relu"));
        QVERIFY(conv->timingMillis() > 0);
        QCOMPARE(conv->fusedMembers(), 1);
        QVERIFY(relu->timingMillis() < 0);
        QCOMPARE(relu->fusedInto(), QStringLiteral("/stem/stem.0/Conv"));
        QVERIFY2(window.runPanel()->summary()->toPlainText().contains("post-op fusion"),
                 qPrintable(window.runPanel()->summary()->toPlainText()));
        window.document()->setRules({}, "");
        QVERIFY(relu->fusedInto().isEmpty());
        QCOMPARE(conv->fusedMembers(), 0);
    }

    // File ▸ Export: every action of the menu, answered through its save dialog, writes its own
    // format; kinds that do not apply say why and write nothing.
    void everyExportActionWritesItsFormat_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("relay-example") << kExamples + "split_residual_block.relay";
        QTest::newRow("onnx-model") << kModels + "tiny_inception.onnx";
    }
    void everyExportActionWritesItsFormat() {
        QFETCH(QString, model);
        gui::MainWindow window;
        window.show();
        openAndWait(window, model);
        const bool onnx = model.endsWith(".onnx");
        const auto outcome = runAndWait(window); // for the run-time overlays
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        auto* menu = window.menuBar()->findChild<QMenu*>(QStringLiteral("exportMenu"));
        QVERIFY(menu);
        QTemporaryDir dir;
        QStringList kinds;
        for (QAction* action : menu->actions()) {
            const QString kind = action->data().toString();
            kinds << kind;
            const QString path = dir.filePath("export-" + kind);
            triggerAndSaveAs(action, path);
            QFile file(path);
            const bool refused = (kind == "relay" && onnx) || (kind == "netron" && !onnx);
            if (refused) {
                const QStringList errors = takeErrorDialogs(window);
                QCOMPARE(errors.size(), 1);
                QVERIFY2(errors.front().contains(kind == "relay" ? "not a Relay operator"
                                                                 : "need a model read from ONNX"),
                         qPrintable(errors.front()));
                QVERIFY(!file.exists());
                continue;
            }
            QVERIFY2(takeErrorDialogs(window).isEmpty(), qPrintable(kind));
            QVERIFY2(file.open(QIODevice::ReadOnly), qPrintable(kind));
            const QByteArray bytes = file.readAll();
            if (kind == "png") {
                QImage image;
                QVERIFY(image.loadFromData(bytes, "PNG"));
                QVERIFY(image.width() > 100 && image.height() > 100);
            } else if (kind == "svg") {
                QVERIFY(bytes.startsWith("<?xml"));
                QVERIFY(bytes.contains("<svg"));
            } else if (kind == "relay") {
                auto back = loadModelText(bytes.toStdString(), "back.relay", GraphFormat::Relay,
                                          std::nullopt);
                QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
                QVERIFY(bytes.contains("on_device"));
            } else if (kind == "netron") {
                auto back = loadModelText(bytes.toStdString(), "back.onnx", GraphFormat::Auto,
                                          std::nullopt);
                QVERIFY2(back.ok(), back.ok() ? "" : back.error().toString().c_str());
                QVERIFY(bytes.contains("placement: "));
                QVERIFY(bytes.contains("; median time "));
            } else {
                auto json = Json::parse(bytes.toStdString(), path.toStdString());
                QVERIFY2(json.ok(), qPrintable(kind));
                if (kind == "graph")
                    QVERIFY(loadModelText(bytes.toStdString(), "back.json", GraphFormat::Auto,
                                          std::nullopt)
                                .ok());
                if (kind == "report")
                    QVERIFY(json.value()["nodes"].items().size() > 5);
                if (kind == "me-devices" || kind == "me-times")
                    QVERIFY(json.value()["results"].size() > 5);
                if (kind == "me-times")
                    QCOMPARE(json.value()["gradient"].items().size(), std::size_t{3});
            }
        }
        QCOMPARE(kinds, (QStringList{"png", "svg", "relay", "graph", "report", "me-devices",
                                     "me-times", "netron"}));
    }

    // A run too large for its devices is refused before anything is allocated, with the
    // executor's message in the Run panel and an error dialog; the window then works as before.
    void aRunTooLargeIsRefusedAndTheAppGoesOn() {
        QTemporaryDir dir;
        QFile huge(dir.filePath("huge.relay"));
        QVERIFY(huge.open(QIODevice::WriteOnly));
        huge.write("#[version = \"0.0.5\"]\n"
                   "def @main(%x: Tensor[(100000000000, 100000), float32]) {\n"
                   "  nn.relu(%x)\n}\n");
        huge.close();
        gui::MainWindow window;
        window.show();
        openAndWait(window, huge.fileName());
        auto outcome = runAndWait(window);
        QVERIFY(!outcome);
        const QString error = window.runController()->error();
        QVERIFY2(error.contains("storage 0 (holding %x) of 36379.8 TiB does not fit on"),
                 qPrintable(error));
        QVERIFY(window.runPanel()->summary()->toPlainText().contains(error));
        const QStringList errors = takeErrorDialogs(window);
        QCOMPARE(errors, QStringList{error});
        // The app goes on: another graph opens and runs.
        openAndWait(window, kExamples + "split_residual_block.relay");
        outcome = runAndWait(window);
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        QVERIFY(outcome->reference && outcome->reference->ok);
        QVERIFY(window.runPanel()->summary()->toPlainText().contains("Latency"));
        // The run's node times went into the workspace's cost table, and the status bar set the
        // measured latency against the prediction; the next plan predicts from them.
        auto costs = window.workspace()->store()->loadCosts(machineName());
        QVERIFY(costs.ok() && !costs.value().empty());
        QVERIFY2(window.statusBar()->currentMessage().contains(QStringLiteral("; predicted ")),
                 qPrintable(window.statusBar()->currentMessage()));
        window.document()->setMode(PlanMode::Auto);
        const Plan& plan = window.document()->plan();
        QVERIFY(plan.prediction.has_value());
        QVERIFY(std::any_of(plan.prediction->measured.begin(), plan.prediction->measured.end(),
                            [](std::uint8_t m) { return m != 0; }));
    }

    // Devices ▸ Calibrate measures this machine in the background, keeps it in the workspace
    // and re-plans with it; auto placement's offer is made once.
    void calibratingFromTheMenu() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        CalibrationOptions quick;
        quick.quick = true;
        quick.iterations = 2;
        window.setCalibrationOptions(quick);
        auto* mode = window.findChild<QComboBox*>(QStringLiteral("mode"));
        mode->setFocus();
        QVERIFY(answeringBox(QStringLiteral("offerCalibration"), QMessageBox::Yes,
                             [&] { QTest::keyClick(mode, Qt::Key_End); }));
        QCOMPARE(window.document()->options().mode, PlanMode::Auto);
        auto stored = window.workspace()->store()->loadCalibration(machineName());
        QVERIFY(stored.ok() && stored.value());
        QVERIFY(stored.value()->devices.size() >= 3);
        QVERIFY(stored.value()->devices.front().calibrated);
        QVERIFY2(window.statusBar()->currentMessage().startsWith(QStringLiteral("Calibrated")),
                 qPrintable(window.statusBar()->currentMessage()));
        // The plan's costs are the calibrated ones now.
        const auto& costs = window.document()->options().costs;
        QVERIFY(costs && costs->physical(DeviceId(0)).calibrated);
        // Once offered, not again; the menu still calibrates.
        mode->setCurrentIndex(0);
        emit mode->activated(0);
        QVERIFY(!answeringBox(QStringLiteral("offerCalibration"), QMessageBox::Yes,
                              [&] { QTest::keyClick(mode, Qt::Key_End); }));
        QVERIFY(window.calibrate());
    }

    // The first screen shows what the product does: the bundled example has pins, inferred
    // devices, copies and a note, and a hint says how to drag a device onto a node until the
    // user dismisses it.
    void theExampleShowsPinsCopiesAndNotes() {
        QSettings().remove(QStringLiteral("hints/dragDevice"));
        {
            gui::MainWindow window;
            window.show();
            QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
            QVERIFY(window.opener()->openExample());
            QVERIFY(laidOut.wait(20000));
            const views::PlacementDocument& document = *window.document();
            const Plan& plan = document.plan();
            int pinned = 0, inferred = 0;
            std::set<std::uint32_t> devicesUsed;
            for (std::uint32_t i = 0; i < document.graph().size(); ++i) {
                if (document.graph().node(NodeId(i)).role() != OpRole::Compute)
                    continue;
                (document.pin(NodeId(i)).active() ? pinned : inferred) += 1;
                devicesUsed.insert(plan.devices[i].index);
            }
            QVERIFY(pinned >= 2);
            QVERIFY(inferred > pinned);
            QCOMPARE(devicesUsed.size(), std::size_t{2});
            QVERIFY(!plan.copies.empty());
            QVERIFY(!plan.notes.empty());
            QVERIFY(plan.conflicts.empty());
            // Drawn: copy badges on the canvas, the note in the Conflicts and notes panel.
            int badges = 0;
            for (QGraphicsItem* item : window.scene()->items())
                badges += qgraphicsitem_cast<views::CopyBadgeItem*>(item) ? 1 : 0;
            QCOMPARE(badges, static_cast<int>(plan.copies.size()));
            QStringList listed;
            for (int i = 0; i < window.conflictList()->count(); ++i)
                listed << window.conflictList()->item(i)->text();
            QVERIFY2(listed.filter("Note: %3 is used on gpu and cpu").size() == 1,
                     qPrintable(listed.join('|')));
            QVERIFY2(window.statusSummary()->text().startsWith("2 cop"),
                     qPrintable(window.statusSummary()->text()));
            // The hint, dismissed with its button, stays dismissed in the next window.
            QVERIFY(window.hint()->isVisible());
            QVERIFY(window.hint()->findChild<QLabel*>()->text().contains("drag a device chip"));
            QTest::mouseClick(window.hint()->closeButton(), Qt::LeftButton);
            QVERIFY(!window.hint()->isVisible());
        }
        gui::MainWindow again;
        again.show();
        QVERIFY(!again.hint()->isVisible());
        QVERIFY(again.hint()->dismissed());
    }

    // The GUI takes the plan options with the CLI's parser: the same options, the same
    // messages for bad ones, and a non-zero exit instead of a window on a bad one.
    void commandLineTakesThePlanOptions_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("rules-and-fallback") << QStringList{kExamples + "residual_block.relay",
                                                           "--rule",
                                                           "nn.conv2d=gpu",
                                                           "--fallback",
                                                           "cpu",
                                                           "--constants",
                                                           "copy"}
                                            << 0 << "";
        QTest::newRow("pin-on-the-example") << QStringList{"--pin", "%3=cpu"} << 0 << "";
        QTest::newRow("unknown-device")
            << QStringList{"--pin", "x=nope"} << 1
            << "--pin x=nope: unknown device 'nope' (devices: cpu, gpu)";
        QTest::newRow("bad-mode") << QStringList{"--mode", "fast"} << 1
                                  << "--mode must be demand, unify or auto, not 'fast'";
        QTest::newRow("bad-rule") << QStringList{"--rule", "conv"} << 1
                                  << "--rule 'conv' is not of the form NAME=DEVICE";
        QTest::newRow("missing-file")
            << QStringList{"/no/such/model.onnx"} << 1 << "/no/such/model.onnx";
    }
    void commandLineTakesThePlanOptions() {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString shot = dir.filePath("shot.png");
        QProcess process;
        process.start(PLACER_GUI_BINARY, args + QStringList{"--screenshot", shot});
        QVERIFY(process.waitForFinished(60000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY2(process.exitCode() == code, qPrintable(err));
        QVERIFY2(err.contains(message), qPrintable(err));
        QCOMPARE(QFile::exists(shot), code == 0);
    }

    void aboutSaysTheVersionPlacerSays() {
        gui::MainWindow window;
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        // Through the menu, as a user opens it: Alt+H, then the item.
        QMenu* help = nullptr;
        for (QAction* action : window.menuBar()->actions())
            if (action->text() == QStringLiteral("&Help"))
                help = action->menu();
        QVERIFY(help);
        auto* about = window.findChild<QAction*>(QStringLiteral("about"));
        QVERIFY(about && help->actions().contains(about));
        about->trigger();
        QMessageBox* box = nullptr;
        QTRY_VERIFY((box = window.findChild<QMessageBox*>(QStringLiteral("aboutBox"))));
        QTRY_VERIFY(box->isVisible());
        QVERIFY2(box->text().contains(QStringLiteral("Placement Explorer " PLACER_VERSION_TEXT)),
                 qPrintable(box->text()));
        // The command line says the same version.
        QProcess placer;
        placer.start(QStringLiteral(PLACER_CLI_BINARY), {QStringLiteral("--version")});
        QVERIFY(placer.waitForFinished(30000));
        QCOMPARE(QString::fromUtf8(placer.readAllStandardOutput()).trimmed(),
                 QStringLiteral("placer " PLACER_VERSION_TEXT));
        QTest::keyClick(box, Qt::Key_Return);
        QTRY_VERIFY(!window.findChild<QMessageBox*>(QStringLiteral("aboutBox")));
    }

    void editDevicesIsOneUndoStep() {
        gui::MainWindow window;
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        window.editDevices();
        auto* dialog = window.findChild<gui::DeviceDialog*>(QStringLiteral("deviceDialog"));
        QVERIFY(dialog);
        QTRY_VERIFY(dialog->isVisible());
        dialog->addDevice();
        QTableWidget* table = dialog->table();
        QCOMPARE(table->rowCount(), 3);
        table->item(2, 0)->setText(QStringLiteral("npu"));
        table->item(1, 2)->setText(QStringLiteral("1KiB")); // gpu gets far too little memory
        dialog->accept();
        QCOMPARE(window.document()->devices().size(), 3);
        QVERIFY(window.devicePalette()->chip(QStringLiteral("npu")));
        bool capacity = false;
        for (const Conflict& conflict : window.document()->plan().conflicts)
            capacity = capacity || conflict.kind == ConflictKind::MemoryCapacity;
        QVERIFY(capacity);
        QCOMPARE(window.undoStack()->count(), 1);
        // The new device takes work by drag and drop, and runs get it on a virtual CPU.
        dropDeviceOnNode(window, QStringLiteral("npu"), nodeNamed(window, "%9"));
        QCOMPARE(window.document()->plan().devices[nodeNamed(window, "%9").index].index, 2u);
        window.undoStack()->undo();
        window.undoStack()->undo();
        QCOMPARE(window.document()->devices().size(), 2);
        QVERIFY(!window.devicePalette()->chip(QStringLiteral("npu")));
        QVERIFY(!window.document()->devices()[DeviceId(1)].memoryCapacity);
        // Bad input keeps the dialog open with a message and changes nothing.
        window.editDevices();
        dialog = window.findChildren<gui::DeviceDialog*>().back();
        dialog->table()->item(0, 2)->setText(QStringLiteral("lots"));
        QString error;
        QVERIFY(!dialog->result(&error));
        QVERIFY2(error.contains("'lots'"), qPrintable(error));
        dialog->reject();
    }

    void germanAndChineseTranslationsLoad_data() {
        QTest::addColumn<QString>("locale");
        QTest::addColumn<QString>("fileMenu");
        QTest::addColumn<QString>("noConflicts");
        QTest::newRow("german") << "de_DE"
                                << "&Datei"
                                << "Keine Konflikte.";
        QTest::newRow("simplified-chinese") << "zh_CN"
                                            << "文件(&F)"
                                            << "没有冲突。";
    }
    void germanAndChineseTranslationsLoad() {
        QFETCH(QString, locale);
        QFETCH(QString, fileMenu);
        QFETCH(QString, noConflicts);
        QTranslator translator;
        QVERIFY(translator.load(QLocale(locale), QStringLiteral("placement_explorer"),
                                QStringLiteral("_"), QStringLiteral(":/i18n")));
        QCoreApplication::installTranslator(&translator);
        {
            gui::MainWindow window;
            window.show();
            openAndWait(window, kExamples + "residual_block.relay");
            QStringList menus;
            for (QAction* action : window.menuBar()->actions())
                menus << action->text();
            QVERIFY2(menus.contains(fileMenu), qPrintable(menus.join(", ")));
            QCOMPARE(window.conflictList()->item(0)->text(), noConflicts);
        }
        QCoreApplication::removeTranslator(&translator);
    }

    void splitAcrossDevicesIsOneUndoStep() {
        // The example's residual block at batch 4, in a workspace of its own.
        QFile example(kExamples + "residual_block.relay");
        QVERIFY(example.open(QIODevice::ReadOnly));
        QTemporaryDir dir;
        const QString model = dir.filePath("block4.relay");
        {
            QFile file(model);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(
                QString::fromUtf8(example.readAll())
                    .replace(QStringLiteral("(1, 3, 32, 32)"), QStringLiteral("(4, 3, 32, 32)"))
                    .toUtf8());
        }
        gui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        QVERIFY(window.workspace()->open(dir.filePath("ws.db")));
        openAndWait(window, model);
        const auto before = placement(*window.document());
        // Select the stem with the mouse: a click, then control-clicks.
        const std::vector<const char*> stem = {"%0", "%1", "%2", "%3"};
        clickNodes(window, stem);
        QCOMPARE(window.scene()->selectedNodes().size(), std::size_t{4});
        // Edit > Split Across Devices: the dialog previews the rows; give cpu three shares.
        auto* action = window.findChild<QAction*>(QStringLiteral("splitSelection"));
        QVERIFY(action);
        const QString preview = answerSplitDialog(action, [](gui::SplitDialog* dialog) {
            QSpinBox* share = dialog->shareBox(0);
            share->selectAll();
            QTest::keyClicks(share, QStringLiteral("3"));
        });
        QVERIFY(!preview.isNull());
        QVERIFY2(preview.contains(QStringLiteral("cpu: rows 0–2")) &&
                     preview.contains(QStringLiteral("gpu: rows 3–3")),
                 qPrintable(preview));
        const PlanOptions& options = window.document()->options();
        QCOMPARE(options.splits.size(), std::size_t{1});
        QCOMPARE(options.splits[0].nodePattern, std::string("%0|%1|%2|%3"));
        QCOMPARE(options.splits[0].shards[0].share, std::int64_t{3});
        QCOMPARE(window.undoStack()->count(), 1);
        // (Tests load no translator: English plurals read "op(s)" here.)
        QVERIFY2(window.undoStack()->undoText().startsWith(QStringLiteral("Split 4 op")) &&
                     window.undoStack()->undoText().endsWith(QStringLiteral(" across cpu, gpu")),
                 qPrintable(window.undoStack()->undoText()));
        const Plan& plan = window.document()->plan();
        for (const char* name : stem)
            QCOMPARE(plan.reasons[nodeNamed(window, name).index].kind, ReasonKind::Split);
        QVERIFY(plan.sharded);
        // The canvas: a stacked device bar on each split node, the region framed, the inserted
        // split and concat on its edges.
        views::NodeItem* conv = window.scene()->nodeItem(nodeNamed(window, "%0"));
        QCOMPARE(conv->shards().size(), std::size_t{2});
        QCOMPARE(conv->shards()[0].second, qint64{3});
        QCOMPARE(window.scene()->splitFrames().size(), std::size_t{1});
        int splits = 0, concats = 0;
        for (views::CopyBadgeItem* badge : window.scene()->badges()) {
            splits += badge->text().startsWith(QStringLiteral("split")) ? 1 : 0;
            concats += badge->text().startsWith(QStringLiteral("concat")) ? 1 : 0;
        }
        QCOMPARE(splits, 1);  // %data into %0
        QCOMPARE(concats, 2); // %3 into %4 and the residual add
        QVERIFY(window.statusSummary()->text().contains(QStringLiteral("1 region")));
        // The properties of a split node list its shards.
        window.scene()->clearSelection();
        conv->setSelected(true);
        const QString properties = window.properties()->toPlainText();
        QVERIFY2(properties.contains(QStringLiteral("Devices: cpu + gpu (split1)")) &&
                     properties.contains(QStringLiteral("cpu: rows 0–2 of 4")) &&
                     properties.contains(QStringLiteral("gpu: rows 3–3 of 4")),
                 qPrintable(properties));
        for (const char* name : stem)
            window.scene()->nodeItem(nodeNamed(window, name))->setSelected(true);
        QVERIFY(window.grab().save(dir.filePath("split.png")));
        const auto after = placement(*window.document());
        // Undo, redo.
        window.undoStack()->undo();
        QVERIFY(window.document()->options().splits.empty());
        QVERIFY(!window.document()->plan().sharded);
        QCOMPARE(placement(*window.document()), before);
        QVERIFY(window.scene()->splitFrames().empty());
        QVERIFY(window.scene()->nodeItem(nodeNamed(window, "%0"))->shards().empty());
        window.undoStack()->redo();
        QCOMPARE(placement(*window.document()), after);
        QCOMPARE(window.document()->options().splits.size(), std::size_t{1});
        // Saved with the plan, and back when the plan is opened again.
        QVERIFY(window.savePlan(QStringLiteral("stem split")));
        auto stored = window.workspace()->store()->loadPlan("stem split");
        QVERIFY(stored.ok());
        QCOMPARE(stored.value().options.splits, window.document()->options().splits);
        // Remove Split on a selected split node is one step too.
        window.findChild<QAction*>(QStringLiteral("unsplitSelection"))->trigger();
        QVERIFY(window.document()->options().splits.empty());
        QCOMPARE(window.undoStack()->undoText(), QStringLiteral("Remove split"));
        QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
        QVERIFY(window.workspace()->openPlan(QStringLiteral("stem split")));
        QVERIFY(laidOut.wait(20000));
        QCOMPARE(window.document()->options().splits.size(), std::size_t{1});
        QCOMPARE(placement(*window.document()), after);
    }

    /// Edit > Shard Across Devices on the encoder's first feed-forward block, selected with the
    /// mouse: cut by columns then rows, the region framed with each device's share, the
    /// properties saying each op's sharding, one undo step.
    void shardAcrossDevicesIsOneUndoStep() {
        gui::MainWindow window;
        window.resize(1400, 900);
        window.show();
        openAndWait(window, kModels + "tiny_encoder.onnx");
        const auto before = placement(*window.document());
        const std::vector<const char*> block = {
            "/layers/layers.0/ff/ff.0/MatMul", "/layers/layers.0/ff/ff.0/Add",
            "/layers/layers.0/ff/ff.1/Div",    "/layers/layers.0/ff/ff.1/Erf",
            "/layers/layers.0/ff/ff.1/Add",    "/layers/layers.0/ff/ff.1/Mul",
            "/layers/layers.0/ff/ff.1/Mul_1",  "/layers/layers.0/ff/ff.2/MatMul"};
        clickNodes(window, block);
        QCOMPARE(window.scene()->selectedNodes().size(), std::size_t{8});
        const QString preview = answerSplitDialog(
            window.findChild<QAction*>(QStringLiteral("shardSelection")), [](gui::SplitDialog*) {});
        QVERIFY(!preview.isNull());
        // Every op cut; the row-parallel product's partial sums summed where they leave.
        QVERIFY2(preview.contains(QStringLiteral("8 of 8 op(s) cut")) &&
                     preview.contains(QStringLiteral("1 collective(s)")),
                 qPrintable(preview));
        const PlanOptions& options = window.document()->options();
        QCOMPARE(options.splits.size(), std::size_t{1});
        QVERIFY(options.splits[0].tensor);
        QVERIFY2(window.undoStack()->undoText().startsWith(QStringLiteral("Shard 8 op")),
                 qPrintable(window.undoStack()->undoText()));
        QVERIFY(window.document()->plan().sharded);
        QCOMPARE(window.scene()->splitFrames().size(), std::size_t{1});
        const QString title = window.scene()->splitFrames()[0]->toolTip();
        QVERIFY2(title.contains(QStringLiteral("1/2")) &&
                     title.contains(QStringLiteral("1 "
                                                   "collectives")),
                 qPrintable(title));
        // The partial sums leaving the block: one Reduce badge, on the edge into the bias Add.
        QStringList collectives;
        for (views::CopyBadgeItem* badge : window.scene()->badges()) {
            if (badge->text().startsWith(QStringLiteral("Reduce")))
                collectives << badge->text() + QStringLiteral(" -> ") +
                                   QString::fromStdString(
                                       window.document()->graph().node(badge->consumer()).name);
        }
        QCOMPARE(collectives, QStringList{QStringLiteral("Reduce 2.00 KiB -> "
                                                         "/layers/layers.0/ff/ff.2/Add")});
        window.scene()->clearSelection();
        window.scene()->nodeItem(nodeNamed(window, block[7]))->setSelected(true);
        const QString properties = window.properties()->toPlainText();
        QVERIFY2(properties.contains(QStringLiteral("Sharding: P: its reduced axis is cut")) &&
                     properties.contains(QStringLiteral("share 1 of 2")),
                 qPrintable(properties));
        window.undoStack()->undo();
        QVERIFY(window.document()->options().splits.empty());
        QCOMPARE(placement(*window.document()), before);
        QVERIFY(window.scene()->splitFrames().empty());
    }

    /// An ONNX Runtime profile dropped on the window: its times on the nodes (a convolution's
    /// activation shown as fused into it), a lane per provider on the timeline, the source in the
    /// status bar. A profile of another model, dropped after it, is an error dialog that says so,
    /// and the first profile's overlay stays.
    void droppingAProfileShowsItsTimesOnTheGraph() {
        gui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        openAndWait(window, kModels + "tiny_resnet.onnx");
        const auto drop = [&](const QString& file) {
            QMimeData mime;
            mime.setUrls({QUrl::fromLocalFile(file)});
            const QPoint at = window.rect().center();
            QDragEnterEvent enter(at, Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent dropped(QPointF(at), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&window, &dropped);
        };
        const QString profiles = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/profiles/");
        drop(profiles + "tiny_resnet.ort.json");
        QVERIFY(takeErrorDialogs(window).isEmpty());
        const NodeId stem = nodeNamed(window, "/stem/stem.0/Conv");
        QVERIFY(window.scene()->nodeItem(stem));
        QVERIFY(window.scene()->nodeItem(stem)->timingMillis() > 0);
        const views::TimelineData& timeline = window.timeline()->data();
        QVERIFY(std::find(timeline.lanes.begin(), timeline.lanes.end(),
                          QStringLiteral("ONNX Runtime CPU")) != timeline.lanes.end());
        QVERIFY(timeline.bars.size() >= 16);
        QVERIFY(window.statusBar()->currentMessage().contains("25 of 25 nodes timed"));
        // Another model's profile.
        drop(profiles + "tiny_recurrent.ort.json");
        const QStringList errors = takeErrorDialogs(window);
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.front().contains("another model"), qPrintable(errors.front()));
        QVERIFY(window.scene()->nodeItem(stem)->timingMillis() > 0);
        // The menu's action is there for those who do not drop.
        QVERIFY(window.findChild<QAction*>(QStringLiteral("importProfile")));
    }

    /// Devices ▸ Plan for a Machine…: the 2x8-H100 machine file's 18 devices in the palette, one
    /// undo step, its rates costing the prediction; a bad file is an error dialog with its line,
    /// and the devices stay.
    void planningForAMachineFile() {
        gui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        openAndWait(window, kModels + "tiny_resnet.onnx");
        QVERIFY(window.findChild<QAction*>(QStringLiteral("planForMachine")));
        const int undo = window.undoStack()->count();
        QVERIFY(window.openMachine(
            QStringLiteral(PLACER_SOURCE_DIR "/resources/machines/2x8-h100.json")));
        QVERIFY(takeErrorDialogs(window).isEmpty());
        QCOMPARE(window.document()->devices().size(), 18);
        QVERIFY(window.devicePalette()->chip(QStringLiteral("node1.cuda7")));
        QCOMPARE(window.undoStack()->count(), undo + 1);
        QVERIFY(window.statusBar()->currentMessage().contains("2x8-h100"));
        QTemporaryDir dir;
        const QString bad = dir.filePath("bad.json");
        QFile file(bad);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"name\": \"m\",\n\"hosts\": 3}");
        file.close();
        QVERIFY(!window.openMachine(bad));
        const QStringList errors = takeErrorDialogs(window);
        QCOMPARE(errors.size(), 1);
        QVERIFY2(errors.front().contains("bad.json:"), qPrintable(errors.front()));
        QCOMPARE(window.document()->devices().size(), 18);
        window.undoStack()->undo();
        QVERIFY(window.document()->devices().size() < 18);
    }

    void rendersNonTrivially() {
        gui::MainWindow window;
        window.resize(1200, 800);
        window.show();
        openAndWait(window, kExamples + "residual_block.relay");
        window.document()->setRules({{"nn.conv2d", "gpu"}}, "cpu");
        const QImage image = window.grab().toImage();
        QCOMPARE(image.size(), QSize(1200, 800));
        // Both device colours appear on the canvas.
        const QColor cpu = window.document()->deviceColor(DeviceId(0));
        const QColor gpu = window.document()->deviceColor(DeviceId(1));
        int cpuPixels = 0, gpuPixels = 0;
        for (int y = 0; y < image.height(); y += 2)
            for (int x = 0; x < image.width(); x += 2) {
                const QRgb p = image.pixel(x, y);
                cpuPixels += p == cpu.rgb() ? 1 : 0;
                gpuPixels += p == gpu.rgb() ? 1 : 0;
            }
        QVERIFY2(cpuPixels > 200 && gpuPixels > 200,
                 qPrintable(QString("cpu %1, gpu %2").arg(cpuPixels).arg(gpuPixels)));
    }

private:
    QTemporaryDir m_home;
};

QTEST_MAIN(TestMainWindow)
#include "tst_mainwindow.moc"
