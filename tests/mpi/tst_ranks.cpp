// Runs whose devices span ranks (device/Ranks.h, backends/mpi/MpiTransport.h), under mpirun: CTest
// starts this suite as two ranks (tests/CMakeLists.txt). Every rank runs every test function in the
// same order; the ranks agree on a verdict before any check can return early, so a failure on one
// rank fails both instead of leaving the other waiting.
#include "PlanTestUtil.h"
#include "RandomElementwiseGraph.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "backends/mpi/MpiTransport.h"
#include "device/DeviceRegistry.h"
#include "device/Ranks.h"
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "ir/OpRegistry.h"
#include "kernels/RandomTensor.h"
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "session/Session.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/RankResults.h"

#include <QtTest>

#include <random>

using namespace placer;

namespace {

const std::string kSource = PLACER_SOURCE_DIR;

/// Every rank's (ok, why): the first failure, named by its rank, or empty when all passed.
std::string agree(bool ok, const std::string& why) {
    auto all = rankTransport()->allGather(ok ? std::string() : why);
    if (!all)
        return "gathering the verdicts: " + all.error().message;
    for (std::size_t r = 0; r < all.value().size(); ++r) {
        if (!all.value()[r].empty())
            return "rank " + std::to_string(r) + ": " + all.value()[r];
    }
    return {};
}

/// The graph on one vcpu of this rank alone.
std::vector<HostTensor> oneDevice(const Graph& graph, const std::vector<HostTensor>& inputs) {
    SingleDevicePlan single = singleDevicePlan(graph);
    auto program = lowerToBytecode(single.graph, single.devices, single.plan);
    DeviceRegistry registry;
    auto vcpu = registry.get("rank" + std::to_string(localRank()) + "/vcpu9");
    auto executor = Executor::load(single.graph, single.devices, program.take(), {vcpu.value()}, 0);
    if (!executor)
        qFatal("reference load failed: %s", executor.error().message.c_str());
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        qFatal("reference run failed: %s", result.error().message.c_str());
    return result.value().outputs;
}

} // namespace

class TestRanks : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void initTestCase() {
        QVERIFY2(rankCount() == 2, "run this suite with mpirun -np 2");
        installConstantFolding();
    }

    // Random plans over four devices, two on each rank, run as one: the outputs rank 0 gathers
    // equal one device's bit for bit, and every instruction was timed by the rank that ran it.
    void randomPlansMatchOneDevice_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 8; ++seed)
            QTest::newRow(qPrintable(QString("seed %1").arg(seed))) << seed;
    }
    void randomPlansMatchOneDevice() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        const int count = 4;
        DeviceSet devices = DeviceSet::parse("v0:vcpu,v1:vcpu,v2:vcpu,v3:vcpu").take();
        const Graph graph = test::randomElementwiseGraph(rng, count, 60 + seed * 10);
        const Plan plan = planDevices(graph, devices, PlanOptions{});
        auto program = lowerToBytecode(graph, devices, plan);
        QVERIFY(program.ok());
        DeviceRegistry registry;
        std::vector<Device*> mapping;
        for (int d = 0; d < count; ++d)
            mapping.push_back(
                registry.get("rank" + std::to_string(d % 2) + "/vcpu" + std::to_string(d + 1))
                    .value());
        int crossing = 0;
        for (const Instruction& instr : program.value().code)
            crossing += instr.op == Opcode::DeviceCopy &&
                                instr.device.index % 2 != instr.srcDevice.index % 2
                            ? 1
                            : 0;
        QVERIFY2(crossing > 3, "values cross ranks");
        auto executor = Executor::load(graph, devices, program.take(), mapping, 0);
        std::string why = executor ? "" : executor.error().message;
        std::vector<HostTensor> inputs;
        for (NodeId input : executor ? executor.value()->program().inputs : std::vector<NodeId>{})
            inputs.push_back(randomTensor(graph.node(input).outputs[0], 7 + input.index));
        Result<RunResult> result = SourceError::sentence("not run");
        if (executor)
            result = executor.value()->run(inputs, RunOptions{1, 4, {}, {}, true});
        if (why.empty() && !result)
            why = result.error().message;
        if (why.empty()) {
            if (Status gathered = gatherRankResults(result.value()); !gathered.ok())
                why = gathered.error().message;
        }
        if (why.empty() && localRank() == 0) {
            const ReferenceCheck check =
                compareOutputs(result.value().outputs, oneDevice(graph, inputs), 0, 0);
            if (!check.ok)
                why = check.mismatch;
            const Program& ran = executor.value()->program();
            for (std::size_t k = ran.runStart; k < ran.code.size() && why.empty(); ++k) {
                const Opcode op = ran.code[k].op;
                if ((op == Opcode::Invoke || op == Opcode::DeviceCopy) &&
                    result.value().instrMicros[k].size() != 4)
                    why = "instruction " + std::to_string(k) + " has " +
                          std::to_string(result.value().instrMicros[k].size()) +
                          " times, not one per measured run";
            }
            const auto& streams = result.value().streams;
            for (std::size_t s = 0; s < streams.size() && why.empty(); ++s) {
                if (streams[s].busyMicros.size() != 4 || streams[s].busyMicros[0] <= 0)
                    why = "stream " + streams[s].physical + " has no busy times from its rank";
            }
        }
        const std::string verdict = agree(why.empty(), why);
        QVERIFY2(verdict.empty(), verdict.c_str());
    }

    // A real model through the session, as placer run does it: its convolutions on rank 0,
    // everything else on rank 1; rank 0's reference check passes, and the ranks' figures are in
    // rank 0's report.
    void aModelThroughTheSession() {
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        request.options.rules.push_back(OpRule{"Conv", "a"});
        request.options.fallbackDevice = "b";
        request.maps = {{"b", "rank1/vcpu1"}};
        auto opened =
            session.open(ModelSource{kSource + "/resources/models/tiny_inception.onnx"}, request);
        std::string why = opened ? "" : opened.error().message;
        std::shared_ptr<RunOutcome> outcome;
        if (why.empty()) {
            RunRequest run;
            run.maps = request.maps;
            run.warmup = 1;
            run.iterations = 3;
            auto ran = session.run(std::make_shared<const PlannedModel>(opened.take()), run);
            if (ran)
                outcome = ran.take();
            else
                why = ran.error().message;
        }
        if (why.empty() && localRank() == 0) {
            if (!outcome->reference || !outcome->reference->ok)
                why = "the reference check failed: " +
                      (outcome->reference ? outcome->reference->mismatch : std::string("none"));
            const std::string summary = runSummary(*outcome);
            if (summary.find("rank1/vcpu1") == std::string::npos)
                why = "the report does not name rank 1's device:\n" + summary;
        }
        const std::string verdict = agree(why.empty(), why);
        QVERIFY2(verdict.empty(), verdict.c_str());
    }

    // Values whose sizes only the run finds cross ranks: their shape goes first, then their
    // bytes. The data-dependent models, each with the ops the rules name on rank 0 and the rest
    // on rank 1, match the reference on one device (rank 0 checks; both ranks agree).
    void sizesFoundAtRunCrossRanks_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("onRankZero");
        QTest::addColumn<QString>("input");
        QTest::newRow("NonZero") << "nonzero_select"
                                 << "NonZero"
                                 << "";
        QTest::newRow("NMS, TopK") << "nms_topk"
                                   << "NonMaxSuppression"
                                   << "";
        QTest::newRow("If on data") << "if_on_data"
                                    << "If"
                                    << "";
        // Its results leave the Loop as the graph's: rank 1 runs it, rank 0 gathers them.
        QTest::newRow("Loop that grows") << "loop_grows"
                                         << ""
                                         << "";
        QTest::newRow("detector") << "tiny_detector"
                                  << "If|RoiAlign"
                                  << "images=tiny_detector.images.npy";
    }
    void sizesFoundAtRunCrossRanks() {
        QFETCH(QString, model);
        QFETCH(QString, onRankZero);
        QFETCH(QString, input);
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        for (const QString& op : onRankZero.split('|', Qt::SkipEmptyParts))
            request.options.rules.push_back(OpRule{op.toStdString(), "a"});
        request.options.fallbackDevice = "b";
        request.maps = {{"b", "rank1/vcpu1"}};
        RunRequest run;
        run.maps = request.maps;
        run.warmup = 1;
        run.iterations = 2;
        ModelSource source{kSource + "/tests/models/" + model.toStdString() + ".onnx"};
        if (!input.isEmpty()) {
            const QStringList parts = input.split('=');
            auto data = readNpy(kSource + "/tests/models/" + parts[1].toStdString());
            QVERIFY(data);
            source.runInputs[parts[0].toStdString()] = data.value();
            run.inputs.emplace_back(parts[0].toStdString(), data.take());
        }
        auto opened = session.open(source, request);
        std::string why = opened ? "" : opened.error().message;
        int crossing = 0;
        if (why.empty()) {
            for (const CopyPlan& copy : opened.value().plan.copies)
                crossing += copy.sizeAtRun ? 1 : 0;
            auto ran = session.run(std::make_shared<const PlannedModel>(opened.take()), run);
            if (!ran)
                why = ran.error().message;
            else if (localRank() == 0 && (!ran.value()->reference || !ran.value()->reference->ok))
                why = "the reference check failed: " + (ran.value()->reference
                                                            ? ran.value()->reference->mismatch
                                                            : std::string("none"));
        }
        if (why.empty() && crossing == 0 && !onRankZero.isEmpty())
            why = "no value of a size found at run time crossed the ranks";
        const std::string verdict = agree(why.empty(), why);
        QVERIFY2(verdict.empty(), verdict.c_str());
    }

    // Ranks that made different plans stop before running, each naming the rank that differs.
    void ranksThatDifferStop() {
        Session session(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        // Rank 1 places the pooling elsewhere.
        request.options.rules.push_back(OpRule{localRank() == 0 ? "Conv" : "MaxPool", "a"});
        request.options.fallbackDevice = "b";
        request.maps = {{"b", "rank1/vcpu1"}};
        auto opened =
            session.open(ModelSource{kSource + "/resources/models/tiny_resnet.onnx"}, request);
        std::string why = opened ? "" : opened.error().message;
        if (why.empty()) {
            RunRequest run;
            run.maps = request.maps;
            run.iterations = 1;
            auto ran = session.run(std::make_shared<const PlannedModel>(opened.take()), run);
            if (ran)
                why = "ranks with different plans ran";
            else if (ran.error().message.find("rank 1 (host ") == std::string::npos ||
                     ran.error().message.find("another plan") == std::string::npos)
                why = "unexpected error: " + ran.error().message;
        }
        const std::string verdict = agree(why.empty(), why);
        QVERIFY2(verdict.empty(), verdict.c_str());
    }

    // A cancel on one rank stops every rank before the same iteration.
    void aCancelOnOneRankStopsEvery() {
        DeviceSet devices = DeviceSet::parse("v0:vcpu,v1:vcpu").take();
        std::mt19937 rng(3);
        const Graph graph = test::randomElementwiseGraph(rng, 2, 40);
        const Plan plan = planDevices(graph, devices, PlanOptions{});
        auto program = lowerToBytecode(graph, devices, plan);
        QVERIFY(program.ok());
        DeviceRegistry registry;
        auto executor = Executor::load(
            graph, devices, program.take(),
            {registry.get("rank0/vcpu1").value(), registry.get("rank1/vcpu2").value()}, 0);
        QVERIFY(executor);
        std::vector<HostTensor> inputs;
        for (NodeId input : executor.value()->program().inputs)
            inputs.push_back(randomTensor(graph.node(input).outputs[0], 7 + input.index));
        int asked = 0;
        RunOptions options{0, 100, {}, [&] { return localRank() == 0 && ++asked > 3; }, true};
        auto result = executor.value()->run(inputs, options);
        std::string why = result ? "" : result.error().message;
        if (why.empty() && !result.value().cancelled)
            why = "the run was not cancelled";
        if (why.empty() && result.value().latencyMicros.size() != 3)
            why = std::to_string(result.value().latencyMicros.size()) + " iterations ran, not 3";
        const std::string verdict = agree(why.empty(), why);
        QVERIFY2(verdict.empty(), verdict.c_str());
    }

    // A device of a rank the run does not have is an error naming the ranks there are.
    void aRankBeyondTheRunIsAnError() {
        DeviceRegistry registry;
        auto device = registry.get("rank2/vcpu1");
        QVERIFY(!device);
        QVERIFY2(device.error().message.find("this run has 2 ranks") != std::string::npos,
                 device.error().message.c_str());
        QVERIFY(!registry.get("rankx/vcpu1"));
        auto remote = registry.get(localRank() == 0 ? "rank1/vcpu3" : "vcpu3");
        QVERIFY(remote);
        QCOMPARE(remote.value()->remoteRank(), 1 - localRank());
    }
};

int main(int argc, char** argv) {
    auto transport = mpi::MpiTransport::start(&argc, &argv);
    if (!transport) {
        std::fprintf(stderr, "tst_ranks: %s\n", transport.error().message.c_str());
        return 1;
    }
    setRankTransport(transport.take());
    TestRanks test;
    const int failed = QTest::qExec(&test, argc, argv);
    setRankTransport(nullptr);
    return failed;
}

#include "tst_ranks.moc"
