// Pipelined plans (PlanOptions::microBatches, placer run --micro-batches): the batch cut into
// micro-batches that flow through the devices as the plan places the ops. They compute what the
// unpipelined plan computes, bit for bit (CNNs and a transformer, uneven micro-batches, three
// stages), each device works through the micro-batches in order while the next device works on
// the one before, memory is planned for them, and what cannot be pipelined is said.
#include "io/Npy.h"
#include "kernels/RandomTensor.h"
#include "plan/Split.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "vm/ReferenceRun.h"

#include <QTemporaryDir>
#include <QtTest>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

using namespace placer;

namespace {

std::string sourcePath(const std::string& relative) {
    return std::string(PLACER_SOURCE_DIR) + "/" + relative;
}

/// The bundled residual block (resources/examples) at batch `batch`.
ModelSource residualBlock(int batch) {
    std::ifstream in(sourcePath("resources/examples/residual_block.relay"));
    std::stringstream text;
    text << in.rdbuf();
    std::string relay = text.str();
    const std::string from = "(1, 3, 32, 32)";
    relay.replace(relay.find(from), from.size(), "(" + std::to_string(batch) + ", 3, 32, 32)");
    ModelSource source;
    source.path = "residual_block.relay";
    source.text = relay;
    return source;
}

/// Six dense layers of 256 x 256 at batch 8: 1.5 MB of weights, 8 KB activations.
ModelSource denseStack() {
    std::string relay = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(8, 256), float32]";
    for (int k = 0; k < 6; ++k)
        relay += ", %w" + std::to_string(k) + ": Tensor[(256, 256), float32]";
    relay += ") {\n";
    std::string previous = "%x";
    for (int k = 0; k < 6; ++k) {
        relay += "  %d" + std::to_string(k) + " = nn.dense(" + previous + ", %w" +
                 std::to_string(k) + ", units=256);\n";
        previous = "%r" + std::to_string(k);
        relay += "  " + previous + " = nn.relu(%d" + std::to_string(k) + ");\n";
    }
    relay += "  " + previous + "\n}\n";
    ModelSource source;
    source.path = "dense_stack.relay";
    source.text = relay;
    return source;
}

/// The residual block in two stages on two vcpus: everything on a, its second half pinned to
/// b; then `extra` options.
std::vector<std::pair<std::string, std::string>>
twoStages(std::vector<std::pair<std::string, std::string>> extra = {}) {
    std::vector<std::pair<std::string, std::string>> options = {{"devices", "a:vcpu,b:vcpu"},
                                                                {"rule", "*=a"}};
    for (const char* pin :
         {"%7=b", "%8=b", "%9=b", "%10=b", "%11=b", "%12=b", "%13=b", "nn.softmax=b"})
        options.emplace_back("pin", pin);
    options.insert(options.end(), extra.begin(), extra.end());
    return options;
}

PlanRequest request(const std::vector<std::pair<std::string, std::string>>& options) {
    ModelSource ignored;
    PlanRequest out;
    for (const auto& [name, value] : options) {
        if (auto problem = takePlanOption(name, value, &ignored, &out))
            qFatal("%s", problem->c_str());
    }
    return out;
}

RunRequest runs(std::vector<std::pair<std::string, HostTensor>> inputs = {}) {
    RunRequest out;
    out.inputs = std::move(inputs);
    out.warmup = 0;
    out.iterations = 2;
    return out;
}

bool sameBits(const std::vector<HostTensor>& a, const std::vector<HostTensor>& b) {
    if (a.size() != b.size())
        return false;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].type != b[k].type || a[k].data.size() != b[k].data.size() ||
            std::memcmp(a[k].data.data(), b[k].data.data(), a[k].data.size()) != 0)
            return false;
    }
    return true;
}

/// Per device (virtual), per micro-batch: the first start and last end of its kernels in the
/// traced iteration.
std::map<std::pair<int, int>, std::pair<double, double>> spans(const RunOutcome& outcome) {
    std::map<std::pair<int, int>, std::pair<double, double>> out;
    const Program& program = outcome.executor->program();
    for (const TimedEvent& event : outcome.result.trace) {
        const Instruction& instr = program.code[event.instruction];
        if (instr.op != Opcode::Invoke || !instr.node.valid())
            continue;
        const int wave = outcome.graph().node(instr.node).microBatch;
        if (wave < 0)
            continue;
        const auto key = std::pair(static_cast<int>(instr.device.index), wave);
        auto [at, added] = out.emplace(key, std::pair(event.start, event.end));
        if (!added) {
            at->second.first = std::min(at->second.first, event.start);
            at->second.second = std::max(at->second.second, event.end);
        }
    }
    return out;
}

/// Rows [k * rows, (k + 1) * rows) of `tensor` on axis 0.
HostTensor rowsOf(const HostTensor& tensor, std::int64_t k, std::int64_t rows) {
    HostTensor out;
    out.type = tensor.type;
    out.type.shape[0] = rows;
    const auto bytes = static_cast<std::size_t>(out.type.bytes());
    out.data = TensorData(tensor.data.data() + static_cast<std::size_t>(k) * bytes, bytes);
    return out;
}

/// Data for every input of `graph`: random, seeded by its position; `stacked` times the rows on
/// axis 0 for `stackedInput`.
std::vector<std::pair<std::string, HostTensor>>
allInputs(const Graph& graph, const std::string& stackedInput, std::int64_t stacked) {
    std::vector<std::pair<std::string, HostTensor>> out;
    for (const Node& node : graph.nodes()) {
        if (!node.isParameter())
            continue;
        TensorType type = node.outputs[0];
        if (node.name == stackedInput)
            type.shape[0] *= stacked;
        out.emplace_back(node.name, randomTensor(type, 7 + out.size()));
    }
    return out;
}

} // namespace

class TestPipeline : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_session;

    std::shared_ptr<const PlannedModel> open(const ModelSource& source, const PlanRequest& plan) {
        auto opened = m_session->open(source, plan);
        if (!opened)
            qFatal("%s", opened.error().toString().c_str());
        return std::make_shared<const PlannedModel>(opened.take());
    }

    std::shared_ptr<RunOutcome> run(std::shared_ptr<const PlannedModel> planned,
                                    RunRequest request = runs()) {
        auto ran = m_session->run(std::move(planned), request);
        if (!ran)
            qFatal("%s", ran.error().toString().c_str());
        return ran.take();
    }

private slots:
    void init() {
        m_session =
            std::make_unique<Session>(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
    }

    void pipelinedRunsMatchUnpipelinedBitForBit_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<QString>("devices");
        QTest::addColumn<QStringList>("pins");
        const QStringList secondHalf = {"%7=b",  "%8=b",  "%9=b",  "%10=b",
                                        "%11=b", "%12=b", "%13=b", "nn.softmax=b"};
        QTest::newRow("cnn, two stages, 3 of 6") << 6 << 3 << "a:vcpu,b:vcpu" << secondHalf;
        QTest::newRow("cnn, two stages, 4 of 7 (uneven)")
            << 7 << 4 << "a:vcpu,b:vcpu" << secondHalf;
        QTest::newRow("cnn, three stages, 5 of 5")
            << 5 << 5 << "a:vcpu,b:vcpu,c:vcpu"
            << QStringList{"%4=b",  "%5=b",  "%6=b",  "%7=b",  "%8=c",        "%9=c",
                           "%10=c", "%11=c", "%12=c", "%13=c", "nn.softmax=c"};
    }

    void pipelinedRunsMatchUnpipelinedBitForBit() {
        QFETCH(int, batch);
        QFETCH(int, microBatches);
        QFETCH(QString, devices);
        QFETCH(QStringList, pins);
        std::vector<std::pair<std::string, std::string>> options = {
            {"devices", devices.toStdString()}, {"rule", "*=a"}};
        for (const QString& pin : pins)
            options.emplace_back("pin", pin.toStdString());
        const auto plain = open(residualBlock(batch), request(options));
        options.emplace_back("micro-batches", std::to_string(microBatches));
        const auto piped = open(residualBlock(batch), request(options));
        QCOMPARE(piped->plan.splits.size(), std::size_t{1});
        const SplitRegion& region = piped->plan.splits.front();
        QVERIFY(region.microBatched);
        QCOMPARE(static_cast<int>(region.shards.size()), microBatches);
        QCOMPARE(region.shards.back().end, std::int64_t{batch});
        // Every node keeps the device the plan gave it, on every device named.
        QCOMPARE(piped->plan.devices, plain->plan.devices);
        for (int d = 0; d < plain->model.devices.size(); ++d)
            QVERIFY(
                std::count(plain->plan.devices.begin(), plain->plan.devices.end(), DeviceId(d)));
        const auto expected = run(plain);
        const auto got = run(piped);
        QVERIFY(got->reference && got->reference->ok);
        QVERIFY2(sameBits(got->result.outputs, expected->result.outputs),
                 "the pipelined outputs differ from the unpipelined ones");
    }

    /// A transformer encoder with open batch and sequence, run at batch 7 in 3 micro-batches
    /// (3, 2 and 2 rows): bit for bit what the unpipelined plan gives.
    void aTransformerInUnevenMicroBatches() {
        auto x = readNpy(sourcePath("tests/models/dyn_encoder.3x33.input.npy"));
        QVERIFY(x);
        // Seven rows of the committed input's first row, with a sequence of 33.
        HostTensor seven = HostTensor::zeros({{7, 33, 16}, DType::Float32});
        const std::size_t row = 33 * 16 * sizeof(float);
        for (int r = 0; r < 7; ++r)
            std::memcpy(seven.data.data() + r * row, x.value().data.data() + (r % 3) * row, row);
        ModelSource source;
        source.path = sourcePath("tests/models/dyn_encoder.onnx");
        source.runInputs["x"] = seven;
        std::vector<std::pair<std::string, std::string>> options = {
            {"devices", "a:vcpu,b:vcpu"}, {"rule", "MatMul=a"}, {"fallback", "b"}};
        const auto plain = open(source, request(options));
        options.emplace_back("micro-batches", "3");
        const auto piped = open(source, request(options));
        QCOMPARE(piped->plan.splits.size(), std::size_t{1});
        std::vector<std::int64_t> rows;
        for (const Shard& shard : piped->plan.splits.front().shards)
            rows.push_back(shard.rows());
        QCOMPARE(rows, (std::vector<std::int64_t>{3, 2, 2}));
        const auto expected = run(plain, runs({{"x", seven}}));
        const auto got = run(piped, runs({{"x", seven}}));
        QVERIFY(got->reference && got->reference->ok);
        QVERIFY(sameBits(got->result.outputs, expected->result.outputs));
    }

    /// Each device works through the micro-batches in order, and the second device works on
    /// one while the first works on the next: the stages overlap.
    void theStagesOverlap() {
        const auto options = twoStages({{"micro-batches", "4"}});
        const auto planned = open(residualBlock(32), request(options));
        // The overlap is timed: on a loaded machine one run's second worker may be scheduled
        // only after the first is done, so the run is tried up to three times.
        bool overlapped = false;
        for (int attempt = 0; attempt < 3 && !overlapped; ++attempt) {
            const auto outcome = run(planned);
            const auto bySpan = spans(*outcome);
            for (int device : {0, 1}) {
                for (int wave = 0; wave < 4; ++wave)
                    QVERIFY2(bySpan.count({device, wave}), "a micro-batch ran nothing on a device");
                for (int wave = 1; wave < 4; ++wave)
                    QVERIFY2(bySpan.at({device, wave - 1}).first <= bySpan.at({device, wave}).first,
                             "a device took a later micro-batch before an earlier one");
            }
            // The second device starts the first micro-batch before the first device is done
            // with the last.
            overlapped = bySpan.at({1, 0}).first < bySpan.at({0, 3}).second;
        }
        QVERIFY2(overlapped,
                 "the second stage did not run while the first worked on later micro-batches");
    }

    /// The prediction schedules the micro-batches as the executor runs them: the stages
    /// overlap, so a balanced two-stage plan is predicted faster pipelined than not.
    void thePredictionIsOfThePipeline() {
        std::vector<std::pair<std::string, std::string>> options = {{"devices", "a:vcpu,b:vcpu"},
                                                                    {"rule", "*=a"}};
        for (const char* pin : {"%4=b", "%5=b", "%6=b", "%7=b", "%8=b", "%9=b", "%10=b", "%11=b",
                                "%12=b", "%13=b", "nn.softmax=b"})
            options.emplace_back("pin", pin);
        PlanRequest plain = request(options);
        const auto unpriced = open(residualBlock(32), plain);
        plain.options.costs =
            std::make_shared<const CostModel>(m_session->costs(unpriced->model.devices));
        PlanRequest piped = plain;
        piped.options.microBatches = 8;
        const auto before = open(residualBlock(32), plain);
        const auto after = open(residualBlock(32), piped);
        QVERIFY(before->plan.prediction && after->plan.prediction);
        const Prediction& p = *after->plan.prediction;
        const Prediction& q = *before->plan.prediction;
        QVERIFY2(p.makespanMicros < q.makespanMicros,
                 qPrintable(QStringLiteral("pipelined %1 us, not %2")
                                .arg(p.makespanMicros)
                                .arg(q.makespanMicros)));
        // A node's predicted time is its micro-batches' together, as a run's node times sum
        // them: what the run's check of the prediction compares.
        const ShardedGraph& sharded = *after->plan.sharded;
        const Prediction& inner = *sharded.plan->prediction;
        int compared = 0;
        for (std::uint32_t i = 0; i < after->model.graph.size(); ++i) {
            if (after->model.graph.node(NodeId(i)).role() != OpRole::Compute)
                continue;
            double sum = 0;
            int shards = 0;
            for (std::size_t j = 0; j < sharded.origin.size(); ++j)
                if (sharded.origin[j] == NodeId(i)) {
                    sum += inner.micros[j];
                    ++shards;
                }
            if (shards < 2)
                continue;
            QVERIFY(std::abs(p.micros[i] - sum) <= 1e-6 * sum);
            ++compared;
        }
        QVERIFY(compared > 0);
        // The busy time is the same work, and the latency less than its sum.
        const double busy = p.deviceBusyMicros[0] + p.deviceBusyMicros[1];
        QVERIFY(p.deviceBusyMicros[0] > 0 && p.deviceBusyMicros[1] > 0);
        QVERIFY(p.makespanMicros < busy);
    }

    /// A pipelined run teaches the cost table each micro-batch's kernels at the micro-batch's
    /// own shapes (a smaller kernel is not the whole batch's divided): planning again predicts
    /// the sharded graph's nodes from them, measured.
    void aPipelinedRunTeachesItsMicroBatchCosts() {
        const auto options = twoStages({{"micro-batches", "4"}});
        const auto planned = open(residualBlock(8), request(options));
        const ShardedGraph& sharded = *planned->plan.sharded;
        const CostModel before = m_session->costs(planned->model.devices);
        const auto measuredShards = [&](const CostModel& costs) {
            int measured = 0;
            for (std::uint32_t j = 0; j < sharded.graph.size(); ++j) {
                if (sharded.shard[j] >= 0 &&
                    sharded.graph.node(NodeId(j)).role() == OpRole::Compute &&
                    costs.nodeCost(sharded.graph, NodeId(j), sharded.plan->devices[j]).measured)
                    ++measured;
            }
            return measured;
        };
        QCOMPARE(measuredShards(before), 0);
        const auto outcome = run(planned);
        auto recorded = m_session->recordCosts(*outcome);
        QVERIFY2(recorded.ok(), recorded.ok() ? "" : recorded.error().message.c_str());
        const CostModel after = m_session->costs(planned->model.devices, {}, false);
        // The ops that ran as kernels of their own (the fused ones are kept under their
        // groups' keys), every micro-batch of them.
        QVERIFY2(measuredShards(after) >= 4, "no micro-batch's kernel was recorded");
    }

    /// The memory plan holds the micro-batches the devices work on, not the whole batch at each
    /// step: less than the unpipelined plan needs, and a capacity between the two now fits.
    void memoryIsPlannedForTheMicroBatches() {
        std::vector<std::pair<std::string, std::string>> options = {
            {"devices", "a:vcpu,b:vcpu"}, {"rule", "*=a"}, {"pin", "%12=b"}};
        const auto plain = open(residualBlock(16), request(options));
        options.emplace_back("micro-batches", "8");
        const auto piped = open(residualBlock(16), request(options));
        const std::int64_t before = plain->plan.memory.devices[0].peakBytes;
        const std::int64_t after = piped->plan.memory.devices[0].peakBytes;
        QVERIFY2(after < before / 2,
                 qPrintable(QStringLiteral("%1 then %2").arg(before).arg(after)));
        // A capacity the whole batch overflows and the micro-batches fit.
        const std::int64_t capacity = (before + after) / 2;
        std::vector<std::pair<std::string, std::string>> limited = options;
        limited[0].second = "a:vcpu:mem=" + std::to_string(capacity) + ",b:vcpu";
        const auto fits = open(residualBlock(16), request(limited));
        for (const Conflict& conflict : fits->plan.conflicts)
            QVERIFY2(conflict.kind != ConflictKind::MemoryCapacity, conflict.message.c_str());
        const auto outcome = run(fits);
        QVERIFY(outcome->reference && outcome->reference->ok);
        limited.pop_back(); // without micro-batches it does not fit
        const auto overflows = open(residualBlock(16), request(limited));
        QVERIFY(
            std::any_of(overflows->plan.conflicts.begin(), overflows->plan.conflicts.end(),
                        [](const Conflict& c) { return c.kind == ConflictKind::MemoryCapacity; }));
    }

    /// A value one stage hands to the next is double-buffered: micro-batch k's keeps its storage
    /// until the sender has written k + 1's, so the sender, a micro-batch ahead, never waits for
    /// the receiver to take k before it can go on (plan/MemoryPlanner.cpp).
    void valuesCrossingStagesAreDoubleBuffered() {
        const auto planned = open(residualBlock(8), request(twoStages({{"micro-batches", "4"}})));
        const ShardedGraph& sharded = *planned->plan.sharded;
        const Plan& plan = *sharded.plan;
        const Graph& graph = sharded.graph;
        std::vector<std::size_t> position(graph.size(), 0);
        for (std::size_t p = 0; p < plan.memory.order.size(); ++p)
            position[plan.memory.order[p].index] = p;
        // Every value's storage on its own device: (node, output) -> storage.
        std::map<std::pair<std::uint32_t, std::uint32_t>, std::int32_t> storageOf;
        for (const TensorStorage& tensor : plan.memory.tensors) {
            if (tensor.device == plan.devices[tensor.value.node.index])
                storageOf[{tensor.value.node.index, tensor.value.output}] = tensor.storage;
        }
        // The values copied to another device: (user node, output, micro-batch) -> value.
        std::map<std::tuple<std::uint32_t, std::uint32_t, int>, ValueRef> crossing;
        for (const CopyPlan& copy : plan.copies) {
            const NodeId user = sharded.origin[copy.value.node.index];
            const int wave = graph.node(copy.value.node).microBatch;
            if (!copy.isExplicit && wave >= 0 && user.valid())
                crossing[{user.index, copy.value.output, wave}] = copy.value;
        }
        int pairs = 0;
        for (const auto& [key, value] : crossing) {
            const auto [user, output, wave] = key;
            const auto next = crossing.find({user, output, wave + 1});
            if (next == crossing.end())
                continue;
            const std::int32_t storage = storageOf.at({value.node.index, value.output});
            const DeviceId sender = plan.devices[value.node.index];
            const std::size_t from = position[value.node.index];
            const std::size_t to = position[next->second.node.index];
            for (std::uint32_t j = 0; j < graph.size(); ++j) {
                if (plan.devices[j] != sender || position[j] <= from || position[j] > to)
                    continue;
                for (std::uint32_t k = 0; k < graph.node(NodeId(j)).outputs.size(); ++k) {
                    const auto other = storageOf.find({j, k});
                    QVERIFY2(other == storageOf.end() || other->second != storage,
                             (graph.node(NodeId(j)).name + " takes the storage of " +
                              graph.node(value.node).name + " before the next micro-batch's " +
                              "copy is written")
                                 .c_str());
                }
            }
            ++pairs;
        }
        // The residual block hands two values to the second stage: the ReLU's and the pool's.
        QCOMPARE(pairs, 2 * 3);
    }

    /// A pipelined plan's prediction fuses the micro-batches' post-ops as the run does: the
    /// planner holds every node of the sharded graph where the plan put it, which is not the
    /// user pinning it (the user's pins, %7 to %13 here, keep their ops apart in both).
    void thePipelinesPredictionFusesAsItsRunDoes() {
        PlanRequest piped = request(twoStages({{"micro-batches", "4"}}));
        const auto unpriced = open(residualBlock(8), piped);
        piped.options.costs =
            std::make_shared<const CostModel>(m_session->costs(unpriced->model.devices));
        const auto planned = open(residualBlock(8), piped);
        const ShardedGraph& sharded = *planned->plan.sharded;
        QVERIFY(sharded.plan->prediction);
        const Prediction& inner = *sharded.plan->prediction;
        std::set<std::string> predicted, ran;
        for (std::uint32_t j = 0; j < inner.fusedInto.size() && j < sharded.origin.size(); ++j) {
            if (inner.fusedInto[j].valid() && inner.fusedInto[j].index != j &&
                sharded.origin[j].valid())
                predicted.insert(planned->model.graph.node(sharded.origin[j]).name);
        }
        const auto outcome = run(planned);
        for (std::uint32_t i = 0; i < outcome->ran->fusedInto.size(); ++i) {
            if (outcome->ran->fusedInto[i].valid() && outcome->ran->fusedInto[i].index != i)
                ran.insert(outcome->userGraph->node(NodeId(i)).name);
        }
        QVERIFY2(!ran.empty(), "the run fused nothing");
        QCOMPARE(predicted, ran);
    }

    /// The run sets each device's busy and idle time (a pipeline's bubble) against the
    /// prediction's, in the check and its JSON.
    void theRunSetsEachDeviceAgainstThePrediction() {
        PlanRequest piped = request(twoStages({{"micro-batches", "4"}}));
        const auto unpriced = open(residualBlock(8), piped);
        piped.options.costs =
            std::make_shared<const CostModel>(m_session->costs(unpriced->model.devices));
        // Five iterations: with two, a median is a mean, and the median of the differences is
        // the difference of the medians.
        RunRequest five = runs();
        five.iterations = 5;
        const auto outcome = run(open(residualBlock(8), piped), five);
        const auto check = checkPrediction(*outcome);
        QVERIFY(check);
        QCOMPARE(check->devices.size(), std::size_t{2});
        const Prediction& p = *outcome->userPlan.prediction;
        for (std::size_t d = 0; d < 2; ++d) {
            const PredictionCheck::DeviceTimes& device = check->devices[d];
            QCOMPARE(device.name, std::string(d == 0 ? "a" : "b"));
            QVERIFY(device.measuredBusyMs > 0 && device.measuredBusyMs <= check->measuredMs);
            QCOMPARE(device.predictedBusyMs, p.deviceBusyMicros[d] / 1000);
            QCOMPARE(device.predictedIdleMs, check->predictedMs - device.predictedBusyMs);
            // The median of each iteration's idle time.
            const auto& latency = outcome->result.latencyMicros;
            QVERIFY(device.measuredIdleMs >= 0 &&
                    device.measuredIdleMs <= *std::max_element(latency.begin(), latency.end()));
        }
        const Json json = check->toJson();
        const Json* devices = json.find("devices");
        QVERIFY(devices && devices->isArray() && devices->size() == 2);
        QVERIFY(devices->items()[1].find("measured_idle_ms"));
        QVERIFY(check->summary().find("b          busy ") != std::string::npos);
        // The report's idle time per device, by the same definition: each iteration's latency
        // less the busy time of the device's physical device, then the median.
        const Json report = runReportJson(*outcome);
        const Json* reported = report.find("devices");
        QVERIFY(reported && reported->size() == 2);
        for (std::size_t d = 0; d < 2; ++d) {
            const auto& streams = outcome->result.streams;
            const auto stream = std::find_if(streams.begin(), streams.end(), [&](const auto& s) {
                return std::find(s.virtuals.begin(), s.virtuals.end(),
                                 DeviceId(static_cast<int>(d))) != s.virtuals.end();
            });
            QVERIFY(stream != streams.end());
            const auto& latency = outcome->result.latencyMicros;
            QCOMPARE(stream->busyMicros.size(), latency.size());
            std::vector<double> idle;
            for (std::size_t i = 0; i < latency.size(); ++i)
                idle.push_back(std::max(0.0, latency[i] - stream->busyMicros[i]) / 1000);
            const double expected = median(std::move(idle));
            const Json* idleMs = reported->items()[d].find("idle_ms");
            QVERIFY(idleMs && idleMs->isNumber());
            QVERIFY2(
                std::abs(idleMs->asDouble() - expected) < 1e-3,
                (std::to_string(idleMs->asDouble()) + " ms against " + std::to_string(expected))
                    .c_str());
        }
    }

    /// Auto mode with micro-batches chooses contiguous stages (plan/PipelineStages.h): each
    /// device runs one range of the ops in graph order, both devices are used, the plan says
    /// so, the pipeline is predicted faster than the best single device, and the run computes
    /// what one device computes, bit for bit.
    void autoModeChoosesContiguousStages() {
        const auto single = open(residualBlock(32), request({{"devices", "a:vcpu,b:vcpu"}}));
        // Assumed costs (two cores), not this machine's calibration: a loaded or instrumented
        // machine's fixed costs per op would make any pipeline of this small model slower.
        PlanRequest automatic =
            request({{"devices", "a:vcpu,b:vcpu"}, {"mode", "auto"}, {"micro-batches", "8"}});
        automatic.options.costs =
            std::make_shared<const CostModel>(CostModel::assumed(single->model.devices, 2));
        const auto chosen = open(residualBlock(32), automatic);
        const Plan& plan = chosen->plan;
        QVERIFY2(std::any_of(plan.notes.begin(), plan.notes.end(),
                             [](const std::string& note) {
                                 return note.starts_with("pipeline stages for 8 micro-batches:");
                             }),
                 plan.notes.empty() ? "no notes" : plan.notes.front().c_str());
        // Per device, its compute nodes: one contiguous range of the graph's order.
        const Graph& graph = chosen->model.graph;
        std::vector<int> order; // the device of each compute node, in order
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            if (graph.node(NodeId(i)).role() == OpRole::Compute)
                order.push_back(plan.devices[i].index);
        QVERIFY(std::count(order.begin(), order.end(), 0) > 0);
        QVERIFY(std::count(order.begin(), order.end(), 1) > 0);
        int changes = 0;
        for (std::size_t k = 1; k < order.size(); ++k)
            changes += order[k] != order[k - 1];
        QCOMPARE(changes, 1);
        QVERIFY(plan.prediction);
        QVERIFY2(plan.prediction->makespanMicros < plan.prediction->singleDeviceMicros,
                 qPrintable(QStringLiteral("pipelined %1 us, one device %2 us")
                                .arg(plan.prediction->makespanMicros)
                                .arg(plan.prediction->singleDeviceMicros)));
        const auto expected = run(single);
        const auto got = run(chosen);
        QVERIFY(got->reference && got->reference->ok);
        QVERIFY2(sameBits(got->result.outputs, expected->result.outputs),
                 "the pipelined outputs differ from one device's");
    }

    /// The stages are chosen on each op's time at its micro-batch's shapes, fused as the run
    /// fuses it (what the workspace measures of a pipelined run), not on the whole batch's time
    /// divided by the micro-batches: a last kernel measured slow in micro-batches gets a stage
    /// of its own.
    void theStagesAreCostedAtTheMicroBatchesShapes() {
        const auto single = open(residualBlock(32), request({{"devices", "a:vcpu,b:vcpu"}}));
        const CostModel assumed = CostModel::assumed(single->model.devices, 2);
        PlanRequest automatic =
            request({{"devices", "a:vcpu,b:vcpu"}, {"mode", "auto"}, {"micro-batches", "8"}});
        automatic.options.costs = std::make_shared<const CostModel>(assumed);
        const auto first = open(residualBlock(32), automatic);
        QVERIFY(first->plan.sharded && first->plan.sharded->plan &&
                first->plan.sharded->plan->prediction);
        const Graph& graph = first->model.graph;
        std::uint32_t last = 0;
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            if (graph.node(NodeId(i)).role() == OpRole::Compute)
                last = i;
        // The last op's kernel in the first micro-batch, and the key its time is measured under.
        const ShardedGraph& sharded = *first->plan.sharded;
        const std::vector<NodeId>& fusedInto = sharded.plan->prediction->fusedInto;
        std::int64_t kernel = -1;
        for (std::uint32_t j = 0; j < sharded.graph.size(); ++j)
            if (sharded.origin[j].index == last && sharded.shard[j] == 0)
                kernel = fusedInto[j].valid() ? fusedInto[j].index : j;
        QVERIFY(kernel >= 0);
        const auto groups = CostModel::membersByHead(fusedInto);
        const auto group = groups.find(static_cast<std::uint32_t>(kernel));
        const std::string key =
            group == groups.end()
                ? CostModel::nodeKey(sharded.graph, NodeId(static_cast<std::uint32_t>(kernel)))
                : CostModel::groupKey(sharded.graph, NodeId(static_cast<std::uint32_t>(kernel)),
                                      group->second);
        // Measured: a second a micro-batch, far more than the rest of the model.
        CostModel measured = assumed;
        measured.recordMeasured(key, "vcpu", 1e6);
        automatic.options.costs = std::make_shared<const CostModel>(measured);
        const auto chosen = open(residualBlock(32), automatic);
        const Plan& plan = chosen->plan;
        const DeviceId alone = plan.devices[last];
        std::size_t with = 0, others = 0;
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            if (graph.node(NodeId(i)).role() != OpRole::Compute)
                continue;
            (plan.devices[i] == alone ? with : others) += 1;
        }
        // Its stage holds its fused group's ops at most; the other stage everything else.
        const std::size_t groupSize = group == groups.end() ? 1 : group->second.size() + 1;
        QVERIFY2(with <= groupSize && others > 0,
                 qPrintable(QStringLiteral("%1 ops with the slow one (its group %2), %3 on the "
                                           "other device; key %4")
                                .arg(with)
                                .arg(groupSize)
                                .arg(others)
                                .arg(QString::fromStdString(key))));
        // The stage model's estimate is the prediction's: 8 micro-batches of a second.
        QVERIFY(plan.prediction);
        QVERIFY2(plan.prediction->makespanMicros > 8e6,
                 qPrintable(QString::number(plan.prediction->makespanMicros)));
    }

    /// A model whose constants do not fit one device's mem= is cut into stages that fit: no
    /// capacity conflict, both devices hold a part of the weights, and it runs.
    void autoStagesFitTheDevicesMemory() {
        const auto single = open(denseStack(), request({{"devices", "a:vcpu"}}));
        const std::int64_t whole = single->plan.memory.devices[0].peakBytes;
        const std::int64_t capacity = whole * 3 / 4;
        const std::string limit = ":mem=" + std::to_string(capacity);
        const auto chosen =
            open(denseStack(), request({{"devices", "a:vcpu" + limit + ",b:vcpu" + limit},
                                        {"mode", "auto"},
                                        {"micro-batches", "4"}}));
        for (const Conflict& conflict : chosen->plan.conflicts)
            QVERIFY2(conflict.kind != ConflictKind::MemoryCapacity, conflict.message.c_str());
        for (const DeviceMemory& memory : chosen->plan.memory.devices)
            QVERIFY2(memory.peakBytes <= capacity,
                     qPrintable(QStringLiteral("%1 bytes on a device of %2")
                                    .arg(memory.peakBytes)
                                    .arg(capacity)));
        const auto got = run(chosen);
        QVERIFY(got->reference && got->reference->ok);
        // Costs that make one device far faster (times measured while the other was loaded)
        // still do not put every weight on it: the stages must fit.
        PlanRequest skewed = request({{"devices", "a:vcpu" + limit + ",b:vcpu" + limit},
                                      {"mode", "auto"},
                                      {"micro-batches", "4"}});
        {
            const DeviceSet devices = DeviceSet::parse("a:vcpu" + limit + ",b:vcpu" + limit).take();
            CostModel costs = CostModel::assumed(devices);
            DeviceProfile fast;
            fast.name = "vcpu1";
            fast.flopsPerMicro = 1e8;
            fast.bytesPerMicro = 1e7;
            costs.mapDevice(0, fast);
            skewed.options.costs = std::make_shared<const CostModel>(costs);
        }
        const auto fitted = open(denseStack(), skewed);
        for (const Conflict& conflict : fitted->plan.conflicts)
            QVERIFY2(conflict.kind != ConflictKind::MemoryCapacity, conflict.message.c_str());
        const auto fittedRun = run(fitted);
        QVERIFY(fittedRun->reference && fittedRun->reference->ok);
        // One such device alone does not hold it, micro-batches or not.
        const auto alone = open(
            denseStack(),
            request({{"devices", "a:vcpu" + limit}, {"mode", "auto"}, {"micro-batches", "4"}}));
        QVERIFY2(
            std::any_of(alone->plan.conflicts.begin(), alone->plan.conflicts.end(),
                        [](const Conflict& c) { return c.kind == ConflictKind::MemoryCapacity; }),
            qPrintable(QStringLiteral("%1 bytes fit in %2")
                           .arg(alone->plan.memory.devices[0].peakBytes)
                           .arg(capacity)));
    }

    /// A stream of N batches (--stream N): each batch's outputs are, bit for bit, those of the
    /// unpipelined plan run on that batch alone, whatever the micro-batches per batch (one,
    /// several, uneven), in two or three stages.
    void aStreamComputesEachBatchAsAlone_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("microBatches");
        QTest::addColumn<int>("batches");
        QTest::addColumn<QStringList>("pins");
        const QStringList secondHalf = {"%7=b",  "%8=b",  "%9=b",  "%10=b",
                                        "%11=b", "%12=b", "%13=b", "nn.softmax=b"};
        QTest::newRow("3 batches of 4, whole") << 4 << 1 << 3 << secondHalf;
        QTest::newRow("4 batches of 4 in 2") << 4 << 2 << 4 << secondHalf;
        QTest::newRow("2 batches of 7 in 3 (uneven)") << 7 << 3 << 2 << secondHalf;
        QTest::newRow("3 batches of 2, three stages")
            << 2 << 1 << 3 << QStringList{"%4=b",  "%5=b",  "%6=b",  "%7=b",  "%8=c",        "%9=c",
                                          "%10=c", "%11=c", "%12=c", "%13=c", "nn.softmax=c"};
    }
    void aStreamComputesEachBatchAsAlone() {
        QFETCH(int, batch);
        QFETCH(int, microBatches);
        QFETCH(int, batches);
        QFETCH(QStringList, pins);
        std::vector<std::pair<std::string, std::string>> options = {
            {"devices", "a:vcpu,b:vcpu,c:vcpu"}, {"rule", "*=a"}};
        for (const QString& pin : pins)
            options.emplace_back("pin", pin.toStdString());
        const auto plain = open(residualBlock(batch), request(options));
        options.emplace_back("micro-batches", std::to_string(microBatches));
        options.emplace_back("stream", std::to_string(batches));
        const auto streamed = open(residualBlock(batch), request(options));
        const SplitRegion* region = streamRegion(streamed->plan);
        QVERIFY2(region, "the plan does not stream");
        QCOMPARE(region->batches, batches);
        QCOMPARE(static_cast<int>(region->shards.size()), batches * microBatches);
        QCOMPARE(region->shards.back().end, std::int64_t{batch} * batches);
        QCOMPARE(streamed->plan.devices, plain->plan.devices);
        // The graph that runs reads the batches stacked.
        const Graph& sharded = streamed->plan.sharded->graph;
        QCOMPARE(sharded.node(*sharded.find("%data")).outputs[0].shape[0],
                 std::int64_t{batch} * batches);

        const auto inputs = allInputs(plain->model.graph, "%data", batches);
        const auto got = run(streamed, runs(inputs));
        QVERIFY2(got->reference && got->reference->ok,
                 got->reference ? got->reference->mismatch.c_str() : "no reference");
        QCOMPARE(got->result.outputs.size(), std::size_t{1});
        const HostTensor& out = got->result.outputs[0];
        QCOMPARE(out.type.shape[0], std::int64_t{batch} * batches);
        for (int b = 0; b < batches; ++b) {
            auto alone = inputs;
            for (auto& [name, tensor] : alone) {
                if (name == "%data")
                    tensor = rowsOf(tensor, b, batch);
            }
            const auto expected = run(plain, runs(alone));
            QVERIFY2(sameBits({rowsOf(out, b, batch)}, expected->result.outputs),
                     qPrintable(QStringLiteral("batch %1 differs from its run alone").arg(b)));
        }
        // Data of one batch serves every batch.
        auto one = inputs;
        one.front().second = rowsOf(one.front().second, 0, batch);
        const auto repeated = run(streamed, runs(one));
        QVERIFY(repeated->reference && repeated->reference->ok);
        QVERIFY(sameBits({rowsOf(repeated->result.outputs[0], batches - 1, batch)},
                         {rowsOf(got->result.outputs[0], 0, batch)}));
    }

    /// A stream keeps its devices busy across batches: the second stage works on the first
    /// batch while the first stage works on a later one, and the run reports items per second
    /// and each batch's span.
    void aStreamOverlapsItsBatches() {
        const auto options = twoStages({{"stream", "4"}});
        const auto planned = open(residualBlock(8), request(options));
        bool overlapped = false;
        for (int attempt = 0; attempt < 3 && !overlapped; ++attempt) {
            const auto outcome = run(planned);
            QVERIFY(outcome->reference && outcome->reference->ok);
            const auto bySpan = spans(*outcome);
            for (int wave = 1; wave < 4; ++wave)
                QVERIFY2(bySpan.at({0, wave - 1}).first <= bySpan.at({0, wave}).first,
                         "the first stage took a later batch before an earlier one");
            overlapped = bySpan.at({1, 0}).first < bySpan.at({0, 3}).second;
            const auto figures = streamRunTimes(*outcome);
            QVERIFY(figures);
            QCOMPARE(figures->batches, 4);
            QCOMPARE(figures->batch, std::int64_t{8});
            QCOMPARE(figures->spanMicros.size(), std::size_t{4});
            QVERIFY(figures->itemsPerSecond > 0 && figures->batchMicros > 0);
            for (std::size_t b = 1; b < 4; ++b)
                QVERIFY(figures->doneMicros[b] >= figures->doneMicros[b - 1]);
            const std::string summary = runSummary(*outcome);
            QVERIFY2(summary.find("stream: 4 batches of 8") != std::string::npos &&
                         summary.find("items/s") != std::string::npos,
                     summary.c_str());
            const Json report = runReportJson(*outcome);
            QVERIFY(report.find("stream") && report.find("stream")->find("items_per_s"));
        }
        QVERIFY2(overlapped, "the second stage did not start the first batch while the first "
                             "stage worked on the last");
    }

    /// The prediction is of the stream: more than one batch's latency, less than N of them, and
    /// the plan report gives its items per second.
    void theStreamIsPredicted() {
        PlanRequest one = request(twoStages());
        const auto unpriced = open(residualBlock(8), one);
        one.options.costs =
            std::make_shared<const CostModel>(m_session->costs(unpriced->model.devices));
        PlanRequest four = one;
        four.options.streamBatches = 4;
        const auto single = open(residualBlock(8), one);
        const auto stream = open(residualBlock(8), four);
        QVERIFY(single->plan.prediction && stream->plan.sharded &&
                stream->plan.sharded->plan->prediction);
        const double a = single->plan.prediction->makespanMicros;
        const double n = stream->plan.sharded->plan->prediction->makespanMicros;
        QVERIFY2(n > a && n < 4 * a,
                 qPrintable(QStringLiteral("one batch %1 us, four %2 us").arg(a).arg(n)));
        // Auto mode chooses stages for the stream.
        PlanRequest automatic = four;
        automatic.options.mode = PlanMode::Auto;
        automatic.pins.clear();
        automatic.options.rules.clear();
        const auto chosen = open(residualBlock(8), automatic);
        QVERIFY(streamRegion(chosen->plan));
        QVERIFY(std::any_of(chosen->plan.notes.begin(), chosen->plan.notes.end(),
                            [](const std::string& note) {
                                return note.find("a stream of 4 batches") != std::string::npos;
                            }));
    }

    /// What cannot stream is said: an op that mixes the batch's rows, which the stacked batches
    /// would mix across batches; the run refuses with the reason.
    void whatCannotStreamIsSaid() {
        ModelSource source;
        source.path = "mixing.relay";
        source.text = "#[version = \"0.0.5\"]\n"
                      "def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32]) {\n"
                      "  %0 = nn.dense(%x, %w, units=8);\n"
                      "  %1 = sum(%0, axis=[0], keepdims=True);\n"
                      "  subtract(%0, %1)\n"
                      "}\n";
        const auto planned = open(source, request({{"devices", "a:vcpu,b:vcpu"}, {"stream", "3"}}));
        QVERIFY(!streamRegion(planned->plan));
        QVERIFY2(std::any_of(planned->plan.conflicts.begin(), planned->plan.conflicts.end(),
                             [](const Conflict& c) {
                                 return c.message.find("--stream 3") != std::string::npos &&
                                        c.message.find("nothing is streamed") != std::string::npos;
                             }),
                 "no conflict says why nothing streams");
        const auto ran = m_session->run(planned, runs());
        QVERIFY(!ran);
        QVERIFY2(ran.error().message.find("cannot run as a stream") != std::string::npos,
                 ran.error().message.c_str());
        ModelSource ignored;
        PlanRequest plan;
        for (const char* bad : {"0", "x", "5000"}) {
            const auto problem = takePlanOption("stream", bad, &ignored, &plan);
            QVERIFY(problem && problem->find("--stream must be") != std::string::npos);
        }
    }

    void whatCannotBePipelinedIsSaid() {
        // More micro-batches than rows.
        const auto small =
            open(residualBlock(2), request({{"devices", "a:vcpu,b:vcpu"}, {"micro-batches", "3"}}));
        QVERIFY(small->plan.splits.empty() || small->plan.splits.front().nodes.empty() ||
                small->plan.splits.front().shards.empty());
        QVERIFY(std::any_of(small->plan.conflicts.begin(), small->plan.conflicts.end(),
                            [](const Conflict& c) {
                                return c.message.find("--micro-batches 3") != std::string::npos &&
                                       c.suggestion.find("micro-batches") != std::string::npos;
                            }));
        // Auto mode's stages for micro-batches the batch cannot give: the note says so.
        const auto staged =
            open(residualBlock(2),
                 request({{"devices", "a:vcpu,b:vcpu"}, {"mode", "auto"}, {"micro-batches", "3"}}));
        int stageNotes = 0;
        for (const std::string& note : staged->plan.notes) {
            if (!note.starts_with("pipeline stages") && !note.starts_with("auto mode kept"))
                continue;
            ++stageNotes;
            QVERIFY2(note.find("not pipelined") != std::string::npos, note.c_str());
        }
        QCOMPARE(stageNotes, 1);
        // Together with --split.
        const auto both = open(
            residualBlock(4),
            request({{"devices", "a:vcpu,b:vcpu"}, {"split", "*=a,b"}, {"micro-batches", "2"}}));
        QVERIFY(std::any_of(both->plan.conflicts.begin(), both->plan.conflicts.end(),
                            [](const Conflict& c) {
                                return c.message.find("together with --split") != std::string::npos;
                            }));
        // A malformed count.
        ModelSource source;
        PlanRequest plan;
        for (const char* bad : {"0", "-2", "x", "5000"}) {
            const auto problem = takePlanOption("micro-batches", bad, &source, &plan);
            QVERIFY(problem && problem->find("--micro-batches must be") != std::string::npos);
        }
    }
};

QTEST_GUILESS_MAIN(TestPipeline)
#include "tst_pipeline.moc"
