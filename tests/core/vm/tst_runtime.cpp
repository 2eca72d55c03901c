// The runtime end to end: lowering, the executor on virtual CPU contexts, the reference check,
// the cross-context check, constants loaded once, timings, mapping, the Chrome trace; and the
// tiny models against the outputs PyTorch computed for them.
#include "LaneDevice.h"
#include "PlanTestUtil.h"
#include "RandomElementwiseGraph.h"
#include "TwoBranchGraph.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "device/DeviceMapping.h"
#include "device/WorkQueue.h"
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "ir/OpRegistry.h"
#include "ir/StringPool.h"
#include "kernels/KernelSupport.h"
#include "kernels/RandomTensor.h"
#include "passes/PassManager.h"
#include "plan/Annotations.h"
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"
#include "vm/RunTimeShapes.h"
#include "vm/Schedule.h"

#include <QtTest>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <thread>

using namespace placer;

namespace {

const std::string kModels = std::string(PLACER_SOURCE_DIR) + "/resources/models/";
/// Models whose shapes are found at run time (scripts/make_dynamic_models.py, the tiny detector).
const std::string kDynamicModels = std::string(PLACER_SOURCE_DIR) + "/tests/models/";

struct Prepared {
    LoadedModel model;
    Plan plan;
    std::unique_ptr<DeviceRegistry> registry = std::make_unique<DeviceRegistry>();
    std::unique_ptr<Executor> executor;
};

/// Loads, plans and loads into an executor; fails the test on any error.
std::unique_ptr<Prepared> prepare(LoadedModel model, const PlanOptions& options,
                                  std::vector<DeviceMapRequest> maps = {}) {
    auto prepared = std::make_unique<Prepared>();
    prepared->model = std::move(model);
    prepared->plan = planDevices(prepared->model.graph, prepared->model.devices, options);
    auto program = lowerToBytecode(prepared->model.graph, prepared->model.devices, prepared->plan);
    if (!program)
        qFatal("lowering failed: %s", program.error().message.c_str());
    std::vector<std::string> warnings;
    auto mapping = mapDevices(prepared->model.devices, maps, *prepared->registry, &warnings);
    if (!mapping)
        qFatal("mapping failed: %s", mapping.error().message.c_str());
    const int opset = prepared->model.graph.onnxOpset();
    auto executor = Executor::load(prepared->model.graph, prepared->model.devices, program.take(),
                                   mapping.value(), opset);
    if (!executor)
        qFatal("load failed: %s", executor.error().message.c_str());
    prepared->executor = executor.take();
    return prepared;
}

LoadedModel loadModel(const std::string& path, const char* devices) {
    auto loaded = loadModelFile(path, GraphFormat::Auto, DeviceSet::parse(devices).take());
    if (!loaded)
        qFatal("%s", loaded.error().toString().c_str());
    return loaded.take();
}

/// Pins every operator to the device `choose` draws for it (none when it draws an invalid id).
template <typename Choose> void pinAtRandom(Graph& graph, unsigned seed, Choose choose) {
    std::mt19937 rng(seed);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        Node& node = graph.node(NodeId(i));
        if (node.isConstant())
            continue;
        if (const DeviceId device = choose(rng); device.valid())
            node.pin = Pin{PinKind::Plain, device, "test"};
    }
}

std::vector<HostTensor> randomInputs(const Executor& executor, const Graph& graph) {
    std::vector<HostTensor> inputs;
    for (std::size_t i = 0; i < executor.program().inputs.size(); ++i)
        inputs.push_back(randomTensor(graph.node(executor.program().inputs[i]).outputs[0], 7 + i));
    return inputs;
}

/// The single-device reference outputs for `graph` on `inputs`.
std::vector<HostTensor> reference(const Graph& graph, const std::vector<HostTensor>& inputs) {
    SingleDevicePlan single = singleDevicePlan(graph);
    auto program = lowerToBytecode(single.graph, single.devices, single.plan);
    if (!program)
        qFatal("reference lowering failed: %s", program.error().message.c_str());
    DeviceRegistry registry;
    const int opset = graph.onnxOpset();
    auto executor =
        Executor::load(single.graph, single.devices, program.take(), {registry.freshVCpu()}, opset);
    if (!executor)
        qFatal("reference load failed: %s", executor.error().message.c_str());
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        qFatal("reference run failed: %s", result.error().message.c_str());
    return result.value().outputs;
}

/// The same graph with its nodes in a random topological order (inputs still come first).
Graph shuffledTopologically(const Graph& graph, std::mt19937& rng) {
    const std::uint32_t n = static_cast<std::uint32_t>(graph.size());
    std::vector<int> waiting(n, 0);
    std::vector<std::vector<std::uint32_t>> consumers(n);
    for (std::uint32_t i = 0; i < n; ++i) {
        for (const ValueRef input : graph.nodes()[i].inputs) {
            ++waiting[i];
            consumers[input.node.index].push_back(i);
        }
    }
    std::vector<std::uint32_t> ready;
    for (std::uint32_t i = 0; i < n; ++i)
        if (waiting[i] == 0)
            ready.push_back(i);
    Graph shuffled;
    std::vector<NodeId> newId(n);
    while (!ready.empty()) {
        const std::size_t pick = rng() % ready.size();
        const std::uint32_t i = ready[pick];
        ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(pick));
        Node node = graph.nodes()[i];
        for (ValueRef& input : node.inputs)
            input.node = newId[input.node.index];
        newId[i] = shuffled.addNode(std::move(node));
        for (std::uint32_t c : consumers[i])
            if (--waiting[c] == 0)
                ready.push_back(c);
    }
    for (GraphOutput output : graph.outputs()) {
        output.value.node = newId[output.value.node.index];
        shuffled.addOutput(output);
    }
    return shuffled;
}

/// Where a device sat idle for at least `minGap` µs, `slack` µs or more of it while it had work
/// whose producers had all finished: one line each, empty when none.
/// Built with AddressSanitizer (scripts/sanitize.sh): timings are not the executor's own.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

/// How long this machine kept a thread from running while something else ran: a thread that
/// sleeps 200 us over and over records the most it overslept. Started around a timed run, it
/// sees the stalls another process caused during that run, which the run's trace cannot tell
/// from the executor's own waits.
class StallProbe {
public:
    StallProbe()
        : m_thread([this] {
              while (!m_stop.load()) {
                  const double before = hostClockMicros();
                  std::this_thread::sleep_for(std::chrono::microseconds(200));
                  m_worst = std::max(m_worst, hostClockMicros() - before - 200);
              }
          }) {}
    /// The longest oversleep seen, in microseconds; stops the probe.
    double worstMicros() {
        if (m_thread.joinable()) {
            m_stop.store(true);
            m_thread.join();
        }
        return m_worst;
    }
    ~StallProbe() { worstMicros(); }

private:
    std::atomic<bool> m_stop{false};
    double m_worst = 0;
    std::thread m_thread;
};

std::vector<std::string> idleWhileReady(const Executor& executor, const RunResult& result,
                                        double minGap, double slack) {
    const Schedule& schedule = executor.schedule();
    const Program& program = executor.program();
    std::vector<double> endOf(program.code.size(), -1), startOf(program.code.size(), -1);
    for (const TimedEvent& event : result.trace) {
        endOf[event.instruction] = event.end;
        startOf[event.instruction] = event.start;
    }
    // When each timed instruction became ready: its producers' ends, through bookkeeping.
    auto readyAt = [&](std::size_t k) {
        double at = result.traceOrigin;
        std::vector<std::uint32_t> stack(schedule.deps[k].begin(), schedule.deps[k].end());
        while (!stack.empty()) {
            const std::uint32_t d = stack.back();
            stack.pop_back();
            if (endOf[d] >= 0)
                at = std::max(at, endOf[d]);
            else
                stack.insert(stack.end(), schedule.deps[d].begin(), schedule.deps[d].end());
        }
        return at;
    };
    std::vector<std::string> found;
    for (const IdleStretch& gap : result.idle) {
        if (gap.end - gap.start < minGap)
            continue;
        for (const TimedEvent& event : result.trace) {
            if (event.stream != gap.stream || event.start < gap.end - 1)
                continue;
            const double ready = readyAt(event.instruction);
            if (gap.end - std::max(gap.start, ready) >= slack)
                found.push_back("stream " + std::to_string(gap.stream) + " idle " +
                                std::to_string(gap.end - gap.start) + " us while instruction " +
                                std::to_string(event.instruction) + " was ready " +
                                std::to_string(gap.start - ready) + " us before");
        }
    }
    return found;
}

} // namespace

/// Whether this build runs under ASan or TSan (their allocators map memory their own way).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerAllocator = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif
#else
constexpr bool kSanitizerAllocator = false;
#endif

class TestRuntime : public QObject {
    Q_OBJECT

private slots:
    // The kernels' error word on a device with lanes (kernels/KernelErrorWord.h), as the CUDA
    // backend reads it: a Gather with an index out of range, queued behind 30 ms of other work on
    // the compute lane, is reported by the synchronisation right after (the word is read in the
    // lane's order); the word is cleared, so the next clean run reports nothing; a failure found
    // elsewhere is the run's error, and the word is still cleared; an unreadable word says so.
    // Kernels prepared at run time are kept per signature, the most recently used 64: data of
    // ever new shapes (a detector's count of boxes) does not grow them without bound, and a
    // signature let go is prepared again, right.
    void runTimeKernelsAreBounded() {
        DeviceRegistry registry;
        Device& device = *registry.freshVCpu();
        Node node;
        node.name = "sum";
        node.op = OpRegistry::global().find("add");
        node.outputs = {TensorType{{1}, DType::Float32}};
        RunTimeKernelCache cache;
        auto runAt = [&](std::int64_t n) -> bool {
            const TensorType type{{n}, DType::Float32};
            auto found =
                cache.find(device, node, {type, type}, {nullptr, nullptr}, {nullptr, nullptr}, 0);
            if (!found || found.value()->outputs.size() != 1 || found.value()->outputs[0] != type)
                return false;
            std::vector<float> a(static_cast<std::size_t>(n)), b(a.size()), sum(a.size());
            for (std::size_t i = 0; i < a.size(); ++i) {
                a[i] = static_cast<float>(i);
                b[i] = 0.5f * static_cast<float>(n);
            }
            const std::byte* args[] = {reinterpret_cast<const std::byte*>(a.data()),
                                       reinterpret_cast<const std::byte*>(b.data())};
            std::byte* results[] = {reinterpret_cast<std::byte*>(sum.data())};
            found.value()->kernel->run(args, results);
            for (std::size_t i = 0; i < a.size(); ++i) {
                if (sum[i] != a[i] + b[i])
                    return false;
            }
            return true;
        };
        for (std::int64_t n = 1; n <= 100; ++n)
            QVERIFY2(runAt(n), qPrintable(QString("at %1 elements").arg(n)));
        QCOMPARE(cache.size(), RunTimeKernelCache::kMaxSignatures);
        QCOMPARE(cache.evicted(), std::size_t{100} - RunTimeKernelCache::kMaxSignatures);
        // The first signatures went; the last ones stay; both run right.
        const std::size_t before = cache.evicted();
        QVERIFY(runAt(100));
        QCOMPARE(cache.evicted(), before);
        QVERIFY(runAt(1));
        QCOMPARE(cache.evicted(), before + 1);
    }

    void kernelErrorWordOnLanes() {
        test::LaneDevice lane("lane");
        const long long id = lane.registerErrorSource("'gather'");
        const std::vector<float> data{1, 2, 3, 4};
        std::vector<float> out(2);
        auto gather = [&](std::vector<std::int64_t> indices) {
            auto shared = std::make_shared<std::vector<std::int64_t>>(std::move(indices));
            functors::Gather op;
            op.data = data.data();
            op.indices = shared->data();
            op.dst = out.data();
            op.dim = 4;
            op.count = 2;
            op.mode = 2; // raise, as ONNX's Gather
            op.error = lane.errorWord();
            op.kernelId = id;
            lane.launch([op, shared] {
                std::this_thread::sleep_for(std::chrono::milliseconds(30));
                functors::runOnHost(op, 2);
            });
        };
        gather({1, 9});
        const std::string first = lane.takeAsyncError();
        QCOMPARE(QString::fromStdString(first),
                 QStringLiteral("index 9 is out of range for an axis of length 4 in 'gather' (on "
                                "lane)"));
        gather({1, 3});
        QCOMPARE(QString::fromStdString(lane.takeAsyncError()), QString());
        QCOMPARE(out, (std::vector<float>{2, 4}));
        // Both: the other failure wins, and the word does not outlive the run.
        gather({-7, 0});
        lane.noteAsyncError("lane: a copy failed");
        QCOMPARE(QString::fromStdString(lane.takeAsyncError()),
                 QStringLiteral("lane: a copy failed"));
        QCOMPARE(QString::fromStdString(lane.takeAsyncError()), QString());
        // A word that cannot be read is an error of its own.
        lane.failErrorWordRead = true;
        QVERIFY(lane.takeAsyncError().find("could not read the kernels' error word") !=
                std::string::npos);
        lane.failErrorWordRead = false;
        QCOMPARE(QString::fromStdString(lane.takeAsyncError()), QString());
    }

    void tinyModelsMatchPyTorch_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<QString>("devices");
        QTest::addColumn<QStringList>("rules");
        for (const char* model : {"tiny_resnet", "tiny_mobilenet", "tiny_inception", "tiny_encoder",
                                  "tiny_recurrent"}) {
            QTest::newRow(qPrintable(QString(model) + " one vcpu"))
                << model << "a:vcpu" << QStringList{};
            QTest::newRow(qPrintable(QString(model) + " split over two vcpus"))
                << model << "cpu:cpu,a:vcpu,b:vcpu"
                << QStringList{"Conv=b", "MatMul=b", "Add=a", "Relu=cpu"};
        }
    }
    void tinyModelsMatchPyTorch() {
        QFETCH(QString, model);
        QFETCH(QString, devices);
        QFETCH(QStringList, rules);
        const std::string base = kModels + model.toStdString();
        PlanOptions options;
        for (const QString& rule : rules)
            options.rules.push_back(
                OpRule{rule.section('=', 0, 0).toStdString(), rule.section('=', 1).toStdString()});
        options.fallbackDevice = rules.isEmpty() ? "" : "a";
        auto prepared = prepare(loadModel(base + ".onnx", devices.toUtf8().constData()), options);
        auto input = readNpy(base + ".input.npy");
        auto expected = readNpy(base + ".expected.npy");
        QVERIFY2(input.ok() && expected.ok(), "reference .npy files are readable");
        auto result = prepared->executor->run({input.value()}, RunOptions{0, 2});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check =
            compareOutputs(result.value().outputs, {expected.value()}, 1e-4, 1e-3);
        QVERIFY2(check.ok, check.mismatch.c_str());
        QVERIFY(check.maxAbsDiff < 1e-4);
        if (!rules.isEmpty())
            QVERIFY2(!prepared->plan.copies.empty(), "the split plan copies between devices");
    }

    // The models scripts/export_models.py checks (full or checked) writes, with PyTorch's output
    // for a fixed input: each runs on one vcpu and split over two (the first half of its
    // operators on one, the rest on the other) and matches PyTorch within a relative error of
    // 1e-3 (the largest difference over the largest reference magnitude).
    void exportedModelsMatchPyTorch_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<bool>("split");
        for (const char* model :
             {"vit_b_16", "transformer_encoder", "causal_decoder", "swin_t", "shufflenet_v2",
              "convnext_tiny", "fcn_resnet50", "lstm_tagger", "resnet50_batch8"}) {
            QTest::newRow(qPrintable(QString(model) + " one vcpu")) << model << false;
            QTest::newRow(qPrintable(QString(model) + " split over two vcpus")) << model << true;
        }
    }
    void exportedModelsMatchPyTorch() {
        QFETCH(QString, model);
        QFETCH(bool, split);
        const char* folder = std::getenv("PLACER_ONNX_MODELS");
        if (!folder || !*folder)
            QSKIP("set PLACER_ONNX_MODELS to a folder written by scripts/export_models.py "
                  "checked (needs Debian's python3-torch and python3-torchvision)");
        const std::string base = std::string(folder) + "/" + model.toStdString();
        if (!std::filesystem::exists(base + ".onnx") ||
            !std::filesystem::exists(base + ".input.npy"))
            QSKIP(qPrintable(QString::fromStdString(base + ".onnx or its .input.npy is missing")));
        auto input = readNpy(base + ".input.npy");
        auto expected = readNpy(base + ".expected.npy");
        QVERIFY2(input.ok() && expected.ok(), "reference .npy files are readable");
        installConstantFolding();
        auto loaded = loadModelFile(base + ".onnx", GraphFormat::Onnx,
                                    DeviceSet::parse(split ? "a:vcpu,b:vcpu" : "a:vcpu").take(),
                                    {{"input", input.value().type.shape}});
        QVERIFY2(loaded.ok(), loaded.ok() ? "" : loaded.error().toString().c_str());
        LoadedModel m = loaded.take();
        for (const std::string& w : m.warnings)
            QVERIFY2(w.find("no kernel") == std::string::npos, w.c_str());
        if (split) {
            std::vector<NodeId> compute;
            for (std::uint32_t i = 0; i < m.graph.size(); ++i)
                if (m.graph.node(NodeId(i)).op->role == OpRole::Compute)
                    compute.push_back(NodeId(i));
            for (std::size_t k = 0; k < compute.size(); ++k)
                m.graph.node(compute[k]).pin =
                    Pin{PinKind::Plain, DeviceId(k < compute.size() / 2 ? 0 : 1), "test"};
        }
        const Plan plan = planDevices(m.graph, m.devices, PlanOptions{});
        QVERIFY2(plan.conflicts.empty(),
                 plan.conflicts.empty() ? "" : plan.conflicts[0].message.c_str());
        auto program = lowerToBytecode(m.graph, m.devices, plan);
        QVERIFY2(program.ok(), program.ok() ? "" : program.error().message.c_str());
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        auto mapping = mapDevices(m.devices, {}, registry, &warnings);
        QVERIFY2(mapping.ok(), mapping.ok() ? "" : mapping.error().message.c_str());
        auto executor =
            Executor::load(m.graph, m.devices, program.take(), mapping.take(), m.graph.onnxOpset());
        QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
        auto result = executor.value()->run({input.value()}, RunOptions{0, 1});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QCOMPARE(result.value().outputs.size(), std::size_t{1});
        const HostTensor& out = result.value().outputs[0];
        QCOMPARE(out.type, expected.value().type);
        double largest = 0, difference = 0;
        for (std::int64_t i = 0; i < out.type.elementCount(); ++i) {
            const double want = loadAsDouble(expected.value().data.raw(), out.type.dtype, i);
            const double got = loadAsDouble(out.data.raw(), out.type.dtype, i);
            largest = std::max(largest, std::abs(want));
            difference = std::max(difference, std::abs(got - want));
        }
        const double relative = difference / std::max(largest, 1e-12);
        qInfo("%s: relative error %.2e (largest difference %.3g, largest value %.3g)%s",
              model.toUtf8().constData(), relative, difference, largest,
              split ? (", " + std::to_string(plan.copies.size()) + " copies").c_str() : "");
        QVERIFY2(relative <= 1e-3, qPrintable(QString("relative error %1").arg(relative)));
        if (split)
            QVERIFY(!plan.copies.empty());
    }

    void multiDevicePlansMatchOneDevice_data() {
        QTest::addColumn<int>("seed");
        QTest::addColumn<int>("devices");
        for (int seed = 1; seed <= 24; ++seed)
            QTest::newRow(qPrintable(QString("seed %1").arg(seed))) << seed << 2 + seed % 3;
    }
    void multiDevicePlansMatchOneDevice() {
        QFETCH(int, seed);
        QFETCH(int, devices);
        std::mt19937 rng(static_cast<unsigned>(seed));
        LoadedModel model;
        std::string spec;
        for (int d = 0; d < devices; ++d)
            spec += (d ? "," : "") + std::string("v") + std::to_string(d) + ":vcpu";
        model.devices = DeviceSet::parse(spec).take();
        model.graph = test::randomElementwiseGraph(rng, devices, 60 + seed * 10);
        auto prepared = prepare(std::move(model), PlanOptions{});
        QVERIFY(!prepared->plan.copies.empty());
        const Graph& graph = prepared->model.graph;
        auto inputs = randomInputs(*prepared->executor, graph);
        const auto expected = reference(graph, inputs);
        // Several runs: storages are reused across devices' concurrent streams every time.
        auto result = prepared->executor->run(inputs, RunOptions{1, 5});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 0, 0);
        QVERIFY2(check.ok, check.mismatch.c_str());
        QCOMPARE(static_cast<int>(result.value().streams.size()), devices);
        // The same graph written in another topological order: the same outputs, bit for bit.
        LoadedModel reordered;
        reordered.devices = prepared->model.devices;
        reordered.graph = shuffledTopologically(graph, rng);
        auto shuffled = prepare(std::move(reordered), PlanOptions{});
        std::vector<HostTensor> sameInputs; // the inputs by name: their order may differ
        for (NodeId id : shuffled->executor->program().inputs) {
            const std::string& name = shuffled->model.graph.node(id).name;
            for (std::size_t i = 0; i < prepared->executor->program().inputs.size(); ++i)
                if (graph.node(prepared->executor->program().inputs[i]).name == name)
                    sameInputs.push_back(inputs[i]);
        }
        QCOMPARE(sameInputs.size(), inputs.size());
        auto again = shuffled->executor->run(sameInputs, RunOptions{0, 3});
        QVERIFY2(again.ok(), again.ok() ? "" : again.error().message.c_str());
        const ReferenceCheck same = compareOutputs(again.value().outputs, expected, 0, 0);
        QVERIFY2(same.ok, same.mismatch.c_str());
    }

    // Two independent branches, each ending on its own device, written in three orders: the
    // devices work at once (no device idles while it has work whose inputs are ready), and
    // the outputs are those of one device.
    void twoBranchesRunConcurrentlyInAnyOrder_data() {
        QTest::addColumn<int>("order");
        for (auto order :
             {test::BranchOrder::AThenB, test::BranchOrder::BThenA, test::BranchOrder::Interleaved})
            QTest::newRow(test::branchOrderName(order)) << static_cast<int>(order);
    }
    void twoBranchesRunConcurrentlyInAnyOrder() {
        QFETCH(int, order);
        LoadedModel model;
        model.devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
        model.graph = test::twoBranchGraph(32, 40, 3, static_cast<test::BranchOrder>(order), true);
        auto prepared = prepare(std::move(model), PlanOptions{}, {{"a", "vcpu1"}, {"b", "vcpu2"}});
        const Graph& graph = prepared->model.graph;
        auto inputs = randomInputs(*prepared->executor, graph);
        const auto expected = reference(graph, inputs);
        // Timing on a shared machine: another process can take a core for milliseconds, which
        // the trace cannot tell from a wait. So the allowance grows with the longest stall a
        // probe thread saw during the same run (on an idle machine, well under the old 2 ms and
        // 1 ms, which stay the floor), and a wait seen in three runs in a row is the executor's.
        std::vector<std::string> violations;
        for (int attempt = 0; attempt < 3; ++attempt) {
            StallProbe probe;
            auto result = prepared->executor->run(inputs, RunOptions{1, 3});
            const double stall = probe.worstMicros();
            QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
            const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 0, 0);
            QVERIFY2(check.ok, check.mismatch.c_str());
            violations = idleWhileReady(*prepared->executor, result.value(),
                                        std::max(2000.0, 2 * stall), std::max(1000.0, 2 * stall));
            if (violations.empty())
                break;
            violations.front() +=
                " (the longest stall of a probe thread during the run: " + std::to_string(stall) +
                " us)";
        }
        // Under the sanitizers a thread's wake-up on a loaded machine takes milliseconds that
        // the trace cannot tell from a wait: the outputs are checked there, the timing here.
        if (kSanitized && !violations.empty())
            QSKIP(qPrintable(QStringLiteral("under the sanitizers, not timed: %1")
                                 .arg(QString::fromStdString(violations.front()))));
        QVERIFY2(violations.empty(), violations.empty() ? "" : violations.front().c_str());
    }

    // The idle check itself: on a trace in which device b starts 10 ms late although its first
    // work was ready at once, it reports the wait.
    void idleCheckFindsAReadyInstruction() {
        LoadedModel model;
        model.devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
        model.graph = test::twoBranchGraph(8, 8, 2, test::BranchOrder::AThenB, true);
        auto prepared = prepare(std::move(model), PlanOptions{}, {{"a", "vcpu1"}, {"b", "vcpu2"}});
        auto inputs = randomInputs(*prepared->executor, prepared->model.graph);
        auto result = prepared->executor->run(inputs, RunOptions{0, 1});
        QVERIFY(result.ok());
        RunResult made = result.take();
        // Delay everything device b ran by 10 ms, and say it sat idle before that.
        int b = -1;
        for (std::size_t s = 0; s < made.streams.size(); ++s)
            if (made.streams[s].physical == "vcpu2")
                b = static_cast<int>(s);
        QVERIFY(b >= 0);
        double first = 1e300;
        for (TimedEvent& event : made.trace) {
            if (event.stream == b) {
                first = std::min(first, event.start);
                event.start += 10000;
                event.end += 10000;
            }
        }
        made.idle = {IdleStretch{b, first, first + 10000, -1}};
        QVERIFY(!idleWhileReady(*prepared->executor, made, 2000, 1000).empty());
    }

    void tinyModelsWithRandomPinsMatchOneDevice_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("seed");
        for (const char* model : {"tiny_resnet", "tiny_inception", "tiny_encoder"})
            for (int seed = 1; seed <= 3; ++seed)
                QTest::newRow(qPrintable(QString("%1 seed %2").arg(model).arg(seed)))
                    << model << seed;
        // Shapes found at run time: data-dependent lengths crossing devices, an If on data,
        // a detector's proposals, pooling and heads.
        for (const char* model : {"nonzero_select", "nms_topk", "if_on_data", "tiny_detector"})
            for (int seed = 1; seed <= 3; ++seed)
                QTest::newRow(qPrintable(QString("%1 seed %2").arg(model).arg(seed)))
                    << QString("dynamic/") + model << seed;
    }
    void tinyModelsWithRandomPinsMatchOneDevice() {
        QFETCH(QString, model);
        QFETCH(int, seed);
        const std::string path = model.startsWith("dynamic/")
                                     ? kDynamicModels + model.mid(8).toStdString() + ".onnx"
                                     : kModels + model.toStdString() + ".onnx";
        LoadedModel loaded = loadModel(path, "v1:vcpu,v2:vcpu,v3:vcpu,v4:vcpu");
        std::mt19937 rng(static_cast<unsigned>(seed));
        for (std::uint32_t i = 0; i < loaded.graph.size(); ++i) {
            Node& node = loaded.graph.node(NodeId(i));
            if (!node.isConstant() && rng() % 3 == 0)
                node.pin =
                    Pin{PinKind::Plain, DeviceId(static_cast<std::uint32_t>(rng() % 4)), "test"};
        }
        auto prepared = prepare(std::move(loaded), PlanOptions{});
        const Graph& graph = prepared->model.graph;
        auto inputs = randomInputs(*prepared->executor, graph);
        const auto expected = reference(graph, inputs);
        auto result = prepared->executor->run(inputs, RunOptions{0, 3});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 1e-5, 1e-5);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }

    /// Shapes found at run time on devices whose work runs in lanes behind their worker (as on a
    /// GPU): the shape functions read what earlier lanes wrote only once it is done, and the
    /// results match one device.
    void runTimeShapesOnAsynchronousLanes_data() {
        QTest::addColumn<QString>("model");
        for (const char* model : {"nonzero_select", "nms_topk", "if_on_data", "tiny_detector"})
            QTest::newRow(model) << model;
    }
    void runTimeShapesOnAsynchronousLanes() {
        QFETCH(QString, model);
        LoadedModel loaded =
            loadModel(kDynamicModels + model.toStdString() + ".onnx", "v0:vcpu,v1:vcpu,v2:vcpu");
        pinAtRandom(loaded.graph, 3, [](std::mt19937& rng) {
            return rng() % 2 == 0 ? DeviceId(static_cast<std::uint32_t>(rng() % 3)) : DeviceId();
        });
        const Plan plan = planDevices(loaded.graph, loaded.devices, PlanOptions{});
        QVERIFY(!plan.copies.empty());
        auto program = lowerToBytecode(loaded.graph, loaded.devices, plan);
        QVERIFY(program.ok());
        DeviceRegistry registry;
        test::LaneDevice laneA("laneA"), laneB("laneB");
        std::vector<Device*> mapping{&laneA, &laneB, registry.freshVCpu()};
        auto executor = Executor::load(loaded.graph, loaded.devices, program.take(), mapping,
                                       loaded.graph.onnxOpset());
        QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
        auto inputs = randomInputs(*executor.value(), loaded.graph);
        const auto expected = reference(loaded.graph, inputs);
        auto result = executor.value()->run(inputs, RunOptions{1, 3});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 1e-6, 1e-6);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }

    /// A pipelined plan (--micro-batches) on devices whose work runs in lanes behind their
    /// worker (as on a GPU): the micro-batches cross between the lanes with events, and the
    /// outputs are bit for bit those of the unpipelined plan on the same devices.
    void pipelinedPlansOnAsynchronousLanes_data() {
        QTest::addColumn<int>("microBatches");
        for (int m : {2, 3, 4})
            QTest::newRow(qPrintable(QString("%1 micro-batches").arg(m))) << m;
    }
    void pipelinedPlansOnAsynchronousLanes() {
        QFETCH(int, microBatches);
        const auto runOnLanes = [](const LoadedModel& loaded, const PlanOptions& options,
                                   std::vector<HostTensor>* outputs, int* waves) {
            const Plan plan = planDevices(loaded.graph, loaded.devices, options);
            const OptimizedGraph ran = unoptimized(loaded.graph, plan);
            *waves = 0;
            for (const Node& node : ran.graph.nodes())
                *waves = std::max(*waves, node.microBatch + 1);
            auto program = lowerToBytecode(ran.graph, loaded.devices, ran.plan);
            QVERIFY(program.ok());
            test::LaneDevice laneA("laneA"), laneB("laneB");
            auto executor = Executor::load(ran.graph, loaded.devices, program.take(),
                                           {&laneA, &laneB}, loaded.graph.onnxOpset());
            QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
            // The same seeded inputs for both plans: their graph inputs are the user's.
            std::vector<HostTensor> inputs;
            for (const NodeId input : executor.value()->program().inputs)
                inputs.push_back(randomTensor(ran.graph.node(input).outputs[0], 7));
            auto result = executor.value()->run(inputs, RunOptions{1, 3});
            QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
            *outputs = result.value().outputs;
        };
        LoadedModel loaded =
            loadModel(std::string(PLACER_SOURCE_DIR) + "/resources/models/tiny_encoder_batch4.onnx",
                      "v0:vcpu,v1:vcpu");
        PlanOptions options;
        options.rules.push_back(OpRule{"MatMul", "v0"});
        options.fallbackDevice = "v1";
        std::vector<HostTensor> expected, got;
        int waves = 0;
        runOnLanes(loaded, options, &expected, &waves);
        QCOMPARE(waves, 0);
        options.microBatches = microBatches;
        runOnLanes(loaded, options, &got, &waves);
        QCOMPARE(waves, microBatches);
        QCOMPARE(got.size(), expected.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
            QCOMPARE(got[k].type, expected[k].type);
            QVERIFY2(got[k].data.bytes() == expected[k].data.bytes(),
                     "the pipelined outputs differ from the unpipelined ones");
        }
    }

    // Devices whose work runs in lanes behind their worker (as on a GPU): the executor must order
    // lanes with events, including storages reused across lanes, and time work by markers.
    void asynchronousLanesMatchOneDevice_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 12; ++seed)
            QTest::newRow(qPrintable(QString("seed %1").arg(seed))) << seed;
    }
    void asynchronousLanesMatchOneDevice() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        const int count = 3 + seed % 2;
        LoadedModel model;
        std::string spec;
        for (int d = 0; d < count; ++d)
            spec += (d ? "," : "") + std::string("v") + std::to_string(d) + ":vcpu";
        model.devices = DeviceSet::parse(spec).take();
        model.graph = test::randomElementwiseGraph(rng, count, 80 + seed * 10);
        const Plan plan = planDevices(model.graph, model.devices, PlanOptions{});
        QVERIFY(!plan.copies.empty());
        auto program = lowerToBytecode(model.graph, model.devices, plan);
        QVERIFY(program.ok());
        // Two asynchronous devices (copies between them go through copyOut) and host ones.
        DeviceRegistry registry;
        test::LaneDevice laneA("laneA"), laneB("laneB");
        std::vector<Device*> mapping{&laneA, &laneB};
        for (int d = 2; d < count; ++d)
            mapping.push_back(registry.freshVCpu());
        auto executor = Executor::load(model.graph, model.devices, program.take(), mapping, 0);
        QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
        auto inputs = randomInputs(*executor.value(), model.graph);
        const auto expected = reference(model.graph, inputs);
        auto result = executor.value()->run(inputs, RunOptions{1, 6});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 0, 0);
        QVERIFY2(check.ok, check.mismatch.c_str());
        QVERIFY2(laneA.waitsIssued + laneB.waitsIssued > 0, "lanes waited for each other");
        // Markers became times: every traced interval is ordered and inside the iteration.
        bool copyLane = false;
        for (const TimedEvent& event : result.value().trace) {
            QVERIFY(event.end >= event.start);
            QVERIFY(event.start >= result.value().traceOrigin - 1);
            copyLane = copyLane || (event.stream < 2 && event.lane == 1);
        }
        QVERIFY2(copyLane, "copies into the asynchronous devices ran on their copy lane");
        for (const StreamInfo& stream : result.value().streams) {
            for (double busy : stream.busyMicros)
                QVERIFY(busy >= 0);
        }
    }

    void asynchronousLanesRunRealModels() {
        LoadedModel loaded = loadModel(kModels + "tiny_inception.onnx", "cpu:cpu,gpu:vcpu");
        pinAtRandom(loaded.graph, 5, [](std::mt19937& rng) {
            return rng() % 3 == 0 ? DeviceId(rng() % 2) : DeviceId();
        });
        const Plan plan = planDevices(loaded.graph, loaded.devices, PlanOptions{});
        auto program = lowerToBytecode(loaded.graph, loaded.devices, plan);
        QVERIFY(program.ok());
        DeviceRegistry registry;
        test::LaneDevice gpu("gpu-like");
        auto executor =
            Executor::load(loaded.graph, loaded.devices, program.take(),
                           {registry.get("cpu").value(), &gpu}, loaded.graph.onnxOpset());
        QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
        auto inputs = randomInputs(*executor.value(), loaded.graph);
        const auto expected = reference(loaded.graph, inputs);
        auto result = executor.value()->run(inputs, RunOptions{1, 3});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 1e-5, 1e-5);
        QVERIFY2(check.ok, check.mismatch.c_str());
        // The timing marks a run takes (its last iteration traced, allocations included) were
        // made ready at load, as a GPU's events are.
        QVERIFY(gpu.marksUsed() > 0);
        QVERIFY2(gpu.marksUsed() <= static_cast<std::size_t>(gpu.reservedMarks),
                 qPrintable(QStringLiteral("%1 marks used, %2 reserved")
                                .arg(gpu.marksUsed())
                                .arg(gpu.reservedMarks)));
        QVERIFY(executor.value()
                    ->implementation(std::find_if(executor.value()->program().code.begin(),
                                                  executor.value()->program().code.end(),
                                                  [&](const Instruction& instr) {
                                                      return instr.op == Opcode::Invoke &&
                                                             instr.device == DeviceId(1);
                                                  }) -
                                     executor.value()->program().code.begin())
                    .starts_with("lane:"));
    }

    // A device whose copy or wait throws (a GPU's failed transfer, a faulted stream) makes the
    // load or the run an error that says so; the executor's workers survive, and once the fault
    // is gone the same executor runs correctly.
    void deviceFaultsBecomeErrors() {
        LoadedModel loaded = loadModel(kModels + "tiny_resnet.onnx", "cpu:cpu,gpu:vcpu");
        pinAtRandom(loaded.graph, 9,
                    [](std::mt19937& rng) { return DeviceId(rng() % 4 == 0 ? 0 : 1); });
        for (const GraphOutput& output : loaded.graph.outputs()) // results copied out of gpu
            loaded.graph.node(output.value.node).pin = Pin{PinKind::Plain, DeviceId(1), "test"};
        const Plan plan = planDevices(loaded.graph, loaded.devices, PlanOptions{});
        QVERIFY(!plan.copies.empty());
        auto program = lowerToBytecode(loaded.graph, loaded.devices, plan);
        QVERIFY(program.ok());
        const Program lowered = program.take();
        DeviceRegistry registry;
        test::LaneDevice gpu("gpu-like");
        const std::vector<Device*> mapping{registry.get("cpu").value(), &gpu};
        const int opset = loaded.graph.onnxOpset();

        gpu.failCopyIn = true;
        auto refused = Executor::load(loaded.graph, loaded.devices, lowered, mapping, opset);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("uploading constant") != std::string::npos &&
                     refused.error().message.find("injected copy-in failure") != std::string::npos,
                 refused.error().message.c_str());
        gpu.failCopyIn = false;

        auto executor = Executor::load(loaded.graph, loaded.devices, lowered, mapping, opset);
        QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
        const auto inputs = randomInputs(*executor.value(), loaded.graph);
        const auto expected = reference(loaded.graph, inputs);

        struct Fault {
            std::atomic<bool>* flag;
            const char* message;
        };
        const Fault faults[] = {{&gpu.failWait, "injected wait failure"},
                                {&gpu.failCopyIn, "injected copy-in failure"},
                                {&gpu.failCopyOut, "injected copy-out failure"}};
        for (const Fault& fault : faults) {
            *fault.flag = true;
            auto failed = executor.value()->run(inputs, RunOptions{0, 2});
            *fault.flag = false;
            QVERIFY2(!failed.ok(), fault.message);
            QVERIFY2(failed.error().message.find(fault.message) != std::string::npos,
                     failed.error().message.c_str());
            auto result = executor.value()->run(inputs, RunOptions{0, 1});
            QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
            const ReferenceCheck check =
                compareOutputs(result.value().outputs, expected, 1e-5, 1e-5);
            QVERIFY2(check.ok, check.mismatch.c_str());
        }

        // With everything on the device, only the results' copy out of it fails.
        for (std::uint32_t i = 0; i < loaded.graph.size(); ++i)
            loaded.graph.node(NodeId(i)).pin = Pin{};
        PlanOptions onGpu;
        onGpu.fallbackDevice = "gpu";
        const Plan gpuPlan = planDevices(loaded.graph, loaded.devices, onGpu);
        auto gpuProgram = lowerToBytecode(loaded.graph, loaded.devices, gpuPlan);
        QVERIFY(gpuProgram.ok());
        auto gpuOnly =
            Executor::load(loaded.graph, loaded.devices, gpuProgram.take(), mapping, opset);
        QVERIFY2(gpuOnly.ok(), gpuOnly.ok() ? "" : gpuOnly.error().message.c_str());
        gpu.failCopyOut = true;
        auto failed = gpuOnly.value()->run(inputs, RunOptions{0, 1});
        gpu.failCopyOut = false;
        QVERIFY(!failed.ok());
        QCOMPARE(failed.error().message,
                 std::string("copying the results out: gpu-like: injected copy-out failure"));
        auto result = gpuOnly.value()->run(inputs, RunOptions{0, 1});
        QVERIFY2(result.ok(), result.ok() ? "" : result.error().message.c_str());
        QVERIFY(compareOutputs(result.value().outputs, expected, 1e-5, 1e-5).ok);
    }

    // Host storages that copies move to or from a GPU-like device are pinned by that device
    // for the executor's life (so a GPU's copies skip the staging buffers), each once.
    void copiedHostStoragesArePinned() {
        LoadedModel loaded = loadModel(kModels + "tiny_inception.onnx", "cpu:cpu,gpu:vcpu");
        pinAtRandom(loaded.graph, 4, [](std::mt19937& rng) { return DeviceId(rng() % 2); });
        const Plan plan = planDevices(loaded.graph, loaded.devices, PlanOptions{});
        auto program = lowerToBytecode(loaded.graph, loaded.devices, plan);
        QVERIFY(program.ok());
        std::int64_t largestCopy = 0;
        for (const Instruction& instr : program.value().code) {
            if (instr.op == Opcode::DeviceCopy)
                largestCopy = std::max(largestCopy, instr.bytes);
        }
        QVERIFY(largestCopy > 0);
        DeviceRegistry registry;
        Device* cpu = registry.get("cpu").value();
        test::LaneDevice gpu("gpu-like");
        {
            auto executor = Executor::load(loaded.graph, loaded.devices, program.take(),
                                           {cpu, &gpu}, loaded.graph.onnxOpset());
            QVERIFY2(executor.ok(), executor.ok() ? "" : executor.error().message.c_str());
            QVERIFY(!gpu.pinned.empty());
            std::int64_t pinnedBytes = 0, largestPinned = 0;
            for (const auto& [data, bytes] : gpu.pinned) {
                QVERIFY(data != nullptr);
                pinnedBytes += bytes;
                largestPinned = std::max(largestPinned, bytes);
            }
            QVERIFY(largestPinned >= largestCopy); // a storage holds at least what it copies
            QVERIFY(pinnedBytes <= cpu->bytesInUse());
            auto inputs = randomInputs(*executor.value(), loaded.graph);
            auto result = executor.value()->run(inputs, RunOptions{0, 1});
            QVERIFY(result.ok());
            QVERIFY(
                compareOutputs(result.value().outputs, reference(loaded.graph, inputs), 1e-5, 1e-5)
                    .ok);
        }
        QVERIFY2(gpu.pinned.empty(), "everything pinned is unpinned with the executor");
    }

    void skippedCopyIsCaught() {
        LoadedModel model;
        model.devices = DeviceSet::parse("cpu:cpu,gpu:vcpu").take();
        model.devices.setDefaultDevice(DeviceId(1));
        model.graph =
            test::relay(R"(def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32]) {
  %0 = add(%a, %b);
  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
  tanh(%1)
})",
                        model.devices);
        Plan plan = planDevices(model.graph, model.devices, PlanOptions{});
        QVERIFY(!plan.copies.empty());
        auto program = lowerToBytecode(model.graph, model.devices, plan);
        QVERIFY(program.ok());
        Program edited = program.take();
        // Drop the first copy and let its readers use the source register directly.
        const auto copy = std::find_if(
            edited.code.begin() + static_cast<std::ptrdiff_t>(edited.runStart), edited.code.end(),
            [](const Instruction& i) { return i.op == Opcode::DeviceCopy; });
        QVERIFY(copy != edited.code.end());
        const std::int32_t src = copy->src, dst = copy->dst;
        const std::string srcName = edited.registers[static_cast<std::size_t>(src)].name;
        edited.code.erase(copy);
        for (Instruction& instr : edited.code) {
            for (std::int32_t& r : instr.args)
                if (r == dst)
                    r = src;
        }
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        auto mapping = mapDevices(model.devices, {}, registry, &warnings);
        QVERIFY(mapping.ok());
        auto executor =
            Executor::load(model.graph, model.devices, std::move(edited), mapping.value());
        QVERIFY(executor.ok());
        std::vector<HostTensor> inputs = randomInputs(*executor.value(), model.graph);
        auto result = executor.value()->run(inputs, RunOptions{0, 1});
        QVERIFY(!result.ok());
        const QString message = QString::fromStdString(result.error().message);
        QVERIFY2(message.contains(QString::fromStdString("tensor " + srcName)),
                 qPrintable(message));
        QVERIFY2(message.contains("owned by cpu"), qPrintable(message));
        QVERIFY2(message.contains("tanh"), qPrintable(message));
        // gpu, the second virtual device, runs on vcpu2 (device/DeviceMapping.h).
        QVERIFY2(message.contains("on vcpu2"), qPrintable(message));
        QVERIFY2(message.contains("without a device copy"), qPrintable(message));
        // The executor stays usable after the failure: an error again, no hang.
        QVERIFY(!executor.value()->run(inputs, RunOptions{0, 1}).ok());
    }

    void constantsAreUploadedOncePerDevice() {
        LoadedModel loaded = loadModel(kModels + "tiny_resnet.onnx", "a:vcpu,b:vcpu");
        PlanOptions options;
        options.rules = {{"Conv", "a"}, {"*", "b"}};
        auto prepared = prepare(std::move(loaded), options);
        const Program& program = prepared->executor->program();
        std::map<std::string, int> loadsPerDevice;
        int replicaLoads = 0;
        for (std::size_t k = 0; k < program.runStart; ++k) {
            if (program.code[k].op == Opcode::LoadConst)
                ++loadsPerDevice[prepared->model.devices[program.code[k].device].name];
        }
        for (const Replica& replica : prepared->plan.replicas)
            replicaLoads += static_cast<int>(replica.devices.size());
        for (std::size_t k = program.runStart; k < program.code.size(); ++k)
            QVERIFY(program.code[k].op != Opcode::LoadConst);
        auto inputs = randomInputs(*prepared->executor, prepared->model.graph);
        for (int round = 0; round < 2; ++round) {
            auto result = prepared->executor->run(inputs, RunOptions{2, 7});
            QVERIFY(result.ok());
            int uploads = 0;
            for (const StreamInfo& stream : result.value().streams) {
                QCOMPARE(stream.constantUploads,
                         loadsPerDevice[prepared->model.devices[stream.virtuals[0]].name]);
                uploads += stream.constantUploads;
            }
            int constants = 0;
            for (const Node& node : prepared->model.graph.nodes())
                constants += node.isConstant() ? 1 : 0;
            QCOMPARE(uploads, constants + replicaLoads);
        }
    }

    void timingsAreConsistent() {
        LoadedModel loaded = loadModel(kModels + "tiny_inception.onnx", "a:vcpu,b:vcpu");
        PlanOptions options;
        options.rules = {{"Conv", "b"}};
        options.fallbackDevice = "a";
        auto prepared = prepare(std::move(loaded), options);
        auto inputs = randomInputs(*prepared->executor, prepared->model.graph);
        auto run = prepared->executor->run(inputs, RunOptions{1, 6});
        QVERIFY(run.ok());
        const RunResult& result = run.value();
        QCOMPARE(result.latencyMicros.size(), std::size_t{6});
        for (const auto& times : result.instrMicros)
            for (double t : times)
                QVERIFY(t >= 0);
        for (const StreamInfo& stream : result.streams) {
            QCOMPARE(stream.busyMicros.size(), std::size_t{6});
            for (std::size_t i = 0; i < 6; ++i)
                QVERIFY2(stream.busyMicros[i] <= result.latencyMicros[i] + 1.0,
                         qPrintable(QString("busy %1 > wall %2")
                                        .arg(stream.busyMicros[i])
                                        .arg(result.latencyMicros[i])));
            QVERIFY(stream.peakBytes > 0);
        }
        QVERIFY(!result.trace.empty());
        const double end = result.traceOrigin + result.latencyMicros.back();
        for (const TimedEvent& event : result.trace) {
            QVERIFY(event.start >= result.traceOrigin);
            QVERIFY(event.end >= event.start);
            QVERIFY(event.end <= end + 1.0);
        }
        // Per stream, events never overlap (one worker does one thing at a time).
        for (std::size_t s = 0; s < result.streams.size(); ++s) {
            double last = 0;
            for (const TimedEvent& event : result.trace) {
                if (event.stream != static_cast<int>(s))
                    continue;
                QVERIFY(event.start >= last);
                last = event.end;
            }
        }
    }

    void chromeTraceHasProcessesFlowsAndCounters() {
        LoadedModel loaded = loadModel(kModels + "tiny_resnet.onnx", "cpu:cpu,gpu:cuda");
        PlanOptions options;
        options.rules = {{"Conv", "gpu"}};
        options.fallbackDevice = "cpu";
        auto prepared = prepare(std::move(loaded), options);
        auto inputs = randomInputs(*prepared->executor, prepared->model.graph);
        auto run = prepared->executor->run(inputs, RunOptions{0, 2});
        QVERIFY(run.ok());
        RunOutcome input;
        input.userGraph = std::make_shared<const Graph>(prepared->model.graph);
        input.userPlan = prepared->plan;
        input.devices = prepared->model.devices;
        input.ran = std::make_shared<const OptimizedGraph>(
            unoptimized(prepared->model.graph, prepared->plan));
        input.executor = std::move(prepared->executor);
        input.result = run.take();
        input.iterations = 2;
        const Json trace = chromeTrace(input);
        auto parsed = Json::parse(trace.dump(), "trace.json");
        QVERIFY(parsed.ok());
        int processes = 0, complete = 0, flowStarts = 0, flowEnds = 0, counters = 0, copies = 0,
            idle = 0;
        static const Json kNull;
        auto at = [](const Json& object, const char* key) -> const Json& {
            const Json* member = object.find(key);
            return member ? *member : kNull;
        };
        for (const Json& event : parsed.value()["traceEvents"].items()) {
            const std::string ph = at(event, "ph").asString();
            if (ph == "M" && at(event, "name").asString() == "process_name")
                ++processes;
            if (ph == "X" && at(event, "cat").asString() == "idle") {
                // A device's wait, and what it waited for.
                ++idle;
                QVERIFY(at(event, "dur").asDouble() >= kMinIdleMicros);
                QVERIFY(!at(at(event, "args"), "waited_for").asString().empty());
            } else if (ph == "X") {
                ++complete;
                QVERIFY(at(event, "dur").asDouble() >= 0);
                QVERIFY(at(event, "ts").asDouble() >= 0);
                QVERIFY(!at(at(event, "args"), "node").asString().empty());
                if (at(event, "cat").asString() == "kernel") {
                    QVERIFY(prepared->model.graph.find(at(at(event, "args"), "node").asString())
                                .has_value());
                    QVERIFY(!at(at(event, "args"), "device").asString().empty());
                    QVERIFY(at(at(event, "args"), "input_shapes").isArray());
                }
                if (at(event, "cat").asString() == "copy" &&
                    at(at(event, "args"), "value").isString()) {
                    ++copies;
                    QVERIFY(at(at(event, "args"), "bytes").asInt() > 0);
                    QVERIFY(at(event, "tid").asInt() >= 3); // copy threads are apart from compute
                }
            }
            if (ph == "s")
                ++flowStarts;
            if (ph == "f")
                ++flowEnds;
            if (ph == "C")
                ++counters;
        }
        QCOMPARE(processes, 2);
        QVERIFY(complete > 10);
        QVERIFY(copies > 0);
        QVERIFY(flowStarts > 0);
        QCOMPARE(flowStarts, flowEnds);
        QVERIFY(counters > 0);
        QCOMPARE(idle, static_cast<int>(input.result.idle.size()));
        const Json report = runReportJson(input);
        for (const char* key : {"latency_ms", "iterations", "devices", "nodes", "copies", "outputs",
                                "reference_check", "idle"})
            QVERIFY2(report.find(key) != nullptr, key);
        // cpu waits for the convolutions on gpu: its idle stretches name them.
        bool waitedForConv = false;
        for (const Json& stretch : at(report, "idle").items())
            waitedForConv =
                waitedForConv ||
                at(stretch, "waited_for").asString().find("(Conv) on gpu") != std::string::npos;
        QVERIFY2(waitedForConv, at(report, "idle").dump().c_str());
    }

    void lowering() {
        LoadedModel model;
        model.devices = DeviceSet::parse("cpu:cpu,gpu:cuda").take();
        model.devices.chooseDefaults();
        model.graph =
            test::relay(R"(def @main(%a: Tensor[(5, 7), float32], %b: Tensor[(5, 7), float32]) {
  %0 = add(%a, %b);
  %1 = on_device(%0, virtual_device=meta[VirtualDevice][0]);
  %2 = multiply(%1, 2f);
  %3 = on_device(%2, virtual_device=meta[VirtualDevice][1]);
  %4 = exp(%a);
  subtract(%3, %4)
})",
                        model.devices);
        Plan plan = planDevices(model.graph, model.devices, PlanOptions{});
        auto program = lowerToBytecode(model.graph, model.devices, plan);
        QVERIFY(program.ok());
        const std::string text = printBytecode(program.value(), model.graph, model.devices);
        QVERIFY2(text.find("alloc_storage s0") != std::string::npos, text.c_str());
        QVERIFY2(text.find("device_copy %0@gpu <- %0 cpu -> gpu (140 B)") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("invoke add (%0) <- (%a@cpu, %b) on cpu") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("load_const") != std::string::npos, text.c_str());
        QVERIFY2(text.find("free ") != std::string::npos, text.c_str());
        QVERIFY2(text.find("ret (") != std::string::npos, text.c_str());
        // Every instruction that touches memory names a device; frees follow last uses.
        const Program& p = program.value();
        std::vector<bool> freed(p.registers.size(), false);
        for (std::size_t k = 0; k < p.code.size(); ++k) {
            const Instruction& i = p.code[k];
            if (i.op != Opcode::Ret)
                QVERIFY(i.device.valid());
            for (std::int32_t r : i.args)
                QVERIFY2(!freed[static_cast<std::size_t>(r)], "a register is read after its free");
            if (i.op == Opcode::DeviceCopy)
                QVERIFY(!freed[static_cast<std::size_t>(i.src)]);
            if (i.op == Opcode::Free)
                freed[static_cast<std::size_t>(i.dst)] = true;
        }
        // A plan that leaves an input on another device without a copy is refused.
        Plan broken = plan;
        broken.copies.clear();
        auto refused = lowerToBytecode(model.graph, model.devices, broken);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("has no copy") != std::string::npos,
                 refused.error().message.c_str());
    }

    void deviceMapping() {
        DeviceSet set = DeviceSet::parse("host:cpu,gpu:cuda,v:vcpu,w:vcpu").take();
        DeviceRegistry registry;
        std::vector<std::string> warnings;
        auto mapping = mapDevices(set, {}, registry, &warnings);
        QVERIFY(mapping.ok());
        QCOMPARE(mapping.value()[0]->name(), std::string("cpu"));
        QCOMPARE(mapping.value()[1]->kind(), DeviceKind::VCpu); // no CUDA here
        QCOMPARE(warnings.size(), std::size_t{1});
        QVERIFY(warnings[0].find("no CUDA device") != std::string::npos);
        QVERIFY(mapping.value()[2] != mapping.value()[3]); // a fresh vcpu each
        auto explicitMap =
            mapDevices(set, {{"gpu", "vcpu7:threads=2"}, {"v", "cpu"}}, registry, &warnings);
        QVERIFY(explicitMap.ok());
        QCOMPARE(explicitMap.value()[1]->name(), std::string("vcpu7"));
        QVERIFY(explicitMap.value()[1]->description().find("2 worker threads") !=
                std::string::npos);
        QCOMPARE(explicitMap.value()[2]->name(), std::string("cpu"));
        auto unknown = mapDevices(set, {{"tpu", "cpu"}}, registry, &warnings);
        QVERIFY(!unknown.ok());
        QVERIFY(unknown.error().message.find("unknown virtual device") != std::string::npos);
        auto badPhysical = mapDevices(set, {{"gpu", "vcpuX"}}, registry, &warnings);
        QVERIFY(!badPhysical.ok());
        auto cuda = mapDevices(set, {{"gpu", "cuda:0"}}, registry, &warnings);
        QVERIFY(!cuda.ok());
        // Core alone has no CUDA backend (the programs register it): it says so.
        QVERIFY2(cuda.error().message.find("no cuda device: this build of placer has no cuda "
                                           "backend") != std::string::npos,
                 cuda.error().message.c_str());
        auto threads = registry.get("vcpu3:threads=0");
        QVERIFY(!threads.ok());
        // `placer devices` lists the kinds and says why CUDA is absent.
        const auto list = registry.list();
        QVERIFY(std::any_of(list.begin(), list.end(), [](const PhysicalDeviceInfo& info) {
            return info.kind == DeviceKind::Cuda && !info.available && !info.description.empty();
        }));
    }

    void workQueueHandsOverEverything() {
        // Hand-overs spin before they sleep: whether the worker is spinning, asleep or busy
        // when a task arrives, and whether drain() returns from its spin or from its wait,
        // every task runs once, in order, and drain() sees what it wrote.
        WorkQueue queue;
        std::vector<int> seen;
        int next = 0;
        std::mt19937 random(7);
        for (int round = 0; round < 200; ++round) {
            const int tasks = static_cast<int>(random() % 5);
            for (int k = 0; k < tasks; ++k) {
                const int value = next++;
                const bool slow = random() % 4 == 0; // longer than the spin
                queue.enqueue([&seen, value, slow] {
                    if (slow)
                        std::this_thread::sleep_for(std::chrono::microseconds(120));
                    seen.push_back(value);
                });
            }
            if (random() % 8 == 0) // long enough for the worker to fall asleep
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            if (random() % 2 == 0) {
                queue.drain();
                QCOMPARE(static_cast<int>(seen.size()), next);
            }
        }
        queue.drain();
        QCOMPARE(static_cast<int>(seen.size()), next);
        for (int k = 0; k < next; ++k)
            QCOMPARE(seen[static_cast<std::size_t>(k)], k);
    }

    void threadsOptionRunsKernelsWithMoreThreads() {
        LoadedModel loaded = loadModel(kModels + "tiny_resnet.onnx", "a:vcpu");
        auto prepared = prepare(std::move(loaded), PlanOptions{}, {{"a", "vcpu1:threads=2"}});
        auto inputs = randomInputs(*prepared->executor, prepared->model.graph);
        auto result = prepared->executor->run(inputs, RunOptions{0, 1});
        QVERIFY(result.ok());
        const auto expected = reference(prepared->model.graph, inputs);
        const ReferenceCheck check = compareOutputs(result.value().outputs, expected, 1e-5, 1e-4);
        QVERIFY2(check.ok, check.mismatch.c_str());
    }

    // Every storage a plan needs is checked before anything is allocated: a plan too large for
    // its device is refused with the storage, its size and the device named, the device holds
    // nothing afterwards, and it runs the next plan that fits.
    void tooLargePlansAreRefusedBeforeAllocating_data() {
        QTest::addColumn<QString>("parameters");
        QTest::addColumn<QString>("physical");
        QTest::addColumn<QString>("expected");
        QTest::newRow("larger-than-host-memory")
            << "%x: Tensor[(100000000000, 100000), float32]"
            << "vcpu1"
            << "storage 0 (holding %x) of 36379.8 TiB does not fit on vcpu1";
        // Each storage fits, but with the host copies of input and output they do not.
        QTest::newRow("host-copies-past-host-memory") << "%x: Tensor[(THIRD_OF_HOST), float32]"
                                                      << "vcpu1"
                                                      << "of host memory (vcpu1 ";
        QTest::newRow("larger-than-vcpu-arena") << "%x: Tensor[(1024, 1024, 64), float32]"
                                                << "vcpu1:mem=64MiB"
                                                << "of 256.0 MiB does not fit on vcpu1";
        QTest::newRow("total-larger-than-vcpu-arena")
            << "%x: Tensor[(1024, 1024, 10), float32]"
            << "vcpu1:mem=64MiB"
            << "the plan needs 80.0 MiB on vcpu1 (virtual device v) in 2 storages";
        QTest::newRow("larger-than-gpu-memory")
            << "%x: Tensor[(1024, 1024, 16), float32]"
            << "lane"
            << "of 64.0 MiB does not fit on lane (virtual device v), which can allocate "
               "16.0 MiB";
    }
    void tooLargePlansAreRefusedBeforeAllocating() {
        QFETCH(QString, parameters);
        QFETCH(QString, physical);
        QFETCH(QString, expected);
        const DeviceSet set = test::devices("v:vcpu");
        parameters.replace("THIRD_OF_HOST", QString::number(hostAvailableMemory() / 3 / 4));
        const Graph graph =
            test::relay("def @main(" + parameters.toStdString() + ") {\n  nn.relu(%x)\n}\n", set);
        const Plan plan = planDevices(graph, set, PlanOptions{});
        auto program = lowerToBytecode(graph, set, plan);
        QVERIFY(program.ok());
        DeviceRegistry registry;
        test::LaneDevice lane("lane");
        lane.memory = 16 << 20;
        Device* device = &lane;
        if (physical != "lane") {
            auto got = registry.get(physical.toStdString());
            QVERIFY2(got.ok(), got.ok() ? "" : got.error().message.c_str());
            device = got.value();
        }
        auto executor = Executor::load(graph, set, program.take(), {device}, 0);
        QVERIFY(!executor.ok());
        QVERIFY2(executor.error().message.find(expected.toStdString()) != std::string::npos,
                 executor.error().message.c_str());
        QCOMPARE(device->bytesInUse(), std::int64_t{0});

        // The same device then runs a plan that fits.
        const Graph small =
            test::relay("def @main(%x: Tensor[(4, 4), float32]) {\n  nn.relu(%x)\n}\n", set);
        const Plan smallPlan = planDevices(small, set, PlanOptions{});
        auto smallProgram = lowerToBytecode(small, set, smallPlan);
        QVERIFY(smallProgram.ok());
        auto fits = Executor::load(small, set, smallProgram.take(), {device}, 0);
        QVERIFY2(fits.ok(), fits.ok() ? "" : fits.error().message.c_str());
        auto run = fits.value()->run({randomTensor({{4, 4}, DType::Float32}, 1)}, RunOptions{0, 1});
        QVERIFY(run.ok());
    }

    // The check counts what kernels take besides the storages (Device::kernelMemoryBytes): Det
    // of 6,000 16 x 16 matrices keeps each matrix in double in scratch, 11.7 MiB beside 5.9 MiB
    // of storages, so a device with 16 MiB refuses it before allocating, naming the kernels' part;
    // with 32 MiB it runs, and the scratch is gone with the executor.
    void kernelMemoryCountsInTheCheck() {
        const DeviceSet set = test::devices("v:vcpu");
        Graph graph;
        Node x;
        x.name = "x";
        x.op = &OpRegistry::global().parameter();
        x.outputs = {{{6000, 16, 16}, DType::Float32}};
        const NodeId input = graph.addNode(std::move(x));
        Node det;
        det.name = "det";
        det.op = OpRegistry::global().find("Det");
        det.inputs = {ValueRef{input, 0}};
        det.outputs = {{{6000}, DType::Float32}};
        graph.addOutput(GraphOutput{{graph.addNode(std::move(det)), 0}, {}, {}});
        const Plan plan = planDevices(graph, set, PlanOptions{});
        auto program = lowerToBytecode(graph, set, plan);
        QVERIFY(program.ok());
        test::LaneDevice lane("lane");
        lane.memory = 16 << 20;
        Program copy = program.value();
        auto refused = Executor::load(graph, set, std::move(copy), {&lane}, 13);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find(
                     "the plan needs 17.6 MiB on lane (virtual device v) in 2 storages and "
                     "11.7 MiB for its kernels") != std::string::npos,
                 refused.error().message.c_str());
        QCOMPARE(lane.bytesInUse(), std::int64_t{0});
        lane.memory = 32 << 20;
        auto fits = Executor::load(graph, set, program.take(), {&lane}, 13);
        QVERIFY2(fits.ok(), fits.ok() ? "" : fits.error().message.c_str());
        QVERIFY(lane.bytesInUse() > 0);
        fits.value().reset();
        QCOMPARE(lane.bytesInUse(), std::int64_t{0});
    }

    void vcpuArenaOption() {
        DeviceRegistry registry;
        auto bounded = registry.get("vcpu3:threads=2:mem=1MiB");
        QVERIFY2(bounded.ok(), bounded.ok() ? "" : bounded.error().message.c_str());
        QVERIFY(bounded.value()->description().find("arena of 1.00 MiB") != std::string::npos);
        QVERIFY(bounded.value()->allocatableBytes() <= (1 << 20));
        const auto refused = bounded.value()->allocate(2 << 20);
        QVERIFY(!refused.ok());
        const std::string& error = refused.error().message;
        QVERIFY2(error.find("arena of 1.00 MiB has no room for 2.00 MiB") != std::string::npos,
                 error.c_str());
        for (const char* bad : {"vcpu4:mem=", "vcpu4:mem=lots", "cpu:mem=1GiB", "vcpu4:fast=1"}) {
            auto refused = registry.get(bad);
            QVERIFY2(!refused.ok(), bad);
        }
    }

    /// A vcpu's blocks of 4 MiB and up lie on 2 MiB boundaries and are offered transparent huge
    /// pages: where the kernel gives them (its setting not "never"), a touched block shows them
    /// in /proc/self/smaps; smaller blocks stay 64-byte aligned.
    void largeBlocksLieOnHugePages() {
        DeviceRegistry registry;
        Device* vcpu = registry.freshVCpu();
        const std::int64_t mib = 1 << 20;
        auto small = vcpu->allocate(mib + 8);
        QVERIFY(small.ok());
        QCOMPARE(reinterpret_cast<std::uintptr_t>(small.value()) % 64, std::uintptr_t{0});
        for (const std::int64_t bytes : {4 * mib, 9 * mib + 12345, 64 * mib}) {
            auto large = vcpu->allocate(bytes);
            QVERIFY(large.ok());
            const auto address = reinterpret_cast<std::uintptr_t>(large.value());
            QCOMPARE(address % (2 * mib), std::uintptr_t{0});
            std::memset(large.value(), 1, static_cast<std::size_t>(bytes));
            std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
            std::string modes;
            std::getline(setting, modes);
            if (bytes == 64 * mib && !modes.empty() && modes.find("[never]") == std::string::npos &&
                !kSanitizerAllocator) {
                // The mapping holding the block: its AnonHugePages line counts huge pages.
                std::ifstream smaps("/proc/self/smaps");
                std::string line;
                bool inside = false;
                std::int64_t hugeKiB = -1;
                while (std::getline(smaps, line)) {
                    std::uintptr_t from = 0, to = 0;
                    // A mapping's first line: "from-to perms ...", in hex.
                    if (std::sscanf(line.c_str(), "%lx-%lx ", &from, &to) == 2)
                        inside = from <= address && address < to;
                    else if (inside && line.rfind("AnonHugePages:", 0) == 0) {
                        hugeKiB = std::atoll(line.c_str() + 14);
                        break;
                    }
                }
                QVERIFY2(
                    hugeKiB >= 32 * 1024,
                    qPrintable(QString("%1 KiB of the 64 MiB block on huge pages").arg(hugeKiB)));
            }
            vcpu->free(large.value());
        }
        vcpu->free(small.value());
    }

    /// A vcpu keeps freed large blocks for the next request of their size class (a Loop's
    /// tensors come and go every iteration): the block comes back, what is in use and at peak is
    /// what was asked for, small blocks and what exceeds the kept bytes go back to the system,
    /// and a bounded arena still refuses what does not fit.
    void freedLargeBlocksAreKeptForTheirClass() {
        DeviceRegistry registry;
        Device* vcpu = registry.freshVCpu();
        const std::int64_t mib = 1 << 20;
        auto first = vcpu->allocate(3 * mib - 100 * 1024);
        QVERIFY(first.ok());
        std::memset(first.value(), 1, static_cast<std::size_t>(3 * mib - 100 * 1024));
        QCOMPARE(vcpu->bytesInUse(), 3 * mib - 100 * 1024);
        vcpu->free(first.value());
        QCOMPARE(vcpu->bytesInUse(), std::int64_t{0});
        // 3 MiB is of the same class (2.5 MiB to 3 MiB): the same block.
        auto second = vcpu->allocate(3 * mib);
        QVERIFY(second.ok());
        QCOMPARE(second.value(), first.value());
        QCOMPARE(vcpu->bytesInUse(), 3 * mib);
        QCOMPARE(vcpu->peakBytes(), 3 * mib);
        // Another class is another block.
        auto larger = vcpu->allocate(5 * mib);
        QVERIFY(larger.ok());
        QVERIFY(larger.value() != second.value());
        vcpu->free(second.value());
        vcpu->free(larger.value());
        // Many freed blocks: only the latest 128 MiB are kept, and each comes back once.
        std::vector<std::byte*> blocks;
        for (int k = 0; k < 80; ++k)
            blocks.push_back(vcpu->allocate(3 * mib).value());
        for (std::byte* block : blocks)
            vcpu->free(block);
        std::set<std::byte*> reused;
        for (int k = 0; k < 80; ++k) {
            std::byte* block = vcpu->allocate(3 * mib).value();
            QVERIFY(reused.insert(block).second);
            blocks[static_cast<std::size_t>(k)] = block;
        }
        for (std::byte* block : blocks)
            vcpu->free(block);
        QCOMPARE(vcpu->bytesInUse(), std::int64_t{0});
        // A bounded arena counts what is asked for, kept blocks or not.
        auto bounded = registry.get("vcpu5:mem=4MiB");
        QVERIFY(bounded.ok());
        auto fits = bounded.value()->allocate(3 * mib);
        QVERIFY(fits.ok());
        bounded.value()->free(fits.value());
        QVERIFY(bounded.value()->allocate(3 * mib + mib / 2).ok());
        QVERIFY(!bounded.value()->allocate(mib).ok());
    }

    // Seeded random inputs are random in every element type, half precision included.
    void randomInputsInEveryType_data() {
        QTest::addColumn<int>("dtype");
        for (int d = 0; d < kDTypeCount; ++d)
            QTest::newRow(std::string(dtypeName(static_cast<DType>(d))).c_str()) << d;
    }
    void randomInputsInEveryType() {
        QFETCH(int, dtype);
        const TensorType type{{1000}, static_cast<DType>(dtype)};
        const HostTensor a = randomTensor(type, 1), b = randomTensor(type, 1),
                         c = randomTensor(type, 2);
        QVERIFY(a.data == b.data); // seeded
        QVERIFY(a.data != c.data);
        if (type.dtype == DType::String) {
            // Short words of one or two lower-case letters, many of them different.
            std::set<std::string> words;
            for (std::int64_t i = 0; i < type.elementCount(); ++i) {
                StringHandle handle = 0;
                std::memcpy(&handle, a.data.data() + i * 8, 8);
                const std::string word(stringOf(handle));
                QVERIFY2(!word.empty() && word.size() <= 2 &&
                             std::all_of(word.begin(), word.end(),
                                         [](char ch) { return ch >= 'a' && ch <= 'z'; }),
                         word.c_str());
                words.insert(word);
            }
            QVERIFY2(words.size() >= 100, qPrintable(QString::number(words.size())));
            return;
        }
        std::set<double> values;
        for (std::int64_t i = 0; i < type.elementCount(); ++i) {
            const double v = placer::loadAsDouble(a.data.raw(), type.dtype, i);
            QVERIFY2(v >= -1.0 && v <= 4.0, qPrintable(QString::number(v)));
            values.insert(v);
        }
        // Booleans have two values, small integers four, floats nearly one per element.
        const std::size_t least = type.dtype == DType::Bool     ? 2
                                  : isFloatingPoint(type.dtype) ? 500
                                                                : 4;
        QVERIFY2(values.size() >= least, qPrintable(QString::number(values.size())));
    }

    void wrongInputsAreRefused() {
        LoadedModel loaded = loadModel(kModels + "tiny_resnet.onnx", "a:vcpu");
        auto prepared = prepare(std::move(loaded), PlanOptions{});
        auto none = prepared->executor->run({}, RunOptions{0, 1});
        QVERIFY(!none.ok());
        HostTensor wrong = randomTensor({{1, 3, 16, 16}, DType::Float32}, 1);
        auto shape = prepared->executor->run({wrong}, RunOptions{0, 1});
        QVERIFY(!shape.ok());
        QVERIFY2(shape.error().message.find("must be 1x3x32x32 float32") != std::string::npos,
                 shape.error().message.c_str());
    }
};

QTEST_APPLESS_MAIN(TestRuntime)
#include "tst_runtime.moc"
