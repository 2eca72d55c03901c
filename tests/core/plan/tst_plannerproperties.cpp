// Properties of the planner over random DAGs with random pins and explicit copies:
// every edge is satisfied (same device, exactly one copy, or a replica); every pin is honoured
// unless a conflict names the node; determinism; idempotence; erasure (DESIGN.md §4.7).
#include "PlanTestUtil.h"

#include "io/PlanReport.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"

#include <QTest>

#include <cstdio>
#include <random>

using namespace placer;

namespace {

/// Graphs per row: 1000, or PLACER_PROPERTY_GRAPHS for a longer soak.
int graphCount() {
    const QByteArray value = qgetenv("PLACER_PROPERTY_GRAPHS");
    return value.isEmpty() ? 1000 : value.toInt();
}

/// A random DAG of element-wise ops over (2, 3) float32 values, with parameters, constants,
/// plain and fixed pins on about a fifth of the nodes, and a few explicit device_copy nodes.
Graph randomGraph(std::mt19937& rng, int deviceCount) {
    const TensorType type{{2, 3}, DType::Float32};
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

} // namespace

class TestPlannerProperties : public QObject {
    Q_OBJECT

private slots:
    void properties_data();
    void properties();
};

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
