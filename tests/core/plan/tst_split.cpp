// Homogeneous splitting (plan/Split.h): which ops a region may split on the batch axis, the
// conflicts for those it may not, the sharded graph, and that it computes what the unsplit graph
// computes.
#include "device/DeviceMapping.h"
#include "device/DeviceRegistry.h"
#include "io/ModelLoader.h"
#include "passes/PassManager.h"
#include "plan/CostModel.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "report/PlanReport.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"

#include "OnnxModelBuilder.h"
#include "PlanTestUtil.h"
#include "kernels/RandomTensor.h"

#include <QtTest>

#include <cmath>
#include <cstring>

using namespace placer;
using test::relativeDifference;

namespace {

DeviceSet vcpus(int count, const char* capacity = nullptr) {
    std::string spec;
    for (int i = 0; i < count; ++i)
        spec += (i ? ",v" : "v") + std::to_string(i) + ":vcpu" +
                (capacity && i == count - 1 ? std::string(":mem=") + capacity : "");
    auto set = DeviceSet::parse(spec);
    if (!set)
        qFatal("%s", set.error().message.c_str());
    set.value().chooseDefaults();
    set.value().setDefaultDevice(DeviceId(0));
    return set.take();
}

SplitRequest request(const std::string& text) {
    auto parsed = parseSplitRequest(text);
    if (!parsed)
        qFatal("%s", parsed.error().message.c_str());
    return parsed.take();
}

PlanOptions splitting(std::initializer_list<const char*> requests) {
    PlanOptions options;
    for (const char* text : requests)
        options.splits.push_back(request(text));
    return options;
}

/// `--shard` requests (plan/TensorShard.h).
PlanOptions sharding(std::initializer_list<const char*> requests) {
    PlanOptions options;
    for (const char* text : requests) {
        auto parsed = parseSplitRequest(text, "--shard");
        if (!parsed)
            qFatal("%s", parsed.error().message.c_str());
        options.splits.push_back(parsed.take());
        options.splits.back().tensor = true;
    }
    return options;
}

/// The sharding of node `name`'s first output in a tensor-sharded region, as text.
QString heldBy(const Graph& graph, const SplitRegion& region, const std::string& name) {
    for (std::size_t k = 0; k < region.nodes.size(); ++k) {
        if (graph.node(region.nodes[k]).name == name)
            return QString::fromStdString(region.ops[k].outputs[0].text());
    }
    return QStringLiteral("not in the region");
}

QString collectivesText(const Graph& graph, const SplitRegion& region) {
    QString text;
    for (const Collective& c : region.collectives)
        text += QString::fromStdString(std::string(collectiveName(c.kind)) + " " +
                                       graph.valueName(c.value) + " " + std::to_string(c.bytes) +
                                       " for " + c.reason) +
                "\n";
    return text;
}

/// The tests' models: test::ModelBuilder and a small CNN.
struct Model : test::ModelBuilder {
    explicit Model(const std::vector<std::int64_t>& input) : test::ModelBuilder("split", input) {}

    /// A small CNN: conv, relu, conv + residual, pooling, flatten (by Reshape to [batch, -1]),
    /// a matrix product and a softmax over the classes.
    void cnn(std::int64_t batch) {
        conv("x", "c1", 3, 8);
        node("Relu", {"c1"}, "r1");
        conv("r1", "c2", 8, 8);
        node("Add", {"c2", "r1"}, "a1");
        node("GlobalAveragePool", {"a1"}, "gap");
        ints("shape", {batch, -1});
        node("Reshape", {"gap", "shape"}, "flat");
        weight("fc_w", {8, 5});
        node("MatMul", {"flat", "fc_w"}, "fc");
        node("Softmax", {"fc"}, "y");
    }

    Graph load(const std::string& output, const std::vector<std::int64_t>& dims) {
        return test::ModelBuilder::load(output, dims, vcpus(1));
    }
};

/// Runs what `plan` runs (the sharded graph when it splits), each device on a fresh vcpu.
std::vector<HostTensor> run(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                            bool optimise) {
    DeviceRegistry registry;
    std::vector<std::string> warnings;
    auto mapping = mapDevices(devices, {}, registry, &warnings);
    if (!mapping)
        qFatal("mapping: %s", mapping.error().message.c_str());
    auto optimized = optimise
                         ? optimizeForDevices(graph, devices, plan, PlanOptions{}, mapping.value())
                         : Result<OptimizedGraph>(unoptimized(graph, plan));
    if (!optimized)
        qFatal("optimising: %s", optimized.error().message.c_str());
    const Graph& ran = optimized.value().graph;
    auto program = lowerToBytecode(ran, devices, optimized.value().plan);
    if (!program)
        qFatal("lowering: %s", program.error().message.c_str());
    auto executor = Executor::load(ran, devices, program.take(), mapping.take(), ran.onnxOpset());
    if (!executor)
        qFatal("load: %s", executor.error().message.c_str());
    std::vector<HostTensor> inputs;
    for (std::size_t i = 0; i < executor.value()->program().inputs.size(); ++i)
        inputs.push_back(
            randomTensor(ran.node(executor.value()->program().inputs[i]).outputs[0], i + 3));
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        qFatal("run: %s", result.error().message.c_str());
    return result.take().outputs;
}

/// Runs the graph split as `options` asks and unsplit on one device; the outputs must agree.
void checkSameOutputs(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                      bool optimise = false) {
    const Plan split = planDevices(graph, devices, options);
    QVERIFY(split.sharded);
    const Plan whole = planDevices(graph, devices, PlanOptions{});
    const double diff =
        relativeDifference(run(graph, devices, split, optimise), run(graph, devices, whole, false));
    QVERIFY2(diff < 1e-5, qPrintable(QString("relative difference %1").arg(diff)));
}

int countOp(const Graph& graph, const std::string& op) {
    int n = 0;
    for (const Node& node : graph.nodes())
        n += node.op->name == op ? 1 : 0;
    return n;
}

std::vector<const Conflict*> splitConflicts(const Plan& plan) {
    std::vector<const Conflict*> found;
    for (const Conflict& conflict : plan.conflicts) {
        if (conflict.kind == ConflictKind::Split)
            found.push_back(&conflict);
    }
    return found;
}

QString conflictText(const Plan& plan) {
    QString text;
    for (const Conflict& conflict : plan.conflicts)
        text += QString::fromStdString(conflict.message + " / " + conflict.suggestion) + "\n";
    return text;
}

} // namespace

class TestSplit : public QObject {
    Q_OBJECT

private slots:
    void parsesRequests_data() {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("parsed"); // formatted back, or the error's fragment
        QTest::addColumn<bool>("ok");
        QTest::newRow("even") << "*=v0,v1"
                              << "*=v0,v1" << true;
        QTest::newRow("shares") << "conv*=gpu:3,cpu:1"
                                << "conv*=gpu:3,cpu:1" << true;
        QTest::newRow("spaces") << " a = v0 , v1:2 "
                                << "a=v0,v1:2" << true;
        QTest::newRow("one device") << "*=v0"
                                    << "at least two devices" << false;
        QTest::newRow("no equals") << "v0,v1"
                                   << "expected NODES=DEV" << false;
        QTest::newRow("no nodes") << "=v0,v1"
                                  << "no nodes" << false;
        QTest::newRow("empty device") << "*=v0,,v1"
                                      << "an empty device" << false;
        QTest::newRow("bad share") << "*=v0:x,v1"
                                   << "whole number" << false;
        QTest::newRow("zero share") << "*=v0:0,v1"
                                    << "whole number" << false;
        QTest::newRow("twice") << "*=v0,v0"
                               << "named twice" << false;
    }
    void parsesRequests() {
        QFETCH(QString, text);
        QFETCH(QString, parsed);
        QFETCH(bool, ok);
        const auto result = parseSplitRequest(text.toStdString());
        QCOMPARE(result.ok(), ok);
        if (ok)
            QCOMPARE(QString::fromStdString(formatSplitRequest(result.value())), parsed);
        else
            QVERIFY2(QString::fromStdString(result.error().message).contains(parsed),
                     result.error().message.c_str());
    }

    void rowsFollowTheShares() {
        using Rows = std::vector<std::int64_t>;
        QCOMPARE(shardRows(8, {0, 0}), (Rows{4, 4}));
        QCOMPARE(shardRows(7, {0, 0}), (Rows{4, 3}));
        QCOMPARE(shardRows(8, {3, 1}), (Rows{6, 2}));
        QCOMPARE(shardRows(7, {3, 1}), (Rows{5, 2}));
        QCOMPARE(shardRows(5, {1, 1, 1}), (Rows{2, 2, 1}));
        QCOMPARE(shardRows(2, {1, 5}), (Rows{0, 2}));
        for (std::int64_t batch = 1; batch < 40; ++batch) {
            const Rows rows = shardRows(batch, {2, 3, 5});
            QCOMPARE(rows[0] + rows[1] + rows[2], batch);
        }
    }

    void legalRegionSplitsEveryOp() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        const Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(2);
        const Plan plan = planDevices(graph, devices, splitting({"*=v0,v1"}));
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        QCOMPARE(plan.splits.size(), std::size_t(1));
        const SplitRegion& region = plan.splits[0];
        QCOMPARE(region.batch, std::int64_t(4));
        QCOMPARE(region.nodes.size(), std::size_t(8)); // every compute op
        QCOMPARE(region.shards[0].rows(), std::int64_t(2));
        QCOMPARE(region.shards[1].begin, std::int64_t(2));
        QCOMPARE(region.inputs.size(), std::size_t(1));  // x
        QCOMPARE(region.outputs.size(), std::size_t(1)); // y
        for (NodeId id : region.nodes) {
            QCOMPARE(plan.reasons[id.index].kind, ReasonKind::Split);
            QVERIFY(QString::fromStdString(plan.explain(graph, devices, splitting({"*=v0,v1"}), id))
                        .contains("v0 (rows 0-1) and v1 (rows 2-3)"));
        }
        // The sharded graph: each op twice, one Split, one Concat, a shape per shard.
        QVERIFY(plan.sharded);
        const Graph& sharded = plan.sharded->graph;
        QCOMPARE(countOp(sharded, "Conv"), 4);
        QCOMPARE(countOp(sharded, "Split"), 1);
        QCOMPARE(countOp(sharded, "Concat"), 1);
        QVERIFY(sharded.find("c1/split1.0") && sharded.find("c1/split1.1"));
        QCOMPARE(sharded.type(ValueRef{*sharded.find("flat/split1.1"), 0}).shape,
                 (std::vector<std::int64_t>{2, 8}));
        QCOMPARE(plan.sharded->plan->devices[sharded.find("c1/split1.1")->index], DeviceId(1));
        // Each shard's memory is on its own device, weights replicated on both.
        QCOMPARE(plan.memory.devices.size(), std::size_t(2));
        QVERIFY(plan.memory.devices[0].peakBytes > 0 && plan.memory.devices[1].peakBytes > 0);
        checkSameOutputs(graph, devices, splitting({"*=v0,v1"}));
        checkSameOutputs(graph, devices, splitting({"*=v0,v1"}), true); // through the passes
    }

    void illegalOpsAreNamedWithWhy_data() {
        QTest::addColumn<QString>("op");
        QTest::addColumn<QString>("why");
        QTest::newRow("softmax over the batch") << "softmax0"
                                                << "softmax over the batch axis";
        QTest::newRow("reduction over the batch") << "reducesum"
                                                  << "reduces over the batch axis";
        QTest::newRow("reshape spreading the batch") << "fold"
                                                     << "folds the batch axis into others";
        QTest::newRow("batchnorm in training") << "bn"
                                               << "training mode";
        QTest::newRow("concat on the batch") << "concat"
                                             << "along the batch axis";
        QTest::newRow("gemm transposing the batch") << "gemm"
                                                    << "contracts over the batch axis";
        QTest::newRow("matmul over the batch") << "xtx"
                                               << "contracts over the batch axis";
    }
    void illegalOpsAreNamedWithWhy() {
        QFETCH(QString, op);
        QFETCH(QString, why);
        Model m({4, 6});
        m.node("Relu", {"x"}, "r");
        std::vector<std::int64_t> dims = {4, 6};
        if (op == "softmax0") {
            test::setInt(m.node("Softmax", {"r"}, "softmax0"), "axis", 0);
        } else if (op == "reducesum") {
            auto* n = m.node("ReduceSum", {"r", "axes"}, "reducesum");
            m.ints("axes", {0});
            test::setInt(n, "keepdims", 1);
            dims = {1, 6};
        } else if (op == "fold") {
            dims = {2, 12};
            m.ints("flat", {2, 12});
            m.node("Reshape", {"r", "flat"}, "fold");
        } else if (op == "bn") {
            m.model.mutable_opset_import(0)->set_version(15);
            for (const char* p : {"bn_s", "bn_b", "bn_m", "bn_v"})
                m.weight(p, {6});
            auto* n =
                test::addNode(m.model, "BatchNormalization", {"r", "bn_s", "bn_b", "bn_m", "bn_v"},
                              {"bn", "bn_running_mean", "bn_running_var"});
            test::setInt(n, "training_mode", 1);
        } else if (op == "concat") {
            test::setInt(m.node("Concat", {"r", "r"}, "concat"), "axis", 0);
            dims = {8, 6};
        } else if (op == "gemm") {
            m.weight("g_w", {4, 3});
            test::setInt(m.node("Gemm", {"r", "g_w"}, "gemm"), "transA", 1);
            dims = {6, 3};
        } else if (op == "xtx") {
            m.node("Transpose", {"r"}, "rt");
            m.node("MatMul", {"rt", "r"}, "xtx");
            dims = {6, 6};
        }
        m.node("Neg", {op.toStdString()}, "y");
        const Graph graph = m.load("y", dims);
        const DeviceSet devices = vcpus(2);
        const PlanOptions options = splitting({"*=v0,v1"});
        const Plan plan = planDevices(graph, devices, options);
        const auto conflicts = splitConflicts(plan);
        QVERIFY2(!conflicts.empty(), qPrintable(conflictText(plan)));
        const NodeId illegal = *graph.find(op.toStdString());
        const Conflict* named = nullptr;
        for (const Conflict* c : conflicts) {
            if (c->nodes.size() == 1 && c->nodes[0] == illegal)
                named = c;
        }
        QVERIFY2(named, qPrintable(conflictText(plan)));
        QVERIFY2(QString::fromStdString(named->message).contains(why), named->message.c_str());
        QVERIFY2(QString::fromStdString(named->message).contains("'" + op + "'"),
                 named->message.c_str());
        // The largest legal part, the Relu before it, is still split; the op runs unsplit.
        QVERIFY(QString::fromStdString(named->suggestion).contains("largest legal part"));
        QCOMPARE(plan.reasons[graph.find("r")->index].kind, ReasonKind::Split);
        QVERIFY(plan.reasons[illegal.index].kind != ReasonKind::Split);
        QVERIFY(!planReportJson(graph, devices, options, plan).dump().empty());
    }

    void legalAxesAreKept() {
        // Softmax over the classes, a reduction and a transpose that keep the batch leading.
        Model m({4, 6, 5});
        m.node("Softmax", {"x"}, "s");                      // axis -1
        auto* reduce = m.node("ReduceMean", {"s"}, "mean"); // opset 13: axes an attribute
        test::setInts(reduce, "axes", {2});
        test::setInt(reduce, "keepdims", 1);
        test::setInts(m.node("Transpose", {"mean"}, "t"), "perm", {0, 2, 1});
        m.ints("shape", {4, -1});
        m.node("Reshape", {"t", "shape"}, "y");
        const Graph graph = m.load("y", {4, 6});
        const DeviceSet devices = vcpus(2);
        const Plan plan = planDevices(graph, devices, splitting({"*=v0,v1"}));
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        QCOMPARE(plan.splits[0].nodes.size(), std::size_t(4));
        checkSameOutputs(graph, devices, splitting({"*=v0,v1"}));
    }

    void batchFollowsTransposesAndReshapes() {
        // As PyTorch's attention moves it: [N, S, E] -> [S, N, E] -> [S, N*2, 4] -> a product ->
        // [S*N*2, 5] -> [S, N, 10] -> [N, S, 10]; the flat middle value is a result too, leaving
        // the region with the batch inside its axis.
        Model m({4, 6, 8});
        test::setInts(m.node("Transpose", {"x"}, "t1"), "perm", {1, 0, 2});
        m.ints("heads", {6, 8, 4});
        m.node("Reshape", {"t1", "heads"}, "r1");
        m.weight("w", {4, 5});
        m.node("MatMul", {"r1", "w"}, "mm");
        m.ints("flat", {48, 5});
        m.node("Reshape", {"mm", "flat"}, "f");
        m.node("Relu", {"f"}, "middle");
        m.ints("back", {6, 4, 10});
        m.node("Reshape", {"middle", "back"}, "r2");
        test::setInts(m.node("Transpose", {"r2"}, "y"), "perm", {1, 0, 2});
        test::addValue(m.model.mutable_graph()->mutable_output(), "middle", {48, 5});
        const Graph graph = m.load("y", {4, 6, 10});
        const DeviceSet devices = vcpus(3);
        for (const char* text : {"*=v0,v1", "*=v0:3,v1,v2"}) {
            const PlanOptions options = splitting({text});
            const Plan plan = planDevices(graph, devices, options);
            QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
            const SplitRegion& region = plan.splits[0];
            QCOMPARE(region.nodes.size(), std::size_t(7));
            auto axisOf = [&](const char* name) {
                const NodeId id = *graph.find(name);
                const auto at = std::find(region.nodes.begin(), region.nodes.end(), id);
                return region.axes[static_cast<std::size_t>(at - region.nodes.begin())][0];
            };
            QCOMPARE(axisOf("t1"), (BatchAxis{1, 1, 1}));
            QCOMPARE(axisOf("r1"), (BatchAxis{1, 1, 2}));
            QCOMPARE(axisOf("middle"), (BatchAxis{0, 6, 2}));
            QCOMPARE(axisOf("y"), (BatchAxis{0, 1, 1}));
            // The heads' shape constant is each shard's own: [6, rows*2, 4].
            const Graph& sharded = plan.sharded->graph;
            QCOMPARE(sharded.type(ValueRef{*sharded.find("r1/split1.1"), 0}).shape,
                     (std::vector<std::int64_t>{6, 2 * region.shards[1].rows(), 4}));
            checkSameOutputs(graph, devices, options);
            checkSameOutputs(graph, devices, options, true);
        }
        // A reshape that spreads the batch over two axes cannot be split.
        Model spread({4, 6});
        spread.ints("two", {2, 12});
        spread.node("Reshape", {"x", "two"}, "y");
        const Graph folded = spread.load("y", {2, 12});
        const Plan plan = planDevices(folded, vcpus(2), splitting({"*=v0,v1"}));
        QVERIFY2(conflictText(plan).contains("folds the batch axis into others"),
                 qPrintable(conflictText(plan)));
    }

    void splitsATransformerEncoder() {
        // PyTorch's encoder layers at batch 4: embedding, attention (whose batch moves through
        // transposes and reshapes), layer norms, the feed-forward part.
        auto loaded = loadModelFile(std::string(PLACER_SOURCE_DIR) +
                                        "/resources/models/tiny_encoder_batch4.onnx",
                                    GraphFormat::Onnx, vcpus(3));
        QVERIFY(loaded.ok());
        const Graph& graph = loaded.value().graph;
        const DeviceSet devices = vcpus(3);
        const PlanOptions options = splitting({"*=v0,v1:2,v2"});
        const Plan plan = planDevices(graph, devices, options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        // Every op is split but those computing on weights alone (Identity, Pow of constants),
        // which run once.
        QCOMPARE(plan.splits[0].nodes.size(), std::size_t(94));
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            const Node& node = graph.nodes()[i];
            if (node.role() != OpRole::Compute || plan.reasons[i].kind == ReasonKind::Split)
                continue;
            for (ValueRef input : node.inputs) {
                const Node& producer = graph.node(input.node);
                QVERIFY2(!producer.isParameter() &&
                             plan.reasons[input.node.index].kind != ReasonKind::Split,
                         node.name.c_str());
            }
        }
        checkSameOutputs(graph, devices, options);
        checkSameOutputs(graph, devices, options, true);
    }

    void unevenSharesAndABatchThatDoesNotDivide() {
        Model m({7, 3, 8, 8});
        m.cnn(7);
        const Graph graph = m.load("y", {7, 5});
        const DeviceSet devices = vcpus(3);
        for (const char* text : {"*=v0:3,v1", "*=v0,v1,v2", "*=v2,v0:2"}) {
            const PlanOptions options = splitting({text});
            const Plan plan = planDevices(graph, devices, options);
            QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
            std::int64_t rows = 0;
            for (const Shard& shard : plan.splits[0].shards) {
                QCOMPARE(shard.begin, rows);
                QVERIFY(shard.rows() > 0);
                rows = shard.end;
            }
            QCOMPARE(rows, std::int64_t(7));
            checkSameOutputs(graph, devices, options);
        }
        const Plan threeToOne = planDevices(graph, devices, splitting({"*=v0:3,v1"}));
        QCOMPARE(threeToOne.splits[0].shards[0].rows(), std::int64_t(5));
        QCOMPARE(threeToOne.splits[0].shards[1].rows(), std::int64_t(2));
    }

    void aBatchSmallerThanTheShardsSplitsNothing() {
        Model m({2, 3, 8, 8});
        m.cnn(2);
        const Graph graph = m.load("y", {2, 5});
        const DeviceSet devices = vcpus(3);
        const Plan plan = planDevices(graph, devices, splitting({"*=v0,v1,v2"}));
        const auto conflicts = splitConflicts(plan);
        QCOMPARE(conflicts.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(conflicts[0]->message)
                    .contains("batch of 2 is smaller than its 3 shards"));
        QVERIFY(!plan.sharded);
        QVERIFY(plan.splits[0].nodes.empty());
        // Shares that leave a device no rows.
        const Plan starved = planDevices(graph, vcpus(2), splitting({"*=v0:9,v1"}));
        QVERIFY(conflictText(starved).contains("'v1' would get no rows"));
        QVERIFY(!starved.sharded);
    }

    void nestedAndAdjacentRegions() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        const Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(3);
        // Nested: the second region's nodes belong to the first, which keeps them.
        const Plan nested = planDevices(graph, devices, splitting({"*=v0,v1", "c*=v1,v2"}));
        const auto conflicts = splitConflicts(nested);
        QCOMPARE(conflicts.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(conflicts[0]->message).contains("may neither overlap"));
        QVERIFY(nested.splits[1].nodes.empty());
        // Adjacent and alike: the shards flow from one region to the next without a concat.
        const PlanOptions alike = splitting({"[cr]*=v0,v1", "[!cr]*=v0,v1"});
        const Plan adjacent = planDevices(graph, devices, alike);
        QVERIFY2(adjacent.conflicts.empty(), qPrintable(conflictText(adjacent)));
        QVERIFY(!adjacent.splits[0].nodes.empty() && !adjacent.splits[1].nodes.empty());
        QCOMPARE(countOp(adjacent.sharded->graph, "Concat"), 1);
        QCOMPARE(countOp(adjacent.sharded->graph, "Split"), 1);
        checkSameOutputs(graph, devices, alike);
        // Adjacent on other devices: concatenated, then split again.
        const PlanOptions unlike = splitting({"[cr]*=v0,v1", "[!cr]*=v1:3,v2"});
        const Plan moved = planDevices(graph, devices, unlike);
        QVERIFY2(moved.conflicts.empty(), qPrintable(conflictText(moved)));
        QCOMPARE(countOp(moved.sharded->graph, "Concat"), 3); // c2 and r1 leave split1, y split2
        QVERIFY(countOp(moved.sharded->graph, "Split") >= 2);
        checkSameOutputs(graph, devices, unlike);
    }

    void pinsInsideARegion() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(3);
        // A pin on one of the region's devices is kept and the node is split.
        graph.node(*graph.find("r1")).pin = Pin{PinKind::Plain, DeviceId(1), "--pin r1=v1"};
        Plan plan = planDevices(graph, devices, splitting({"*=v0,v1"}));
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        QCOMPARE(plan.reasons[graph.find("r1")->index].kind, ReasonKind::Split);
        // A pin elsewhere wins, with a conflict that names both.
        graph.node(*graph.find("r1")).pin = Pin{PinKind::Plain, DeviceId(2), "--pin r1=v2"};
        plan = planDevices(graph, devices, splitting({"*=v0,v1"}));
        const auto conflicts = splitConflicts(plan);
        QCOMPARE(conflicts.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(conflicts[0]->message).contains("'r1'"));
        QCOMPARE(conflicts[0]->sources.size(), std::size_t(2));
        QCOMPARE(plan.devices[graph.find("r1")->index], DeviceId(2));
        QCOMPARE(plan.reasons[graph.find("r1")->index].kind, ReasonKind::Pin);
        checkSameOutputs(graph, devices, splitting({"*=v0,v1"}));
    }

    void unknownDevicesAndEmptyMatches() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        const Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(2);
        Plan plan = planDevices(graph, devices, splitting({"*=v0,gpu"}));
        QVERIFY(conflictText(plan).contains("unknown device 'gpu'"));
        QVERIFY(!plan.sharded);
        plan = planDevices(graph, devices, splitting({"nothing*=v0,v1"}));
        QVERIFY(conflictText(plan).contains("matches no op"));
        QVERIFY(!plan.sharded);
    }

    void idempotentAndErasableWithSplits() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        const Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(2);
        // Batch splits, and shardings inside the ops (by output channels, then partial sums).
        for (const auto& [text, tensor] :
             {std::pair{"*=v0,v1", false}, std::pair{"[cr]*=v1:2,v0", false},
              std::pair{"*=v0,v1", true}, std::pair{"c*|r*=v1:3,v0", true}}) {
            const PlanOptions options = tensor ? sharding({text}) : splitting({text});
            const Plan once = planDevices(graph, devices, options);
            const Graph planned = applyPlan(graph, devices, once);
            const Plan twice = planDevices(planned, devices, options);
            const std::string first = test::snapshot(planned, devices);
            QCOMPARE(test::snapshot(applyPlan(planned, devices, twice), devices), first);
            const Graph erased = erasePlan(planned);
            QCOMPARE(
                test::snapshot(applyPlan(erased, devices, planDevices(erased, devices, options)),
                               devices),
                first);
            // Deterministic, down to the sharded graph and the report.
            const Plan again = planDevices(graph, devices, options);
            QCOMPARE(planReportJson(graph, devices, options, again).dump(),
                     planReportJson(graph, devices, options, once).dump());
            QCOMPARE(test::snapshot(again.sharded->graph, devices),
                     test::snapshot(once.sharded->graph, devices));
        }
    }

    void memoryCountsEachShardOnItsDevice() {
        Model m({8, 3, 16, 16});
        m.cnn(8);
        const Graph graph = m.load("y", {8, 5});
        const Plan whole = planDevices(graph, vcpus(2), PlanOptions{});
        const Plan split = planDevices(graph, vcpus(2), splitting({"*=v0,v1"}));
        // Each device holds its half of the activations and all the weights.
        const std::int64_t unsplit = whole.memory.devices[0].peakBytes;
        QVERIFY(split.memory.devices[0].peakBytes < unsplit);
        QVERIFY(split.memory.devices[1].peakBytes > 0);
        // A capacity the unsplit plan fits but the shard on v1 does not.
        const std::int64_t tight = split.memory.devices[1].peakBytes / 2;
        const DeviceSet limited = vcpus(2, (std::to_string(tight) + "B").c_str());
        const Plan over = planDevices(graph, limited, splitting({"*=v0,v1"}));
        bool found = false;
        for (const Conflict& conflict : over.conflicts)
            found = found || (conflict.kind == ConflictKind::MemoryCapacity &&
                              conflict.message.find("'v1'") != std::string::npos);
        QVERIFY2(found, qPrintable(conflictText(over)));
    }

    void shardsAnMlpColumnThenRow() {
        // Megatron's MLP: [4,16] x [16,32] by columns, Relu, x [32,16] by rows (partial sums),
        // the residual added once, then a Relu that needs the sum: one AllReduce.
        Model m({4, 16});
        m.weight("w1", {16, 32});
        m.node("MatMul", {"x", "w1"}, "up");
        m.node("Relu", {"up"}, "act");
        m.weight("w2", {32, 16});
        m.node("MatMul", {"act", "w2"}, "down");
        m.node("Add", {"down", "x"}, "res");
        m.node("Relu", {"res"}, "y");
        const Graph graph = m.load("y", {4, 16});
        const DeviceSet devices = vcpus(2);
        const PlanOptions options = sharding({"*=v0,v1"});
        const Plan plan = planDevices(graph, devices, options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        const SplitRegion& region = plan.splits[0];
        QVERIFY(region.tensor);
        QCOMPARE(heldBy(graph, region, "up"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "act"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "down"), QStringLiteral("P"));
        QCOMPARE(heldBy(graph, region, "res"), QStringLiteral("P"));
        QCOMPARE(heldBy(graph, region, "y"), QStringLiteral("R"));
        // One AllReduce of res, [4,16] float32 = 256 bytes, each of 2 devices receiving the
        // other's: 512 bytes together.
        QCOMPARE(collectivesText(graph, region), QStringLiteral("AllReduce res 512 for y\n"));
        QVERIFY(plan.sharded);
        const Graph& ran = plan.sharded->graph;
        QCOMPARE(countOp(ran, "Sum"), 2);
        QCOMPARE(countOp(ran, "Concat"), 0);
        // Each device holds half of each weight; neither holds a whole one.
        std::int64_t weights[2] = {0, 0};
        for (std::uint32_t j = 0; j < ran.size(); ++j) {
            const Node& node = ran.nodes()[j];
            if (!node.isConstant() || node.outputs[0].dtype != DType::Float32)
                continue;
            QVERIFY2(node.outputs[0].elementCount() == 16 * 16, node.name.c_str());
            const std::int32_t shard = plan.sharded->shard[j];
            QVERIFY2(shard == 0 || shard == 1, node.name.c_str());
            weights[shard] += node.outputs[0].bytes();
        }
        QCOMPARE(weights[0], std::int64_t(2 * 16 * 16 * 4));
        QCOMPARE(weights[1], std::int64_t(2 * 16 * 16 * 4));
        checkSameOutputs(graph, devices, options);
        // The report names every sharding and the collective.
        const std::string text = planSummary(graph, devices, options, plan);
        QVERIFY2(text.find("shard1  --shard '*=v0,v1'  5 ops cut across v0 (share 1/2), v1 "
                           "(share 1/2)") != std::string::npos,
                 text.c_str());
        QVERIFY2(text.find("AllReduce: res  512 B  for y") != std::string::npos, text.c_str());
        const Json json = planReportJson(graph, devices, options, plan);
        const Json& entry = json.find("splits")->items()[0];
        QVERIFY(entry.find("tensor")->asBool());
        QCOMPARE(entry.find("collectives")->items()[0].find("bytes")->asInt(), std::int64_t(512));
        // Three devices, uneven shares: 32 columns as 16, 8, 8.
        const PlanOptions three = sharding({"*=v0:2,v1,v2"});
        const Plan uneven = planDevices(graph, vcpus(3), three);
        QVERIFY2(uneven.conflicts.empty(), qPrintable(conflictText(uneven)));
        QCOMPARE(uneven.splits[0].ops[0].outputs[0].bounds,
                 (std::vector<std::int64_t>{0, 16, 24, 32}));
        checkSameOutputs(graph, vcpus(3), three);
    }

    void shardsAConvolutionByOutputChannels() {
        Model m({1, 3, 8, 8});
        m.conv("x", "c1", 3, 8);
        m.node("Relu", {"c1"}, "r1");
        m.conv("r1", "c2", 8, 4);
        m.node("Sigmoid", {"c2"}, "y");
        const Graph graph = m.load("y", {1, 4, 8, 8});
        const DeviceSet devices = vcpus(2);
        const PlanOptions options = sharding({"c1|r1=v0,v1"});
        const Plan plan = planDevices(graph, devices, options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        const SplitRegion& region = plan.splits[0];
        QCOMPARE(heldBy(graph, region, "c1"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "r1"), QStringLiteral("S(1)"));
        // r1 leaves the region cut on its channels: gathered once, on one device, which
        // receives the other's half of [1,8,8,8] float32 (2 KiB): 1 KiB.
        QCOMPARE(collectivesText(graph, region), QStringLiteral("Gather r1 1024 for c2\n"));
        checkSameOutputs(graph, devices, options);
        // The whole pair of convolutions: by output channels, then by input channels (a partial
        // sum, the bias added once), summed for the Sigmoid on each device.
        const PlanOptions both = sharding({"*=v0,v1"});
        const Plan all = planDevices(graph, devices, both);
        QVERIFY2(all.conflicts.empty(), qPrintable(conflictText(all)));
        QCOMPARE(heldBy(graph, all.splits[0], "c2"), QStringLiteral("P"));
        QCOMPARE(collectivesText(graph, all.splits[0]),
                 QStringLiteral("AllReduce c2 2048 for y\n"));
        checkSameOutputs(graph, devices, both);
        // The small CNN (a residual, pooling, a reshape, a product, a softmax) over three
        // devices with uneven shares, optimised as placer run does and not.
        Model cnn({2, 3, 8, 8});
        cnn.cnn(2);
        const Graph small = cnn.load("y", {2, 5});
        checkSameOutputs(small, vcpus(3), sharding({"*=v0,v1:2,v2"}));
        checkSameOutputs(small, vcpus(3), sharding({"*=v0,v1:2,v2"}), true);
    }

    void aReshapeThatSplitsTheCutAxisUnevenlyReshards() {
        // [2,8] x [8,12] by columns: each of 2 devices holds 6 of 12 columns. Reshaped to
        // [2,2,6] the cut falls between the blocks: kept as S(1). Reshaped to [2,3,4] the cut
        // at column 6 falls inside a block of 4: the reshape reads the whole (AllGather).
        for (const bool even : {true, false}) {
            Model m({2, 8});
            m.weight("w", {8, 12});
            m.node("MatMul", {"x", "w"}, "mm");
            const std::vector<std::int64_t> to =
                even ? std::vector<std::int64_t>{2, 2, 6} : std::vector<std::int64_t>{2, 3, 4};
            m.ints("shape", to);
            m.node("Reshape", {"mm", "shape"}, "r");
            m.node("Tanh", {"r"}, "y");
            const Graph graph = m.load("y", to);
            const PlanOptions options = sharding({"*=v0,v1"});
            const Plan plan = planDevices(graph, vcpus(2), options);
            QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
            const SplitRegion& region = plan.splits[0];
            QCOMPARE(heldBy(graph, region, "mm"), QStringLiteral("S(1)"));
            if (even) {
                QCOMPARE(heldBy(graph, region, "r"), QStringLiteral("S(1)"));
                QCOMPARE(heldBy(graph, region, "y"), QStringLiteral("S(1)"));
                QCOMPARE(collectivesText(graph, region), QStringLiteral("Gather y 48 for the "
                                                                        "graph's output 'y'\n"));
            } else {
                QCOMPARE(heldBy(graph, region, "r"), QStringLiteral("R"));
                QVERIFY(region.ops[1].why.find("fall inside the blocks") != std::string::npos);
                QCOMPARE(collectivesText(graph, region), QStringLiteral("AllGather mm 96 for r\n"));
            }
            checkSameOutputs(graph, vcpus(2), options);
        }
    }

    void shardsAttentionByHeads() {
        // One attention block at batch 1, 4 tokens, 2 heads of 4: Q, K and V by columns (so by
        // heads once reshaped to [1,4,2,4] and transposed to [1,2,4,4]), scores and softmax
        // per head, the context back to [1,4,8] and the output projection by rows: one
        // AllReduce.
        Model m({1, 4, 8});
        for (const char* p : {"q", "k", "v"}) {
            m.weight(std::string(p) + "_w", {8, 8});
            m.node("MatMul", {"x", std::string(p) + "_w"}, p);
            m.ints(std::string(p) + "_shape", {1, 4, 2, 4});
            m.node("Reshape", {p, std::string(p) + "_shape"}, std::string(p) + "_heads");
            onnx::NodeProto* t =
                m.node("Transpose", {std::string(p) + "_heads"}, std::string(p) + "_t");
            test::setInts(t, "perm",
                          p == std::string("k") ? std::vector<std::int64_t>{0, 2, 3, 1}
                                                : std::vector<std::int64_t>{0, 2, 1, 3});
        }
        m.node("MatMul", {"q_t", "k_t"}, "scores");
        m.weight("scale", {1});
        m.node("Mul", {"scores", "scale"}, "scaled");
        m.node("Softmax", {"scaled"}, "probs");
        m.node("MatMul", {"probs", "v_t"}, "ctx");
        onnx::NodeProto* back = m.node("Transpose", {"ctx"}, "ctx_t");
        test::setInts(back, "perm", {0, 2, 1, 3});
        m.ints("ctx_shape", {1, 4, 8});
        m.node("Reshape", {"ctx_t", "ctx_shape"}, "merged");
        m.weight("o_w", {8, 8});
        m.node("MatMul", {"merged", "o_w"}, "out");
        m.node("Add", {"out", "x"}, "res");
        m.weight("ln_s", {8});
        m.weight("ln_b", {8});
        m.node("LayerNormalization", {"res", "ln_s", "ln_b"}, "y");
        m.model.mutable_opset_import(0)->set_version(17);
        const Graph graph = m.load("y", {1, 4, 8});
        const DeviceSet devices = vcpus(2);
        const PlanOptions options = sharding({"*=v0,v1"});
        const Plan plan = planDevices(graph, devices, options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        const SplitRegion& region = plan.splits[0];
        QCOMPARE(heldBy(graph, region, "q_heads"), QStringLiteral("S(2)"));
        QCOMPARE(heldBy(graph, region, "q_t"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "scores"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "probs"), QStringLiteral("S(1)"));
        QCOMPARE(heldBy(graph, region, "merged"), QStringLiteral("S(2)"));
        QCOMPARE(heldBy(graph, region, "out"), QStringLiteral("P"));
        QCOMPARE(collectivesText(graph, region), QStringLiteral("AllReduce res 256 for y\n"));
        checkSameOutputs(graph, devices, options);
    }

    void twoShardingsMeetingOrOverlapping() {
        // Two regions over the same nodes: the first keeps them, named in the conflict.
        Model m({4, 16});
        m.weight("w1", {16, 32});
        m.node("MatMul", {"x", "w1"}, "up");
        m.node("Relu", {"up"}, "act");
        m.weight("w2", {32, 16});
        m.node("MatMul", {"act", "w2"}, "y");
        const Graph graph = m.load("y", {4, 16});
        const Plan overlap = planDevices(graph, vcpus(3), sharding({"*=v0,v1", "act=v1,v2"}));
        QVERIFY2(conflictText(overlap).contains("already split by '--shard *=v0,v1'"),
                 qPrintable(conflictText(overlap)));
        // A product whose inputs are cut on different axes reads the second whole.
        Model cross({4, 16});
        cross.weight("w1", {16, 16});
        cross.node("MatMul", {"x", "w1"}, "a"); // S(1)
        cross.node("Transpose", {"a"}, "at");   // S(0) of [16,4]
        cross.node("MatMul", {"a", "at"}, "y"); // S(1) x S(0): both cut on the reduced axis
        const Graph g2 = cross.load("y", {4, 4});
        const PlanOptions options = sharding({"*=v0,v1"});
        const Plan plan = planDevices(g2, vcpus(2), options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        QCOMPARE(heldBy(g2, plan.splits[0], "y"), QStringLiteral("P"));
        checkSameOutputs(g2, vcpus(2), options);
        // One reading the same cut value as a whole and as its own.
        Model mixed({4, 16});
        mixed.weight("w1", {16, 16});
        mixed.node("MatMul", {"x", "w1"}, "a"); // S(1)
        mixed.node("ReduceMax", {"a"}, "m");    // over every axis: reads a whole
        mixed.node("Sub", {"a", "m"}, "y");     // a cut, m broadcast
        const Graph g3 = mixed.load("y", {4, 16});
        const Plan plan3 = planDevices(g3, vcpus(2), options);
        QVERIFY2(plan3.conflicts.empty(), qPrintable(conflictText(plan3)));
        QCOMPARE(heldBy(g3, plan3.splits[0], "m"), QStringLiteral("R"));
        QCOMPARE(heldBy(g3, plan3.splits[0], "y"), QStringLiteral("S(1)"));
        QVERIFY(collectivesText(g3, plan3.splits[0]).startsWith("AllGather a 256 for m\n"));
        checkSameOutputs(g3, vcpus(2), options);
    }

    void aWeightTwiceADevicesMemoryPlansOnceSharded() {
        // w1 is 8 KiB; each of four devices holds 4 KiB: unsharded it fits none of them, sharded
        // each holds a quarter of it.
        Model m({2, 16});
        m.weight("w1", {16, 128});
        m.node("MatMul", {"x", "w1"}, "up");
        m.node("Relu", {"up"}, "act");
        m.weight("w2", {128, 4});
        m.node("MatMul", {"act", "w2"}, "y");
        const Graph graph = m.load("y", {2, 4});
        auto parsed = DeviceSet::parse("v0:vcpu:mem=4KiB,v1:vcpu:mem=4KiB,v2:vcpu:mem=4KiB,"
                                       "v3:vcpu:mem=4KiB");
        QVERIFY(parsed.ok());
        DeviceSet devices = parsed.take();
        devices.chooseDefaults();
        devices.setDefaultDevice(DeviceId(0));
        auto capacity = [](const Plan& plan) {
            int found = 0;
            for (const Conflict& conflict : plan.conflicts)
                found += conflict.kind == ConflictKind::MemoryCapacity ? 1 : 0;
            return found;
        };
        const Plan whole = planDevices(graph, devices, PlanOptions{});
        QVERIFY2(capacity(whole) > 0, qPrintable(conflictText(whole)));
        const PlanOptions options = sharding({"*=v0,v1,v2,v3"});
        const Plan plan = planDevices(graph, devices, options);
        QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
        for (const DeviceMemory& device : plan.memory.devices)
            QVERIFY2(device.peakBytes <= 4096, qPrintable(QString::number(device.peakBytes)));
        checkSameOutputs(graph, devices, options);
    }

    void autoModeShardsWherePredictedToPay() {
        // Two feed-forward layers at batch 1: large ones pay sharded, tiny ones do not; assumed
        // rates are not trusted to shard.
        auto layers = [](std::int64_t width) {
            Model m({1, 8, width});
            std::string last = "x";
            for (int k = 0; k < 2; ++k) {
                const std::string name = "l" + std::to_string(k);
                m.weight(name + "_up", {width, 4 * width});
                m.node("MatMul", {last, name + "_up"}, name + "_a");
                m.node("Relu", {name + "_a"}, name + "_r");
                m.weight(name + "_down", {4 * width, width});
                m.node("MatMul", {name + "_r", name + "_down"}, name + "_d");
                m.node("Add", {name + "_d", last}, name + "_res");
                m.node("Tanh", {name + "_res"}, name);
                last = name;
            }
            return m.load(last, {1, 8, width});
        };
        const DeviceSet devices = vcpus(2);
        auto calibrated = [&](bool measured) {
            // What placer calibrate would measure: the assumed rates, as measured.
            CostModel model = CostModel::assumed(devices, 2);
            if (measured) {
                Calibration calibration;
                for (const DeviceProfile& profile : model.physicalDevices()) {
                    calibration.devices.push_back(profile);
                    calibration.devices.back().calibrated = true;
                }
                model.apply(calibration);
            }
            return std::make_shared<const CostModel>(std::move(model));
        };
        auto notes = [](const Plan& plan) {
            QString text;
            for (const std::string& note : plan.notes)
                text += QString::fromStdString(note) + "\n";
            return text;
        };
        PlanOptions options;
        options.mode = PlanMode::Auto;
        options.costs = calibrated(true);
        const Graph large = layers(256);
        const Plan sharded = planDevices(large, devices, options);
        QVERIFY2(sharded.splits.size() == 1, qPrintable(notes(sharded)));
        QVERIFY(sharded.splits[0].tensor && sharded.splits[0].autoChosen);
        QVERIFY2(notes(sharded).contains("auto: every op sharded (--shard '*=v0,v1') is "
                                         "predicted") &&
                     notes(sharded).contains("so auto mode shards them"),
                 qPrintable(notes(sharded)));
        const std::string text = planSummary(large, devices, options, sharded);
        QVERIFY2(text.find("--shard '*=v0,v1' (chosen by auto mode)") != std::string::npos,
                 text.c_str());
        PlanOptions whole = options;
        whole.autoShard = false;
        const Plan placed = planDevices(large, devices, whole);
        QVERIFY(placed.splits.empty());
        const double gain = placed.prediction->makespanMicros / sharded.prediction->makespanMicros;
        QVERIFY2(gain > 1.2, qPrintable(QString::number(gain)));
        // Its outputs are one device's.
        const double diff = relativeDifference(
            run(large, devices, sharded, false),
            run(large, devices, planDevices(large, devices, PlanOptions{}), false));
        QVERIFY2(diff < 1e-5, qPrintable(QString::number(diff)));
        // Tiny layers: the collectives cost more than the halves save.
        const Plan tiny = planDevices(layers(4), devices, options);
        QVERIFY(tiny.splits.empty());
        QVERIFY2(notes(tiny).contains("so the ops stay whole"), qPrintable(notes(tiny)));
        // At assumed rates it says what it would do, and does not.
        options.costs = calibrated(false);
        const Plan assumed = planDevices(large, devices, options);
        QVERIFY(assumed.splits.empty());
        QVERIFY2(notes(assumed).contains("calibrate the devices"), qPrintable(notes(assumed)));
    }

    void randomShardedChainsMatchOneDevice() {
        // Chains of products, element-wise ops, transposes and reductions, with random sizes,
        // sharded over 2 to 4 vcpus with random shares: the outputs match one device.
        std::uint32_t state = 12345;
        auto next = [&](std::uint32_t n) {
            state = state * 1103515245u + 12345u;
            return (state >> 16) % n;
        };
        int cut = 0;
        for (int trial = 0; trial < 12; ++trial) {
            const std::int64_t rows = 2 + next(4), width = 8 + 4 * next(4);
            Model m({rows, width});
            std::string last = "x";
            std::int64_t cols = width;
            for (int layer = 0; layer < 4; ++layer) {
                const std::string name = "l" + std::to_string(layer);
                switch (next(5)) {
                case 0:
                case 1: {
                    const std::int64_t out = 8 + 4 * next(4);
                    m.weight(name + "_w", {cols, out});
                    m.node("MatMul", {last, name + "_w"}, name);
                    cols = out;
                    break;
                }
                case 2:
                    m.weight(name + "_b", {cols});
                    m.node("Add", {last, name + "_b"}, name);
                    break;
                case 3:
                    m.node(next(2) ? "Relu" : "Tanh", {last}, name);
                    break;
                default:
                    m.node("Softmax", {last}, name);
                    break;
                }
                last = name;
            }
            const Graph graph = m.load(last, {rows, cols});
            const int count = 2 + static_cast<int>(next(3));
            std::string request = "*=";
            for (int d = 0; d < count; ++d)
                request += (d ? ",v" : "v") + std::to_string(d) + ":" + std::to_string(1 + next(3));
            const PlanOptions options = sharding({request.c_str()});
            const Plan plan = planDevices(graph, vcpus(count), options);
            QVERIFY2(plan.conflicts.empty(), qPrintable(conflictText(plan)));
            cut += std::any_of(plan.splits[0].ops.begin(), plan.splits[0].ops.end(),
                               [](const TensorShardOp& op) {
                                   return op.outputs[0].kind != Sharding::Kind::Replicate;
                               });
            checkSameOutputs(graph, vcpus(count), options);
        }
        QVERIFY2(cut >= 8, qPrintable(QString("only %1 of 12 chains were cut").arg(cut)));
    }

    void reportListsTheRegion() {
        Model m({4, 3, 8, 8});
        m.cnn(4);
        const Graph graph = m.load("y", {4, 5});
        const DeviceSet devices = vcpus(2);
        const PlanOptions options = splitting({"*=v0:3,v1"});
        const Plan plan = planDevices(graph, devices, options);
        const std::string text = planSummary(graph, devices, options, plan);
        QVERIFY2(text.find("split1  --split '*=v0:3,v1'  8 ops, batch 4") != std::string::npos,
                 text.c_str());
        QVERIFY(text.find("shards: v0 rows 0-2 (3), v1 rows 3-3 (1)") != std::string::npos);
        QVERIFY(text.find("split:  x by x/split1.split on v0") != std::string::npos);
        QVERIFY(text.find("concat: y/split1.concat") != std::string::npos);
        QVERIFY(text.find("replicated weights: 6 constants") != std::string::npos);
        QVERIFY(text.find("v0+v1") != std::string::npos);
        const Json json = planReportJson(graph, devices, options, plan);
        const Json* splits = json.find("splits");
        QVERIFY(splits && splits->isArray() && splits->items().size() == 1);
        const Json& region = splits->items()[0];
        QCOMPARE(region.find("request")->asString(), std::string("*=v0:3,v1"));
        QCOMPARE(region.find("shards")->items()[1].find("begin")->asInt(), std::int64_t(3));
        QCOMPARE(region.find("split")->items().size(), std::size_t(1));
        QCOMPARE(region.find("concat")->items().size(), std::size_t(1));
    }
};

QTEST_GUILESS_MAIN(TestSplit)
#include "tst_split.moc"
