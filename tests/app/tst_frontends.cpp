// Both front ends run through the one session (core/session): the same plan run from `placer
// run` and from the GUI's Run button gives the same report, timings aside — the same devices and
// the physical devices they ran on, the same nodes on the same devices with the same kernels, the
// same copies, optimisations, outputs (byte for byte) and reference check.
#include "cli/PlacerCli.h"
#include "gui/MainWindow.h"
#include "gui/RunController.h"
#include "gui/RunPanel.h"
#include "io/Json.h"
#include "io/Npy.h"
#include "plan/Annotations.h"
#include "plan/Split.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "views/PlacementDocument.h"

#include <QAction>
#include <QClipboard>
#include <QGuiApplication>
#include <QProcess>
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
        "latency_ms", "busy_ms", "physical_busy_ms", "idle_ms", "median_ms", "idle",
        "host_peak_resident_bytes", "peak_bytes", "live_peak_bytes", "max_rel_diff", "splits",
        "file",
        // the cores the machine's load chose
        "mapped_by_load"};
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

    void bothFrontEndsReportTheSameRun_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QStringList>("options");
        // Every virtual device on the physical device the GUI gives it by default (cpu-kind on
        // the host, device d on vcpu<d+1>), so both front ends map alike; both bind the vcpus to
        // the least busy cores (the GUI maps by load, placer run --map auto).
        QTest::newRow("split-residual-block")
            << kExamples + "split_residual_block.relay" << QStringList{"--map", "gpu=vcpu2"};
        QTest::newRow("tiny-resnet-split-by-rules")
            << kModels + "tiny_resnet.onnx"
            << QStringList{"--devices", "a:vcpu,b:vcpu", "--rule",  "Conv=a", "--fallback",
                           "b",         "--map",         "a=vcpu1", "--map",  "b=vcpu2"};
        QTest::newRow("tiny-encoder-pinned")
            << kModels + "tiny_encoder.onnx"
            << QStringList{"--devices",  "cpu:cpu,v:vcpu", "--pin",
                           "*MatMul*=v", "--map",          "v=vcpu2"};
    }

    void bothFrontEndsReportTheSameRun() {
        QFETCH(QString, model);
        QFETCH(QStringList, options);
        QTemporaryDir dir;
        // The command line.
        std::vector<std::string> args{"run",
                                      model.toStdString(),
                                      "--iterations",
                                      "2",
                                      "--warmup",
                                      "0",
                                      "--json",
                                      "--no-record",
                                      "--save-outputs",
                                      dir.filePath("cli").toStdString(),
                                      "--db",
                                      dir.filePath("ws.db").toStdString()};
        for (const QString& option : options)
            args.push_back(option.toStdString());
        args.insert(args.end(), {"--map", "auto"});
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
            QVERIFY(!takePlanOption(options[i].mid(2).toStdString(), options[i + 1].toStdString(),
                                    &source, &request));
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

        // Both said why each vcpu went where it did.
        for (const Json* report :
             std::initializer_list<const Json*>{&cliReport.value(), &guiReport}) {
            for (const Json& device : report->find("devices")->items()) {
                if (device.find("kind")->asString() == "vcpu")
                    QVERIFY2(device.find("mapped_by_load"), report->dump().c_str());
            }
        }
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

    // planArguments() says devices, pins and options in words takePlanOption() reads back to
    // the same: memory capacities, ordinals, default and host, plain and fixed pins (a name
    // with wildcard characters as a pattern matching it alone), rules, fallback, splits, mode,
    // constants, micro-batches, stream batches and cost-at sizes.
    void planArgumentsReadBackToTheSamePlan() {
        DeviceSet devices = DeviceSet::parse("cpu:cpu,a:vcpu:mem=1GiB,b:vcpu:mem=1000,"
                                             "g:cuda:ordinal=1")
                                .take();
        devices.setDefaultDevice(DeviceId(1));
        devices.setHostDevice(DeviceId(0));
        Graph graph;
        const TensorType type{{4, 8}, DType::Float32};
        auto add = [&](const std::string& name, const char* op, std::vector<ValueRef> inputs) {
            Node node;
            node.name = name;
            node.op = op ? OpRegistry::global().find(op) : &OpRegistry::global().parameter();
            node.inputs = std::move(inputs);
            node.outputs = {type};
            return graph.addNode(std::move(node));
        };
        const NodeId x = add("x", nullptr, {});
        const NodeId star = add("relu*1", "Relu", {{x, 0}});
        const NodeId other = add("relux1", "Relu", {{x, 0}});
        const NodeId fixed = add("add[0]", "Add", {{star, 0}, {other, 0}});
        graph.addOutput(GraphOutput{{fixed, 0}, {}, {}});
        graph.node(star).pin = Pin{PinKind::Plain, DeviceId(2), "gui"};
        graph.node(fixed).pin = Pin{PinKind::Fixed, DeviceId(3), "gui"};
        PlanOptions options;
        options.mode = PlanMode::Auto;
        options.constants = ConstantPolicy::Copy;
        options.rules = {{"Relu", "a"}, {"Ad?", "b"}};
        options.fallbackDevice = "b";
        options.splits.push_back(parseSplitRequest("relux1=a:3,b:1").take());
        options.microBatches = 3;
        options.streamBatches = 2;
        options.costAt = {{"batch", 8}, {"seq", 128}};
        options.exact = true;
        const InputShapes shapes = {{"x", {4, 8}}};

        const std::vector<std::string> words = planArguments(graph, devices, options, shapes);
        ModelSource source;
        PlanRequest request;
        bool exact = false;
        for (std::size_t i = 0; i < words.size(); ++i) {
            QVERIFY2(words[i].rfind("--", 0) == 0, words[i].c_str());
            if (words[i] == "--exact") {
                exact = true;
                continue;
            }
            QVERIFY(i + 1 < words.size());
            const auto problem =
                takePlanOption(words[i].substr(2), words[i + 1], &source, &request);
            QVERIFY2(!problem, problem ? problem->c_str() : "");
            ++i;
        }
        QVERIFY(exact);
        request.options.exact = exact;
        QVERIFY(request.devices);
        DeviceSet read = DeviceSet::parse(*request.devices).take();
        read.setDefaultDevice(*read.find(*request.defaultDevice));
        read.setHostDevice(*read.find(*request.hostDevice));
        QVERIFY(read == devices);
        QVERIFY(request.options == options);
        QCOMPARE(source.inputShapes, shapes);
        // The pins, applied as the command line applies them, land where they were.
        Graph replanned = graph;
        for (std::uint32_t i = 0; i < replanned.size(); ++i)
            replanned.node(NodeId(i)).pin = Pin{};
        const Status applied = applyPinRequests(replanned, read, request.pins);
        QVERIFY2(applied.ok(), applied.ok() ? "" : applied.error().message.c_str());
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            QCOMPARE(replanned.node(NodeId(i)).pin.kind, graph.node(NodeId(i)).pin.kind);
            QCOMPARE(replanned.node(NodeId(i)).pin.device, graph.node(NodeId(i)).pin.device);
        }
        // And the words survive a shell.
        const std::string line = shellCommandLine(
            {"placer", "it's", "a b", "*", "plain-word_1.onnx", "", "$HOME", "x=1,2"});
        QCOMPARE(line,
                 std::string("placer 'it'\\''s' 'a b' '*' plain-word_1.onnx '' '$HOME' x=1,2"));
    }

    // Edit ▸ Copy Plan as Command Line: what the window plans after pins dropped on the canvas
    // and rules typed, as a `placer run` line that the CLI plans the same (every node on the
    // same device) and runs with the Run panel's iterations.
    void copiedCommandLinePlansWhatTheWindowShows() {
        QTemporaryDir dir;
        gui::MainWindow window;
        window.show();
        const QString model = kModels + "tiny_encoder.onnx";
        views::PlacementDocument* document = window.document();
        DeviceSet devices = DeviceSet::parse("cpu:cpu,a:vcpu:mem=2GiB,b:vcpu").take();
        devices.chooseDefaults();
        QString error;
        QVERIFY2(document->open(model, &error, devices), qPrintable(error));
        std::vector<NodeId> matmuls;
        for (std::uint32_t i = 0; i < document->graph().size(); ++i) {
            if (document->graph().node(NodeId(i)).op->name == "MatMul")
                matmuls.push_back(NodeId(i));
        }
        QVERIFY(matmuls.size() >= 2);
        window.pinNodes(QStringLiteral("b"), {matmuls[0], matmuls[1]});
        PlanOptions options = document->options();
        options.rules = {{"Softmax", "cpu"}};
        options.fallbackDevice = "a";
        document->setOptions(options);
        window.runPanel()->iterations()->setValue(3);
        window.runPanel()->warmup()->setValue(0);
        // b on a physical device of its own, chosen as the device editor chooses it.
        views::DeviceSnapshot mapped = document->snapshot();
        mapped.physical = {"", "", "vcpu5"};
        document->restore(mapped);

        QAction* copy = window.findChild<QAction*>(QStringLiteral("copyCommandLine"));
        QVERIFY(copy);
        copy->trigger();
        const QString line = QGuiApplication::clipboard()->text();
        QCOMPARE(line, window.planCommandLine());
        QVERIFY2(line.startsWith(QStringLiteral("placer run ")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("--iterations 3")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("--map b=vcpu5")), qPrintable(line));

        // The words of the line (none needs quoting here but the model's path might).
        QStringList words = QProcess::splitCommand(line);
        QCOMPARE(words.takeFirst(), QStringLiteral("placer"));
        std::vector<std::string> args;
        for (const QString& word : words)
            args.push_back(word.toStdString());
        args.push_back("--json");
        args.push_back("--no-reference");
        args.push_back("--no-record");
        args.push_back("--db");
        args.push_back(dir.filePath("ws.db").toStdString());
        std::istringstream in;
        std::ostringstream out, err;
        QCOMPARE(cli::runPlacer(args, in, out, err), 0);
        auto report = Json::parse(out.str(), "placer run");
        QVERIFY2(report, err.str().c_str());
        // Every node the run names ran on the device the window planned for it.
        const Graph& graph = document->graph();
        int compared = 0;
        for (const Json& node : report.value().find("nodes")->items()) {
            const auto id = graph.find(node.find("name")->asString());
            if (!id)
                continue; // a node the run's passes made (a layout change, a fused group)
            const DeviceId planned = document->plan().devices[id->index];
            QCOMPARE(node.find("device")->asString(), document->devices()[planned].name);
            ++compared;
        }
        QVERIFY(compared >= 10);
        QCOMPARE(report.value().find("iterations")->asInt(), std::int64_t{3});
        for (const Json& device : report.value().find("devices")->items()) {
            if (device.find("name")->asString() == "b")
                QCOMPARE(device.find("physical")->asString(), std::string("vcpu5"));
        }
    }
};

QTEST_MAIN(TestFrontEnds)
#include "tst_frontends.moc"
