// The executor simulated event by event (plan/RunSimulator.h) against schedules computed by
// hand on small problems: two independent branches, a copy overlapped with a GPU's compute, a
// copy a CPU's worker makes in turn with its kernels, two transfers sharing a port, hosts
// sharing their network port, a pipeline's bubble, a release; and the planner's simulation of a
// plan (PlanOptions::simulate) against its list-scheduled prediction.
#include "RandomDags.h"

#include "io/ModelLoader.h"
#include "plan/AutoPlacer.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "plan/RunSimulator.h"

#include <cmath>

#include <QTest>

using namespace placer;

namespace {

/// `devices` devices on resources of their own; copies take `latency` µs + bytes /
/// `bytesPerMicro`.
PlacementProblem devicesLinked(int devices, double latency, double bytesPerMicro) {
    PlacementProblem problem;
    problem.devices = devices;
    for (int d = 0; d < devices; ++d)
        problem.resourceOf.push_back(d);
    problem.setLinks(latency, bytesPerMicro);
    return problem;
}

/// A task that costs `micros` on every one of `devices` devices.
std::vector<double> everywhere(int devices, double micros) {
    return std::vector<double>(static_cast<std::size_t>(devices), micros);
}

bool near(double a, double b) {
    return std::abs(a - b) < 1e-6 * std::max(1.0, std::abs(b));
}

} // namespace

class TestRunSimulator : public QObject {
    Q_OBJECT

private slots:
    /// a -> b on device 0, c alone on device 1: the branches run side by side.
    void independentBranchesRunSideBySide() {
        PlacementProblem problem = devicesLinked(2, 5, 1);
        problem.addTask(everywhere(2, 100)); // 0: a
        problem.addEdge(1, 10);
        problem.addTask(everywhere(2, 50));  // 1: b
        problem.addTask(everywhere(2, 120)); // 2: c
        const SimulatedRun run = simulateRun(problem, {0, 0, 1}, {});
        QVERIFY(run.transfers.empty());
        QVERIFY(near(run.end[1], 150));
        QVERIFY(near(run.start[2], 0) && near(run.end[2], 120));
        QVERIFY(near(run.makespan, 150));
        QVERIFY(near(run.deviceBusyMicros[0], 150) && near(run.deviceBusyMicros[1], 120));
        // The list-scheduled prediction agrees where no copy is made.
        QVERIFY(near(simulate(problem, {0, 0, 1}).makespan, 150));
    }

    /// A value from device 0 into a GPU (device 1) while the GPU computes: the transfer runs
    /// on the GPU's copy lane alongside its kernel; into a CPU device instead, the device's
    /// worker makes the copy, after (or before) its kernel, never during it.
    void aCopyIntoAGpuOverlapsItsCompute() {
        PlacementProblem problem = devicesLinked(2, 10, 1);
        problem.addTask(everywhere(2, 20));  // 0: p on device 0
        problem.addEdge(2, 30);              // its 30 bytes to the consumer
        problem.addTask(everywhere(2, 100)); // 1: the GPU's own work, from 0
        problem.addTask(everywhere(2, 5));   // 2: the consumer on device 1
        const std::vector<int> a{0, 1, 1};
        SimulatedMachine gpu;
        gpu.asynchronous = {0, 1};
        const SimulatedRun overlapped = simulateRun(problem, a, gpu);
        QCOMPARE(overlapped.transfers.size(), std::size_t{1});
        const SimulatedTransfer& copy = overlapped.transfers.front();
        // p ends at 20; the copy takes 10 + 30 = 40 on the copy lane, during the kernel.
        QVERIFY(near(copy.start, 20) && near(copy.end, 60) && near(copy.alone, 40));
        QVERIFY(near(overlapped.start[1], 0) && near(overlapped.end[1], 100));
        QVERIFY(near(overlapped.start[2], 100) && near(overlapped.makespan, 105));
        QVERIFY(near(overlapped.contentionMicros, 0) && near(overlapped.copyMicros, 40));
        // A CPU's worker: the kernel (longest path first) runs 0-100, the copy 100-140.
        const SimulatedRun serial = simulateRun(problem, a, {});
        QVERIFY(near(serial.transfers.front().start, 100));
        QVERIFY(near(serial.transfers.front().end, 140));
        QVERIFY(near(serial.makespan, 145));
        QVERIFY(near(serial.deviceBusyMicros[1], 145));
    }

    /// One value read by two consumers on one other device: one transfer, both wait for it.
    void aValueIsCopiedOncePerDevice() {
        PlacementProblem problem = devicesLinked(2, 0, 1);
        problem.addTask(everywhere(2, 10)); // 0
        problem.addEdge(1, 40);
        problem.addEdge(2, 40);
        problem.addTask(everywhere(2, 1)); // 1
        problem.addTask(everywhere(2, 1)); // 2
        const SimulatedRun run = simulateRun(problem, {0, 1, 1}, {});
        QCOMPARE(run.transfers.size(), std::size_t{1});
        QVERIFY(near(run.transfers.front().end, 50));
        QVERIFY(near(run.makespan, 52));
    }

    /// Two transfers leave device 0 at once for devices 1 and 2: they share its port, each at
    /// half the link's rate, and end together at twice the time either would take alone. To
    /// one device each from two sources they do not share.
    void twoTransfersShareAPort() {
        PlacementProblem problem = devicesLinked(3, 2, 10); // 2 µs + 10 bytes per µs
        problem.addTask(everywhere(3, 10));                 // 0 on device 0
        problem.addEdge(1, 1000);
        problem.addEdge(2, 1000);
        problem.addTask(everywhere(3, 1)); // 1 on device 1
        problem.addTask(everywhere(3, 1)); // 2 on device 2
        const SimulatedRun shared = simulateRun(problem, {0, 1, 2}, {});
        QCOMPARE(shared.transfers.size(), std::size_t{2});
        for (const SimulatedTransfer& transfer : shared.transfers) {
            // Alone: 2 + 100 = 102; shared: 2 + 200.
            QVERIFY(near(transfer.alone, 102));
            QVERIFY(near(transfer.start, 10) && near(transfer.end, 212));
        }
        QVERIFY(near(shared.contentionMicros, 200));
        QVERIFY(near(shared.makespan, 213));
        // The list-scheduled prediction has each copy alone.
        QVERIFY(near(simulate(problem, {0, 1, 2}).makespan, 113));

        PlacementProblem apart = devicesLinked(4, 2, 10);
        apart.addTask(everywhere(4, 10)); // 0 on device 0
        apart.addEdge(2, 1000);
        apart.addTask(everywhere(4, 10)); // 1 on device 1
        apart.addEdge(3, 1000);
        apart.addTask(everywhere(4, 1)); // 2 on device 2
        apart.addTask(everywhere(4, 1)); // 3 on device 3
        const SimulatedRun separate = simulateRun(apart, {0, 1, 2, 3}, {});
        QVERIFY(near(separate.makespan, 113));
        QVERIFY(near(separate.contentionMicros, 0));
    }

    /// Two transfers between hosts from different devices to different devices still share
    /// the hosts' network ports; within one host they do not.
    void hostsShareTheirNetworkPort() {
        PlacementProblem problem = devicesLinked(4, 0, 10);
        problem.addTask(everywhere(4, 10)); // 0 on device 0 (host 0)
        problem.addEdge(2, 1000);
        problem.addTask(everywhere(4, 10)); // 1 on device 1 (host 0)
        problem.addEdge(3, 1000);
        problem.addTask(everywhere(4, 1)); // 2 on device 2 (host 1)
        problem.addTask(everywhere(4, 1)); // 3 on device 3 (host 1)
        SimulatedMachine machine;
        machine.host = {0, 0, 1, 1};
        const SimulatedRun between = simulateRun(problem, {0, 1, 2, 3}, machine);
        for (const SimulatedTransfer& transfer : between.transfers) {
            QVERIFY(transfer.betweenHosts);
            QVERIFY(near(transfer.end, 210));
        }
        machine.host = {0, 0, 0, 0};
        QVERIFY(near(simulateRun(problem, {0, 1, 2, 3}, machine).makespan, 111));
    }

    /// Two stages of two micro-batches (stage 1 on device 0, stage 2 on device 1, 10 µs each,
    /// free copies): the second device waits 10 µs for the first micro-batch (the bubble), the
    /// first device's second micro-batch overlaps the second device's first, and the run takes
    /// 30 µs rather than 40.
    void aPipelineHasItsBubble() {
        PlacementProblem problem = devicesLinked(2, 0, 1e9);
        problem.addTask(everywhere(2, 10)); // 0: stage 1, micro-batch 0
        problem.addEdge(2, 0);
        problem.addTask(everywhere(2, 10)); // 1: stage 1, micro-batch 1
        problem.addEdge(3, 0);
        problem.addTask(everywhere(2, 10)); // 2: stage 2, micro-batch 0
        problem.addTask(everywhere(2, 10)); // 3: stage 2, micro-batch 1
        problem.wave = {0, 1, 0, 1};
        const SimulatedRun run = simulateRun(problem, {0, 0, 1, 1}, {});
        QVERIFY(near(run.start[0], 0) && near(run.start[1], 10));
        QVERIFY(near(run.start[2], 10) && near(run.start[3], 20));
        QVERIFY(near(run.makespan, 30));
    }

    /// A task released late (a constant copied in on every run) waits for it; the run's fixed
    /// time is added once; a task's fixed part counts as launch.
    void releasesAndFixedTimes() {
        PlacementProblem problem = devicesLinked(1, 0, 1);
        problem.addTask({10});
        problem.addTask({10});
        problem.release = {0, 25};
        problem.runMicros = {7};
        problem.taskOverheadMicros = {2};
        const SimulatedRun run = simulateRun(problem, {0, 0}, {});
        QVERIFY(near(run.start[1], 25) && near(run.end[1], 35));
        QVERIFY(near(run.makespan, 42));
        QVERIFY(near(run.launchMicros, 4) && near(run.computeMicros, 16));
    }

    /// On random DAGs of the scheduling literature (tests/support/RandomDags.h) every
    /// dependency holds and no resource runs two tasks at once.
    void randomDagsKeepTheirDependencies() {
        for (std::uint32_t seed = 1; seed <= 20; ++seed) {
            testing::RandomDagSpec spec;
            spec.tasks = 40;
            spec.devices = 3;
            spec.seed = seed;
            const PlacementProblem problem = testing::randomDag(spec);
            std::vector<int> a(problem.tasks());
            for (std::size_t t = 0; t < a.size(); ++t) {
                a[t] = static_cast<int>((t * 7 + seed) % 3);
                while (!problem.allowed(t, a[t]))
                    a[t] = (a[t] + 1) % 3;
            }
            const SimulatedRun run = simulateRun(problem, a, {});
            for (std::size_t t = 0; t < problem.tasks(); ++t) {
                for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
                    const std::uint32_t s = problem.edgeTarget[e];
                    QVERIFY(run.start[s] + 1e-6 >= run.end[t]);
                }
                for (std::size_t u = t + 1; u < problem.tasks(); ++u) {
                    if (problem.instant[t] || problem.instant[u] ||
                        problem.resourceOf[static_cast<std::size_t>(a[t])] !=
                            problem.resourceOf[static_cast<std::size_t>(a[u])])
                        continue;
                    const bool apart =
                        run.end[t] <= run.start[u] + 1e-6 || run.end[u] <= run.start[t] + 1e-6;
                    QVERIFY2(
                        apart,
                        qPrintable(QStringLiteral("seed %1: %2 and %3").arg(seed).arg(t).arg(u)));
                }
            }
            // Copies as work and shared ports only add to the list schedule's copies as delays,
            // whose dependencies it keeps the same way.
            QVERIFY(run.makespan > 0);
        }
    }

    /// The planner simulates a plan when asked: two branches over a cpu and a vcpu, the
    /// simulation's nodes and transfers the plan's, its time at least the prediction's (it adds
    /// contention and never removes work), and nothing without the option.
    void thePlannerSimulatesWhenAsked() {
        const char* json = R"({"format": "placer-graph", "version": 1,
            "devices": [{"name": "a", "kind": "vcpu"}, {"name": "b", "kind": "vcpu"}],
            "nodes": [
              {"name": "x", "op": "parameter", "outputs": [{"shape": [256, 1024], "dtype": "float32"}]},
              {"name": "l", "op": "nn.relu", "inputs": ["x"], "pin": {"device": "a"}},
              {"name": "r", "op": "tanh", "inputs": ["x"], "pin": {"device": "b"}},
              {"name": "s", "op": "add", "inputs": ["l", "r"], "pin": {"device": "a"}}],
            "outputs": ["s"]})";
        auto loaded = loadModelText(json, "branches.json", GraphFormat::Json, std::nullopt);
        QVERIFY2(loaded, loaded ? "" : loaded.error().message.c_str());
        const LoadedModel& model = loaded.value();
        PlanOptions options;
        options.costs = std::make_shared<const CostModel>(CostModel::assumed(model.devices, 2));
        const Plan plain = planDevices(model.graph, model.devices, options);
        QVERIFY(plain.prediction && !plain.simulation);
        options.simulate = true;
        const Plan plan = planDevices(model.graph, model.devices, options);
        QVERIFY(plan.simulation);
        const Simulation& simulated = *plan.simulation;
        QVERIFY(!simulated.transfers.empty());
        const NodeId s = *model.graph.find("s");
        QVERIFY(simulated.end[s.index] > simulated.start[s.index]);
        QVERIFY(simulated.makespanMicros + 1e-6 >= plan.prediction->makespanMicros);
        QVERIFY(simulated.makespanMicros < 2 * plan.prediction->makespanMicros);
        QCOMPARE(simulated.deviceBusyMicros.size(), std::size_t{2});
    }
};

QTEST_GUILESS_MAIN(TestRunSimulator)
#include "tst_runsimulator.moc"
