// The automatic placement: the executor's schedule as simulated, the optimiser against GLPK's
// proven optimum and against HEFT on random DAGs of the scheduling literature, its constraints
// (fixed tasks, kernels, memory), and PlanMode::Auto in the planner.
#include "RandomDags.h"

#include "io/ModelLoader.h"
#include "plan/AutoPlacer.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"

#include <cmath>

#include <QTest>

using namespace placer;

namespace {

/// Two tasks a -> b and an independent c, on two devices.
/// Two devices on resources of their own, with copies of `latency` µs + bytes / `bytesPerMicro`.
PlacementProblem twoDevices(double latency, double bytesPerMicro) {
    PlacementProblem problem;
    problem.devices = 2;
    problem.resourceOf = {0, 1};
    problem.setLinks(latency, bytesPerMicro);
    return problem;
}

PlacementProblem smallProblem(bool shareResource) {
    PlacementProblem problem = twoDevices(10, 1); // 10 µs + a byte per µs
    if (shareResource)
        problem.resourceOf = {0, 0};
    problem.addTask({100, 100});
    problem.addEdge(1, 50);
    problem.addTask({100, 100});
    problem.addTask({100, 100});
    return problem;
}

/// A chain of convolutions over 64x56x56 with constant weights, as a JSON graph.
std::string convChain(int convs, const std::string& devices) {
    std::string json = R"({"format": "placer-graph", "version": 1, "devices": [)" + devices +
                       R"(], "nodes": [
        {"name": "x", "op": "parameter", "outputs": [{"shape": [1, 64, 56, 56], "dtype": "float32"}]})";
    std::string previous = "x";
    for (int i = 0; i < convs; ++i) {
        const std::string k = std::to_string(i);
        json +=
            R"(, {"name": "w)" + k +
            R"(", "op": "constant", "outputs": [{"shape": [64, 64, 3, 3], "dtype": "float32"}]})";
        json += R"(, {"name": "conv)" + k + R"(", "op": "nn.conv2d", "inputs": [")" + previous +
                R"(", "w)" + k + R"("], "attrs": {"padding": [1, 1, 1, 1]}})";
        json +=
            R"(, {"name": "relu)" + k + R"(", "op": "nn.relu", "inputs": ["conv)" + k + R"("]})";
        previous = "relu" + k;
    }
    json += R"(], "outputs": [")" + previous + R"("]})";
    return json;
}

LoadedModel load(const std::string& json) {
    auto loaded = loadModelText(json, "chain.json", GraphFormat::Json, std::nullopt);
    if (!loaded)
        qFatal("%s", loaded.error().message.c_str());
    return loaded.take();
}

/// convChain(8) on a cpu and a gpu with `capacity` bytes of memory.
LoadedModel convChainWithGpuMemory(std::int64_t capacity) {
    return load(convChain(8, R"({"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda", )"
                             R"("memory": )" +
                                 std::to_string(capacity) + "}"));
}

/// Auto mode's plan for `model`, which must have no capacity conflict and keep the gpu's memory
/// plan within `capacity`.
void placeWithinCapacity(const LoadedModel& model, std::int64_t capacity, Plan* plan) {
    PlanOptions options;
    options.mode = PlanMode::Auto;
    *plan = planDevices(model.graph, model.devices, options);
    for (const Conflict& conflict : plan->conflicts)
        QVERIFY2(conflict.kind != ConflictKind::MemoryCapacity, conflict.message.c_str());
    QVERIFY(plan->memory.devices[model.devices.find("gpu")->index].peakBytes <= capacity);
}

NodeId node(const Graph& graph, const char* name) {
    const auto found = graph.find(name);
    if (!found)
        qFatal("no node %s", name);
    return *found;
}

} // namespace

class TestAutoPlace : public QObject {
    Q_OBJECT

private slots:
    // Devices of other ranks (device/Ranks.h) are named "rank1/vcpu1": a copy between ranks
    // costs the link measured between them ("rank0" -> "rank1"), else an assumed network link,
    // never the vcpus' in-process copy; their measured times are kept apart from this rank's.
    void copiesBetweenRanksCostTheirLink() {
        const DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu,c:vcpu").take();
        CostModel model = CostModel::assumed(
            devices, 4, {{"b", "rank1/vcpu1:threads=2"}, {"c", "rank1/cuda"}}, true);
        QCOMPARE(model.physical(DeviceId(1)).name, std::string("rank1/vcpu1"));
        QCOMPARE(model.physical(DeviceId(2)).name, std::string("rank1/cuda:0"));
        QVERIFY(model.physical(DeviceId(2)).gpu);
        QCOMPARE(CostModel::costClass("rank1/vcpu1"), std::string("rank1/vcpu"));
        QCOMPARE(CostModel::costClass("vcpu7"), std::string("vcpu"));
        const std::int64_t bytes = 1 << 20;
        const double assumedLink = model.copyMicros(bytes, DeviceId(0), DeviceId(1));
        QVERIFY2(std::abs(assumedLink - (30 + bytes / 1e3)) < 1e-6,
                 qPrintable(QString::number(assumedLink)));
        Calibration calibration;
        calibration.links[{"rank0", "rank1"}] = LinkProfile{10, 5e3, true};
        calibration.links[{"vcpu1", "vcpu2"}] = LinkProfile{1, 4e4, true};
        model.apply(calibration);
        QCOMPARE(model.copyMicros(bytes, DeviceId(0), DeviceId(1)), 10 + bytes / 5e3);
        // The other way was not measured: assumed.
        QCOMPARE(model.copyMicros(bytes, DeviceId(1), DeviceId(0)), 30 + bytes / 1e3);
        // Within one rank, the vcpus' own link.
        CostModel local = CostModel::assumed(devices, 4, {}, false);
        local.apply(calibration);
        QCOMPARE(local.copyMicros(bytes, DeviceId(0), DeviceId(1)), 1 + bytes / 4e4);
    }

    void simulationFollowsTheExecutor() {
        // Two resources: c runs beside a; b waits for a (no copy on one device).
        PlacementProblem apart = smallProblem(false);
        SimulatedSchedule s = simulate(apart, {0, 0, 1});
        QCOMPARE(s.makespan, 200.0);
        QCOMPARE(s.start[2], 0.0);
        // b on the other device waits for the copy: 10 + 50 µs.
        s = simulate(apart, {0, 1, 1});
        QCOMPARE(s.start[1], 160.0);
        QCOMPARE(s.makespan, 260.0);
        // Two devices on one resource never run at once.
        PlacementProblem shared = smallProblem(true);
        shared.setLinks(0, 1e300);
        s = simulate(shared, {0, 0, 1});
        QCOMPARE(s.makespan, 300.0);
        // The longest path goes first: a (then b) before c.
        QCOMPARE(s.start[0], 0.0);
        QCOMPARE(s.start[2], 200.0);
        QVERIFY(!apart.check());

        // An instant task (an explicit copy's arrival) takes no time and no resource: it ends
        // when its input has arrived, while its device is busy with other work.
        PlacementProblem withCopy;
        withCopy.devices = 2;
        withCopy.resourceOf = {0, 1};
        withCopy.setLinks(10, 1);
        withCopy.addTask({100, 100}); // 0: on device 0
        withCopy.addEdge(1, 50);
        withCopy.addTask({0, 0}, 1, true); // 1: arrives on device 1
        withCopy.addEdge(3, 0);
        withCopy.addTask({300, 300}); // 2: keeps device 1 busy from the start
        withCopy.addTask({100, 100}); // 3: reads the arrival on device 1
        QVERIFY(!withCopy.check());
        s = simulate(withCopy, {0, 1, 1, 1});
        QCOMPARE(s.start[1], 160.0); // 100 + 10 + 50, though device 1 is busy until 300
        QCOMPARE(s.end[1], 160.0);
        QCOMPARE(s.start[3], 300.0);
        QCOMPARE(s.makespan, 400.0);
    }

    void nearTheOptimumOnSmallGraphs() {
        int solved = 0;
        for (int g = 0; g < 12; ++g) {
            testing::RandomDagSpec spec;
            spec.tasks = 6 + g % 3;
            spec.devices = 2 + g % 2;
            spec.ccr = g % 3 == 0 ? 0.1 : g % 3 == 1 ? 1.0 : 10.0;
            spec.shape = 0.7;
            spec.seed = 500 + static_cast<std::uint64_t>(g);
            const PlacementProblem problem = testing::randomDag(spec);
            const AutoPlacement placed = autoPlace(problem);
            double optimum = 0;
            std::string status;
            const auto exact = solveExact(problem, 20, &optimum, &status);
            QVERIFY2(exact.has_value(), status.c_str());
            if (status != "optimal")
                continue;
            ++solved;
            // The programme's optimum is a lower bound for any schedule of the executor.
            QVERIFY(placed.schedule.makespan >= optimum * (1 - 1e-6));
            QVERIFY2(placed.schedule.makespan <= optimum * 1.05,
                     qPrintable(QString("graph %1: %2 against the optimum %3")
                                    .arg(g)
                                    .arg(placed.schedule.makespan)
                                    .arg(optimum)));
        }
        QVERIFY(solved >= 10);
    }

    void neverWorseThanHeft() {
        double logSum = 0;
        int count = 0;
        for (int tasks : {50, 120}) {
            for (double ccr : {0.1, 1.0, 10.0}) {
                testing::RandomDagSpec spec;
                spec.tasks = tasks;
                spec.devices = 3;
                spec.ccr = ccr;
                spec.seed =
                    static_cast<std::uint64_t>(tasks) + static_cast<std::uint64_t>(ccr * 10);
                const PlacementProblem problem = testing::randomDag(spec);
                AutoPlaceOptions options;
                options.searchWork = 2e6;
                const AutoPlacement placed = autoPlace(problem, options);
                const SimulatedSchedule heft = simulate(problem, heftAssignment(problem));
                QCOMPARE(placed.heftMakespan, heft.makespan);
                QVERIFY(placed.schedule.makespan <= heft.makespan);
                QVERIFY(placed.schedule.makespan <= placed.bestSingleDevice);
                logSum += std::log(placed.schedule.makespan / heft.makespan);
                ++count;
            }
        }
        // Better than HEFT on average, not only as good.
        QVERIFY(std::exp(logSum / count) < 0.99);
    }

    void deterministic() {
        testing::RandomDagSpec spec;
        spec.tasks = 80;
        spec.seed = 3;
        const PlacementProblem problem = testing::randomDag(spec);
        const AutoPlacement first = autoPlace(problem);
        const AutoPlacement second = autoPlace(problem);
        QCOMPARE(first.assignment, second.assignment);
        QCOMPARE(first.schedule.makespan, second.schedule.makespan);
    }

    void constraintsHold() {
        testing::RandomDagSpec spec;
        spec.tasks = 40;
        spec.devices = 3;
        spec.seed = 9;
        PlacementProblem problem = testing::randomDag(spec);
        // Task 5 must run on device 2; task 7 cannot run on device 0 or 1.
        problem.fixed[5] = 2;
        problem.cost[7 * 3 + 0] = kCannotRun;
        problem.cost[7 * 3 + 1] = kCannotRun;
        const AutoPlacement placed = autoPlace(problem);
        QCOMPARE(placed.assignment[5], 2);
        QCOMPARE(placed.assignment[7], 2);
        for (std::size_t t = 0; t < problem.tasks(); ++t)
            QVERIFY(problem.allowed(t, placed.assignment[t]));
    }

    void capacityLimitsWhatADeviceTakes() {
        // Device 1 is ten times faster but holds only three of the ten weights.
        PlacementProblem problem;
        problem.devices = 2;
        problem.resourceOf = {0, 1};
        problem.setLinks(1, 1e6);
        for (std::uint32_t t = 0; t < 10; ++t) {
            problem.addTask({1000, 100});
            if (t + 1 < 10)
                problem.addEdge(t + 1, 10);
            problem.addWeight(t);
            problem.weightBytes.push_back(1000);
            problem.outputBytes.back() = 10;
        }
        problem.capacity = {-1, 3100};
        const AutoPlacement placed = autoPlace(problem);
        QCOMPARE(placed.schedule.overflow, std::int64_t{0});
        const auto onFast = std::count(placed.assignment.begin(), placed.assignment.end(), 1);
        QCOMPARE(onFast, 3);
        QVERIFY(estimatedMemory(problem, placed.assignment)[1] <= 3100);
    }

    void aSplitMustBeWorthTheMargin() {
        // Two independent tasks on two equal devices, and a third that joins them: the split
        // saves a third of the time.
        PlacementProblem problem = twoDevices(1, 1e6);
        problem.addTask({100, 100});
        problem.addEdge(2, 8);
        problem.addTask({100, 100});
        problem.addEdge(2, 8);
        problem.addTask({100, 100});
        AutoPlaceOptions options;
        options.preferredDevice = 1;
        const AutoPlacement split = autoPlace(problem, options);
        QVERIFY(split.assignment[0] != split.assignment[1]);
        QVERIFY(!split.keptSingleDevice);
        options.splitMargin = 0.4; // a third is not enough
        const AutoPlacement kept = autoPlace(problem, options);
        QVERIFY(kept.keptSingleDevice);
        // Every task on the preferred device, as the best single device.
        QCOMPARE(kept.assignment, (std::vector<int>{1, 1, 1}));
        QCOMPARE(kept.schedule.makespan, kept.bestSingleDevice);
        options.splitMargin = 0.2;
        QVERIFY(!autoPlace(problem, options).keptSingleDevice);
    }

    void exactProgrammeOnSmallGraphs() {
        testing::RandomDagSpec spec;
        spec.tasks = 7;
        spec.devices = 2;
        spec.seed = 11;
        const PlacementProblem problem = testing::randomDag(spec);
        AutoPlaceOptions options;
        options.exact = true;
        const AutoPlacement placed = autoPlace(problem, options);
        QCOMPARE(placed.exactStatus, std::string("optimal"));
        QVERIFY(placed.exactOptimum.has_value());
        QVERIFY(placed.schedule.makespan <= *placed.exactOptimum * 1.05);
        options.exactMaxTasks = 3;
        QCOMPARE(autoPlace(problem, options).exactStatus, std::string("too large"));
    }

    void costModelMeasuredBeforeRoofline() {
        const LoadedModel model =
            load(convChain(1, R"({"name": "v0", "kind": "vcpu"}, {"name": "v1", "kind": "vcpu"})"));
        CostModel costs = CostModel::assumed(model.devices, 2);
        const NodeId conv = node(model.graph, "conv0");
        const DeviceId v0(0), v1(1);
        const auto roofline = costs.nodeCost(model.graph, conv, v0);
        QVERIFY(!roofline.measured);
        // 2 * 64*56*56 outputs * 576 weights each, against 100 GFLOP/s, plus the fixed costs.
        const OpWork work = opWork(model.graph, conv);
        QCOMPARE(work.flops, 2.0 * 64 * 56 * 56 * 576);
        QVERIFY(std::abs(roofline.micros - (work.flops / 1e5 + 2 + 1)) < 1e-6);
        // A measurement on any vcpu stands for every vcpu.
        costs.recordMeasured(CostModel::nodeKey(model.graph, conv), "vcpu7", 1000);
        const auto measured = costs.nodeCost(model.graph, conv, v1);
        QVERIFY(measured.measured);
        QCOMPARE(measured.micros, 1000.0 + costs.physical(v1).dispatchMicros);
        // Two vcpus are two resources; a copy between them costs latency plus bandwidth.
        QVERIFY(costs.resourceOf(v0) != costs.resourceOf(v1));
        QVERIFY(costs.copyMicros(1 << 20, v0, v1) > 0);
        // The snapshot reads back to the same model.
        auto again = CostModel::fromJson(costs.toJson());
        QVERIFY(again.ok());
        QCOMPARE(again.value().toJson().dump(), costs.toJson().dump());
        QVERIFY(
            !CostModel::fromJson(
                 Json::parse(R"({"physical": [{"name": "x", "flops_per_us": -1}]})", "bad").value())
                 .ok());
        // Two virtual devices mapped onto one physical device share it: no copy between them,
        // and never predicted to run at once.
        CostModel shared;
        shared.mapDevice(0, assumedProfile("vcpu1", false));
        shared.mapDevice(1, assumedProfile("vcpu1", false));
        QCOMPARE(shared.resourceOf(v0), shared.resourceOf(v1));
        QCOMPARE(shared.copyMicros(1 << 20, v0, v1), 0.0);
        // Three CPU contexts on two cores get two thirds of a core each.
        CostModel crowded;
        for (int d = 0; d < 3; ++d)
            crowded.mapDevice(d, assumedProfile("vcpu" + std::to_string(d), false));
        crowded.setCores(2);
        QVERIFY(std::abs(crowded.roofline(work, v0) - (2 + work.flops / 1e5 * 1.5)) < 1e-6);
    }

    void runOverheadIsPaidOncePerRun() {
        // Two independent tasks of 100 µs; a run pays the largest fixed cost of the devices
        // it uses, once.
        PlacementProblem problem = twoDevices(10, 1);
        problem.addTask({100, 100});
        problem.addTask({100, 100});
        problem.runMicros = {30, 50};
        QCOMPARE(simulate(problem, {0, 0}).makespan, 230.0);
        QCOMPARE(simulate(problem, {0, 1}).makespan, 150.0);
        QCOMPARE(simulate(problem, {1, 1}).makespan, 250.0);
        QCOMPARE(problem.runOverhead({0, 0}), 30.0);
        // The planner takes each device's from the cost model.
        const LoadedModel model = load(convChain(1, R"({"name": "v0", "kind": "vcpu"})"));
        auto costs = std::make_shared<CostModel>(CostModel::assumed(model.devices, 2));
        PlanOptions options;
        options.costs = costs;
        const double before =
            planDevices(model.graph, model.devices, options).prediction->makespanMicros;
        Calibration calibration;
        DeviceProfile slow = costs->physical(DeviceId(0));
        slow.runMicros += 1000;
        calibration.devices.push_back(slow);
        costs->apply(calibration);
        const double after =
            planDevices(model.graph, model.devices, options).prediction->makespanMicros;
        QVERIFY2(std::abs(after - before - 1000) < 1e-6, std::to_string(after - before).c_str());
    }

    void nodeCostsAreKeptForTheSameGraphAndModelOnly() {
        // A workspace planned again and again (the GUI's) keeps each node's cost on each device
        // (PlanWorkspace::NodeCosts): its predictions must be those of a fresh plan, after a
        // pin, a changed cost model and a changed graph alike.
        LoadedModel model = load(
            convChain(4, R"({"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda"})"));
        PlanWorkspace workspace;
        PlanOptions options;
        options.costs = std::make_shared<const CostModel>(CostModel::assumed(model.devices, 2));
        // The kept plan's node times, or nothing where it differs from a fresh plan.
        const auto samePrediction = [&](const char* when) -> std::vector<double> {
            const Plan kept = planDevices(model.graph, model.devices, options, workspace);
            const Plan fresh = planDevices(model.graph, model.devices, options);
            const bool same =
                kept.prediction && fresh.prediction && kept.devices == fresh.devices &&
                kept.prediction->micros == fresh.prediction->micros &&
                kept.prediction->alternativeMicros == fresh.prediction->alternativeMicros &&
                kept.prediction->makespanMicros == fresh.prediction->makespanMicros;
            if (!same)
                qWarning("the kept costs' prediction differs from a fresh plan's %s", when);
            return same ? kept.prediction->micros : std::vector<double>{};
        };
        const std::vector<double> first = samePrediction("first plan");
        QVERIFY(!first.empty());
        model.graph.setPin(node(model.graph, "conv1"),
                           Pin{PinKind::Plain, *model.devices.find("cpu"), "test"});
        QVERIFY(!samePrediction("after a pin").empty());
        // Another model: the gpu is a virtual CPU on a machine without one.
        options.costs =
            std::make_shared<const CostModel>(CostModel::assumed(model.devices, 2, {}, false));
        const std::vector<double> noGpu = samePrediction("with another cost model");
        QVERIFY(!noGpu.empty() && noGpu != first);
        // The same model changed in place (a calibration applied) answers anew.
        auto changing = std::make_shared<CostModel>(CostModel::assumed(model.devices, 2));
        options.costs = changing;
        const std::vector<double> before = samePrediction("before a calibration");
        QVERIFY(!before.empty());
        Calibration calibration;
        DeviceProfile slow = changing->physical(DeviceId(0));
        slow.flopsPerMicro /= 10;
        calibration.devices.push_back(slow);
        changing->apply(calibration);
        const std::vector<double> after = samePrediction("after a calibration");
        QVERIFY(!after.empty() && after != before);
        // A graph whose types changed (a new revision): its nodes are costed again.
        model.graph.node(node(model.graph, "conv2")).outputs[0].shape = {1, 64, 112, 112};
        const std::vector<double> larger = samePrediction("after the graph changed");
        QVERIFY(!larger.empty() && larger != after);
    }

    void fusedGroupsArePredictedAsOneOp() {
        // conv_k then relu_k, on one vcpu. The executor fuses each relu into its convolution
        // (passes/PassManager.h); here a stand-in Fusion says so.
        const LoadedModel model = load(convChain(2, R"({"name": "v0", "kind": "vcpu"})"));
        const Graph& graph = model.graph;
        const NodeId conv0 = node(graph, "conv0"), relu0 = node(graph, "relu0");
        const NodeId conv1 = node(graph, "conv1"), relu1 = node(graph, "relu1");
        const DeviceId v0(0);
        auto costs = std::make_shared<CostModel>(CostModel::assumed(model.devices, 2));
        PlanOptions options;
        options.costs = costs;
        const Plan unfused = planDevices(graph, model.devices, options);
        QVERIFY(unfused.prediction->micros[relu0.index] > 0);
        int asked = 0;
        costs->setFusion([&](const Graph& g, const std::vector<DeviceId>& devices,
                             const std::vector<bool>& cpu) {
            ++asked;
            std::vector<NodeId> fusedInto(g.size());
            for (const auto& [member, head] : {std::pair{relu0, conv0}, std::pair{relu1, conv1}}) {
                if (devices[member.index] == devices[head.index] && cpu[devices[head.index].index])
                    fusedInto[member.index] = head;
            }
            return fusedInto;
        });
        const Plan fused = planDevices(graph, model.devices, options);
        QVERIFY(asked > 0);
        const Prediction& p = *fused.prediction;
        QCOMPARE(p.fusedInto[relu0.index], conv0);
        QCOMPARE(p.fusedInto[relu1.index], conv1);
        QVERIFY(!p.fusedInto[conv0.index].valid());
        QCOMPARE(p.micros[relu0.index], 0.0);
        // The head's time is its group's: its kernel and its member's, with one dispatch.
        const double dispatch = costs->physical(v0).dispatchMicros;
        const double group = costs->nodeCost(graph, conv0, v0).micros +
                             costs->nodeCost(graph, relu0, v0).micros - dispatch;
        QVERIFY(std::abs(costs->groupCost(graph, conv0, {relu0}, v0).micros - group) < 1e-6);
        QVERIFY(std::abs(p.micros[conv0.index] - (group - dispatch)) < 1e-6);
        QVERIFY(p.makespanMicros < unfused.prediction->makespanMicros);
        QVERIFY(std::abs(unfused.prediction->makespanMicros - p.makespanMicros - 2 * dispatch) <
                1e-6);
        // A measured group is predicted from its measurement, kept under the group's key.
        const std::string key = CostModel::groupKey(graph, conv0, {relu0});
        QVERIFY2(key.ends_with(" fused nn.relu"), key.c_str());
        costs->recordMeasured(key, "vcpu3", 500);
        const Plan measured = planDevices(graph, model.devices, options);
        QCOMPARE(measured.prediction->micros[conv0.index], 500.0);
        QVERIFY(measured.prediction->measured[conv0.index]);
        // The conv alone keeps its own key: the group's time does not stand for it.
        QVERIFY(!costs->nodeCost(graph, conv0, v0).measured);
        // Auto mode says where an absorbed node went.
        options.mode = PlanMode::Auto;
        const Plan placed = planDevices(graph, model.devices, options);
        const std::string why = placed.explain(graph, model.devices, options, relu0);
        QVERIFY2(why == "auto: on v0, in conv0's fused kernel (no other device can run it)",
                 why.c_str());
    }

    void autoModeInThePlanner() {
        const LoadedModel model = load(
            convChain(4, R"({"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda"})"));
        PlanOptions options;
        options.mode = PlanMode::Auto;
        const Plan plan = planDevices(model.graph, model.devices, options);
        QVERIFY(plan.conflicts.empty());
        const DeviceId gpu = *model.devices.find("gpu");
        // The assumed GPU is far faster at convolutions than a CPU core.
        for (const char* name : {"conv0", "conv1", "conv2", "conv3"}) {
            QCOMPARE(plan.devices[node(model.graph, name).index], gpu);
            QCOMPARE(plan.reasons[node(model.graph, name).index].kind, ReasonKind::Auto);
        }
        const std::string why =
            plan.explain(model.graph, model.devices, options, node(model.graph, "conv1"));
        QVERIFY2(why.rfind("auto: ", 0) == 0 && why.find(" on gpu") != std::string::npos &&
                     why.find(", vs ") != std::string::npos &&
                     why.find(" on cpu") != std::string::npos,
                 why.c_str());
        QVERIFY(plan.prediction.has_value());
        QVERIFY(plan.prediction->makespanMicros > 0);
        QVERIFY(plan.prediction->makespanMicros <= plan.prediction->singleDeviceMicros);

        // The same plan again, and a pin is kept.
        const Plan again = planDevices(model.graph, model.devices, options);
        QCOMPARE(again.devices, plan.devices);
        Graph pinned = model.graph;
        const NodeId relu = node(pinned, "relu1");
        pinned.node(relu).pin = Pin{PinKind::Plain, *model.devices.find("cpu"), "test"};
        const Plan withPin = planDevices(pinned, model.devices, options);
        QCOMPARE(withPin.devices[relu.index], *model.devices.find("cpu"));
        QCOMPARE(withPin.reasons[relu.index].kind, ReasonKind::Pin);

        // Any mode predicts its schedule when given costs; auto's is no longer than demand's.
        PlanOptions demand;
        demand.costs = std::make_shared<CostModel>(CostModel::assumed(model.devices));
        const Plan demanded = planDevices(model.graph, model.devices, demand);
        QVERIFY(demanded.prediction.has_value());
        QVERIFY(plan.prediction->makespanMicros <= demanded.prediction->makespanMicros);
    }

    void autoModeKeepsToMemoryCapacity() {
        // Room on the GPU for the activations and about three of the eight weights.
        const LoadedModel model = convChainWithGpuMemory(2500000);
        Plan plan;
        placeWithinCapacity(model, 2500000, &plan);
        const DeviceId gpu = *model.devices.find("gpu");
        int convsOnGpu = 0;
        for (int i = 0; i < 8; ++i) {
            const std::string name = "conv" + std::to_string(i);
            convsOnGpu += plan.devices[node(model.graph, name.c_str()).index] == gpu ? 1 : 0;
        }
        QVERIFY2(convsOnGpu > 0 && convsOnGpu < 8, qPrintable(QString::number(convsOnGpu)));
    }

    void aFullDeviceStreamsConstantsWhenThatIsFaster() {
        // Room on the GPU for the activations and seven of the eight weights: the work stays
        // on the GPU (a CPU core is a hundred times slower at it), and the weight it cannot
        // keep lives on the CPU, copied in on every run just before its reader.
        const LoadedModel model = convChainWithGpuMemory(3500000);
        Plan plan;
        placeWithinCapacity(model, 3500000, &plan);
        PlanOptions options;
        options.mode = PlanMode::Auto;
        const DeviceId cpu = *model.devices.find("cpu"), gpu = *model.devices.find("gpu");
        int streamed = 0;
        for (int i = 0; i < 8; ++i) {
            const std::string conv = "conv" + std::to_string(i), w = "w" + std::to_string(i);
            QCOMPARE(plan.devices[node(model.graph, conv.c_str()).index], gpu);
            const NodeId weight = node(model.graph, w.c_str());
            if (plan.devices[weight.index] != cpu)
                continue;
            ++streamed;
            QCOMPARE(plan.reasons[weight.index].kind, ReasonKind::Offloaded);
            QCOMPARE(plan.explain(model.graph, model.devices, options, weight),
                     std::string("kept on cpu and copied to gpu on every run: gpu's memory "
                                 "cannot also keep it"));
            const auto copy =
                std::find_if(plan.copies.begin(), plan.copies.end(),
                             [&](const CopyPlan& c) { return c.value.node == weight; });
            QVERIFY(copy != plan.copies.end());
            QCOMPARE(copy->to, gpu);
        }
        QVERIFY2(streamed > 0, "no weight streamed");
        // The copies are in the prediction: each streamed weight's reader waits for it.
        QVERIFY(plan.prediction->makespanMicros > 0);
        const NodeId conv0 = node(model.graph, "conv0");
        if (plan.devices[node(model.graph, "w0").index] == cpu)
            QVERIFY(plan.prediction->copyInMicros[conv0.index] > 0);
        // With room for everything nothing is streamed, and the same work stays on the GPU.
        const LoadedModel roomy = load(
            convChain(8, R"({"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda"})"));
        const Plan kept = planDevices(roomy.graph, roomy.devices, options);
        QVERIFY(kept.copies.size() <= 2); // the input in, the result out
        for (const Reason& reason : kept.reasons)
            QVERIFY(reason.kind != ReasonKind::Offloaded);
    }
};

QTEST_GUILESS_MAIN(TestAutoPlace)
#include "tst_autoplace.moc"
