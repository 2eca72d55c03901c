// Both front ends run through the one session (core/session): the same plan run from `placer
// run` and from the GUI's Run button gives the same report, timings aside — the same devices and
// the physical devices they ran on, the same nodes on the same devices with the same kernels, the
// same copies, optimisations, outputs (byte for byte) and reference check.
#include "Backends.h"
#include "cli/PlacerCli.h"
#include "gui/MainWindow.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "io/Json.h"
#include "io/Npy.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "views/PlacementDocument.h"

#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <set>
#include <sstream>

using namespace placer;

namespace {

const QString kModels = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/");
const QString kExamples = QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/");

/// `document` without the fields that measure time or the process.
Json withoutTimes(const Json& document) {
    static const std::set<std::string> kTimed = {
        "latency_ms",  "busy_ms", "physical_busy_ms", "idle_ms",  "median_ms",
        "idle",        "host_peak_resident_bytes",    "peak_bytes", "live_peak_bytes",
        "max_rel_diff", "splits", "file"};
    if (document.isArray()) {
        Json out = Json::array();
        for (const Json& item : document.items())
            out.push(withoutTimes(item));
        return out;
    }
    if (!document.isObject())
        return document;
    Json out = Json::object();
    for (const auto& [key, value] : document.members()) {
        if (!kTimed.contains(key))
            out.set(key, withoutTimes(value));
    }
    return out;
}

} // namespace

class TestFrontEnds : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { app::registerBuiltBackends(); }

    void bothFrontEndsReportTheSameRun_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("options");
        // Every virtual device on the physical device the GUI gives it by default (cpu-kind on
        // the host, device d on vcpu<d+1>), so both front ends map alike.
        QTest::newRow("split-residual-block")
            << kExamples + "split_residual_block.relay" << QStringList{"--map", "gpu=vcpu2"};
        QTest::newRow("tiny-resnet-split-by-rules")
            << kModels + "tiny_resnet.onnx"
            << QStringList{"--devices", "a:vcpu,b:vcpu", "--rule", "Conv=a", "--fallback", "b",
                           "--map", "a=vcpu1", "--map", "b=vcpu2"};
        QTest::newRow("tiny-encoder-pinned")
            << kModels + "tiny_encoder.onnx"
            << QStringList{"--devices", "cpu:cpu,v:vcpu", "--pin", "*MatMul*=v", "--map",
                           "v=vcpu2"};
    }

    void bothFrontEndsReportTheSameRun() {
        QFETCH(QString, model);
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        // The command line.
        std::vector<std::string> args{"run", model.toStdString(), "--iterations", "2",
                                      "--warmup", "0", "--json", "--no-record",
                                      "--save-outputs", dir.filePath("cli").toStdString(),
                                      "--db", dir.filePath("ws.db").toStdString()};
        for (const QString& option : options)
            args.push_back(option.toStdString());
        std::istringstream in;
        std::ostringstream out, err;
        QCOMPARE(cli::runPlacer(args, in, out, err), 0);
        auto cliReport = Json::parse(out.str(), "placer run");
        QVERIFY2(cliReport, err.str().c_str());
        QVERIFY(cliReport.value().find("nodes")->items().size() >= 3);

        // The GUI: the same options, the model opened as main() opens it, run by the button.
        ModelSource source{model.toStdString()};
        PlanRequest request;
        for (int i = 0; i + 1 < options.size(); i += 2) {
            if (options[i] == "--map")
                continue; // the GUI's own defaults, which the options repeat
            QVERIFY(!takePlanOption(options[i].mid(2).toStdString(),
                                    options[i + 1].toStdString(), &source, &request));
        }
        Session session(SessionOptions{dir.filePath("ws.db").toStdString()});
        auto planned = session.open(source, request);
        QVERIFY2(planned, planned ? "" : planned.error().message.c_str());
        gui::MainWindow window;
        window.show();
        window.document()->setModel(std::move(planned.value().model), model);
        window.document()->setOptions(request.options);
        window.runPanel()->iterations()->setValue(2);
        window.runPanel()->warmup()->setValue(0);
        QSignalSpy finished(window.runController(), &gui::RunController::finished);
        QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("run")), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        const auto outcome = window.runController()->outcome();
        QVERIFY2(outcome, qPrintable(window.runController()->error()));
        const Json guiReport = runReportJson(*outcome);

        const std::string a = withoutTimes(cliReport.value()).dump();
        const std::string b = withoutTimes(guiReport).dump();
        QVERIFY2(a == b, ("placer run:\n" + a + "\nthe GUI:\n" + b).c_str());
        // The outputs, byte for byte.
        const Json* outputs = cliReport.value().find("outputs");
        QVERIFY(outputs && outputs->items().size() == outcome->result.outputs.size());
        for (std::size_t o = 0; o < outcome->result.outputs.size(); ++o) {
            auto saved = readNpy(outputs->items()[o].find("file")->asString());
            QVERIFY(saved);
            QCOMPARE(saved.value().type, outcome->result.outputs[o].type);
            QVERIFY(saved.value().data == outcome->result.outputs[o].data);
        }
    }
};

QTEST_MAIN(TestFrontEnds)
#include "tst_frontends.moc"
