// The memory plan: storages per device, reused by lifetime, with peak bytes.
#include "PlanTestUtil.h"

#include "plan/Planner.h"

#include <QTest>

using namespace placer;

class TestMemoryPlanner : public QObject {
    Q_OBJECT

private slots:
    void chainReusesTwoStorages();
    void storagesNeverShareWhileLive();
    void copiesAndReplicasLiveOnTheirDestination();
};

void TestMemoryPlanner::chainReusesTwoStorages() {
    const DeviceSet set = test::devices();
    const Graph graph = test::relay(
        "def @main(%x: Tensor[(256), float32]) { %0 = negative(%x); %1 = exp(%0); %2 = tanh(%1);"
        " %3 = sqrt(%2); %4 = nn.relu(%3); %4 }",
        set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    const DeviceMemory& gpu = plan.memory.devices[1];
    // The parameter has its own storage; five ops alternate between two (the result's last).
    QCOMPARE(gpu.storages.size(), std::size_t(3));
    QCOMPARE(gpu.peakBytes, std::int64_t{3 * 1024});
    QCOMPARE(gpu.liveBytes, std::int64_t{3 * 1024});
    QCOMPARE(plan.memory.devices[0].peakBytes, std::int64_t{0});
}

void TestMemoryPlanner::storagesNeverShareWhileLive() {
    const DeviceSet set = test::devices();
    const Graph graph = test::relay(
        "def @main(%x: Tensor[(64), float32], %y: Tensor[(128), float32]) {"
        " %0 = negative(%x); %1 = exp(%0); %2 = add(%0, %1);"
        " %3 = negative(%y); %4 = concatenate((%2, %2), axis=0); %5 = add(%3, %4); %5 }",
        set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    // Lifetimes in steps (node index): check that no two live tensors share a storage.
    std::vector<std::pair<int, int>> life(graph.size(), {0, 0});
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        life[i] = {int(i), int(i)};
    }
    for (std::uint32_t c = 0; c < graph.size(); ++c) {
        for (const ValueRef& in : graph.nodes()[c].inputs)
            life[in.node.index].second = std::max(life[in.node.index].second, int(c));
    }
    life[graph.outputs()[0].value.node.index].second = INT32_MAX;
    for (const TensorStorage& a : plan.memory.tensors) {
        for (const TensorStorage& b : plan.memory.tensors) {
            if (&a == &b || a.storage != b.storage)
                continue;
            const auto [aStart, aEnd] = life[a.value.node.index];
            const auto [bStart, bEnd] = life[b.value.node.index];
            QVERIFY2(aEnd < bStart || bEnd < aStart,
                     qPrintable(QString("%1 and %2 share storage %3 while both live")
                                    .arg(QString::fromStdString(graph.node(a.value.node).name))
                                    .arg(QString::fromStdString(graph.node(b.value.node).name))
                                    .arg(a.storage)));
        }
    }
    // Every storage is at least as large as each tensor placed in it.
    for (const TensorStorage& t : plan.memory.tensors)
        QVERIFY(plan.memory.storages[t.storage].bytes >= graph.type(t.value).bytes());
}

void TestMemoryPlanner::copiesAndReplicasLiveOnTheirDestination() {
    const DeviceSet set = test::devices();
    const Graph graph =
        test::relay("def @main(%x: Tensor[(10), float32]) { %c = 2f;"
                    " %0 = on_device(multiply(%x, %c), virtual_device=meta[VirtualDevice][0]);"
                    " add(%0, %c) }",
                    set);
    const Plan plan = planDevices(graph, set, PlanOptions{});
    QCOMPARE(plan.replicas.size(), std::size_t(1));
    // cpu: %x (40), the replica of %c (4), %0 (40). gpu: %c (4), the copy of %0 (40), add (40).
    QCOMPARE(plan.memory.devices[0].peakBytes, std::int64_t{84});
    QCOMPARE(plan.memory.devices[1].peakBytes, std::int64_t{84});
}

QTEST_APPLESS_MAIN(TestMemoryPlanner)
#include "tst_memoryplanner.moc"
