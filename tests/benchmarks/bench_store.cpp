// Plan store figures: saving and loading (and re-checking) the plan of a 5,000-node graph, and
// listing 10,000 plans. Each is the median of a few rounds in one run.
//
//   bench_store            the full run
//   bench_store --quick    500 nodes, 500 plans (what CTest runs)
#include "BenchFailures.h"
#include "io/ModelLoader.h"
#include "plan/Planner.h"
#include "store/PlanStore.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

using namespace placer;
using namespace placer::store;
using Clock = std::chrono::steady_clock;

namespace {

double millisSince(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

/// A chain of element-wise ops with a residual add every few nodes, as Relay text.
std::string chain(int nodes) {
    std::string text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(64, 64), float32]) {\n";
    std::string prev = "%x";
    for (int i = 0; i < nodes; ++i) {
        const std::string name = "%" + std::to_string(i);
        text += "  " + name + " = " +
                (i % 4 == 3 ? "add(" + prev + ", %" + std::to_string(i - 3) + ")"
                            : std::string(i % 2 ? "tanh(" : "nn.relu(") + prev + ")") +
                ";\n";
        prev = name;
    }
    return text + "  " + prev + "\n}\n";
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const int nodes = quick ? 500 : 5000;
    const int plans = quick ? 500 : 10000;
    const std::string dir =
        (std::filesystem::temp_directory_path() / "placer-bench-store").string();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto model = loadModelText(chain(nodes), "chain.relay", GraphFormat::Relay, std::nullopt);
    if (!model) {
        std::fprintf(stderr, "%s\n", model.error().toString().c_str());
        return 1;
    }
    Graph& graph = model.value().graph;
    const DeviceSet& devices = model.value().devices;
    PlanOptions options;
    options.rules = {{"tanh", "cpu"}};
    const Plan plan = planDevices(graph, devices, options);
    auto store = PlanStore::open(dir + "/ws.db");
    if (!store) {
        std::fprintf(stderr, "%s\n", store.error().toString().c_str());
        return 1;
    }
    std::vector<double> save, load, check;
    for (int round = 0; round < 7; ++round) {
        auto t = Clock::now();
        if (Status status = store.value()->savePlan("big", "", graph, devices, options, plan);
            !status.ok()) {
            std::fprintf(stderr, "%s\n", status.error().toString().c_str());
            return 1;
        }
        save.push_back(millisSince(t));
        t = Clock::now();
        auto stored = store.value()->loadPlan("big");
        load.push_back(millisSince(t));
        if (!stored) {
            bench::wrong("loading the plan saved: " + stored.error().toString());
            return bench::exitCode();
        }
        t = Clock::now();
        const PlanCheck result = PlanStore::check(stored.value());
        check.push_back(millisSince(t));
        if (!result.differences.empty())
            bench::wrong("the reloaded plan differs: " + result.differences[0]);
    }
    std::printf("%d-node plan: save %.1f ms, load %.1f ms (goal 50 ms each), re-plan and compare "
                "%.1f ms\n",
                nodes, median(save), median(load), median(check));
    // Many small plans (the example graph), then list them.
    auto small = loadModelText(chain(20), "small.relay", GraphFormat::Relay, std::nullopt);
    if (!small) {
        bench::wrong(small.error().toString());
        return bench::exitCode();
    }
    const Plan smallPlan = planDevices(small.value().graph, small.value().devices, {});
    const auto fill = Clock::now();
    for (int i = 0; i < plans; ++i) {
        const Status saved =
            store.value()->savePlan("plan " + std::to_string(i), "", small.value().graph,
                                    small.value().devices, {}, smallPlan);
        if (!saved.ok()) {
            std::fprintf(stderr, "%s\n", saved.error().toString().c_str());
            return 1;
        }
    }
    const double perSave = millisSince(fill) / plans;
    std::vector<double> list;
    std::size_t count = 0;
    for (int round = 0; round < 5; ++round) {
        const auto t = Clock::now();
        auto all = store.value()->listPlans();
        list.push_back(millisSince(t));
        if (!all) {
            bench::wrong("listing the plans: " + all.error().toString());
            return bench::exitCode();
        }
        count = all.value().size();
    }
    if (count != static_cast<std::size_t>(plans) + 1)
        bench::wrong("the workspace lists " + std::to_string(count) + " plans, not the " +
                     std::to_string(plans + 1) + " saved");
    std::printf("listing %zu plans: %.1f ms (goal 100 ms); saving them took %.2f ms each\n", count,
                median(list), perSave);
    std::filesystem::remove_all(dir);
    return bench::exitCode();
}
