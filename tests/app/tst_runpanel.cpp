// The Run panel on its own: a run of the document's plan from its button, the summary it shows,
// the timeline of the outcome, exports only after a run, a refused run said as a problem, and
// one opened model run at the shapes its inputs' data have, and Generate mode on a decoder (an
// adapted generation's marker too).
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "views/PlacementDocument.h"
#include "views/PropertiesPanel.h"
#include "views/TimelineWidget.h"
#include "vm/ReferenceRun.h"

#include <QCheckBox>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

using namespace placer;

namespace {

const char* const kSplit = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(256, 1024), float32], %b: Tensor[(256, 1024), float32]) {
  %0 = add(%a, %b);
  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
  %2 = nn.relu(%b);
  %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);
  subtract(%1, %3)
}
)";

/// The committed decoder's prompt (`ids`) and its first `count` expected tokens, as text.
bool decoderIds(const QString& base, int count, QStringList* ids, QStringList* tokens) {
    auto prompt = readNpy((base + ".prompt.npy").toStdString());
    auto expected = readNpy((base + ".expected.npy").toStdString());
    if (!prompt || !expected)
        return false;
    for (std::int64_t i = 0; i < prompt.value().type.elementCount(); ++i)
        *ids << QString::number(prompt.value().as<std::int64_t>()[i]);
    for (std::int64_t i = 0; i < count; ++i)
        *tokens << QString::number(expected.value().as<std::int64_t>()[i]);
    return true;
}

/// A generation's tokens, "12 7 301".
QString tokensText(const GenerationReport& report) {
    QStringList out;
    for (const std::int64_t token : report.tokens)
        out << QString::number(token);
    return out.join(' ');
}

/// The committed decoder opened on devices, with a session, its controller and a Run panel.
struct DecoderPanel {
    const QString base = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/tiny_decoder");
    views::PlacementDocument document;
    Session session;
    gui::RunController controller{&session};
    gui::RunPanel panel{&document, &controller};
    QString error;
    bool open(const char* devices) {
        return document.open(base + ".onnx", &error, DeviceSet::parse(devices).value());
    }
};

} // namespace

class TestRunPanel : public QObject {
    Q_OBJECT

private slots:
    void runsThePlanAndSummarisesIt() {
        views::PlacementDocument document;
        QString error;
        QVERIFY(document.openText(kSplit, QStringLiteral("split.relay"), &error));
        Session session;
        gui::RunController controller(&session);
        gui::RunPanel panel(&document, &controller);
        QTemporaryDir dir;
        QVERIFY(!panel.exportTimingsCsv(dir.filePath("before.csv"))); // nothing has run
        panel.iterations()->setValue(3);
        panel.warmup()->setValue(0);
        QSignalSpy finished(&panel, &gui::RunPanel::finished);
        QTest::mouseClick(panel.runButton(), Qt::LeftButton);
        QVERIFY(!panel.runButton()->isEnabled());
        QVERIFY(finished.wait(60000));
        QVERIFY(panel.runButton()->isEnabled());
        const auto outcome = finished.front().front().value<std::shared_ptr<const RunOutcome>>();
        QVERIFY(outcome);
        QCOMPARE(outcome->result.latencyMicros.size(), std::size_t{3});
        const QString summary = panel.summary()->toPlainText();
        QVERIFY2(summary.contains("Latency") && summary.contains("3 iteration"),
                 qPrintable(summary));
        QVERIFY2(summary.contains("Outputs match the single-device reference"),
                 qPrintable(summary));
        // The timeline: a compute lane per device and one for copies between them.
        const views::TimelineData timeline = gui::runTimeline(*outcome, document);
        QVERIFY(timeline.lanes.size() >= 3);
        QVERIFY(std::any_of(timeline.lanes.begin(), timeline.lanes.end(),
                            [](const QString& lane) { return lane.startsWith("copies"); }));
        QVERIFY(timeline.bars.size() >= 4);
        QVERIFY(timeline.duration > 0);
        // Where a device waited: a hatched bar per idle stretch, saying for what.
        QCOMPARE(static_cast<std::size_t>(
                     std::count_if(timeline.bars.begin(), timeline.bars.end(),
                                   [](const views::TimelineBar& bar) { return bar.idle; })),
                 outcome->result.idle.size());
        QVERIFY(!outcome->result.idle.empty());
        for (const views::TimelineBar& bar : timeline.bars) {
            if (bar.idle)
                QVERIFY2(bar.tooltip.startsWith("idle ") && bar.tooltip.contains("waiting for"),
                         qPrintable(bar.tooltip));
        }
        QVERIFY(panel.exportTrace(dir.filePath("trace.json")));
        QVERIFY(panel.exportTimingsCsv(dir.filePath("times.csv")));
        QVERIFY(!panel.exportTimingsCsv(dir.filePath("no/such/folder/times.csv")));
    }

    /// A model whose batch and sequence the file leaves open opens without a question; its
    /// input row takes a shape typed in the table (random data at that shape) or a .npy file,
    /// and each run is planned for the data it brings, one after another, matching numpy.
    void runsOneModelAtTheShapesOfItsData() {
        const QString models = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/");
        views::PlacementDocument document;
        QString error;
        QVERIFY2(document.open(models + "dyn_encoder.onnx", &error), qPrintable(error));
        Session session;
        gui::RunController controller(&session);
        gui::RunPanel panel(&document, &controller);
        panel.iterations()->setValue(1);
        panel.warmup()->setValue(0);
        QTableWidget* inputs = panel.inputs();
        QCOMPARE(inputs->rowCount(), 1);
        QCOMPARE(inputs->item(0, 0)->text(), QStringLiteral("x"));
        // A shape typed into the data cell: random data at 2x16x16.
        panel.show();
        QVERIFY(QTest::qWaitForWindowExposed(&panel));
        inputs->setCurrentCell(0, 1);
        inputs->editItem(inputs->item(0, 1));
        auto* editor = inputs->viewport()->findChild<QLineEdit*>();
        QVERIFY(editor);
        QTest::keyClicks(editor, QStringLiteral("2x16x16"));
        QCOMPARE(editor->text(), QStringLiteral("2x16x16"));
        QTest::keyClick(editor, Qt::Key_Return);
        QTRY_COMPARE(inputs->item(0, 1)->text(), QStringLiteral("2x16x16"));
        QSignalSpy finished(&panel, &gui::RunPanel::finished);
        QTest::mouseClick(panel.runButton(), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        auto outcome = finished.back().front().value<std::shared_ptr<const RunOutcome>>();
        QCOMPARE(outcome->result.outputs.at(0).type.shape, (std::vector<std::int64_t>{2, 16, 16}));
        QVERIFY(outcome->reference && outcome->reference->ok);
        // Properties give the attention scores in batch and seq, planned at the stand-in, and
        // as this run had them.
        views::PropertiesPanel properties(&document);
        properties.showNodes({*document.graph().find("p")});
        QVERIFY2(properties.toPlainText().contains(
                     "batch×seq×seq float32 (batch×seq×seq×4 B), planned at 1x1x1; ran as "
                     "2x16x16 (2.00 KiB)"),
                 qPrintable(properties.toPlainText()));
        // The next plans cost at the run's sizes.
        QCOMPARE(document.options().costAt, (SymbolValues{{"batch", 2}, {"seq", 16}}));
        // A file: the run is planned for 3x33 and gives numpy's result.
        inputs->item(0, 1)->setText(models + "dyn_encoder.3x33.input.npy");
        QTest::mouseClick(panel.runButton(), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        outcome = finished.back().front().value<std::shared_ptr<const RunOutcome>>();
        auto expected = readNpy((models + "dyn_encoder.3x33.expected.npy").toStdString());
        QVERIFY(expected);
        const ReferenceCheck check =
            compareOutputs(outcome->result.outputs, {expected.value()}, 1e-4, 1e-3);
        QVERIFY2(check.ok, check.mismatch.c_str());
        // Neither a file nor a shape: the run is refused, naming the input.
        QSignalSpy problem(&panel, &gui::RunPanel::problem);
        inputs->item(0, 1)->setText(QStringLiteral("two by three"));
        panel.start();
        QCOMPARE(problem.size(), 1);
        const QString said = problem.front().at(1).toString();
        QVERIFY2(said.contains(QStringLiteral("input 'x'")), qPrintable(said));
        QVERIFY2(said.contains(QStringLiteral("neither a .npy file nor a shape")),
                 qPrintable(said));
        QVERIFY(!controller.isRunning());
    }

    void anUnrunnablePlanIsAProblem() {
        // An int32 convolution on a machine of GPUs only: no device has a kernel for it.
        auto devices = DeviceSet::parse("g:cuda");
        QVERIFY(devices.ok());
        auto model = loadModelText("#[version = \"0.0.5\"]\ndef @main(%a: Tensor[(1, 1, 4, 4), "
                                   "int32], %w: Tensor[(1, 1, 1, 1), int32]) {\n"
                                   "  %0 = nn.conv2d(%a, %w);\n  negative(%0)\n}\n",
                                   "int.relay", GraphFormat::Relay, devices.value());
        QVERIFY(model.ok());
        views::PlacementDocument document;
        document.setModel(model.take(), QStringLiteral("int.relay"));
        QVERIFY(!document.plan().conflicts.empty());
        Session session;
        gui::RunController controller(&session);
        gui::RunPanel panel(&document, &controller);
        QSignalSpy problem(&panel, &gui::RunPanel::problem);
        panel.start();
        QCOMPARE(problem.size(), 1);
        QCOMPARE(problem.front().front().toString(), QStringLiteral("Cannot run"));
        QVERIFY(!controller.isRunning());
    }

    /// Generate mode on the committed decoder: the prompt typed in, the Generate button
    /// clicked; the tokens are PyTorch's, they show as they come, and the timeline has a bar
    /// per token labelled with it and a lane per device. A prompt that is no ids is a problem.
    void generatesTokensOnATimeline() {
        DecoderPanel decoder;
        QVERIFY2(decoder.open("a:vcpu"), qPrintable(decoder.error));
        QStringList ids, tokens;
        QVERIFY(decoderIds(decoder.base, 12, &ids, &tokens));
        decoder.panel.prompt()->setFocus();
        QTest::keyClicks(decoder.panel.prompt(), ids.join(','));
        decoder.panel.newTokens()->setValue(12);
        QSignalSpy made(&decoder.controller, &gui::RunController::token);
        QSignalSpy finished(&decoder.panel, &gui::RunPanel::generationFinished);
        QTest::mouseClick(decoder.panel.generateButton(), Qt::LeftButton);
        QVERIFY(!decoder.panel.generateButton()->isEnabled());
        QVERIFY(finished.wait(60000));
        QCOMPARE(made.size(), 12);
        QVERIFY(decoder.panel.generateButton()->isEnabled());
        const auto report =
            finished.front().front().value<std::shared_ptr<const GenerationReport>>();
        QVERIFY(report);
        QCOMPARE(tokensText(*report), tokens.join(' '));
        const QString summary = decoder.panel.summary()->toPlainText();
        QVERIFY2(summary.contains(tokens.join(' ')) && summary.contains("time to first token"),
                 qPrintable(summary));
        const views::TimelineData timeline = gui::generationTimeline(*report, decoder.document);
        QCOMPARE(timeline.lanes.front(), QStringLiteral("steps"));
        QVERIFY(std::find(timeline.lanes.begin(), timeline.lanes.end(), QStringLiteral("a")) !=
                timeline.lanes.end());
        int stepBars = 0;
        for (const views::TimelineBar& bar : timeline.bars)
            stepBars += bar.lane == 0 ? 1 : 0;
        QCOMPARE(stepBars, 12);
        QVERIFY(timeline.bars.front().label.startsWith("prompt (32)"));
        QCOMPARE(timeline.bars[2].label, tokens[1]); // the second step's bar, after a's bar
        QVERIFY(timeline.duration > 0);
        QSignalSpy problem(&decoder.panel, &gui::RunPanel::problem);
        decoder.panel.prompt()->setText(QStringLiteral("1,x"));
        QTest::mouseClick(decoder.panel.generateButton(), Qt::LeftButton);
        QCOMPARE(problem.size(), 1);
        QCOMPARE(problem.front().front().toString(), QStringLiteral("Cannot generate"));
    }

    /// Adapt ticked, Generate on two vcpus (the decoder.document's plan puts everything on b, its
    /// default) with b slowed from the fifth step: the generation moves work to a, its tokens still
    /// PyTorch's, and its timeline has an amber marker at the step the new plan first ran, saying
    /// why and what moved.
    void anAdaptedGenerationIsMarkedOnItsTimeline() {
        DecoderPanel decoder;
        QVERIFY2(decoder.open("a:vcpu,b:vcpu"), qPrintable(decoder.error));
        QStringList ids, tokens;
        QVERIFY(decoderIds(decoder.base, 30, &ids, &tokens));
        decoder.panel.prompt()->setText(ids.join(','));
        decoder.panel.newTokens()->setValue(30);
        auto* adapt = decoder.panel.findChild<QCheckBox*>(QStringLiteral("adapt"));
        QVERIFY(adapt);
        QTest::mouseClick(adapt, Qt::LeftButton, {}, QPoint(8, adapt->height() / 2));
        QVERIFY(adapt->isChecked());
        QSignalSpy finished(&decoder.panel, &gui::RunPanel::generationFinished);
        qputenv("PLACER_SLOW", "b@5:4");
        QTest::mouseClick(decoder.panel.generateButton(), Qt::LeftButton);
        const bool done = finished.wait(60000);
        qunsetenv("PLACER_SLOW");
        QVERIFY(done);
        const auto report =
            finished.front().front().value<std::shared_ptr<const GenerationReport>>();
        QVERIFY(report);
        QCOMPARE(tokensText(*report), tokens.join(' '));
        QVERIFY2(!report->events.empty(), generationSummary(*report).c_str());
        const views::TimelineData timeline = gui::generationTimeline(*report, decoder.document);
        QVERIFY(!timeline.markers.empty());
        const views::TimelineMarker& marker = timeline.markers.front();
        QVERIFY2(marker.label.startsWith(QStringLiteral("re-placed: b (vcpu")) &&
                     marker.label.contains(QStringLiteral("slower than assumed")) &&
                     marker.label.contains(QStringLiteral(" to a")),
                 qPrintable(marker.label));
        QVERIFY2(marker.tooltip.startsWith(
                     QStringLiteral("Before step %1: ").arg(report->events.front().iteration)),
                 qPrintable(marker.tooltip));
        // At the start of that step's bar.
        const int step = report->events.front().iteration;
        int seen = -1;
        for (const views::TimelineBar& bar : timeline.bars) {
            if (bar.lane == 0 && ++seen == step) {
                QCOMPARE(marker.at, bar.start);
                break;
            }
        }
        QCOMPARE(seen, step);
    }
};

QTEST_MAIN(TestRunPanel)
#include "tst_runpanel.moc"
