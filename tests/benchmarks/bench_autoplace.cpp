// bench_autoplace: the automatic placement's quality and speed.
//
//   bench_autoplace [--quick] [--model FILE.onnx ...]
//
// 1. Quality against HEFT on random DAGs of the scheduling literature (tests/support/
//    RandomDags.h): 50-500 tasks, communication-to-computation ratios 0.1, 1 and 10, 2-4
//    heterogeneous devices, three graphs each. Both are simulated as the executor would run them;
//    prints the mean improvement and fails if auto placement is ever worse.
// 2. Quality against the exact programme (GLPK) on small graphs: our makespan over the proven
//    optimum, where GLPK proves one within its time limit.
// 3. Planning time of `placer plan --mode auto` (planDevices in PlanMode::Auto) on a graph of
//    ResNet-50's size and on 10,000 nodes, and on the ONNX models given with --model.
#include "RandomDags.h"
#include "io/ModelLoader.h"
#include "ir/DeviceSet.h"
#include "plan/AutoPlacer.h"
#include "plan/Planner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace placer;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// A ResNet-like graph of `n` ops: every third a convolution, the others residual adds.
Graph syntheticGraph(int n, const DeviceSet& devices) {
    std::string text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 64, 28, 28), float32], "
                       "%w: Tensor[(64, 64, 3, 3), float32]) {\n";
    const auto value = [](int i) { return i < 0 ? std::string("%x") : "%" + std::to_string(i); };
    for (int i = 0; i + 1 < n; ++i) {
        if (i % 3 == 0)
            text += "  " + value(i) + " = nn.conv2d(" + value(i - 1) +
                    ", %w, padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]);\n";
        else
            text += "  " + value(i) + " = add(" + value(i - 1) + ", " + value(i - 3) + ");\n";
    }
    text += "  nn.relu(" + value(n - 2) + ")\n}\n";
    auto loaded = loadModelText(text, "synthetic.relay", GraphFormat::Auto, devices);
    if (!loaded) {
        std::fprintf(stderr, "synthetic graph: %s\n", loaded.error().message.c_str());
        std::exit(1);
    }
    return loaded.take().graph;
}

double timePlan(const Graph& graph, const DeviceSet& devices, int repeats, Plan* last) {
    PlanOptions options;
    options.mode = PlanMode::Auto;
    PlanWorkspace workspace;
    std::vector<double> times;
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        *last = planDevices(graph, devices, options, workspace);
        times.push_back(secondsSince(start));
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::vector<std::string> models;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            models.push_back(argv[++i]);
        else {
            std::fprintf(stderr, "usage: bench_autoplace [--quick] [--model FILE]...\n");
            return 2;
        }
    }
    bool failed = false;

    // 1. Against HEFT.
    std::printf("== auto placement against HEFT (simulated makespan, as the executor runs it)\n");
    std::printf("%6s %5s %7s %10s %10s %8s %8s %8s\n", "tasks", "ccr", "devices", "heft ms",
                "auto ms", "ratio", "evals", "plan ms");
    const std::vector<int> sizes =
        quick ? std::vector<int>{50} : std::vector<int>{50, 100, 200, 500};
    const std::vector<double> ratios = {0.1, 1, 10};
    const std::vector<int> deviceCounts = quick ? std::vector<int>{2} : std::vector<int>{2, 3, 4};
    const int graphs = quick ? 1 : 3;
    double logSum = 0;
    int instances = 0, worse = 0;
    for (int n : sizes) {
        for (double ccr : ratios) {
            for (int devices : deviceCounts) {
                double heft = 0, ours = 0, millis = 0;
                int evaluations = 0;
                for (int g = 0; g < graphs; ++g) {
                    testing::RandomDagSpec spec;
                    spec.tasks = n;
                    spec.devices = devices;
                    spec.ccr = ccr;
                    spec.seed = static_cast<std::uint64_t>(n * 1000 + devices * 100 + g) +
                                static_cast<std::uint64_t>(ccr * 10);
                    const PlacementProblem problem = testing::randomDag(spec);
                    const auto start = std::chrono::steady_clock::now();
                    const AutoPlacement placed = autoPlace(problem);
                    millis += secondsSince(start) * 1000;
                    heft += placed.heftMakespan;
                    ours += placed.schedule.makespan;
                    evaluations += placed.evaluations;
                    logSum += std::log(placed.schedule.makespan / placed.heftMakespan);
                    ++instances;
                    if (placed.schedule.makespan > placed.heftMakespan * (1 + 1e-9)) {
                        ++worse;
                        failed = true;
                    }
                }
                std::printf("%6d %5.1f %7d %10.3f %10.3f %8.3f %8d %8.2f\n", n, ccr, devices,
                            heft / graphs / 1000, ours / graphs / 1000, ours / heft,
                            evaluations / graphs, millis / graphs);
            }
        }
    }
    const double meanRatio = std::exp(logSum / instances);
    std::printf("geometric mean auto/HEFT over %d graphs: %.3f (%.1f %% shorter); worse than "
                "HEFT on %d\n\n",
                instances, meanRatio, (1 - meanRatio) * 100, worse);

    // 2. Against the exact programme.
    std::printf("== auto placement against GLPK's proven optimum (small graphs)\n");
    std::printf("%6s %5s %7s %10s %10s %8s %10s\n", "tasks", "ccr", "devices", "optimum ms",
                "auto ms", "ratio", "status");
    double worst = 0;
    int solved = 0, tried = 0;
    const std::vector<int> smallSizes = quick ? std::vector<int>{6} : std::vector<int>{6, 8, 10};
    for (int n : smallSizes) {
        for (double ccr : ratios) {
            for (int devices : {2, 3}) {
                for (int g = 0; g < (quick ? 1 : 3); ++g) {
                    testing::RandomDagSpec spec;
                    spec.tasks = n;
                    spec.devices = devices;
                    spec.ccr = ccr;
                    spec.shape = 0.7;
                    spec.seed = static_cast<std::uint64_t>(77 + n * 100 + devices * 10 + g) +
                                static_cast<std::uint64_t>(ccr * 1000);
                    const PlacementProblem problem = testing::randomDag(spec);
                    const AutoPlacement placed = autoPlace(problem);
                    double optimum = 0;
                    std::string status;
                    ++tried;
                    const auto exact = solveExact(problem, quick ? 5 : 20, &optimum, &status);
                    if (!exact || status != "optimal") {
                        std::printf("%6d %5.1f %7d %10s %10.3f %8s %10s\n", n, ccr, devices, "-",
                                    placed.schedule.makespan / 1000, "-", status.c_str());
                        continue;
                    }
                    ++solved;
                    const double ratio = placed.schedule.makespan / optimum;
                    worst = std::max(worst, ratio);
                    std::printf("%6d %5.1f %7d %10.3f %10.3f %8.3f %10s %10.3f\n", n, ccr, devices,
                                optimum / 1000, placed.schedule.makespan / 1000, ratio,
                                status.c_str(), simulate(problem, *exact).makespan / 1000);
                }
            }
        }
    }
    std::printf("solved to optimality: %d of %d; worst auto/optimum: %.3f\n\n", solved, tried,
                worst);
    if (worst > 1.05)
        failed = true;

    // 3. Planning time.
    std::printf("== planning time, placer plan --mode auto (median of runs)\n");
    auto devices = DeviceSet::parse("cpu:cpu,gpu:cuda");
    if (!devices) {
        std::fprintf(stderr, "devices: %s\n", devices.error().message.c_str());
        return 1;
    }
    for (int n : quick ? std::vector<int>{200} : std::vector<int>{230, 10000}) {
        const Graph graph = syntheticGraph(n, devices.value());
        Plan plan;
        const double seconds = timePlan(graph, devices.value(), quick ? 1 : 5, &plan);
        std::printf("%6d ops: %8.2f ms, predicted %.3f ms, %d evaluations\n", n, seconds * 1000,
                    plan.prediction ? plan.prediction->makespanMicros / 1000 : 0.0,
                    plan.prediction ? plan.prediction->evaluations : 0);
    }
    for (const std::string& model : models) {
        auto loaded = loadModelFile(model, GraphFormat::Auto, devices.value());
        if (!loaded) {
            std::fprintf(stderr, "%s: %s\n", model.c_str(), loaded.error().message.c_str());
            failed = true;
            continue;
        }
        Plan plan;
        const Graph& graph = loaded.value().graph;
        const double seconds = timePlan(graph, devices.value(), 5, &plan);
        std::printf("%s (%zu nodes): %.2f ms, predicted %.3f ms (HEFT %.3f, best single device "
                    "%.3f), %d evaluations\n",
                    model.c_str(), graph.nodes().size(), seconds * 1000,
                    plan.prediction->makespanMicros / 1000, plan.prediction->heftMicros / 1000,
                    plan.prediction->singleDeviceMicros / 1000, plan.prediction->evaluations);
    }
    return failed ? 1 : 0;
}
