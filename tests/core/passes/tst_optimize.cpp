// The optimisations after placement (passes/PassManager.h): channels-last and post-op fusion on
// CPU devices. Each test checks what the pass did to the graph and that the rewritten graph
// computes what the user's graph computes.
#include "backends/cpu/ConstantEvaluation.h"
#include "device/DeviceMapping.h"
#include "device/DeviceRegistry.h"
#include "io/ModelLoader.h"
#include "ir/OpRegistry.h"
#include "passes/PassManager.h"
#include "passes/PostOpFusion.h"
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"

#include "OnnxModelBuilder.h"
#include "kernels/RandomTensor.h"

#include <QtTest>

#include <cmath>
#include <cstring>

using namespace placer;
using test::floatsOf;
using test::relativeDifference;

namespace {

const std::string kModels = std::string(PLACER_SOURCE_DIR) + "/resources/models/";

DeviceSet vcpus(int count, DeviceKind kind = DeviceKind::VCpu) {
    DeviceSet set;
    for (int i = 0; i < count; ++i)
        set.add(VirtualDevice{"v" + std::to_string(i + 1), kind});
    set.chooseDefaults();
    set.setDefaultDevice(DeviceId(0));
    return set;
}

struct Ran {
    std::vector<HostTensor> outputs;
    MedianTimes times; ///< per node and copy of the graph that ran
};

/// Runs `graph` as planned, each virtual device on a fresh vcpu, on seeded inputs.
Ran runGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    DeviceRegistry registry;
    std::vector<std::string> warnings;
    auto mapping = mapDevices(devices, {}, registry, &warnings);
    if (!mapping)
        qFatal("mapping: %s", mapping.error().message.c_str());
    auto program = lowerToBytecode(graph, devices, plan);
    if (!program)
        qFatal("lowering: %s", program.error().message.c_str());
    auto executor =
        Executor::load(graph, devices, program.take(), mapping.take(), graph.onnxOpset());
    if (!executor)
        qFatal("load: %s", executor.error().message.c_str());
    std::vector<HostTensor> inputs;
    for (std::size_t i = 0; i < executor.value()->program().inputs.size(); ++i)
        inputs.push_back(
            randomTensor(graph.node(executor.value()->program().inputs[i]).outputs[0], i + 7));
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        qFatal("run: %s", result.error().message.c_str());
    MedianTimes times =
        medianTimes(executor.value()->program(), result.value(), graph.size(), plan.copies.size());
    return {result.take().outputs, std::move(times)};
}

int countOp(const Graph& graph, const std::string& op) {
    int n = 0;
    for (const Node& node : graph.nodes())
        n += node.op->name == op ? 1 : 0;
    return n;
}

int countChannelsLast(const Graph& graph) {
    int n = 0;
    for (const Node& node : graph.nodes())
        n += node.hints.channelsLast ? 1 : 0;
    return n;
}

// ---- small ONNX models built in the test -------------------------------------------------------

/// The test's models: test::ModelBuilder with the blocks these tests use.
struct ModelBuilder : test::ModelBuilder {
    explicit ModelBuilder(const std::vector<std::int64_t>& input)
        : test::ModelBuilder("layout", input) {}

    /// x -> c1 (conv to 8 channels) -> r1 (relu) -> c2 (conv) -> `output` = c2 + r1.
    void residualBlock(const std::string& output) {
        conv("x", "c1", 4, 8);
        node("Relu", {"c1"}, "r1");
        conv("r1", "c2", 8, 8);
        node("Add", {"c2", "r1"}, output);
    }

    Graph load(const std::string& output, const std::vector<std::int64_t>& dims) {
        return test::ModelBuilder::load(output, dims, vcpus(1));
    }
};

struct Optimised {
    Graph graph;
    DeviceSet devices;
    Plan plan;
    OptimizedGraph result;
    MedianTimes times; ///< of the optimised run
};

/// Plans `graph` on `devices`, optimises it with `passes` (by default channels-last alone) on
/// the devices in `enabled`, and checks that the optimised graph computes what the user's graph
/// computes.
/// Weight packing asks the physical devices for their layouts: with `physical`, the passes get
/// fresh devices for `devices` (as runGraph maps them).
Optimised optimiseAndCompare(Graph graph, DeviceSet devices, std::vector<bool> enabled,
                             OptimizeOptions passes = {.channelsLast = true, .fusion = false},
                             bool physical = false) {
    Optimised o;
    o.graph = std::move(graph);
    o.devices = std::move(devices);
    o.plan = planDevices(o.graph, o.devices, PlanOptions{});
    DeviceRegistry registry;
    std::vector<Device*> mapping;
    if (physical) {
        std::vector<std::string> warnings;
        auto mapped = mapDevices(o.devices, {}, registry, &warnings);
        if (!mapped)
            qFatal("mapping: %s", mapped.error().message.c_str());
        mapping = mapped.take();
    }
    auto optimized =
        optimizeGraph(o.graph, o.devices, o.plan, PlanOptions{}, enabled, passes, mapping);
    if (!optimized)
        qFatal("optimising: %s", optimized.error().message.c_str());
    o.result = optimized.take();
    // What the cost model predicts fused is what the pass fuses.
    if (passes.fusion && fusedGroups(o.graph, o.plan.devices, enabled) != o.result.fusedInto)
        qFatal("fusedGroups() finds other groups than the fusion pass");
    Ran ran = runGraph(o.result.graph, o.devices, o.result.plan);
    o.times = std::move(ran.times);
    const double diff =
        relativeDifference(ran.outputs, runGraph(o.graph, o.devices, o.plan).outputs);
    if (!(diff <= 1e-5))
        qFatal("the optimised graph computes something else: relative difference %g", diff);
    return o;
}

/// Whether the optimisation said `note` (or, with `prefix`, something starting so).
bool hasNote(const Optimised& o, const std::string& note, bool prefix = false) {
    return std::any_of(o.result.notes.begin(), o.result.notes.end(), [&](const std::string& n) {
        return prefix ? n.starts_with(note) : n == note;
    });
}

std::string notesOf(const Optimised& o) {
    std::string all;
    for (const std::string& note : o.result.notes)
        all += note + "\n";
    return all;
}

} // namespace

class TestOptimize : public QObject {
    Q_OBJECT
private slots:
    // The comparison every optimisation test relies on fails on a NaN, an infinity, an integer
    // or a boolean that differs, and reads each dtype as itself.
    void outputComparisonCatchesWhatDiffers() {
        auto tensor = [](DType dtype, std::vector<double> values) {
            HostTensor t =
                HostTensor::zeros(TensorType{{static_cast<std::int64_t>(values.size())}, dtype});
            for (std::size_t i = 0; i < values.size(); ++i) {
                if (dtype == DType::Float32)
                    t.as<float>()[i] = static_cast<float>(values[i]);
                else if (dtype == DType::Float64)
                    t.as<double>()[i] = values[i];
                else if (dtype == DType::Int64)
                    t.as<std::int64_t>()[i] = static_cast<std::int64_t>(values[i]);
                else
                    t.as<bool>()[i] = values[i] != 0;
            }
            return std::vector<HostTensor>{t};
        };
        const double nan = std::nan(""), inf = INFINITY;
        QCOMPARE(relativeDifference(tensor(DType::Float32, {1, nan, inf}),
                                    tensor(DType::Float32, {1, nan, inf})),
                 0.0);
        QVERIFY(std::isinf(
            relativeDifference(tensor(DType::Float32, {1, nan}), tensor(DType::Float32, {1, 2}))));
        QVERIFY(std::isinf(
            relativeDifference(tensor(DType::Float32, {1, 2}), tensor(DType::Float32, {1, nan}))));
        QVERIFY(std::isinf(
            relativeDifference(tensor(DType::Float32, {inf}), tensor(DType::Float32, {-inf}))));
        QVERIFY(std::isinf(relativeDifference(tensor(DType::Int64, {1000000, 7}),
                                              tensor(DType::Int64, {1000000, 8}))));
        QVERIFY(std::isinf(
            relativeDifference(tensor(DType::Bool, {1, 0}), tensor(DType::Bool, {1, 1}))));
        // float64 read as float64, not as pairs of floats.
        const double d = relativeDifference(tensor(DType::Float64, {1.0, 2.0}),
                                            tensor(DType::Float64, {1.0, 2.0 + 2e-6}));
        QVERIFY2(d > 5e-7 && d < 2e-6, qPrintable(QString::number(d)));
        QVERIFY(std::isinf(
            relativeDifference(tensor(DType::Float32, {1}), tensor(DType::Float64, {1}))));
    }

    void initTestCase() { installConstantFolding(); }
    void committedModelsComputeTheSame_data();
    void committedModelsComputeTheSame();
    void aChainChangesLayoutOnlyAtItsEnds();
    void devicesWithoutItAreLeftAlone();
    void layoutNeverCrossesADevice();
    void lowerRankOperandsKeepTheModelsLayout();
    void broadcastConstantsArePermutedOnce();
    void concatenationFollowsOnTheChannelAxis();
    void timesGoBackToTheUsersNodesAndCopies();
    void convolutionsTakeTheirElementwiseOpsAsPostOps();
    void fusionStopsAtPinsDevicesAndSharedValues();
    void aFusedGroupsTimeIsOnItsHead();
    void aWrittenOutLayerNormBecomesOneKernel();
    void aWrittenOutGeluBecomesOneKernel();
    void matrixProductsTakeABiasAndTheirChain();
    void matrixProductFusionStopsWhereItMust();
    void batchNormalisationTakesTheReluAfterIt();
    void matrixProductVariantsComputeTheSame_data();
    void matrixProductVariantsComputeTheSame();
    void convolutionsFoldTheBatchNormalisationAfterThem();
    void channelShufflesAndSlicesStayChannelsLast();
    void attentionTransposesBecomeStridedViews();
    void forgedInternalAttributesAreRefused_data();
    void forgedInternalAttributesAreRefused();
    void attributesNamedLikeHintsAreInert();
    void layoutChangesCancelTheModelsTransposes();
    void transposesOfTransposesCompose();
    void packedWeightsAreWrittenAtLoad_data();
    void packedWeightsAreWrittenAtLoad();
};

void TestOptimize::committedModelsComputeTheSame_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<int>("maxLayoutChanges");
    QTest::newRow("tiny_resnet") << "tiny_resnet.onnx" << 2;
    QTest::newRow("tiny_mobilenet") << "tiny_mobilenet.onnx" << 2;
    QTest::newRow("tiny_inception") << "tiny_inception.onnx" << 2;
    QTest::newRow("tiny_encoder (no convolutions)") << "tiny_encoder.onnx" << 0;
}

void TestOptimize::committedModelsComputeTheSame() {
    QFETCH(QString, model);
    QFETCH(int, maxLayoutChanges);
    auto loaded = loadModelFile(kModels + model.toStdString(), GraphFormat::Onnx, vcpus(1));
    QVERIFY2(loaded, loaded ? "" : loaded.error().toString().c_str());
    const int convolutions = countOp(loaded.value().graph, "Conv");
    const Optimised o = optimiseAndCompare(loaded.value().graph, vcpus(1), {true});
    // Every convolution runs channels-last; only the chain's ends change layout.
    int converted = 0;
    for (const Node& node : o.result.graph.nodes())
        converted += node.op->name == "Conv" && node.hints.channelsLast ? 1 : 0;
    QCOMPARE(converted, convolutions);
    QVERIFY2(o.result.insertedNodes <= maxLayoutChanges,
             qPrintable(QString::number(o.result.insertedNodes)));
    QCOMPARE(static_cast<int>(o.result.graph.size()),
             static_cast<int>(o.graph.size()) + o.result.insertedNodes);
    if (convolutions > 0) {
        QCOMPARE(o.result.notes.size(), std::size_t{1});
        QVERIFY2(o.result.notes[0].starts_with(
                     "channels-last (NHWC) on v1: " + std::to_string(convolutions) + " of " +
                     std::to_string(convolutions) + " convolutions"),
                 o.result.notes[0].c_str());
    } else {
        QVERIFY(o.result.notes.empty());
    }
    // Every node the user sees is still there under its own name, on its own device.
    for (std::uint32_t i = 0; i < o.result.graph.size(); ++i) {
        const NodeId origin = o.result.origin[i];
        if (!origin.valid())
            continue;
        QCOMPARE(o.result.graph.nodes()[i].name, o.graph.node(origin).name);
    }
    // With fusion and weight packing as well (what placer run does), the models still compute
    // the same, every convolution is still there, and each fused node is named after what it
    // computes.
    const Optimised both = optimiseAndCompare(loaded.value().graph, vcpus(1), {true}, {}, true);
    QCOMPARE(countOp(both.result.graph, "Conv"), convolutions);
    for (std::uint32_t i = 0; i < both.result.graph.size(); ++i) {
        const Node& node = both.result.graph.nodes()[i];
        if (node.hints.postOps.empty())
            continue;
        QVERIFY2(node.name.starts_with(both.graph.node(both.result.origin[i]).name + "+"),
                 node.name.c_str());
    }
}

void TestOptimize::aChainChangesLayoutOnlyAtItsEnds() {
    // conv -> relu -> conv -> add(residual) -> maxpool -> conv -> sigmoid -> global pool -> flatten
    ModelBuilder b({1, 4, 8, 8});
    b.residualBlock("sum");
    auto* pool = b.node("MaxPool", {"sum"}, "pool");
    test::setInts(pool, "kernel_shape", {2, 2});
    test::setInts(pool, "strides", {2, 2});
    b.conv("pool", "c3", 8, 6);
    b.node("Sigmoid", {"c3"}, "s");
    b.node("GlobalAveragePool", {"s"}, "gap");
    b.node("Flatten", {"gap"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 6}), vcpus(1), {true});
    QCOMPARE(o.result.insertedNodes, 2);
    QVERIFY(o.result.graph.find("x/to_nhwc"));
    QVERIFY(o.result.graph.find("gap/to_nchw"));
    QCOMPARE(countChannelsLast(o.result.graph), 5); // three convolutions and two pools
    for (const char* name : {"r1", "sum", "s"}) {
        const Node& node = o.result.graph.node(*o.result.graph.find(name));
        QCOMPARE(node.outputs[0].shape[3], name == std::string("s") ? 6 : 8); // channels last
    }
    // Flatten reads the model's layout.
    const Node& flatten = o.result.graph.node(*o.result.graph.find("y"));
    QCOMPARE(o.result.graph.node(flatten.inputs[0].node).name, std::string("gap/to_nchw"));
}

void TestOptimize::devicesWithoutItAreLeftAlone() {
    auto loaded = loadModelFile(kModels + "tiny_resnet.onnx", GraphFormat::Onnx, vcpus(1));
    QVERIFY(loaded);
    const Optimised o = optimiseAndCompare(loaded.value().graph, vcpus(1), {false});
    QCOMPARE(o.result.graph.size(), o.graph.size());
    QCOMPARE(o.result.insertedNodes, 0);
    QCOMPARE(countChannelsLast(o.result.graph), 0);
    QVERIFY(o.result.notes.empty());
}

void TestOptimize::layoutNeverCrossesADevice() {
    // c1 and the relu on v1, the rest on v2 (both CPUs): r1 is copied, in the model's layout.
    ModelBuilder b({1, 4, 8, 8});
    b.residualBlock("y");
    Graph graph = b.load("y", {1, 8, 8, 8});
    DeviceSet devices = vcpus(2);
    for (const char* name : {"c1", "r1"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    for (const char* name : {"c2", "y"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(1), "test"};
    const Optimised o = optimiseAndCompare(std::move(graph), devices, {true, true});
    QVERIFY(!o.result.plan.copies.empty());
    for (const CopyPlan& copy : o.result.plan.copies) {
        const Node& producer = o.result.graph.node(copy.value.node);
        QVERIFY2(producer.name == "r1/to_nchw", producer.name.c_str());
        QCOMPARE(o.result.plan.devices[copy.value.node.index], DeviceId(0));
    }
    // On v2, r1 is made channels-last again, once, for c2 and the residual add.
    const Node& c2 = o.result.graph.node(*o.result.graph.find("c2"));
    const Node& add = o.result.graph.node(*o.result.graph.find("y"));
    QVERIFY(c2.hints.channelsLast);
    QCOMPARE(o.result.graph.node(c2.inputs[0].node).name, std::string("r1/to_nhwc"));
    QCOMPARE(add.inputs[1], c2.inputs[0]);
    QCOMPARE(o.result.plan.devices[c2.inputs[0].node.index], DeviceId(1));
    QCOMPARE(o.result.insertedNodes, 4); // x/to_nhwc, r1/to_nchw, r1/to_nhwc, y/to_nchw
}

void TestOptimize::lowerRankOperandsKeepTheModelsLayout() {
    // A [W]-shaped operand broadcasts along W: in NHWC it would meet C, so the add stays NCHW.
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 4);
    b.weight("row", {8});
    b.node("Add", {"c1", "row"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 4, 8, 8}), vcpus(1), {true});
    const Node& add = o.result.graph.node(*o.result.graph.find("y"));
    QCOMPARE(add.outputs[0].shape, (std::vector<std::int64_t>{1, 4, 8, 8}));
    QCOMPARE(o.result.graph.node(add.inputs[0].node).name, std::string("c1/to_nchw"));
}

void TestOptimize::broadcastConstantsArePermutedOnce() {
    // A per-channel [1, C, 1, 1] scale read by two nodes: one permuted constant, no transpose.
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 6);
    b.weight("scale", {1, 6, 1, 1});
    b.node("Mul", {"c1", "scale"}, "m");
    b.node("Add", {"m", "scale"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 6, 8, 8}), vcpus(1), {true});
    const auto permuted = o.result.graph.find("scale/nhwc");
    QVERIFY(permuted);
    QCOMPARE(o.result.graph.node(*permuted).outputs[0].shape,
             (std::vector<std::int64_t>{1, 1, 1, 6}));
    QCOMPARE(o.result.insertedNodes, 2); // x/to_nhwc and y/to_nchw
    for (const char* name : {"m", "y"}) {
        const Node& node = o.result.graph.node(*o.result.graph.find(name));
        QCOMPARE(node.inputs[1].node, *permuted);
    }
}

void TestOptimize::concatenationFollowsOnTheChannelAxis() {
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "a", 4, 3);
    b.conv("x", "c", 4, 5);
    test::setInt(b.node("Concat", {"a", "c"}, "cat"), "axis", 1);
    b.conv("cat", "y", 8, 2);
    const Optimised o = optimiseAndCompare(b.load("y", {1, 2, 8, 8}), vcpus(1), {true});
    const Node& node = o.result.graph.node(*o.result.graph.find("cat"));
    QCOMPARE(node.attrs.getInt("axis", 0).value_or(0), 3);
    QCOMPARE(node.outputs[0].shape, (std::vector<std::int64_t>{1, 8, 8, 8}));
    QCOMPARE(o.result.insertedNodes, 2); // one x/to_nhwc for both branches, and y/to_nchw
}

void TestOptimize::timesGoBackToTheUsersNodesAndCopies() {
    // As layoutNeverCrossesADevice: r1 goes to v2 through r1/to_nchw.
    ModelBuilder b({1, 4, 8, 8});
    b.residualBlock("y");
    Graph graph = b.load("y", {1, 8, 8, 8});
    for (const char* name : {"c1", "r1"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    for (const char* name : {"c2", "y"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(1), "test"};
    const Optimised o = optimiseAndCompare(std::move(graph), vcpus(2), {true, true});
    const MedianTimes user = userMedianTimes(o.times, o.result.graph, o.result.plan,
                                             o.result.origin, o.graph.size(), o.plan);
    QCOMPARE(user.nodeMillis.size(), o.graph.size());
    // Every user node that computes has a time, and every millisecond that ran is on one.
    double ranTotal = 0, userTotal = 0;
    for (double t : o.times.nodeMillis)
        ranTotal += std::max(t, 0.0);
    for (std::uint32_t i = 0; i < o.graph.size(); ++i) {
        if (o.graph.nodes()[i].role() == OpRole::Compute)
            QVERIFY2(user.nodeMillis[i] >= 0, o.graph.nodes()[i].name.c_str());
        userTotal += std::max(user.nodeMillis[i], 0.0);
    }
    QVERIFY(std::abs(ranTotal - userTotal) <= 1e-9 * std::max(1.0, ranTotal));
    // r1's layout changes (back to NCHW on v1 for the copy, to NHWC again on v2) count on r1.
    const NodeId r1 = *o.graph.find("r1");
    double r1Total = 0;
    for (const char* name : {"r1", "r1/to_nchw", "r1/to_nhwc"}) {
        const double t = o.times.nodeMillis[o.result.graph.find(name)->index];
        QVERIFY2(t >= 0, name);
        r1Total += t;
    }
    QCOMPARE(user.nodeMillis[r1.index], r1Total);
    // The user's copy of r1 to v2 gets the time of the copy that carried r1/to_nchw.
    QCOMPARE(o.plan.copies.size(), std::size_t{1});
    QCOMPARE(o.plan.copies[0].value.node, r1);
    QCOMPARE(user.copyMillis[0], o.times.copyMillis[0]);
    QVERIFY(user.copyMillis[0] >= 0);
}

void TestOptimize::convolutionsTakeTheirElementwiseOpsAsPostOps() {
    // c1 -> r1 (relu) -> c2 -> a2 (+ r1) -> r2 (relu) -> c3 -> SiLU (s3, m3) -> c4 -> clip -> y
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 8);
    b.node("Relu", {"c1"}, "r1");
    b.conv("r1", "c2", 8, 8);
    b.node("Add", {"r1", "c2"}, "a2");
    b.node("Relu", {"a2"}, "r2");
    b.conv("r2", "c3", 8, 8);
    b.node("Sigmoid", {"c3"}, "s3");
    b.node("Mul", {"c3", "s3"}, "m3");
    b.conv("m3", "c4", 8, 8);
    test::addInitializer(b.model, "lo", {})->add_float_data(-0.25f);
    test::addInitializer(b.model, "hi", {})->add_float_data(0.5f);
    b.node("Clip", {"c4", "lo", "hi"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 8, 8, 8}), vcpus(1), {true}, {});
    auto fused = [&](const char* name) -> const Node& {
        const auto id = o.result.graph.find(name);
        if (!id)
            qFatal("no node %s", name);
        return o.result.graph.node(*id);
    };
    QCOMPARE(describePostOps(fused("c1+r1").hints.postOps), std::string("relu"));
    const Node& c2 = fused("c2+a2+r2");
    QCOMPARE(describePostOps(c2.hints.postOps), std::string("add;relu"));
    // The residual operand is an extra input after the convolution's own three.
    QCOMPARE(c2.inputs.size(), std::size_t{4});
    QCOMPARE(c2.inputs[3], (ValueRef{*o.result.graph.find("c1+r1"), 0}));
    QCOMPARE(describePostOps(fused("c3+s3+m3").hints.postOps), std::string("swish"));
    QVERIFY2(describePostOps(fused("c4+y").hints.postOps).starts_with("clip("),
             describePostOps(fused("c4+y").hints.postOps).c_str());
    QCOMPARE(countOp(o.result.graph, "Relu") + countOp(o.result.graph, "Add") +
                 countOp(o.result.graph, "Sigmoid") + countOp(o.result.graph, "Mul") +
                 countOp(o.result.graph, "Clip"),
             0);
    // The graph's output is the last fused node's (in NCHW again), and the absorbed nodes point
    // at their heads.
    const Node& last = o.result.graph.node(o.result.graph.outputs()[0].value.node);
    QCOMPARE(last.name, std::string("y/to_nchw"));
    QCOMPARE(o.result.graph.node(last.inputs[0].node).name, std::string("c4+y"));
    for (const auto& [member, head] : std::vector<std::pair<const char*, const char*>>{
             {"r1", "c1"}, {"a2", "c2"}, {"r2", "c2"}, {"s3", "c3"}, {"m3", "c3"}, {"y", "c4"}})
        QCOMPARE(o.result.fusedInto[o.graph.find(member)->index], *o.graph.find(head));
    QVERIFY(!o.result.fusedInto[o.graph.find("c1")->index].valid());
    QVERIFY2(hasNote(o, "post-op fusion on v1: 4 convolutions took 6 element-wise ops"),
             notesOf(o).c_str());
}

void TestOptimize::fusionStopsAtPinsDevicesAndSharedValues() {
    // c1's value is read twice (r1 and the residual Add): no fusion of c1. r1 is pinned by the
    // user: c2 does not take it either way. c3 is on v1 and r3 on v2. c4 is a graph output.
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 8);
    b.node("Relu", {"c1"}, "r1");
    b.node("Add", {"c1", "r1"}, "a1");
    b.conv("a1", "c2", 8, 8);
    b.node("Relu", {"c2"}, "r2");
    b.conv("r2", "c3", 8, 8);
    b.node("Relu", {"c3"}, "r3");
    b.conv("r3", "c4", 8, 8);
    b.node("Relu", {"c4"}, "y");
    test::addValue(b.model.mutable_graph()->mutable_output(), "c4", {1, 8, 8, 8});
    Graph graph = b.load("y", {1, 8, 8, 8});
    graph.node(*graph.find("r2")).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    for (const char* name : {"c1", "r1", "a1", "c2", "c3"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    for (const char* name : {"r3", "c4", "y"})
        graph.node(*graph.find(name)).pin = Pin{PinKind::Plain, DeviceId(1), "test"};
    const Optimised o = optimiseAndCompare(std::move(graph), vcpus(2), {true, true}, {});
    for (const Node& node : o.result.graph.nodes())
        QVERIFY2(node.hints.postOps.empty(), node.name.c_str());
    for (const NodeId head : o.result.fusedInto)
        QVERIFY(!head.valid());
}

void TestOptimize::aFusedGroupsTimeIsOnItsHead() {
    ModelBuilder b({1, 4, 8, 8});
    b.residualBlock("y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 8, 8, 8}), vcpus(1), {true}, {});
    const MedianTimes user = userMedianTimes(o.times, o.result.graph, o.result.plan,
                                             o.result.origin, o.graph.size(), o.plan);
    // c1+r1 and c2+y ran; their times are c1's and c2's (with y's layout change back to NCHW,
    // which changes the value c2+y computes), r1 and y have none of their own.
    const auto ran = [&](const char* name) {
        return o.times.nodeMillis[o.result.graph.find(name)->index];
    };
    QVERIFY(ran("c1+r1") >= 0 && ran("c2+y") >= 0 && ran("y/to_nchw") >= 0);
    QCOMPARE(user.nodeMillis[o.graph.find("c1")->index], ran("c1+r1"));
    QCOMPARE(user.nodeMillis[o.graph.find("c2")->index], ran("c2+y") + ran("y/to_nchw"));
    QVERIFY(user.nodeMillis[o.graph.find("r1")->index] < 0);
    QVERIFY(user.nodeMillis[o.graph.find("y")->index] < 0);
    QCOMPARE(o.result.fusedInto[o.graph.find("y")->index], *o.graph.find("c2"));
}

QTEST_APPLESS_MAIN(TestOptimize)
void TestOptimize::aWrittenOutLayerNormBecomesOneKernel() {
    // Two layer normalisations as exporters write them (ReduceMean, Sub, Pow, ReduceMean, Add,
    // Sqrt, Div, Mul, Add): over the last axis, which becomes one LayerNormalization; and over
    // axis 1, not the last, which stays as it is. The second reads the first's output.
    ModelBuilder b({2, 5, 16});
    test::addInitializer(b.model, "two", {})->add_float_data(2.0f);
    test::addInitializer(b.model, "eps", {})->add_float_data(1e-5f);
    auto norm = [&](const std::string& in, const std::string& p, std::int64_t axis,
                    std::int64_t width) {
        test::setInts(b.node("ReduceMean", {in}, p + "mean"), "axes", {axis});
        b.node("Sub", {in, p + "mean"}, p + "d");
        b.node("Pow", {p + "d", "two"}, p + "sq");
        test::setInts(b.node("ReduceMean", {p + "sq"}, p + "var"), "axes", {axis});
        b.node("Add", {p + "var", "eps"}, p + "ve");
        b.node("Sqrt", {p + "ve"}, p + "sd");
        b.node("Div", {p + "d", p + "sd"}, p + "n");
        b.weight(p + "gamma", {width});
        b.weight(p + "beta", {width});
        b.node("Mul", {p + "n", p + "gamma"}, p + "g");
        b.node("Add", {p + "g", p + "beta"}, p + "y");
    };
    norm("x", "a_", -1, 16);
    norm("a_y", "b_", 1, 16);
    const Optimised o = optimiseAndCompare(b.load("b_y", {2, 5, 16}), vcpus(1), {true}, {});
    QCOMPARE(countOp(o.result.graph, "LayerNormalization"), 1);
    QCOMPARE(countOp(o.result.graph, "ReduceMean"), 2);
    QCOMPARE(countOp(o.result.graph, "Sqrt"), 1);
    for (const char* member : {"a_d", "a_sq", "a_var", "a_ve", "a_sd", "a_n", "a_g", "a_y"})
        QCOMPARE(o.result.fusedInto[o.graph.find(member)->index], *o.graph.find("a_mean"));
    QVERIFY(!o.result.fusedInto[o.graph.find("b_y")->index].valid());
    QVERIFY2(hasNote(o, "layer normalisation on v1: 1 written out", true), notesOf(o).c_str());
}

void TestOptimize::aWrittenOutGeluBecomesOneKernel() {
    // GELU as PyTorch exports nn.GELU (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5), twice:
    // the second multiplies by 1/sqrt 2 instead of dividing, with its operands the other way
    // round. A third divides by 2, not sqrt 2, and stays as it is.
    ModelBuilder b({2, 5, 16});
    test::addInitializer(b.model, "sqrt2", {})->add_float_data(1.41421356f);
    test::addInitializer(b.model, "rsqrt2", {})->add_float_data(0.707106781f);
    test::addInitializer(b.model, "two", {})->add_float_data(2.0f);
    test::addInitializer(b.model, "one", {})->add_float_data(1.0f);
    test::addInitializer(b.model, "half", {})->add_float_data(0.5f);
    b.node("Div", {"x", "sqrt2"}, "a_s");
    b.node("Erf", {"a_s"}, "a_e");
    b.node("Add", {"a_e", "one"}, "a_p");
    b.node("Mul", {"x", "a_p"}, "a_m");
    b.node("Mul", {"a_m", "half"}, "a_y");
    b.node("Mul", {"a_y", "rsqrt2"}, "b_s");
    b.node("Erf", {"b_s"}, "b_e");
    b.node("Add", {"one", "b_e"}, "b_p");
    b.node("Mul", {"b_p", "a_y"}, "b_m");
    b.node("Mul", {"half", "b_m"}, "b_y");
    b.node("Div", {"b_y", "two"}, "c_s");
    b.node("Erf", {"c_s"}, "c_e");
    b.node("Add", {"c_e", "one"}, "c_p");
    b.node("Mul", {"b_y", "c_p"}, "c_m");
    b.node("Mul", {"c_m", "half"}, "c_y");
    const Optimised o = optimiseAndCompare(b.load("c_y", {2, 5, 16}), vcpus(1), {true}, {});
    QCOMPARE(countOp(o.result.graph, "Gelu"), 2);
    QCOMPARE(countOp(o.result.graph, "Erf"), 1);
    for (const char* member : {"a_e", "a_p", "a_m", "a_y"})
        QCOMPARE(o.result.fusedInto[o.graph.find(member)->index], *o.graph.find("a_s"));
    for (const char* member : {"b_e", "b_p", "b_m", "b_y"})
        QCOMPARE(o.result.fusedInto[o.graph.find(member)->index], *o.graph.find("b_s"));
    QVERIFY(!o.result.fusedInto[o.graph.find("c_y")->index].valid());
    QVERIFY2(hasNote(o, "GELU on v1: 2 written out as five ops each, now one kernel each"),
             notesOf(o).c_str());
}

void TestOptimize::matrixProductsTakeABiasAndTheirChain() {
    // A transformer's MLP and a classifier: m1 -> a1 (+ bias row) -> GELU written out (g_*);
    // m2 -> a2 (bias + m2, the other way round) -> r2 (+ x, a residual); a reshape; a Gemm with
    // its own bias (transB) -> relu -> + a tensor of the output's shape (a residual, not a bias).
    ModelBuilder b({2, 5, 16});
    b.weight("w1", {16, 32});
    b.weight("b1", {32});
    b.weight("w2", {32, 16});
    b.weight("b2", {16});
    b.weight("w3", {8, 16});
    b.weight("c3", {8});
    b.weight("full", {10, 8});
    b.ints("shape", {10, 16});
    test::addInitializer(b.model, "sqrt2", {})->add_float_data(1.41421356f);
    test::addInitializer(b.model, "one", {})->add_float_data(1.0f);
    test::addInitializer(b.model, "half", {})->add_float_data(0.5f);
    b.node("MatMul", {"x", "w1"}, "m1");
    b.node("Add", {"m1", "b1"}, "a1");
    b.node("Div", {"a1", "sqrt2"}, "g_s");
    b.node("Erf", {"g_s"}, "g_e");
    b.node("Add", {"g_e", "one"}, "g_p");
    b.node("Mul", {"a1", "g_p"}, "g_m");
    b.node("Mul", {"g_m", "half"}, "g_y");
    b.node("MatMul", {"g_y", "w2"}, "m2");
    b.node("Add", {"b2", "m2"}, "a2");
    b.node("Add", {"a2", "x"}, "r2");
    b.node("Reshape", {"r2", "shape"}, "flat");
    onnx::NodeProto* gemm = b.node("Gemm", {"flat", "w3", "c3"}, "m3");
    test::setInt(gemm, "transB", 1);
    b.node("Relu", {"m3"}, "r3");
    b.node("Add", {"r3", "full"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {10, 8}), vcpus(1), {true}, {});
    auto fused = [&](const char* name) -> const Node& {
        const auto id = o.result.graph.find(name);
        if (!id)
            qFatal("no node %s", name);
        return o.result.graph.node(*id);
    };
    const Node& m1 = fused("m1+a1+g_s+g_e+g_p+g_m+g_y");
    QCOMPARE(describePostOps(m1.hints.postOps), std::string("bias;gelu"));
    QCOMPARE(m1.inputs.size(), std::size_t{3}); // x, w1, then the bias
    QCOMPARE(o.result.graph.node(m1.inputs[2].node).name, std::string("b1"));
    QCOMPARE(describePostOps(fused("m2+a2+r2").hints.postOps), std::string("bias;add"));
    // Gemm's bias is its own: the chain starts with its activation.
    QCOMPARE(describePostOps(fused("m3+r3+y").hints.postOps), std::string("relu;add"));
    QCOMPARE(countOp(o.result.graph, "Erf") + countOp(o.result.graph, "Add") +
                 countOp(o.result.graph, "Relu") + countOp(o.result.graph, "Div"),
             0);
    for (const char* member : {"a1", "g_s", "g_e", "g_p", "g_m", "g_y"})
        QCOMPARE(o.result.fusedInto[o.graph.find(member)->index], *o.graph.find("m1"));
    QCOMPARE(o.result.fusedInto[o.graph.find("r2")->index], *o.graph.find("m2"));
    QCOMPARE(o.result.fusedInto[o.graph.find("y")->index], *o.graph.find("m3"));
    QVERIFY2(hasNote(o, "post-op fusion on v1: 3 matrix products took 10 element-wise ops"),
             notesOf(o).c_str());
}

void TestOptimize::matrixProductFusionStopsWhereItMust() {
    // m1's Add reads a [2,5,32] tensor, no row: a residual, not a bias. a2 adds a1 to itself,
    // no post-op. m2's value is also a graph output: m2 keeps its bias Add (a3) apart.
    ModelBuilder b({2, 5, 16});
    b.weight("w1", {16, 32});
    b.weight("res", {2, 5, 32});
    b.weight("w2", {32, 16});
    b.weight("b2", {16});
    b.node("MatMul", {"x", "w1"}, "m1");
    b.node("Add", {"m1", "res"}, "a1");
    b.node("Add", {"a1", "a1"}, "a2");
    b.node("MatMul", {"a2", "w2"}, "m2");
    b.node("Add", {"m2", "b2"}, "y");
    test::addValue(b.model.mutable_graph()->mutable_output(), "m2", {2, 5, 16});
    const Optimised o = optimiseAndCompare(b.load("y", {2, 5, 16}), vcpus(1), {true}, {});
    const auto m1 = o.result.graph.find("m1+a1");
    QVERIFY(m1.has_value());
    QCOMPARE(describePostOps(o.result.graph.node(*m1).hints.postOps), std::string("add"));
    QVERIFY(o.result.graph.find("a2").has_value());
    QVERIFY(o.result.graph.node(*o.result.graph.find("m2")).hints.postOps.empty());
    QVERIFY(o.result.graph.find("y").has_value());
    QVERIFY(!o.result.fusedInto[o.graph.find("y")->index].valid());
}

void TestOptimize::batchNormalisationTakesTheReluAfterIt() {
    // DenseNet's pre-activation: BatchNormalization -> Relu -> Conv; a second normalisation (of
    // a Sigmoid, not of the convolution) is followed by a Sigmoid, which oneDNN's normalisation
    // cannot apply.
    ModelBuilder b({1, 4, 8, 8});
    for (const char* name : {"n1", "n2"}) {
        const std::string n = name;
        b.weight(n + "_scale", {4});
        b.weight(n + "_bias", {4});
        b.weight(n + "_mean", {4});
        onnx::TensorProto* var = test::addInitializer(b.model, n + "_var", {4});
        for (float v : {0.5f, 1.0f, 2.0f, 0.25f})
            var->add_float_data(v);
    }
    b.node("BatchNormalization", {"x", "n1_scale", "n1_bias", "n1_mean", "n1_var"}, "n1");
    b.node("Relu", {"n1"}, "r1");
    b.conv("r1", "c1", 4, 4);
    b.node("Sigmoid", {"c1"}, "s1");
    b.node("BatchNormalization", {"s1", "n2_scale", "n2_bias", "n2_mean", "n2_var"}, "n2");
    b.node("Sigmoid", {"n2"}, "y");
    for (const bool channelsLast : {false, true}) {
        const Optimised o = optimiseAndCompare(b.load("y", {1, 4, 8, 8}), vcpus(1), {true},
                                               {.channelsLast = channelsLast, .fusion = true});
        const auto fused = o.result.graph.find("n1+r1");
        QVERIFY(fused.has_value());
        QCOMPARE(describePostOps(o.result.graph.node(*fused).hints.postOps), std::string("relu"));
        QCOMPARE(o.result.fusedInto[o.graph.find("r1")->index], *o.graph.find("n1"));
        QVERIFY(o.result.graph.find("n2").has_value());
        QVERIFY(o.result.graph.find("y").has_value());
        b.model.mutable_graph()->mutable_output()->Clear();
    }
}

void TestOptimize::matrixProductVariantsComputeTheSame_data() {
    // Each case: x's shape, the product (its B a constant "w" unless said), what follows it, and
    // the output's shape; whether the product should take anything.
    QTest::addColumn<QString>("product");
    QTest::addColumn<QString>("after");
    QTest::addColumn<bool>("fuses");
    QTest::newRow("rows folded, bias, relu") << "MatMul 2,5,16 w 16,32"
                                             << "bias relu" << true;
    QTest::newRow("vector A, bias") << "MatMul 16 w 16,32"
                                    << "bias" << true;
    QTest::newRow("vector B: no bias row") << "MatMul 2,5,16 w 16"
                                           << "bias" << false;
    QTest::newRow("broadcast batches, residual, relu") << "MatMul 2,1,5,16 w 3,16,8"
                                                       << "residual relu" << true;
    QTest::newRow("same batches, B computed, bias, gelu") << "MatMul 3,5,16 relu 3,16,8"
                                                          << "bias gelu" << true;
    QTest::newRow("Gemm transA, alpha, beta, its C, relu") << "Gemm 16,5 w 16,8 transA alpha beta"
                                                           << "relu" << true;
    QTest::newRow("Gemm transB, its row C, residual") << "Gemm 5,16 w 8,16 transB"
                                                      << "residual" << true;
    QTest::newRow("Gemm alpha, bias after") << "Gemm 5,16 w 16,8 alpha nobias"
                                            << "bias relu" << true;
    QTest::newRow("packable weights, bias, gelu, residual") << "MatMul 4,64 w 64,256"
                                                            << "bias gelu residual" << true;
}

void TestOptimize::matrixProductVariantsComputeTheSame() {
    QFETCH(QString, product);
    QFETCH(QString, after);
    QFETCH(bool, fuses);
    const QStringList words = product.split(' ');
    auto dims = [](const QString& text) {
        std::vector<std::int64_t> d;
        for (const QString& part : text.split(','))
            d.push_back(part.toLongLong());
        return d;
    };
    const std::string op = words[0].toStdString();
    const std::vector<std::int64_t> a = dims(words[1]), w = dims(words[3]);
    const bool computedB = words[2] == "relu";
    const bool transA = words.contains("transA"), transB = words.contains("transB");
    ModelBuilder b(a);
    b.weight("w", w);
    std::string bName = "w";
    if (computedB) {
        b.node("Relu", {"w"}, "wr");
        bName = "wr";
    }
    // The product's output shape, as ONNX computes it.
    std::vector<std::int64_t> out;
    if (op == "Gemm") {
        out = {transA ? a[1] : a[0], transB ? w[0] : w[1]};
    } else {
        std::vector<std::int64_t> ab(a.begin(), a.end() - (a.size() > 1 ? 2 : 1));
        std::vector<std::int64_t> bb(w.begin(), w.end() - (w.size() > 1 ? 2 : 1));
        while (ab.size() < bb.size())
            ab.insert(ab.begin(), 1);
        while (bb.size() < ab.size())
            bb.insert(bb.begin(), 1);
        for (std::size_t k = 0; k < ab.size(); ++k)
            out.push_back(std::max(ab[k], bb[k]));
        if (a.size() > 1)
            out.push_back(a[a.size() - 2]);
        if (w.size() > 1)
            out.push_back(w.back());
    }
    std::vector<std::string> inputs{"x", bName};
    if (op == "Gemm" && !words.contains("nobias")) {
        b.weight("c",
                 transB ? std::vector<std::int64_t>{out[1]} : std::vector<std::int64_t>{1, out[1]});
        inputs.push_back("c");
    }
    onnx::NodeProto* node = b.node(op, inputs, "m");
    if (transA)
        test::setInt(node, "transA", 1);
    if (transB)
        test::setInt(node, "transB", 1);
    if (words.contains("alpha"))
        test::setFloat(node, "alpha", 0.5f);
    if (words.contains("beta"))
        test::setFloat(node, "beta", 2.0f);
    std::string last = "m";
    int step = 0;
    test::addInitializer(b.model, "sqrt2", {})->add_float_data(1.41421356f);
    test::addInitializer(b.model, "one", {})->add_float_data(1.0f);
    test::addInitializer(b.model, "half", {})->add_float_data(0.5f);
    for (const QString& what : after.split(' ')) {
        const std::string s = std::to_string(step++);
        if (what == "bias") {
            b.weight("bias" + s, {out.back()});
            b.node("Add", {last, "bias" + s}, "a" + s);
            last = "a" + s;
        } else if (what == "relu") {
            b.node("Relu", {last}, "r" + s);
            last = "r" + s;
        } else if (what == "residual") {
            b.weight("res" + s, out);
            b.node("Add", {"res" + s, last}, "s" + s);
            last = "s" + s;
        } else if (what == "gelu") {
            b.node("Div", {last, "sqrt2"}, "g" + s + "_s");
            b.node("Erf", {"g" + s + "_s"}, "g" + s + "_e");
            b.node("Add", {"g" + s + "_e", "one"}, "g" + s + "_p");
            b.node("Mul", {last, "g" + s + "_p"}, "g" + s + "_m");
            b.node("Mul", {"g" + s + "_m", "half"}, "g" + s);
            last = "g" + s;
        }
    }
    const Optimised o = optimiseAndCompare(b.load(last, out), vcpus(1), {true}, {}, true);
    bool fused = false;
    for (const NodeId head : o.result.fusedInto)
        fused = fused || (head.valid() && o.graph.node(head).name == "m");
    QCOMPARE(fused, fuses);
}

void TestOptimize::convolutionsFoldTheBatchNormalisationAfterThem() {
    // c1 (with a bias) -> n1 -> r1; c2 (no bias) -> n2, whose variance is computed from the
    // data, not a constant: folded again on every run, as its weights are no larger than its
    // output; c3's are larger, with n3's mean computed: not folded.
    ModelBuilder b({1, 4, 8, 8});
    auto norm = [&](const std::string& n) {
        b.weight(n + "_scale", {8});
        b.weight(n + "_bias", {8});
        b.weight(n + "_mean", {8});
        onnx::TensorProto* var = test::addInitializer(b.model, n + "_var", {8});
        for (int c = 0; c < 8; ++c)
            var->add_float_data(0.25f + 0.125f * static_cast<float>(c));
    };
    b.conv("x", "c1", 4, 8);
    norm("n1");
    b.node("BatchNormalization", {"c1", "n1_scale", "n1_bias", "n1_mean", "n1_var"}, "n1");
    b.node("Relu", {"n1"}, "r1");
    b.weight("c2_w", {8, 8, 1, 1});
    b.node("Conv", {"r1", "c2_w"}, "c2");
    norm("n2");
    // Computed from the data: Abs(mean of r1 over all but the channels) + 0.5.
    onnx::NodeProto* mean2 = b.node("ReduceMean", {"r1"}, "n2_r");
    test::setInts(mean2, "axes", {0, 2, 3});
    test::setInt(mean2, "keepdims", 0);
    b.node("Abs", {"n2_r"}, "n2_a");
    test::addInitializer(b.model, "half", {})->add_float_data(0.5f);
    b.node("Add", {"n2_a", "half"}, "n2_abs");
    b.node("BatchNormalization", {"c2", "n2_scale", "n2_bias", "n2_mean", "n2_abs"}, "n2");
    b.weight("c3_w", {8, 8, 7, 7});
    test::setInts(b.node("Conv", {"n2", "c3_w"}, "c3"), "strides", {8, 8});
    norm("n3");
    onnx::NodeProto* mean3 = b.node("ReduceMean", {"n2"}, "n3_m");
    test::setInts(mean3, "axes", {0, 2, 3});
    test::setInt(mean3, "keepdims", 0);
    b.node("BatchNormalization", {"c3", "n3_scale", "n3_bias", "n3_m", "n3_var"}, "y");
    for (const bool channelsLast : {false, true}) {
        const Optimised o = optimiseAndCompare(b.load("y", {1, 8, 1, 1}), vcpus(1), {true},
                                               {.channelsLast = channelsLast, .fusion = true});
        const Graph& g = o.result.graph;
        const auto c1 = g.find("c1+n1+r1");
        QVERIFY(c1.has_value());
        QVERIFY2(
            describePostOps(g.node(*c1).hints.postOps).starts_with("batch_norm(") &&
                describePostOps(g.node(*c1).hints.postOps).ends_with(", scaled, shifted);relu"),
            describePostOps(g.node(*c1).hints.postOps).c_str());
        QCOMPARE(g.node(*c1).inputs.size(), std::size_t{7}); // x, w, b, then the four
        QVERIFY(g.find("c2+n2").has_value());
        QVERIFY(g.find("c3").has_value());
        QVERIFY(g.find("y").has_value());
        QCOMPARE(o.result.fusedInto[o.graph.find("n1")->index], *o.graph.find("c1"));
        QCOMPARE(o.result.fusedInto[o.graph.find("n2")->index], *o.graph.find("c2"));
        b.model.mutable_graph()->mutable_output()->Clear();
    }
}

void TestOptimize::channelShufflesAndSlicesStayChannelsLast() {
    // ShuffleNet's unit: a convolution, the channel shuffle (Reshape to [N,2,C/2,H,W], Transpose
    // (0,2,1,3,4), Reshape back), then the two halves by Slice, each convolved, concatenated.
    // Everything stays NHWC: the layout changes only at the two ends, and the shuffle's own
    // transpose is one of the NHWC form.
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 8);
    b.ints("split", {1, 2, 4, 8, 8});
    b.ints("merged", {1, 8, 8, 8});
    b.node("Reshape", {"c1", "split"}, "r1");
    test::setInts(b.node("Transpose", {"r1"}, "t1"), "perm", {0, 2, 1, 3, 4});
    b.node("Reshape", {"t1", "merged"}, "r2");
    b.ints("lo", {0});
    b.ints("mid", {4});
    b.ints("hi", {8});
    b.ints("axis", {1});
    b.node("Slice", {"r2", "lo", "mid", "axis"}, "first");
    b.node("Slice", {"r2", "mid", "hi", "axis"}, "second");
    b.conv("first", "c2", 4, 4);
    b.conv("second", "c3", 4, 4);
    test::setInt(b.node("Concat", {"c2", "c3"}, "y"), "axis", 1);
    const Optimised o = optimiseAndCompare(b.load("y", {1, 8, 8, 8}), vcpus(1), {true});
    QCOMPARE(countOp(o.result.graph, "Transpose"), 3);
    const Node& shuffle = o.result.graph.node(*o.result.graph.find("t1"));
    QCOMPARE(shuffle.attrs.getInts("perm", {}).value(), (std::vector<std::int64_t>{0, 1, 2, 4, 3}));
    QCOMPARE(o.result.graph.type(ValueRef{*o.result.graph.find("first"), 0}).shape,
             (std::vector<std::int64_t>{1, 8, 8, 4}));
    QVERIFY2(o.result.notes.size() == 1 &&
                 o.result.notes[0].ends_with("2 layout changes, 1 channel shuffles in NHWC"),
             o.result.notes.empty() ? "" : o.result.notes[0].c_str());
}

void TestOptimize::attentionTransposesBecomeStridedViews() {
    // Self-attention as PyTorch exports it, heads moved by transposes: Q and V from [B,T,H,D]
    // to [B,H,T,D], K to [B,H,D,T], the result back to [B,T,H,D]. The products read and write
    // those layouts as strided views where the device keeps its speed so, and the transposes go.
    ModelBuilder b({2, 16, 64});
    b.ints("heads", {2, 16, 4, 16});
    b.ints("merged", {2, 16, 64});
    b.weight("wq", {64, 64});
    b.weight("wk", {64, 64});
    b.node("MatMul", {"x", "wq"}, "q");
    b.node("MatMul", {"x", "wk"}, "k");
    b.node("Reshape", {"q", "heads"}, "q4");
    b.node("Reshape", {"k", "heads"}, "k4");
    b.node("Reshape", {"x", "heads"}, "v4");
    test::setInts(b.node("Transpose", {"q4"}, "qt"), "perm", {0, 2, 1, 3});
    test::setInts(b.node("Transpose", {"k4"}, "kt"), "perm", {0, 2, 3, 1});
    test::setInts(b.node("Transpose", {"v4"}, "vt"), "perm", {0, 2, 1, 3});
    b.node("MatMul", {"qt", "kt"}, "scores");
    test::setInt(b.node("Softmax", {"scores"}, "p"), "axis", -1);
    b.node("MatMul", {"p", "vt"}, "o");
    test::setInts(b.node("Transpose", {"o"}, "ot"), "perm", {0, 2, 1, 3});
    b.node("Reshape", {"ot", "merged"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {2, 16, 64}), vcpus(1), {true}, {}, true);
    const Graph& g = o.result.graph;
    if (!hasNote(o, "strided views on v1:", true))
        QSKIP("oneDNN runs these products more slowly with strided operands on this machine: "
              "the transposes stay");
    const Node& scores = g.node(*g.find("scores"));
    QCOMPARE(scores.hints.views[0], (std::vector<std::int64_t>{0, 2, 1, 3}));
    QCOMPARE(scores.hints.views[1], (std::vector<std::int64_t>{0, 2, 3, 1}));
    QCOMPARE(g.node(scores.inputs[0].node).name, std::string("q4"));
    QVERIFY(!g.find("qt").has_value() && !g.find("kt").has_value());
    const Node& out = g.node(*g.find("o"));
    QCOMPARE(out.hints.views[2], (std::vector<std::int64_t>{0, 2, 1, 3}));
    QCOMPARE(out.outputs[0].shape, (std::vector<std::int64_t>{2, 16, 4, 16}));
    QVERIFY(!g.find("ot").has_value());
    QCOMPARE(countOp(g, "Transpose"), 0);
    // Without the devices to ask, nothing is viewed.
    const Optimised plain = optimiseAndCompare(o.graph, vcpus(1), {true}, {}, false);
    QCOMPARE(countOp(plain.result.graph, "Transpose"), 4);
}

void TestOptimize::forgedInternalAttributesAreRefused_data() {
    // Kernel hints only the passes set (ir/KernelHints.h), as a bug in a pass could still leave
    // them: each is refused with a clear error when the kernel or the constant is loaded, never
    // decoded or trusted.
    QTest::addColumn<QString>("node");
    QTest::addColumn<QString>("hint");
    QTest::addColumn<QString>("value");
    QTest::addColumn<QString>("message");
    QTest::newRow("a packed layout on the product") << "m"
                                                    << "packed"
                                                    << "onednn-packed:999"
                                                    << "is not one this process made";
    QTest::newRow("a packed layout on the weights") << "w"
                                                    << "packed"
                                                    << "0123abcd:ef"
                                                    << "is not one this process made";
    QTest::newRow("a view of the wrong rank") << "m"
                                              << "view_a"
                                              << "5,5,5"
                                              << "view is not a permutation of its axes";
    QTest::newRow("a view that is no permutation") << "m"
                                                   << "view_b"
                                                   << "0,0"
                                                   << "view is not a permutation of its axes";
}

void TestOptimize::forgedInternalAttributesAreRefused() {
    QFETCH(QString, node);
    QFETCH(QString, hint);
    QFETCH(QString, value);
    QFETCH(QString, message);
    ModelBuilder b({4, 16});
    b.weight("w", {16, 8});
    b.node("MatMul", {"x", "w"}, "m");
    Graph graph = b.load("m", {4, 8});
    Node& target = graph.node(*graph.find(node.toStdString()));
    if (hint.startsWith("view")) {
        std::vector<std::int64_t> perm;
        for (const QString& part : value.split(','))
            perm.push_back(part.toLongLong());
        target.hints.views[hint == "view_a" ? 0 : 1] = perm;
    } else {
        target.hints.packedLayout = value.toStdString();
    }
    const DeviceSet devices = vcpus(1);
    const Plan plan = planDevices(graph, devices, PlanOptions{});
    DeviceRegistry registry;
    std::vector<std::string> warnings;
    auto mapping = mapDevices(devices, {}, registry, &warnings);
    QVERIFY(mapping);
    auto program = lowerToBytecode(graph, devices, plan);
    QVERIFY(program);
    auto executor =
        Executor::load(graph, devices, program.take(), mapping.take(), graph.onnxOpset());
    QVERIFY(!executor);
    QVERIFY2(QString::fromStdString(executor.error().message).contains(message),
             executor.error().message.c_str());
}

void TestOptimize::attributesNamedLikeHintsAreInert() {
    // A model may carry any attribute, the old internal names included: the kernels read the
    // passes' hints from typed fields a model file cannot set, so such attributes change
    // nothing.
    ModelBuilder b({4, 16});
    b.weight("w", {16, 8});
    b.node("MatMul", {"x", "w"}, "m");
    b.node("Relu", {"m"}, "y");
    Graph graph = b.load("y", {4, 8});
    // As a reader that keeps every attribute (the JSON graph's) would give them.
    Attrs& attrs = graph.node(*graph.find("m")).attrs;
    attrs.set("placer.post_ops", std::string("frobnicate"));
    attrs.set("placer.packed", std::string("onednn-packed:999"));
    attrs.set("placer.view_a", std::vector<std::int64_t>{5, 5, 5});
    for (const Node& node : graph.nodes())
        QVERIFY2(node.hints.empty(), node.name.c_str());
    const Optimised o = optimiseAndCompare(graph, vcpus(1), {true}, OptimizeOptions{}, true);
    QVERIFY(o.result.graph.find("m+y"));
}

void TestOptimize::layoutChangesCancelTheModelsTransposes() {
    // ConvNeXt's block: a convolution, the model's own move to channels-last (t1), a per-channel
    // scale on the last axis, the move back (t2), a convolution. With the convolutions NHWC,
    // the layout changes cancel t1 and t2: only the chain's two ends change layout.
    ModelBuilder b({1, 4, 8, 8});
    b.conv("x", "c1", 4, 4);
    test::setInts(b.node("Transpose", {"c1"}, "t1"), "perm", {0, 2, 3, 1});
    b.weight("gamma", {4});
    b.node("Mul", {"t1", "gamma"}, "scaled");
    test::setInts(b.node("Transpose", {"scaled"}, "t2"), "perm", {0, 3, 1, 2});
    b.conv("t2", "c2", 4, 4);
    b.node("Relu", {"c2"}, "y");
    const Optimised o = optimiseAndCompare(b.load("y", {1, 4, 8, 8}), vcpus(1), {true}, {});
    QCOMPARE(countOp(o.result.graph, "Transpose"), 2);
    QVERIFY(o.result.graph.find("x/to_nhwc").has_value());
    QVERIFY(!o.result.graph.find("t1").has_value());
    QVERIFY(!o.result.graph.find("t2").has_value());
    const Node& scaled = o.result.graph.node(*o.result.graph.find("scaled"));
    QCOMPARE(o.result.graph.node(scaled.inputs[0].node).name, std::string("c1"));
    QVERIFY2(hasNote(o, "transpose elimination on v1: 2 transposes cancelled the one "
                        "before them, 2 were no longer read"),
             notesOf(o).c_str());
    // The user's transposes have no time of their own now; the rest map back as before.
    const MedianTimes user = userMedianTimes(o.times, o.result.graph, o.result.plan,
                                             o.result.origin, o.graph.size(), o.plan);
    QVERIFY(user.nodeMillis[o.graph.find("t1")->index] < 0);
    QVERIFY(user.nodeMillis[o.graph.find("scaled")->index] >= 0);
    // Without the pass, the four layout changes and both transposes run.
    const Optimised kept =
        optimiseAndCompare(o.graph, vcpus(1), {true}, {.channelsLast = true, .transposes = false});
    QCOMPARE(countOp(kept.result.graph, "Transpose"), 6);
}

void TestOptimize::transposesOfTransposesCompose() {
    // t1 then t2 compose into one transpose of x, and t1, read by nothing else, goes. t5 undoes
    // t4: it goes, and t3 reads r, with its own permutation. t4 is pinned by the user: it stays,
    // though nothing reads it now.
    ModelBuilder b({2, 3, 4, 5});
    test::setInts(b.node("Transpose", {"x"}, "t1"), "perm", {0, 2, 3, 1});
    test::setInts(b.node("Transpose", {"t1"}, "t2"), "perm", {0, 2, 1, 3});
    b.node("Relu", {"t2"}, "r");
    test::setInts(b.node("Transpose", {"r"}, "t4"), "perm", {1, 0, 2, 3});
    test::setInts(b.node("Transpose", {"t4"}, "t5"), "perm", {1, 0, 2, 3});
    test::setInts(b.node("Transpose", {"t5"}, "t3"), "perm", {0, 2, 1, 3});
    Graph graph = b.load("t3", {2, 4, 5, 3});
    graph.node(*graph.find("t4")).pin = Pin{PinKind::Plain, DeviceId(0), "test"};
    const Optimised o = optimiseAndCompare(std::move(graph), vcpus(1), {true}, {});
    const Graph& g = o.result.graph;
    QVERIFY(!g.find("t1").has_value()); // no longer read
    const Node& t2 = g.node(*g.find("t2"));
    QCOMPARE(g.node(t2.inputs[0].node).name, std::string("x"));
    QCOMPARE(t2.attrs.getInts("perm", {}).value(), (std::vector<std::int64_t>{0, 3, 2, 1}));
    QVERIFY(g.find("t4").has_value()); // pinned
    QVERIFY(!g.find("t5").has_value());
    const Node& t3 = g.node(*g.find("t3"));
    QCOMPARE(g.node(t3.inputs[0].node).name, std::string("r"));
}

void TestOptimize::packedWeightsAreWrittenAtLoad_data() {
    QTest::addColumn<bool>("host");
    QTest::newRow("virtual CPU") << false;
    QTest::newRow("host CPU, whose constants are used where they lie") << true;
}

void TestOptimize::packedWeightsAreWrittenAtLoad() {
    // w1 is read by m1 alone: packed. w2 is read by m2 and m3: left as it is. The packed
    // weights are the same bytes, reordered: the device's memory plan does not change.
    QFETCH(bool, host);
    ModelBuilder b({4, 64});
    b.weight("w1", {64, 256});
    b.weight("w2", {256, 256});
    b.node("MatMul", {"x", "w1"}, "m1");
    b.node("MatMul", {"m1", "w2"}, "m2");
    b.node("MatMul", {"m2", "w2"}, "y");
    const DeviceSet devices = vcpus(1, host ? DeviceKind::Cpu : DeviceKind::VCpu);
    Graph graph = b.load("y", {4, 256});
    const Optimised o = optimiseAndCompare(std::move(graph), devices, {true},
                                           {.channelsLast = true, .fusion = true}, true);
    const Graph& g = o.result.graph;
    QVERIFY(g.node(*g.find("w2")).hints.packedLayout.empty());
    QVERIFY(g.node(*g.find("y")).hints.packedLayout.empty());
    // Whether oneDNN prefers a blocked layout for these weights depends on the machine's ISA.
    const std::string layout = g.node(*g.find("w1")).hints.packedLayout;
    if (layout.empty())
        QSKIP("oneDNN reads these weights in their own layout on this machine: nothing to pack");
    QCOMPARE(g.node(*g.find("m1")).hints.packedLayout, layout);
    QCOMPARE(o.result.plan.memory.devices.size(), o.plan.memory.devices.size());
    QCOMPARE(o.result.plan.memory.devices[0].peakBytes, o.plan.memory.devices[0].peakBytes);
    QVERIFY2(hasNote(o, "weight packing on v1: 1 matrix products", true), notesOf(o).c_str());
    // Without the devices to ask, nothing is packed.
    const Optimised plain = optimiseAndCompare(o.graph, devices, {true}, {}, false);
    for (const Node& node : plain.result.graph.nodes())
        QVERIFY(node.hints.packedLayout.empty());
}

#include "tst_optimize.moc"
