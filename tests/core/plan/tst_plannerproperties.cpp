// Properties of the planner over random DAGs with random pins and explicit copies:
// every edge is satisfied (same device, exactly one copy, or a replica); every pin is honoured
// unless a conflict names the node; determinism; idempotence; erasure (DESIGN.md §4.7). And with
// random split regions (plan/Split.h): the same three properties, a sharded graph that holds
// every split node once per shard where the plan says, and that computes what the unsplit graph
// computes.
#include "PlanTestUtil.h"

#include "device/DeviceMapping.h"
#include "device/DeviceRegistry.h"
#include "kernels/RandomTensor.h"
#include "passes/PassManager.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "report/PlanReport.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"

#include <QTest>

#include <cstdio>
#include <cstring>
#include <random>

using namespace placer;

namespace {

/// Graphs per row: 1000, or PLACER_PROPERTY_GRAPHS for a longer soak.
int graphCount() {
    const QByteArray value = qgetenv("PLACER_PROPERTY_GRAPHS");
    return value.isEmpty() ? 1000 : value.toInt();
}

/// A random DAG of element-wise ops over (rows, 3) float32 values, with parameters, constants,
/// plain and fixed pins on about a fifth of the nodes, and a few explicit device_copy nodes.
Graph randomGraph(std::mt19937& rng, int deviceCount, std::int64_t rows = 2) {
    const TensorType type{{rows, 3}, DType::Float32};
    const OpRegistry& ops = OpRegistry::global();
    const OpDef* unary[] = {ops.find("negative"), ops.find("exp"), ops.find("nn.relu")};
    const OpDef* binary[] = {ops.find("add"), ops.find("multiply"), ops.find("subtract")};
    auto chance = [&](int percent) { return static_cast<int>(rng() % 100) < percent; };
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    auto randomPin = [&]() {
        return Pin{chance(50) ? PinKind::Plain : PinKind::Fixed, DeviceId(pick(deviceCount)),
                   "random pin"};
    };

    Graph graph;
    const int inputs = 1 + pick(4);
    for (int i = 0; i < inputs; ++i) {
        Node node;
        const bool constant = chance(30);
        node.name = (constant ? "%k" : "%p") + std::to_string(i);
        node.op = constant ? &ops.constant() : &ops.parameter();
        node.outputs = {type};
        if (chance(20))
            node.pin = randomPin();
        graph.addNode(std::move(node));
    }
    const int count = 5 + pick(40);
    std::vector<int> uses;
    for (int i = 0; i < count; ++i) {
        const auto existing = static_cast<int>(graph.size());
        Node node;
        node.name = "%" + std::to_string(i);
        node.outputs = {type};
        // Prefer recent nodes so graphs are deep as well as wide.
        auto operand = [&]() {
            const int window = std::min(existing, 8);
            const int index = chance(70) ? existing - 1 - pick(window) : pick(existing);
            return ValueRef{NodeId(static_cast<std::uint32_t>(index)), 0};
        };
        if (chance(8)) {
            node.op = &ops.deviceCopy();
            node.inputs = {operand()};
            node.copySource = DeviceId(pick(deviceCount));
            node.copyDestination = DeviceId(pick(deviceCount));
        } else if (chance(40)) {
            node.op = unary[pick(3)];
            node.inputs = {operand()};
        } else {
            node.op = binary[pick(3)];
            node.inputs = {operand(), operand()};
        }
        if (!node.isDeviceCopy() && chance(20))
            node.pin = randomPin();
        graph.addNode(std::move(node));
    }
    // Every node nothing consumes is a result; sometimes a result must be on a given device.
    std::vector<bool> consumed(graph.size(), false);
    for (const Node& node : graph.nodes()) {
        for (const ValueRef& input : node.inputs)
            consumed[input.node.index] = true;
    }
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        if (!consumed[i])
            graph.addOutput(GraphOutput{ValueRef{NodeId(i), 0},
                                        chance(15) ? DeviceId(pick(deviceCount)) : DeviceId()});
    }
    return graph;
}

bool conflictNames(const Plan& plan, NodeId node) {
    for (const Conflict& conflict : plan.conflicts) {
        for (NodeId n : conflict.nodes) {
            if (n == node)
                return true;
        }
    }
    return false;
}

/// A random --split request over `graph`: the whole graph, a glob, or some ops by name; two or
/// three devices of `set`, with or without shares.
SplitRequest randomSplit(std::mt19937& rng, const Graph& graph, const DeviceSet& set) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    SplitRequest request;
    const int kind = pick(3);
    if (kind == 0) {
        request.nodePattern = "*";
    } else if (kind == 1) {
        request.nodePattern = "%" + std::to_string(pick(4)) + "*";
    } else {
        for (const Node& node : graph.nodes()) {
            if (node.role() == OpRole::Compute && pick(2) == 0)
                request.nodePattern += (request.nodePattern.empty() ? "" : "|") + node.name;
        }
        if (request.nodePattern.empty())
            request.nodePattern = "*";
    }
    std::vector<int> devices(static_cast<std::size_t>(set.size()));
    for (int d = 0; d < set.size(); ++d)
        devices[static_cast<std::size_t>(d)] = d;
    std::shuffle(devices.begin(), devices.end(), rng);
    const int count = 2 + pick(set.size() - 1);
    const bool shares = pick(2) == 0;
    for (int k = 0; k < count; ++k)
        request.shards.push_back(SplitShare{
            set[DeviceId(devices[static_cast<std::size_t>(k)])].name, shares ? 1 + pick(3) : 0});
    return request;
}

/// Runs what `plan` runs (the sharded graph when it splits) on fresh vcpus; the outputs' bytes.
std::vector<std::vector<std::byte>> runOutputs(const Graph& graph, const DeviceSet& set,
                                               const Plan& plan) {
    DeviceRegistry registry;
    std::vector<DeviceMapRequest> maps;
    for (int d = 0; d < set.size(); ++d)
        maps.push_back({set[DeviceId(d)].name, "vcpu" + std::to_string(d + 1)});
    std::vector<std::string> warnings;
    auto mapping = mapDevices(set, maps, registry, &warnings);
    if (!mapping)
        qFatal("mapping: %s", mapping.error().message.c_str());
    const OptimizedGraph ran = unoptimized(graph, plan);
    auto program = lowerToBytecode(ran.graph, set, ran.plan);
    if (!program)
        qFatal("lowering: %s", program.error().message.c_str());
    auto executor = Executor::load(ran.graph, set, program.take(), mapping.take());
    if (!executor)
        qFatal("load: %s", executor.error().message.c_str());
    std::vector<HostTensor> inputs;
    for (NodeId input : executor.value()->program().inputs)
        inputs.push_back(randomTensor(ran.graph.node(input).outputs[0], input.index + 1));
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        qFatal("run: %s", result.error().message.c_str());
    std::vector<std::vector<std::byte>> outputs;
    for (const HostTensor& output : result.value().outputs)
        outputs.emplace_back(output.data.raw(), output.data.raw() + output.data.size());
    return outputs;
}

} // namespace

class TestPlannerProperties : public QObject {
    Q_OBJECT

private slots:
    void properties_data();
    void properties();
    void splitProperties();
};

void TestPlannerProperties::splitProperties() {
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda,vcpu1:vcpu");
    std::mt19937 rng(11);
    const int graphs = std::max(1, graphCount() / 5);
    int sharded = 0, ran = 0;
    for (int iteration = 0; iteration < graphs; ++iteration) {
        Graph graph = randomGraph(rng, set.size(), 1 + static_cast<std::int64_t>(rng() % 7));
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            Node& node = graph.node(NodeId(i));
            if (!node.isConstant())
                continue;
            std::string bytes(static_cast<std::size_t>(node.outputs[0].bytes()), '\0');
            for (std::size_t b = 0; b + 4 <= bytes.size(); b += 4) {
                const float value = 0.25f * static_cast<float>((b / 4 + i) % 5) - 0.5f;
                std::memcpy(bytes.data() + b, &value, 4);
            }
            node.data = std::make_shared<const TensorData>(std::move(bytes));
        }
        PlanOptions options;
        options.constants = rng() % 2 ? ConstantPolicy::Replicate : ConstantPolicy::Copy;
        options.splits.push_back(randomSplit(rng, graph, set));
        if (rng() % 3 == 0)
            options.splits.push_back(randomSplit(rng, graph, set));
        const QByteArray context = "split graph " + QByteArray::number(iteration);
        const Plan plan = planDevices(graph, set, options);
        auto dump = [&] {
            std::fprintf(stderr, "%s\n%s\n%s\n", context.constData(),
                         test::snapshot(graph, set).c_str(),
                         planSummary(graph, set, options, plan).c_str());
        };
        // Determinism, idempotence and erasure, as without splits.
        QCOMPARE(planReportJson(graph, set, options, planDevices(graph, set, options)).dump(),
                 planReportJson(graph, set, options, plan).dump());
        const Graph planned = applyPlan(graph, set, plan);
        const std::string snapshot = test::snapshot(planned, set);
        if (test::snapshot(applyPlan(planned, set, planDevices(planned, set, options)), set) !=
            snapshot) {
            dump();
            QFAIL(context + ": plan(plan(g)) != plan(g)");
        }
        const Graph erased = erasePlan(planned);
        if (test::snapshot(applyPlan(erased, set, planDevices(erased, set, options)), set) !=
            snapshot) {
            dump();
            QFAIL(context + ": plan(erase(plan(g))) != plan(g)");
        }
        if (!plan.sharded)
            continue;
        ++sharded;
        // The sharded graph: each split node once per shard, on its shard's device, with its
        // shard's rows; every other compute node where the plan put it.
        const ShardedGraph& shards = *plan.sharded;
        std::vector<int> copies(graph.size(), 0);
        for (std::uint32_t j = 0; j < shards.graph.size(); ++j) {
            const Node& node = shards.graph.nodes()[j];
            const NodeId user = shards.origin[j];
            if (!user.valid())
                continue;
            ++copies[user.index];
            if (node.role() != OpRole::Compute)
                continue;
            DeviceId expected = plan.devices[user.index];
            if (shards.shard[j] >= 0) {
                const SplitRegion& region = plan.splits[static_cast<std::size_t>(shards.region[j])];
                const Shard& shard = region.shards[static_cast<std::size_t>(shards.shard[j])];
                expected = shard.device;
                if (node.outputs[0].shape[0] != shard.rows()) {
                    dump();
                    QFAIL(context + ": " + QByteArray::fromStdString(node.name) +
                          " does not have its shard's rows");
                }
            }
            if (shards.plan->devices[j] != expected) {
                dump();
                QFAIL(context + ": " + QByteArray::fromStdString(node.name) +
                      " runs off its device in the sharded graph");
            }
        }
        for (const SplitRegion& region : plan.splits) {
            for (NodeId node : region.nodes) {
                if (copies[node.index] != static_cast<int>(region.shards.size())) {
                    dump();
                    QFAIL(context + ": a split node is not there once per shard");
                }
            }
        }
        // What it computes: the unsplit graph's outputs, bit for bit (the same kernels on rows
        // that do not mix). Run for some of the graphs.
        if (iteration % 8 == 0) {
            ++ran;
            if (runOutputs(graph, set, plan) !=
                runOutputs(graph, set, planDevices(graph, set, {}))) {
                dump();
                QFAIL(context + ": the split graph computes other outputs");
            }
        }
    }
    std::printf("%d of %d graphs split, %d of them run\n", sharded, graphs, ran);
    QVERIFY(sharded > graphs / 4);
}

void TestPlannerProperties::properties_data() {
    QTest::addColumn<int>("mode");
    QTest::addColumn<int>("constants");
    QTest::addColumn<int>("seed");
    QTest::newRow("demand-replicate")
        << int(PlanMode::Demand) << int(ConstantPolicy::Replicate) << 1;
    QTest::newRow("demand-copy") << int(PlanMode::Demand) << int(ConstantPolicy::Copy) << 2;
    QTest::newRow("unify-replicate") << int(PlanMode::Unify) << int(ConstantPolicy::Replicate) << 3;
    QTest::newRow("unify-copy") << int(PlanMode::Unify) << int(ConstantPolicy::Copy) << 4;
}

void TestPlannerProperties::properties() {
    QFETCH(int, mode);
    QFETCH(int, constants);
    QFETCH(int, seed);
    const DeviceSet set = test::devices("cpu:cpu,gpu:cuda,vcpu1:vcpu");
    PlanOptions options;
    options.mode = static_cast<PlanMode>(mode);
    options.constants = static_cast<ConstantPolicy>(constants);
    std::mt19937 rng(static_cast<unsigned>(seed));

    const int graphs = graphCount();
    PlanWorkspace workspace;
    for (int iteration = 0; iteration < graphs; ++iteration) {
        const Graph graph = randomGraph(rng, set.size());
        const QByteArray header =
            "graph " + QByteArray::number(iteration) + " (seed " + QByteArray::number(seed) + ")";
        const Plan plan = planDevices(graph, set, options);
        // On failure, say what was planned: the graph and the plan summary (on stderr, since
        // QTest shortens long messages).
        const QByteArray& context = header;
        auto dump = [&] {
            std::fprintf(stderr, "%s\n%s\n%s\n", header.constData(),
                         test::snapshot(graph, set).c_str(),
                         planSummary(graph, set, options, plan).c_str());
        };

        // 1. Every edge joins nodes on one device, passes through exactly one copy, or reads a
        //    replica; explicit copies read their producer wherever it is.
        for (std::uint32_t c = 0; c < graph.size(); ++c) {
            const Node& consumer = graph.nodes()[c];
            if (consumer.isDeviceCopy())
                continue;
            for (const ValueRef& input : consumer.inputs) {
                const DeviceId from = plan.devices[input.node.index];
                const DeviceId to = plan.devices[c];
                if (from == to)
                    continue;
                int copies = 0;
                for (const CopyPlan& copy : plan.copies) {
                    if (!copy.isExplicit && copy.value == input && copy.to == to &&
                        copy.from == from &&
                        std::count(copy.consumers.begin(), copy.consumers.end(), NodeId(c)))
                        ++copies;
                }
                int replicas = 0;
                for (const Replica& replica : plan.replicas) {
                    if (replica.value == input &&
                        std::count(replica.devices.begin(), replica.devices.end(), to))
                        ++replicas;
                }
                if (copies + replicas != 1) {
                    dump();
                    QFAIL(context + ": edge " + QByteArray::fromStdString(graph.valueName(input)) +
                          " -> " + QByteArray::fromStdString(consumer.name) +
                          " crosses devices without exactly one copy");
                }
            }
        }
        // Copies are unique per (value, destination) and never to the same device.
        for (std::size_t i = 0; i < plan.copies.size(); ++i) {
            if (plan.copies[i].from == plan.copies[i].to) {
                dump();
                QFAIL(context + ": copy to itself");
            }
            for (std::size_t j = i + 1; j < plan.copies.size(); ++j) {
                const bool duplicate = plan.copies[i].value == plan.copies[j].value &&
                                       plan.copies[i].to == plan.copies[j].to &&
                                       !plan.copies[i].isExplicit && !plan.copies[j].isExplicit;
                if (duplicate) {
                    dump();
                    QFAIL(context + ": two copies of one value to one device");
                }
            }
        }

        // 2. Every pin is honoured unless a conflict names the node.
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            const Node& node = graph.nodes()[i];
            if (node.pin.active() && plan.devices[i] != node.pin.device &&
                !conflictNames(plan, NodeId(i))) {
                dump();
                QFAIL(context + ": pin on " + QByteArray::fromStdString(node.name) +
                      " ignored without a conflict");
            }
        }

        // Reason roots (memoised for all nodes) agree with walking each node's chain.
        const std::vector<NodeId> roots = plan.reasonRoots();
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            const std::vector<NodeId> chain = plan.reasonChain(NodeId(i));
            if (roots[i] != (chain.empty() ? NodeId() : chain.back())) {
                dump();
                QFAIL(context + ": reason root differs from the chain's end");
            }
        }

        // 3. Determinism: the same input gives a byte-identical report, also when planned in a
        //    workspace that earlier (different) graphs used.
        const Plan again = planDevices(graph, set, options, workspace);
        QCOMPARE(planReportJson(graph, set, options, again).dump(),
                 planReportJson(graph, set, options, plan).dump());

        // 4. Idempotence: planning the planned graph changes nothing.
        const Graph planned = applyPlan(graph, set, plan);
        const Plan replan = planDevices(planned, set, options);
        const Graph replanned = applyPlan(planned, set, replan);
        const std::string plannedSnapshot = test::snapshot(planned, set);
        if (test::snapshot(replanned, set) != plannedSnapshot) {
            dump();
            std::fprintf(stderr, "re-planned:\n%s\n",
                         planSummary(planned, set, options, replan).c_str());
            QFAIL(context + ": plan(plan(g)) != plan(g)\nfirst:\n" +
                  QByteArray::fromStdString(plannedSnapshot) + "\nsecond:\n" +
                  QByteArray::fromStdString(test::snapshot(replanned, set)));
        }

        // 5. Erasure: dropping inferred devices (keeping pins and copies) and planning again
        //    gives the same planned graph.
        const Graph erased = erasePlan(planned);
        const Graph restored = applyPlan(erased, set, planDevices(erased, set, options));
        if (test::snapshot(restored, set) != plannedSnapshot) {
            dump();
            QFAIL(context + ": plan(erase(plan(g))) != plan(g)");
        }
    }
}

QTEST_APPLESS_MAIN(TestPlannerProperties)
#include "tst_plannerproperties.moc"
