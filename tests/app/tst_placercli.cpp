// `placer plan` end to end: reports, emitters, exit codes and messages for bad input.
#include "cli/PlacerCli.h"

#include "io/Json.h"
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "plan/Planner.h"
#include "store/PlanStore.h"
#include "vm/Calibrate.h"
#include "vm/ReferenceRun.h"

#include <onnx/onnx_pb.h>

#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <sstream>

using namespace placer;

namespace {

const QString kExample = QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/shared_input.relay");

struct Run {
    int code;
    QString out;
    QString err;
};

Run placerRun(const QStringList& args, const std::string& input = std::string()) {
    std::vector<std::string> argv;
    for (const QString& arg : args)
        argv.push_back(arg.toStdString());
    std::istringstream in(input);
    std::ostringstream out, err;
    const int code = cli::runPlacer(argv, in, out, err);
    return {code, QString::fromStdString(out.str()), QString::fromStdString(err.str())};
}

} // namespace

class TestPlacerCli : public QObject {
    Q_OBJECT

private slots:
    void summaryOfTheSharedInputExample();
    void jsonReportHasTheDocumentedFields();
    void relayEmitReadsBackToTheSamePlan();
    void dotAndGraphEmitters();
    void pinsRulesAndFallback();
    void rulesOnAResidualBlock();
    void modelFromStandardInput();
    void userErrors_data();
    void userErrors();
    void profileImport();
    void usageErrors_data();
    void usageErrors();
    void binaryExitCodes();
    void hostileRunsEndInErrors_data();
    void hostileRunsEndInErrors();
    void compileEmitsBytecode();
    void runReportAndTrace();
    void runWithInputFilesMatchesPyTorch();
    void runPlansForTheInputFilesShapes();
    void generateStreamsPyTorchsTokens();
    void runIsOptimisedUnlessTold();
    void runErrors_data();
    void runErrors();
    void devicesSaysWhyCudaIsAbsent();
    void plansInAWorkspace();
    void inputShapesFixSymbolicDimensions();
    void autoModePlacesByCostAndPredicts();
    void calibrateAndLearnFromRuns();
    void autoModeCalibratesAFreshMachine();
    void aFullDeviceHasConstantsCopiedInOnEveryRun();
    void splitsABatchAcrossDevices();
    void shardsInsideOps();
};

void TestPlacerCli::shardsInsideOps() {
    // The encoder at batch 1: attention by heads, the feed-forward part by columns then rows.
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_encoder.onnx");
    const QStringList devices = {"--devices", "a:vcpu,b:vcpu"};
    Run run = placerRun(QStringList{"plan", model, "--shard", "*=a,b"} + devices);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("shard1  --shard '*=a,b'  94 ops cut across a (share 1/2), b "
                              "(share 1/2)"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("/layers/layers.0/Softmax  S(1)  Softmax over other axes keeps "
                              "the cut"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("sharded across a,b as P: its reduced axis is cut"),
             qPrintable(run.out));
    // Two AllReduces a layer (after attention and after the feed-forward part), each of
    // [1, 16, 32] float32 (2 KiB), each device receiving the other's partial sum: 4 KiB.
    QCOMPARE(run.out.count(QStringLiteral("AllReduce: ")), 4);
    QVERIFY2(run.out.contains("AllReduce: /layers/layers.0/Add  4.00 KiB  for "
                              "/layers/layers.0/norm1/ReduceMean"),
             qPrintable(run.out));
    // It runs and matches one device; the report names each shard's share.
    run = placerRun(
        QStringList{"run", model, "--shard", "*=a,b", "--iterations", "2", "--no-record"} +
        devices);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("reference check: ok") && run.out.contains("share 1/2") &&
                 run.out.contains("4 collectives"),
             qPrintable(run.out));
    // Saved with the plan and re-planned to the same answer.
    QTemporaryDir dir;
    const QString db = dir.filePath("ws.db");
    run = placerRun(
        QStringList{"plans", "save", model, "--name", "cut", "--shard", "*=a,b", "--db", db} +
        devices);
    QCOMPARE(run.code, 0);
    run = placerRun({"plans", "show", "cut", "--emit", "json", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    QVERIFY2(run.out.contains("\"tensor\": true") && run.out.contains("\"AllReduce\""),
             qPrintable(run.out.left(3000)));
    // PyTorch's own encoder as torch.onnx.export writes it: Q, K and V sliced from one
    // product, cut by heads all the same; its output PyTorch's.
    const QString torchBase = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/torch_encoder_b1");
    run = placerRun(QStringList{"plan", torchBase + ".onnx", "--shard", "*=a,b"} + devices);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("/layers.0/self_attn/Slice_2  S(2)  each device slices its share "
                              "of the part it takes") &&
                 run.out.contains("/layers.0/self_attn/Softmax  S(0)") &&
                 run.out.count(QStringLiteral("AllReduce: ")) == 4 &&
                 !run.out.contains(QStringLiteral("AllGather: ")),
             qPrintable(run.out));
    QTemporaryDir outputs;
    run = placerRun(QStringList{"run", torchBase + ".onnx", "--shard", "*=a,b", "--input",
                                "x=" + torchBase + ".x.npy", "--save-outputs", outputs.path(),
                                "--iterations", "1", "--no-record"} +
                    devices);
    QVERIFY2(run.code == 0 && run.out.contains("reference check: ok"), qPrintable(run.out));
    auto ours = readNpy(outputs.filePath("y.npy").toStdString());
    auto theirs = readNpy((torchBase + ".y.npy").toStdString());
    QVERIFY(ours && theirs);
    QCOMPARE(ours.value().type, theirs.value().type);
    const auto* a = reinterpret_cast<const float*>(ours.value().data.data());
    const auto* b = reinterpret_cast<const float*>(theirs.value().data.data());
    for (std::int64_t i = 0; i < theirs.value().type.elementCount(); ++i)
        QVERIFY2(std::fabs(a[i] - b[i]) < 1e-4,
                 qPrintable(QString("%1: %2 vs %3").arg(i).arg(a[i]).arg(b[i])));
    // Malformed: a usage error naming the option.
    run = placerRun(QStringList{"plan", model, "--shard", "*=a"} + devices);
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains("--shard '*=a'") && run.err.contains("at least two devices"),
             qPrintable(run.err));
}

void TestPlacerCli::splitsABatchAcrossDevices() {
    // The example's residual block at batch 4.
    QFile example(QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay"));
    QVERIFY(example.open(QIODevice::ReadOnly));
    const QString text =
        QString::fromUtf8(example.readAll())
            .replace(QStringLiteral("(1, 3, 32, 32)"), QStringLiteral("(4, 3, 32, 32)"));
    QTemporaryDir dir;
    const QString model = dir.filePath("block4.relay");
    {
        QFile file(model);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(text.toUtf8());
    }
    const QStringList devices = {"--devices", "v0:vcpu,v1:vcpu,v2:vcpu"};
    Run run = placerRun(QStringList{"plan", model, "--split", "*=v0:3,v2", "--json"} + devices);
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "report");
    QVERIFY(report.ok());
    const Json* splits = report.value().find("splits");
    QVERIFY(splits && splits->items().size() == 1);
    const Json& region = splits->items()[0];
    QCOMPARE(region.find("shards")->items()[0].find("end")->asInt(), std::int64_t(3));
    QCOMPARE(region.find("shards")->items()[1].find("device")->asString(), std::string("v2"));
    QCOMPARE(region.find("nodes")->items().size(), std::size_t(15));
    // The readable report: the split nodes' devices, the region, its copies.
    run = placerRun(QStringList{"plan", model, "--split", "*=v0:3,v2"} + devices);
    QVERIFY2(run.out.contains("v0+v2") && run.out.contains("shards: v0 rows 0-2 (3), v2 rows 3-3"),
             qPrintable(run.out));
    // Malformed requests are usage errors; ones the graph cannot honour are conflicts.
    run = placerRun(QStringList{"plan", model, "--split", "*=v0"} + devices);
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains("at least two devices"), qPrintable(run.err));
    run = placerRun(QStringList{"plan", model, "--split", "*=v0,v1,v2,v3,v4"} +
                    QStringList{"--devices", "v0:vcpu,v1:vcpu,v2:vcpu,v3:vcpu,v4:vcpu"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("[split]") && run.out.contains("smaller than its 5 shards"),
             qPrintable(run.out));
    // It runs, each shard on its device, and computes what one device computes.
    run = placerRun(QStringList{"run", model, "--split", "*=v0,v1", "--iterations", "2", "--json",
                                "--no-record"} +
                    devices);
    QCOMPARE(run.code, 0);
    auto ran = Json::parse(run.out.toStdString(), "run");
    QVERIFY(ran.ok());
    QVERIFY(ran.value().find("reference_check")->find("ok")->asBool());
    const Json* shards = ran.value().find("splits")->items()[0].find("shards");
    QCOMPARE(shards->items().size(), std::size_t(2));
    QVERIFY(shards->items()[1].find("kernels_ms")->asDouble() > 0);
    QVERIFY(ran.value().find("splits")->items()[0].find("span_ms")->asDouble() > 0);
    // Saved with the plan, and a run of the same graph unsplit is another plan.
    const QString db = dir.filePath("ws.db");
    run = placerRun(
        QStringList{"plans", "save", model, "--name", "halves", "--split", "*=v0,v1", "--db", db} +
        devices);
    QCOMPARE(run.code, 0);
    run = placerRun({"plans", "show", "halves", "--emit", "json", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err)); // re-planned to the same answer
    QVERIFY2(run.out.contains("\"splits\""), qPrintable(run.out));
    run = placerRun(QStringList{"run", model, "--iterations", "1", "--save-run", "--plan", "halves",
                                "--db", db, "--no-record", "--default", "v0"} +
                    devices);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("places nodes differently"), qPrintable(run.err));
}

void TestPlacerCli::calibrateAndLearnFromRuns() {
    QTemporaryDir dir;
    const QString db = dir.filePath("w.db");
    Run run = placerRun({"calibrate", "--quick", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QRegularExpression("  cpu: [0-9.]+ GFLOP/s, [0-9.]+ GB/s")),
             qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression("  vcpu1 -> vcpu2: [0-9.]+ us \\+ [0-9.]+ GB/s")),
             qPrintable(run.out));
    // A line per step when standard error is no terminal, the bar full at the end.
    QVERIFY2(
        run.err.contains(QRegularExpression("placer calibrate: \\[#+\\] ([0-9]+)/\\1 done\\n$")),
        qPrintable(run.err));
    QVERIFY(run.err.contains("] 0/"));
    // Usage errors name what is wrong.
    run = placerRun({"calibrate", "--db"});
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains("--db needs a value"), qPrintable(run.err));
    QCOMPARE(placerRun({"calibrate", "--fast"}).code, 2);
    // calibrate takes no words and writes no file: each is named, and nothing is measured.
    for (const QStringList& words :
         {QStringList{"calibrate", "extra"}, QStringList{"calibrate", "-o", "x.json"}}) {
        run = placerRun(words);
        QCOMPARE(run.code, 2);
        QVERIFY2(run.err.contains("unknown argument '" +
                                  (words[1] == "extra" ? QString("extra") : QString("--output")) +
                                  "'"),
                 qPrintable(run.err));
        QVERIFY2(!run.err.contains("] 0/"), qPrintable(run.err));
    }
    QVERIFY(placerRun({"devices", "--db"}).err.contains("--db needs a value"));
    run = placerRun({"devices", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("      calibrated: "), qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression("executor's per op, [0-9.]+ us per run")),
             qPrintable(run.out));
    QVERIFY(run.out.contains(QRegularExpression("this machine has [0-9]+ cores?")));

    // A run keeps its node times; the next plan predicts from them.
    const QString model =
        QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay");
    const QStringList common = {"run",          model,  "--devices", "v0:vcpu,v1:vcpu",
                                "--mode",       "auto", "--db",      db,
                                "--iterations", "3",    "--json"};
    run = placerRun(common);
    QCOMPARE(run.code, 0);
    auto first = Json::parse(run.out.toStdString(), "report");
    QVERIFY(first.ok());
    const Json* prediction = first.value().find("prediction");
    QVERIFY(prediction && prediction->find("predicted_ms")->asDouble() > 0);
    QVERIFY(prediction->find("measured_ms")->asDouble() > 0);
    QVERIFY(!prediction->find("nodes")->items().empty());
    auto store = store::PlanStore::open(db.toStdString());
    QVERIFY(store.ok());
    const auto kept = store.value()->loadCosts(machineName()).value();
    // One per kernel that ran: the batch normalisations and Relus folded into the
    // convolutions have none of their own.
    QVERIFY2(kept.size() >= 7, std::to_string(kept.size()).c_str());
    QCOMPARE(kept.front().physical, std::string("vcpu"));
    // The residual convolution ran with its Add and Relu as post-ops: one time, the group's,
    // kept under the group's key.
    QVERIFY(std::any_of(kept.begin(), kept.end(), [](const store::MeasuredCost& cost) {
        return cost.key.starts_with("nn.conv2d(") && cost.key.ends_with(" fused add,nn.relu");
    }));
    run = placerRun({"plan", model, "--devices", "v0:vcpu,v1:vcpu", "--mode", "auto", "--db", db,
                     "--emit", "json"});
    QCOMPARE(run.code, 0);
    int fromMeasurements = 0;
    std::string fusedInto;
    const auto planned = Json::parse(run.out.toStdString(), "plan");
    QVERIFY(planned.ok());
    for (const Json& node : planned.value().find("nodes")->items()) {
        if (const Json* from = node.find("predicted_from"))
            fromMeasurements += from->asString() == "measured" ? 1 : 0;
        if (const Json* into = node.find("predicted_fused_into");
            into && node.find("name")->asString() == "%9")
            fusedInto = into->asString();
    }
    QVERIFY2(fromMeasurements >= 7, std::to_string(fromMeasurements).c_str());
    QCOMPARE(fusedInto, std::string("%7"));
    // Runs saved against two plans: plans diff sets what each predicted beside what it measured.
    QCOMPARE(placerRun(QStringList(common) << "--save-run"
                                           << "--plan"
                                           << "auto")
                 .code,
             0);
    QCOMPARE(placerRun({"run", model, "--devices", "v0:vcpu,v1:vcpu", "--db", db, "--iterations",
                        "3", "--save-run", "--plan", "demand"})
                 .code,
             0);
    run = placerRun({"plans", "diff", "auto", "demand", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(QRegularExpression("predicted:  [0-9.]+ ms -> none \\(measured ")),
             qPrintable(run.out));
    // Without the optimisations nothing is fused, and the prediction knows it: %9, which the
    // optimised run computes in %7's kernel, is predicted a time of its own.
    const auto predictsOwnTime = [&](const QStringList& extra, const std::string& node) {
        const Run r = placerRun(QStringList(common) << extra << "--no-record");
        const auto report = Json::parse(r.out.toStdString(), "report");
        if (r.code != 0 || !report.ok())
            return false;
        const auto& nodes = report.value().find("prediction")->find("nodes")->items();
        return std::any_of(nodes.begin(), nodes.end(), [&](const Json& entry) {
            return entry.find("name")->asString() == node;
        });
    };
    QVERIFY(predictsOwnTime({"--no-optimize"}, "%9"));
    QVERIFY(predictsOwnTime({"--no-optimize"}, "%7"));
    QVERIFY(!predictsOwnTime({}, "%9"));
    // --no-record keeps nothing more.
    const int runs = store.value()->loadCosts(machineName()).value().front().runs;
    QStringList quiet = common;
    quiet << "--no-record";
    QCOMPARE(placerRun(quiet).code, 0);
    QCOMPARE(store.value()->loadCosts(machineName()).value().front().runs, runs);
}

void TestPlacerCli::aFullDeviceHasConstantsCopiedInOnEveryRun() {
    // Every op on v0 by rule, and v0 has room for the activations and all but two weights:
    // auto mode keeps those on v1 and copies them in on every run, just before their readers.
    QTemporaryDir dir;
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    const QStringList common = {model,    "--devices", "v0:vcpu:mem=100KiB,v1:vcpu",
                                "--mode", "auto",      "--rule",
                                "*=v0",   "--db",      dir.filePath("w.db")};
    Run run = placerRun(QStringList{"plan"} + common);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("kept on v1 and copied to v0 on every run: v0's memory cannot "
                              "also keep it"),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("conflicts: none"), qPrintable(run.out));
    QVERIFY(run.out.contains("is used on v0: placed on v1, copied to v0 on every run (v0 cannot "
                             "also keep it)"));
    // The copy comes just before the op that reads it, and its storage is freed after that.
    run = placerRun(QStringList{"compile"} + common);
    QCOMPARE(run.code, 0);
    const QStringList lines = run.out.split('\n');
    int copies = 0;
    for (int k = 0; k < lines.size(); ++k) {
        const QRegularExpressionMatch copy =
            QRegularExpression("device_copy (\\S+@v0) <- \\S+ v1 -> v0").match(lines[k]);
        if (!copy.hasMatch())
            continue;
        ++copies;
        int next = k + 1;
        while (next < lines.size() && lines[next].contains("alloc_tensor"))
            ++next;
        QVERIFY2(next < lines.size() && lines[next].contains("invoke Conv") &&
                     lines[next].contains(copy.captured(1)),
                 qPrintable(lines.mid(k, 4).join('\n')));
        bool freed = false;
        for (int after = next + 1; after < lines.size() && lines[after].contains("  free ");
             ++after)
            freed = freed || lines[after].contains("free " + copy.captured(1) + " on v0");
        QVERIFY2(freed, qPrintable(lines.mid(k, 6).join('\n')));
    }
    QVERIFY(copies > 0);
    // The run (optimised, with its own plan) copies the same way, within v0's memory, and
    // computes what the reference computes.
    run = placerRun(QStringList{"run"} + common + QStringList{"--iterations", "2", "--no-record"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("reference check: ok"), qPrintable(run.out));
    const QRegularExpressionMatch v0 =
        QRegularExpression("  v0 +on vcpu[0-9]+ +busy +[0-9.]+ ms +memory ([0-9.]+) KiB")
            .match(run.out);
    QVERIFY2(v0.hasMatch() && v0.captured(1).toDouble() <= 100, qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression("copies: [1-9][0-9]*, ")), qPrintable(run.out));
}

void TestPlacerCli::autoModeCalibratesAFreshMachine() {
    // Auto placement on a machine the workspace has never measured measures it first, says so
    // once, and keeps the calibration.
    QTemporaryDir dir;
    const QString db = dir.filePath("fresh.db");
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    const QStringList plan = {"plan",   model,  "--devices", "v0:vcpu,v1:vcpu",
                              "--mode", "auto", "--db",      db};
    Run run = placerRun(plan);
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.contains("warning: this machine had no calibration: measured it now ("),
             qPrintable(run.err));
    auto store = store::PlanStore::open(db.toStdString());
    QVERIFY(store.ok());
    const auto calibration = store.value()->loadCalibration(machineName());
    QVERIFY(calibration.ok() && calibration.value().has_value());
    QVERIFY(calibration.value()->devices.size() >= 3);
    run = placerRun(plan);
    QCOMPARE(run.code, 0);
    QVERIFY2(!run.err.contains("calibration"), qPrintable(run.err));
    // Other modes predict nothing on the command line, and measure nothing.
    const QString other = dir.filePath("other.db");
    run = placerRun({"plan", model, "--devices", "v0:vcpu,v1:vcpu", "--db", other});
    QCOMPARE(run.code, 0);
    QVERIFY(!run.err.contains("calibration"));
}

void TestPlacerCli::autoModePlacesByCostAndPredicts() {
    const QString model =
        QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay");
    Run run = placerRun(
        {"plan", model, "--devices", "cpu:cpu,gpu:cuda", "--mode", "auto", "--pin", "%12=cpu"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("mode auto"), qPrintable(run.out));
    QVERIFY2(run.out.contains(
                 QRegularExpression("%4 +nn.conv2d +(cpu|gpu) +auto: [0-9.]+ ms on (cpu|gpu)")),
             qPrintable(run.out));
    QVERIFY2(run.out.contains(QRegularExpression("predicted latency: [0-9.]+ ms \\(HEFT's "
                                                 "placement: [0-9.]+ ms; the best single device")),
             qPrintable(run.out));
    QVERIFY(run.out.contains(
        QRegularExpression("\\n  (cpu|gpu) +busy [0-9.]+ ms, [0-9]+ ops: %0 0.000-")));
    QVERIFY2(run.out.contains(QRegularExpression("%12 +nn.dense +cpu +\\* +pinned to cpu")),
             qPrintable(run.out));

    run = placerRun({"plan", model, "--devices", "cpu:cpu,gpu:cuda", "--mode", "auto", "--exact",
                     "--emit", "json"});
    QCOMPARE(run.code, 0);
    auto parsed = Json::parse(run.out.toStdString(), "report");
    QVERIFY(parsed.ok());
    const Json& report = parsed.value();
    QCOMPARE(report.find("mode")->asString(), std::string("auto"));
    const Json& prediction = *report.find("prediction");
    QVERIFY(prediction.find("latency_ms")->asDouble() > 0);
    QVERIFY(prediction.find("latency_ms")->asDouble() <= prediction.find("heft_ms")->asDouble());
    // 17 ops: more than the exact programme takes.
    QCOMPARE(prediction.find("exact")->asString(), std::string("too large"));
    for (const Json& node : report.find("nodes")->items()) {
        if (node.find("op")->asString() == "nn.conv2d")
            QVERIFY(node.find("predicted_ms")->asDouble() > 0);
    }
}

void TestPlacerCli::summaryOfTheSharedInputExample() {
    const Run run =
        placerRun({"plan", kExample, "--devices", "cpu:cpu,gpu:cuda", "--default", "gpu"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.isEmpty(), qPrintable(run.err));
    QVERIFY2(run.out.contains("copies: 2, 280 B per run"), qPrintable(run.out));
    QVERIFY(run.out.contains("%b  gpu -> cpu  140 B  for %0"));
    QVERIFY(run.out.contains("%0  cpu -> gpu  140 B  for subtract"));
    QVERIFY(run.out.contains("conflicts: none"));
}

void TestPlacerCli::jsonReportHasTheDocumentedFields() {
    const Run run = placerRun({"plan", kExample, "--json"});
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "report");
    QVERIFY2(report, qPrintable(run.out));
    const Json& r = report.value();
    for (const char* key :
         {"devices", "default", "host", "nodes", "copies", "replicas", "conflicts", "memory"})
        QVERIFY2(r.find(key), key);
    QCOMPARE(r.find("default")->asString(), std::string("gpu"));
    QCOMPARE(r.find("host")->asString(), std::string("cpu"));
    const auto& nodes = r.find("nodes")->items();
    QCOMPARE(nodes.size(), std::size_t(6));
    const Json& firstAdd = nodes[3];
    QCOMPARE(firstAdd.find("name")->asString(), std::string("%0"));
    QCOMPARE(firstAdd.find("aliases")->items()[0].asString(), std::string("%1"));
    QCOMPARE(firstAdd.find("device")->asString(), std::string("cpu"));
    QCOMPARE(firstAdd.find("pinned")->asBool(), true);
    QVERIFY(!firstAdd.find("reason")->asString().empty());
    const auto& copies = r.find("copies")->items();
    QCOMPARE(copies.size(), std::size_t(2));
    QCOMPARE(copies[0].find("value")->asString(), std::string("%b"));
    QCOMPARE(copies[0].find("from")->asString(), std::string("gpu"));
    QCOMPARE(copies[0].find("to")->asString(), std::string("cpu"));
    QCOMPARE(copies[0].find("bytes")->asInt(), std::int64_t{140});
    QCOMPARE(copies[0].find("consumers")->items()[0].asString(), std::string("%0"));
    const Json& memory = r.find("memory")->items()[1];
    QCOMPARE(memory.find("device")->asString(), std::string("gpu"));
    QVERIFY(memory.find("peak_bytes")->asInt() > 0);
    QVERIFY(memory.find("storages")->isArray());
    // Deterministic: a second run prints the same bytes.
    QCOMPARE(placerRun({"plan", kExample, "--json"}).out, run.out);
}

void TestPlacerCli::relayEmitReadsBackToTheSamePlan() {
    QTemporaryDir dir;
    const QString planned = dir.filePath("planned.relay");
    QCOMPARE(placerRun({"plan", kExample, "--emit", "relay", "-o", planned}).code, 0);
    const Run again = placerRun({"plan", planned, "--json"});
    QCOMPARE(again.code, 0);
    const Run original = placerRun({"plan", kExample, "--json"});
    auto a = Json::parse(again.out.toStdString(), "a");
    auto b = Json::parse(original.out.toStdString(), "b");
    QCOMPARE(a.value().find("copied_bytes")->asInt(), b.value().find("copied_bytes")->asInt());
    QCOMPARE(a.value().find("conflicts")->size(), std::size_t(0));
}

void TestPlacerCli::dotAndGraphEmitters() {
    const Run dot = placerRun({"plan", kExample, "--emit", "dot"});
    QCOMPARE(dot.code, 0);
    QVERIFY(dot.out.startsWith("digraph \"shared_input\" {"));
    QVERIFY(dot.out.contains("shape=cds"));
    QVERIFY(dot.out.contains("fillcolor=\"#a8d88f\""));
    const Run graph = placerRun({"plan", kExample, "--emit", "graph"});
    QCOMPARE(graph.code, 0);
    QVERIFY(Json::parse(graph.out.toStdString(), "g"));
    QVERIFY(graph.out.contains("\"inserted\": true"));
}

void TestPlacerCli::pinsRulesAndFallback() {
    const Run run = placerRun({"plan", kExample, "--pin", "%[02]=cpu", "--rule", "subtract=gpu",
                               "--fallback", "cpu", "--mode", "unify", "--json"});
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "r");
    const auto& nodes = report.value().find("nodes")->items();
    for (const Json& node : nodes) {
        const std::string name = node.find("name")->asString();
        const std::string device = node.find("device")->asString();
        QVERIFY2(device == (name == "subtract" ? "gpu" : "cpu"), name.c_str());
    }
    const Run warned = placerRun({"plan", kExample, "--rule", "nn.conv2d=gpu"});
    QCOMPARE(warned.code, 0);
    QVERIFY2(warned.err.contains("warning: rule 'nn.conv2d=gpu' matches no op of the graph"),
             qPrintable(warned.err));
}

void TestPlacerCli::rulesOnAResidualBlock() {
    const QString model =
        QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay");
    const Run run = placerRun({"plan", model, "--rule", "nn.conv2d=gpu", "--rule", "nn.dense=gpu",
                               "--fallback", "cpu", "--json"});
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "r");
    QVERIFY(report);
    int onGpu = 0;
    for (const Json& node : report.value().find("nodes")->items()) {
        const std::string op = node.find("op")->asString();
        const std::string device = node.find("device")->asString();
        if (op == "nn.conv2d" || op == "nn.dense")
            QCOMPARE(device, std::string("gpu"));
        else if (op != "parameter")
            QCOMPARE(device, std::string("cpu"));
        onGpu += device == "gpu" ? 1 : 0;
    }
    QCOMPARE(onGpu, 4 + 5); // four ops, and the input and four weights that feed only them
    // Every conv crosses twice (in and out, 64 KiB or 16 KiB), the classifier twice.
    QCOMPARE(report.value().find("copies")->size(), std::size_t(7));
    QCOMPARE(report.value().find("copied_bytes")->asInt(), std::int64_t{131176});
}

void TestPlacerCli::modelFromStandardInput() {
    const std::string program = "#[version = \"0.0.5\"]\n"
                                "def @main(%x: Tensor[(4), float32]) {\n"
                                "  %0 = on_device(negative(%x), virtual_device=\"cpu\");\n"
                                "  exp(%0)\n}\n";
    const Run run = placerRun({"plan", "-", "--json"}, program);
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "r");
    QVERIFY2(report, qPrintable(run.err));
    QCOMPARE(report.value().find("copies")->size(), std::size_t(1));
    const Run bad = placerRun({"plan", "-"}, "def @main() { nope(1f) }");
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("<stdin>:1:15: unknown operator 'nope'"), qPrintable(bad.err));
}

void TestPlacerCli::userErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing-file") << QStringList{"plan", "/no/such/model.relay"}
                                  << "placer plan: error: /no/such/model.relay: cannot open file";
    QTest::newRow("unknown-device-in-rule")
        << QStringList{"plan", kExample, "--rule", "add=tpu"}
        << "rule 'add=tpu' names unknown device 'tpu' (devices: cpu, gpu)";
    QTest::newRow("unknown-device-in-pin")
        << QStringList{"plan", kExample, "--pin", "%0=tpu"} << "--pin %0=tpu: unknown device 'tpu'";
    QTest::newRow("pin-matches-nothing")
        << QStringList{"plan", kExample, "--pin", "%zz=cpu"} << "no node is called '%zz'";
    QTest::newRow("pin-bad-regex") << QStringList{"plan", kExample, "--pin", "re:(%0=cpu"}
                                   << "--pin re:(%0=cpu: 're:(%0' is not a regular expression";
    QTest::newRow("bad-devices") << QStringList{"plan", kExample, "--devices", "cpu:tpu"}
                                 << "--devices: device 'cpu' has unknown kind 'tpu'";
    QTest::newRow("too-few-devices-for-meta")
        << QStringList{"plan", kExample, "--devices", "cpu:cpu"}
        << "shared_input.relay:8:37: meta[VirtualDevice][1] is out of range";
    QTest::newRow("unknown-default")
        << QStringList{"plan", kExample, "--default", "tpu"} << "--default tpu: unknown device";
    QTest::newRow("unknown-fallback") << QStringList{"plan", kExample, "--fallback", "tpu"}
                                      << "fallback device 'tpu' is not a device";
    QTest::newRow("unwritable-output")
        << QStringList{"plan", kExample, "-o", "/no/such/dir/x"} << "cannot write '/no/such/dir/x'";
}

void TestPlacerCli::userErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = placerRun(args);
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
    QVERIFY(run.out.isEmpty());
}

void TestPlacerCli::usageErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("no-command") << QStringList{} << "usage: placer COMMAND";
    QTest::newRow("unknown-command") << QStringList{"plot"} << "unknown command 'plot'";
    QTest::newRow("no-model") << QStringList{"plan"} << "no model given";
    QTest::newRow("unknown-option")
        << QStringList{"plan", kExample, "--colour"} << "unknown option '--colour'";
    QTest::newRow("missing-value")
        << QStringList{"plan", kExample, "--mode"} << "option --mode needs a value";
    QTest::newRow("bad-mode") << QStringList{"plan", kExample, "--mode=magic"}
                              << "--mode must be demand, unify or auto, not 'magic'";
    QTest::newRow("bad-emit")
        << QStringList{"plan", kExample, "--emit", "pdf"}
        << "--emit must be summary, json, relay, dot, graph, onnx, netron or me-devices";
    QTest::newRow("pin-without-device") << QStringList{"plan", kExample, "--pin", "%0"}
                                        << "--pin '%0' is not of the form NAME=DEVICE";
    QTest::newRow("input-shape-without-dims")
        << QStringList{"plan", kExample, "--input-shape", "x"}
        << "--input-shape 'x': expected NAME=D1,D2,... (e.g. input=1,3,224,224)";
    QTest::newRow("input-shape-bad-dim")
        << QStringList{"plan", kExample, "--input-shape", "x=1,a"}
        << "--input-shape 'x=1,a': 'a' is not a dimension (a non-negative integer)";
}

void TestPlacerCli::usageErrors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Run run = placerRun(args);
    QCOMPARE(run.code, 2);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
}

// `placer profile import`: ONNX Runtime's profile on the model's nodes, as text and as JSON; a
// profile of another model and a bad command line are errors.
void TestPlacerCli::profileImport() {
    QTemporaryDir dir;
    const QString db = dir.filePath("workspace.db");
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    const QString profile =
        QStringLiteral(PLACER_SOURCE_DIR "/tests/models/profiles/tiny_resnet.ort.json");
    Run run = placerRun({"profile", "import", model, profile, "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("25 of 25 compute nodes have a time"), qPrintable(run.out));
    QVERIFY(run.out.contains("ReorderOutput"));
    run = placerRun({"profile", "import", model, profile, "--json", "--db", db});
    QCOMPARE(run.code, 0);
    auto json = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(json);
    QCOMPARE(json.value().find("node_match_rate")->asDouble(), 1.0);
    QCOMPARE(json.value().find("runs")->asInt(), std::int64_t{3});
    const QString other =
        QStringLiteral(PLACER_SOURCE_DIR "/tests/models/profiles/tiny_recurrent.ort.json");
    run = placerRun({"profile", "import", model, other, "--db", db});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("another model"), qPrintable(run.err));
    run = placerRun({"profile", "import", model, "--db", db});
    QCOMPARE(run.code, 2);
    QVERIFY(run.err.contains("import MODEL PROFILE"));
}

void TestPlacerCli::binaryExitCodes() {
    QProcess process;
    process.start(PLACER_BINARY, {"plan", kExample, "--json"});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    QVERIFY(Json::parse(process.readAllStandardOutput().toStdString(), "stdout"));
    process.start(PLACER_BINARY, {"plan", "/no/such/file.relay"});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 1);
    process.start(PLACER_BINARY, {"plan", "--help"});
    QVERIFY(process.waitForFinished(30000));
    QCOMPARE(process.exitCode(), 0);
    QVERIFY(process.readAllStandardOutput().contains("--constants replicate|copy"));
}

// The real binary, so that an abort or a crash shows as one: each input that once ended the
// process now ends in a message and exit code 1, or runs.
void TestPlacerCli::hostileRunsEndInErrors_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("extra");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("tensor-larger-than-memory")
        << "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(100000000000, 100000), float32]) {\n"
           "  nn.relu(%x)\n}\n"
        << "" << 1 << "placer run: error: storage 0 (holding %x) of 36379.8 TiB does not fit on";
    QTest::newRow("tensor-larger-than-arena")
        << "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1024, 1024, 64), float32]) {\n"
           "  nn.relu(%x)\n}\n"
        << "gpu=vcpu7:mem=100MiB" << 1
        << "of 256.0 MiB does not fit on vcpu7 (virtual device gpu), which can allocate 100.0 MiB";
    QTest::newRow("onnx-max-one-input") << "onnx:Max"
                                        << "" << 0 << "";
    QTest::newRow("onnx-min-one-input") << "onnx:Min"
                                        << "" << 0 << "";
}

void TestPlacerCli::hostileRunsEndInErrors() {
    QFETCH(QString, model);
    QFETCH(QString, extra);
    QFETCH(int, code);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QString path = dir.filePath("model.relay");
    std::string bytes = model.toStdString();
    if (model.startsWith("onnx:")) {
        // One variadic op with a single input (ONNX's test_max_one_input).
        onnx::ModelProto proto;
        proto.set_ir_version(8);
        proto.add_opset_import()->set_version(13);
        onnx::GraphProto* g = proto.mutable_graph();
        g->set_name("variadic");
        for (auto [list, name] :
             {std::pair{g->add_input(), "x"}, std::pair{g->add_output(), "y"}}) {
            list->set_name(name);
            auto* type = list->mutable_type()->mutable_tensor_type();
            type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
            type->mutable_shape()->add_dim()->set_dim_value(3);
        }
        onnx::NodeProto* node = g->add_node();
        node->set_op_type(model.mid(5).toStdString());
        node->add_input("x");
        node->add_output("y");
        bytes.clear();
        proto.SerializeToString(&bytes);
        path = dir.filePath("model.onnx");
    }
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(bytes.data(), static_cast<qint64>(bytes.size()));
    file.close();
    QStringList args{"run", path, "--iterations", "1", "--warmup", "0"};
    if (!extra.isEmpty())
        args << "--map" << extra;
    QProcess process;
    process.start(PLACER_BINARY, args);
    QVERIFY(process.waitForFinished(60000));
    const QString err = QString::fromUtf8(process.readAllStandardError());
    QCOMPARE(process.exitStatus(), QProcess::NormalExit);
    QVERIFY2(process.exitCode() == code, qPrintable(err));
    QVERIFY2(err.contains(message), qPrintable(err));
}

void TestPlacerCli::compileEmitsBytecode() {
    const Run run = placerRun({"compile", kExample, "--emit", "bytecode"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("load:\n") && run.out.contains("run:\n"), qPrintable(run.out));
    QVERIFY2(run.out.contains("device_copy %0@gpu <- %0 cpu -> gpu (140 B)"), qPrintable(run.out));
    QVERIFY2(run.out.contains("alloc_storage s0 140 B on"), qPrintable(run.out));
    QVERIFY(placerRun({"compile", "--help"}).out.contains("--emit bytecode"));
    QCOMPARE(placerRun({"compile", kExample, "--emit", "ptx"}).code, 2);
}

void TestPlacerCli::runReportAndTrace() {
    QTemporaryDir dir;
    const QString trace = dir.filePath("trace.json");
    const QString csv = dir.filePath("times.csv");
    const Run run =
        placerRun({"run", kExample, "--iterations", "3", "--warmup", "1", "--json", "--trace",
                   trace, "--csv", csv, "--save-outputs", dir.filePath("out")});
    QCOMPARE(run.code, 0);
    // The CSV the GUI exports too: a line per node and per copy.
    QFile csvFile(csv);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(csvFile.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.front(), QStringLiteral("kind,name,op,device,from,bytes,median_ms"));
    QCOMPARE(lines.filter(QRegularExpression("^node,")).size(), 3);
    QVERIFY(lines.filter(QRegularExpression("^copy,.*,140,")).size() >= 1);
    // No CUDA here: gpu runs on a virtual CPU, and the user is told.
    QVERIFY2(run.err.contains("'gpu' (cuda) runs on vcpu"), qPrintable(run.err));
    auto report = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(report.ok());
    Json& r = report.value();
    QCOMPARE(r["iterations"].asInt(), std::int64_t{3});
    QVERIFY(r["latency_ms"]["median"].asDouble() > 0);
    QVERIFY(r["latency_ms"]["min"].asDouble() <= r["latency_ms"]["max"].asDouble());
    QCOMPARE(r["devices"].items().size(), std::size_t{2});
    for (Json& device : r["devices"].items()) {
        QVERIFY(!device["physical"].asString().empty());
        QVERIFY(device["busy_ms"].asDouble() >= 0);
        QVERIFY(device["peak_bytes"].asInt() > 0);
    }
    // The process's peak resident memory, next to the devices' (at least its own code).
    QVERIFY(r["host_peak_resident_bytes"].asInt() > (std::int64_t{1} << 20));
    QCOMPARE(r["nodes"].items().size(), std::size_t{3});
    QVERIFY(r["copies"].items().size() >= 1);
    QCOMPARE(r["copies"].items()[0]["bytes"].asInt(), std::int64_t{140});
    QCOMPARE(r["outputs"].items().size(), std::size_t{1});
    const QString file = QString::fromStdString(r["outputs"].items()[0]["file"].asString());
    QVERIFY2(QFile::exists(file), qPrintable(file));
    QVERIFY(r["reference_check"]["ok"].asBool());
    QCOMPARE(r["reference_check"]["max_abs_diff"].asDouble(), 0.0);
    QFile traceFile(trace);
    QVERIFY(traceFile.open(QIODevice::ReadOnly));
    auto parsed = Json::parse(traceFile.readAll().toStdString(), "trace.json");
    QVERIFY(parsed.ok());
    QVERIFY(parsed.value()["traceEvents"].items().size() > 5);
    // The readable summary.
    const Run summary = placerRun({"run", kExample, "--iterations", "2"});
    QCOMPARE(summary.code, 0);
    QVERIFY2(summary.out.contains("latency: ") && summary.out.contains("reference check: ok"),
             qPrintable(summary.out));
}

void TestPlacerCli::runWithInputFilesMatchesPyTorch() {
    const QString base = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet");
    QTemporaryDir dir;
    const Run run = placerRun({"run", base + ".onnx", "--devices", "cpu:cpu,gpu:cuda", "--rule",
                               "Conv=gpu", "--fallback", "cpu", "--map", "gpu=vcpu2", "--input",
                               "input=" + base + ".input.npy", "--save-outputs", dir.path(),
                               "--iterations", "2", "--json"});
    QCOMPARE(run.code, 0);
    auto report = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(report.ok());
    QCOMPARE(report.value()["devices"].items()[1]["physical"].asString(), std::string("vcpu2"));
    QVERIFY(!report.value()["copies"].items().empty());
    // Compare with PyTorch's output, saved next to the model.
    const Run compare = placerRun({"run", base + ".onnx", "--input", "input=" + base + ".input.npy",
                                   "--iterations", "1", "--no-reference", "--json"});
    QCOMPARE(compare.code, 0);
    QFile saved(dir.filePath("output.npy")), expected(base + ".expected.npy");
    QVERIFY(saved.open(QIODevice::ReadOnly) && expected.open(QIODevice::ReadOnly));
    const QByteArray a = saved.readAll(), b = expected.readAll();
    QCOMPARE(a.size(), b.size());
    const float* x = reinterpret_cast<const float*>(a.constData() + 128);
    const float* y = reinterpret_cast<const float*>(b.constData() + 128);
    for (int i = 0; i < 10; ++i)
        QVERIFY2(std::fabs(x[i] - y[i]) < 1e-4,
                 qPrintable(QString("%1 vs %2").arg(x[i]).arg(y[i])));
}

// placer generate on the committed decoder, its second block pinned to b by a regular
// expression: PyTorch's greedy tokens on the first line, the figures after; bad prompts are
// errors that say where.
void TestPlacerCli::generateStreamsPyTorchsTokens() {
    const QString base = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/tiny_decoder");
    QTemporaryDir dir;
    const QString db = dir.filePath("workspace.db");
    const Run run = placerRun({"generate", base + ".onnx", "--devices", "a:vcpu,b:vcpu", "--pin",
                               "re:^/blocks\\.1/=b", "--prompt", base + ".prompt.npy",
                               "--max-new-tokens", "16", "--db", db});
    QVERIFY2(run.code == 0, qPrintable(run.err));
    auto expected = readNpy((base + ".expected.npy").toStdString());
    QVERIFY(expected);
    QStringList tokens;
    for (int i = 0; i < 16; ++i)
        tokens << QString::number(expected.value().as<std::int64_t>()[i]);
    QCOMPARE(run.out.split('\n').first(), tokens.join(' '));
    QVERIFY2(run.out.contains("time to first token:"), qPrintable(run.out));
    QVERIFY2(run.out.contains("tokens/s, per token p50"), qPrintable(run.out));
    QVERIFY2(run.out.contains("read the model 1 time(s)"), qPrintable(run.out));
    QVERIFY2(run.out.contains("busy per token:  a ") && run.out.contains(" ms  b "),
             qPrintable(run.out));
    QVERIFY2(run.out.contains("16 of 16 steps on one program for every size"), qPrintable(run.out));
    const Run json = placerRun({"generate", base + ".onnx", "--devices", "a:vcpu", "--prompt",
                                "1,2,3", "--max-new-tokens", "4", "--temperature", "0.8", "--top-k",
                                "10", "--seed", "5", "--json", "--db", db});
    QVERIFY2(json.code == 0, qPrintable(json.err));
    auto report = Json::parse(json.out.toStdString(), "stdout");
    QVERIFY(report.ok());
    QCOMPARE(report.value()["tokens"].items().size(), std::size_t{4});
    QCOMPARE(report.value()["sampling"]["top_k"].asInt(), std::int64_t{10});
    // Kept in the workspace against a plan, which placer plans show lists.
    const Run kept = placerRun({"generate", base + ".onnx", "--devices", "a:vcpu", "--prompt",
                                base + ".prompt.npy", "--max-new-tokens", "4", "--save-run",
                                "--plan", "decoder", "--db", db});
    QVERIFY2(kept.code == 0, qPrintable(kept.err));
    QVERIFY2(kept.err.contains("saved the plan as 'decoder'") &&
                 kept.err.contains("recorded the generation of 'decoder'"),
             qPrintable(kept.err));
    const Run shown = placerRun({"plans", "show", "decoder", "--db", db});
    QVERIFY2(shown.code == 0, qPrintable(shown.err));
    QVERIFY2(shown.out.contains("generations: 1 kept; the latest (") &&
                 shown.out.contains("a=vcpu1): 4 tokens after a prompt of 32"),
             qPrintable(shown.out));
    const Run listed = placerRun({"plans", "show", "decoder", "--emit", "json", "--db", db});
    auto document = Json::parse(listed.out.toStdString(), "stdout");
    QVERIFY(document.ok());
    QCOMPARE(document.value()["generations"].items().size(), std::size_t{1});
    QCOMPARE(document.value()["generations"].items()[0]["new_tokens"].asInt(), std::int64_t{4});
    const Run bad = placerRun({"generate", base + ".onnx", "--prompt", "1,2,999", "--db", db});
    QCOMPARE(bad.code, 1);
    QVERIFY2(bad.err.contains("prompt: token 2 is id 999, outside the vocabulary of 128"),
             qPrintable(bad.err));
    const Run missing = placerRun({"generate", base + ".onnx", "--db", db});
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains("--prompt is required"), qPrintable(missing.err));
}

// A model with symbolic batch and seq, run on files of three shapes: each is planned at its
// file's shape (no "taken as 1"), and matches numpy.
void TestPlacerCli::runPlansForTheInputFilesShapes() {
    const QString base = QStringLiteral(PLACER_SOURCE_DIR "/tests/models/dyn_encoder");
    for (const char* shape : {"1x4", "2x16", "3x33"}) {
        QTemporaryDir dir;
        const QString stem = base + "." + shape;
        const Run run = placerRun({"run", base + ".onnx", "--devices", "a:vcpu,b:vcpu", "--input",
                                   "x=" + stem + ".input.npy", "--save-outputs", dir.path(),
                                   "--iterations", "1"});
        QVERIFY2(run.code == 0, qPrintable(run.err));
        QVERIFY2(!run.err.contains("taken as 1"), qPrintable(run.err));
        QVERIFY2(run.out.contains("reference check: ok"), qPrintable(run.out));
        auto saved = readNpy(dir.filePath("y.npy").toStdString());
        auto expected = readNpy((stem + ".expected.npy").toStdString());
        QVERIFY(saved && expected);
        const ReferenceCheck check =
            compareOutputs({saved.value()}, {expected.value()}, 1e-4, 1e-3);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }
}

void TestPlacerCli::runIsOptimisedUnlessTold() {
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    const QStringList args{"run", model, "--devices", "v1:vcpu", "--iterations", "1"};
    const Run optimised = placerRun(args + QStringList{"--trace", "/dev/null"});
    QCOMPARE(optimised.code, 0);
    QVERIFY2(optimised.out.contains("optimised: channels-last (NHWC) on v1: 10 of 10 "
                                    "convolutions, 2 layout changes") &&
                 optimised.out.contains("optimised: post-op fusion on v1: 8 convolutions took "
                                        "11 element-wise ops") &&
                 optimised.out.contains("reference check: ok"),
             qPrintable(optimised.out));
    const Run json = placerRun(args + QStringList{"--json"});
    QCOMPARE(json.code, 0);
    auto report = Json::parse(json.out.toStdString(), "stdout");
    QVERIFY(report.ok());
    QCOMPARE(report.value()["optimizations"].items().size(), std::size_t{2});
    // The layout changes run as nodes of their own, named after the value they change; a fused
    // kernel is one node named after every node it computes.
    bool layoutChange = false, fused = false;
    for (const Json& node : report.value()["nodes"].items()) {
        const std::string name = node.find("name")->asString();
        layoutChange = layoutChange || name == "input/to_nhwc";
        fused = fused || name == "/layer1/conv2/Conv+/layer1/Add+/layer1/relu_1/Relu";
    }
    QVERIFY(layoutChange);
    QVERIFY(fused);
    const Run plain = placerRun(args + QStringList{"--no-optimize", "--json"});
    QCOMPARE(plain.code, 0);
    auto plainReport = Json::parse(plain.out.toStdString(), "stdout");
    QVERIFY(plainReport.ok());
    QVERIFY(plainReport.value()["optimizations"].items().empty());
    for (const Json& node : plainReport.value()["nodes"].items())
        QVERIFY(!node.find("name")->asString().ends_with("/to_nhwc"));
    // A transformer: its matrix products take their bias and what follows, their weights are
    // packed where oneDNN prefers another layout (which depends on the machine), and the
    // reference check holds. --no-optimize turns every pass off.
    const QString encoder = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_encoder.onnx");
    const QStringList encoderArgs{"run", encoder, "--devices", "v1:vcpu", "--iterations", "1"};
    const Run transformer = placerRun(encoderArgs);
    QCOMPARE(transformer.code, 0);
    QVERIFY2(transformer.out.contains("optimised: post-op fusion on v1: 8 matrix products took "
                                      "22 element-wise ops") &&
                 transformer.out.contains("reference check: ok"),
             qPrintable(transformer.out));
    const Run unfused = placerRun(encoderArgs + QStringList{"--no-optimize"});
    QCOMPARE(unfused.code, 0);
    QVERIFY2(!unfused.out.contains("optimised:") && unfused.out.contains("reference check: ok"),
             qPrintable(unfused.out));
}

void TestPlacerCli::runErrors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    const QString model = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_resnet.onnx");
    QTest::newRow("unknown-input")
        << QStringList{"run", model, "--input",
                       "x=" PLACER_SOURCE_DIR "/resources/models/tiny_resnet.input.npy"}
        << 1 << "input x: the model has no input of that name (inputs: input)";
    QTest::newRow("missing-npy") << QStringList{"run", model, "--input", "input=/no/such.npy"} << 1
                                 << "/no/such.npy: cannot open file";
    QTest::newRow("wrong-shape") << QStringList{"run", model, "--input",
                                                "input=" PLACER_SOURCE_DIR
                                                "/resources/models/tiny_resnet.expected.npy"}
                                 << 1
                                 << "the data is 1x10 float32 but the input is 1x3x32x32 float32";
    QTest::newRow("unknown-map") << QStringList{"run", kExample, "--map", "tpu=cpu"} << 1
                                 << "--map tpu=cpu: unknown virtual device";
    QTest::newRow("bad-physical") << QStringList{"run", kExample, "--map", "gpu=abacus"} << 1
                                  << "unknown physical device 'abacus'";
    QTest::newRow("no-cuda") << QStringList{"run", kExample, "--map", "gpu=cuda:0"} << 1
                             << "no CUDA device";
    QTest::newRow("bad-iterations") << QStringList{"run", kExample, "--iterations", "0"} << 2
                                    << "--iterations must be a whole number of at least 1";
    QTest::newRow("bad-map-syntax") << QStringList{"run", kExample, "--map", "gpu"} << 2
                                    << "--map 'gpu' is not of the form NAME=DEVICE";
}

void TestPlacerCli::runErrors() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    const Run run = placerRun(args);
    QCOMPARE(run.code, code);
    QVERIFY2(run.err.contains(message, Qt::CaseInsensitive), qPrintable(run.err));
}

void TestPlacerCli::devicesSaysWhyCudaIsAbsent() {
    const Run run = placerRun({"devices"});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("cpu: the host CPU"), qPrintable(run.out));
    QVERIFY2(run.out.contains("vcpuN"), qPrintable(run.out));
    QVERIFY2(run.out.contains("cuda: absent"), qPrintable(run.out));
    const Run json = placerRun({"devices", "--json"});
    QVERIFY(Json::parse(json.out.toStdString(), "stdout").ok());
}

void TestPlacerCli::plansInAWorkspace() {
    QTemporaryDir dir;
    const QString db = dir.filePath("ws.db");
    const QString model =
        QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay");
    Run run = placerRun({"plans", "save", model, "--name", "gpu", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("saved plan 'gpu'"), qPrintable(run.out));
    run = placerRun({"plans", "save", model, "--name", "split", "--rule", "nn.conv2d=gpu",
                     "--fallback", "cpu", "--note", "convs only", "--db", db});
    QCOMPARE(run.code, 0);
    run = placerRun({"plans", "list", "--json", "--db", db});
    QCOMPARE(run.code, 0);
    auto list = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(list.ok());
    QCOMPARE(list.value().items().size(), std::size_t{2});
    QCOMPARE(list.value().items()[1]["note"].asString(), std::string("convs only"));
    QVERIFY(list.value().items()[1]["copies"].asInt() > 0);
    // A draft (a window's unsaved edits) is listed as such and shown like a plan.
    {
        auto store = store::PlanStore::open(db.toStdString());
        QVERIFY(store.ok());
        auto loaded = loadModelFile(model.toStdString(), GraphFormat::Auto, std::nullopt);
        QVERIFY(loaded.ok());
        PlanOptions edited;
        edited.rules = {{"nn.dense", "cpu"}};
        const Plan plan = planDevices(loaded.value().graph, loaded.value().devices, edited);
        QVERIFY(store.value()
                    ->saveDraft(store::draftOwner(1), "split", model.toStdString(),
                                loaded.value().graph, loaded.value().devices, edited, plan)
                    .ok());
    }
    run = placerRun({"plans", "list", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("draft-1  [draft of split, open in a window]"), qPrintable(run.out));
    run = placerRun({"plans", "list", "--json", "--db", db});
    auto withDraft = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(withDraft.ok());
    QCOMPARE(withDraft.value().items().size(), std::size_t{3});
    QVERIFY(withDraft.value().items()[2]["draft"].asBool());
    QCOMPARE(withDraft.value().items()[2]["plan"].asString(), std::string("split"));
    run = placerRun({"plans", "show", "draft-1", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.startsWith("draft of split (open in a window") &&
                 run.out.contains("nn.dense=cpu"),
             qPrintable(run.out));
    run = placerRun({"plans", "show", "draft-9", "--db", db});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("no draft 9"), qPrintable(run.err));
    run = placerRun({"plans", "show", "split", "--emit", "json", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY(run.err.isEmpty()); // the planner's answer has not changed
    QVERIFY(Json::parse(run.out.toStdString(), "stdout").ok());
    run = placerRun({"plans", "diff", "gpu", "split", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains("copies added") && run.out.contains("moved %"), qPrintable(run.out));
    // A run recorded against a plan shows up in the list.
    run = placerRun({"run", model, "--rule", "nn.conv2d=gpu", "--fallback", "cpu", "--iterations",
                     "2", "--save-run", "--plan", "split", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.contains("recorded the run of 'split'"), qPrintable(run.err));
    run =
        placerRun({"run", model, "--iterations", "1", "--save-run", "--plan", "split", "--db", db});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("places nodes differently"), qPrintable(run.err));
    run = placerRun({"plans", "list", "--db", db});
    QVERIFY2(run.out.contains("last run"), qPrintable(run.out));
    // diff compares the last runs once both plans have one.
    run = placerRun({"plans", "diff", "gpu", "split", "--db", db});
    QVERIFY2(run.out.contains("last runs: run both plans"), qPrintable(run.out));
    run = placerRun({"run", model, "--iterations", "2", "--save-run", "--plan", "gpu", "--db", db});
    QCOMPARE(run.code, 0);
    run = placerRun({"plans", "diff", "gpu", "split", "--db", db});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.out.contains(
                 QRegularExpression("last runs: [0-9.]+ ms \\(cpu=cpu, gpu=vcpu[0-9]+\\) -> ")),
             qPrintable(run.out));
    // Then the nodes whose time changed most, signed.
    QVERIFY2(run.out.contains(QRegularExpression("\n  \\S+ [+-][0-9.]+ ms\n")),
             qPrintable(run.out));
    run = placerRun({"plans", "diff", "gpu", "split", "--json", "--db", db});
    auto diffJson = Json::parse(run.out.toStdString(), "stdout");
    QVERIFY(diffJson.ok());
    QVERIFY(diffJson.value()["last_runs"]["latency_ms_b"].asDouble() > 0);
    QVERIFY2(diffJson.value()["last_runs"]["node_changes"].items().size() >= 5,
             std::to_string(diffJson.value()["last_runs"]["node_changes"].items().size()).c_str());
    QCOMPARE(placerRun({"plans", "rename", "split", "mine", "--db", db}).code, 0);
    QCOMPARE(placerRun({"plans", "duplicate", "mine", "copy", "--db", db}).code, 0);
    QCOMPARE(placerRun({"plans", "delete", "copy", "--db", db}).code, 0);
    run = placerRun({"plans", "delete", "copy", "--db", db});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("no plan called 'copy'"), qPrintable(run.err));
    // Usage and user errors.
    QCOMPARE(placerRun({"plans", "save", model, "--db", db}).code, 2);
    QCOMPARE(placerRun({"plans", "frobnicate", "--db", db}).code, 2);
    QCOMPARE(placerRun({"plans", "show", "--db", db}).code, 2);
    QFile notes(dir.filePath("notes.txt"));
    QVERIFY(notes.open(QIODevice::WriteOnly));
    notes.write("not a database at all, just some text that is long enough to have a header\n");
    notes.close();
    run = placerRun({"plans", "list", "--db", notes.fileName()});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains("not SQLite"), qPrintable(run.err));
}

QTEST_GUILESS_MAIN(TestPlacerCli)
namespace {

/// x [batch, 3, 4] -> Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): PyTorch's
/// x.view(x.size(0), -1), with a symbolic batch.
std::string flattenModel() {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto* g = model.mutable_graph();
    g->set_name("flatten");
    auto value = [](onnx::ValueInfoProto* info, const char* name, std::vector<std::int64_t> dims) {
        info->set_name(name);
        auto* type = info->mutable_type()->mutable_tensor_type();
        type->set_elem_type(onnx::TensorProto_DataType_FLOAT);
        for (std::int64_t d : dims) {
            auto* dim = type->mutable_shape()->add_dim();
            if (d < 0)
                dim->set_dim_param("batch");
            else
                dim->set_dim_value(d);
        }
    };
    value(g->add_input(), "x", {-1, 3, 4});
    value(g->add_output(), "y", {-1, 12});
    auto ints = [&](const char* name, std::vector<std::int64_t> values, bool scalar) {
        onnx::TensorProto* t = g->add_initializer();
        t->set_name(name);
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        if (!scalar)
            t->add_dims(static_cast<std::int64_t>(values.size()));
        for (std::int64_t v : values)
            t->add_int64_data(v);
    };
    ints("zero", {0}, true);
    ints("axes", {0}, false);
    ints("rest", {-1}, false);
    auto node = [&](const char* op, std::vector<std::string> in, const char* out) {
        onnx::NodeProto* n = g->add_node();
        n->set_op_type(op);
        n->set_name(out);
        for (const std::string& i : in)
            n->add_input(i);
        n->add_output(out);
        return n;
    };
    node("Shape", {"x"}, "shape");
    node("Gather", {"shape", "zero"}, "batch_size");
    node("Unsqueeze", {"batch_size", "axes"}, "batch_1d");
    onnx::AttributeProto* axis = node("Concat", {"batch_1d", "rest"}, "target")->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto_AttributeType_INT);
    axis->set_i(0);
    node("Reshape", {"x", "target"}, "y");
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

} // namespace

void TestPlacerCli::inputShapesFixSymbolicDimensions() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("flatten.onnx"));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        const std::string bytes = flattenModel();
        file.write(bytes.data(), static_cast<qint64>(bytes.size()));
    }
    Run run = placerRun({"plan", path, "--input-shape", "x=6,3,4", "--emit", "json"});
    QCOMPARE(run.code, 0);
    QVERIFY2(!run.err.contains(QStringLiteral("not fixed")), qPrintable(run.err));
    const auto report = Json::parse(run.out.toStdString(), "report");
    QVERIFY(report);
    const Json* folded = report.value().find("folded_at_load");
    QVERIFY(folded);
    QCOMPARE(folded->asInt(), std::int64_t{4});
    run = placerRun({"plan", path});
    QCOMPARE(run.code, 0);
    QVERIFY2(run.err.contains(QStringLiteral("dimension 'batch' is not fixed; it is taken as 1")),
             qPrintable(run.err));
    QVERIFY2(run.out.contains(QStringLiteral("4 more folded into constants at load")),
             qPrintable(run.out));
    run = placerRun({"plan", path, "--input-shape", "x=6,5,4"});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(
                 QStringLiteral("input 'x' has dimension 1 fixed at 3; the shape given says 5")),
             qPrintable(run.err));
    run = placerRun({"plan", kExample, "--input-shape", "x=1"});
    QCOMPARE(run.code, 1);
    QVERIFY2(run.err.contains(QStringLiteral("only ONNX models have symbolic dimensions")),
             qPrintable(run.err));
}

#include "tst_placercli.moc"
