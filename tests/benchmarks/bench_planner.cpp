// Planner and reader speed on synthetic graphs of 10^3 ... 10^6 nodes (chain, ladder, random
// DAG, transformer-like blocks), and `placer plan` end to end on a 200,000-node Relay file.
// Figures are reported as ns/node and as ratios to the smallest size measured in this same run,
// so linear growth reads as a flat ns/node column. Not a timed test: nothing here fails on time.
//
//   bench_planner            the full run (takes a minute)
//   bench_planner --quick    10^3 and 10^4 only (what CTest runs)
#include "BenchFailures.h"
#include "cli/PlacerCli.h"
#include "io/RelayReader.h"
#include "plan/Planner.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>

using namespace placer;
using Clock = std::chrono::steady_clock;

namespace {

const TensorType kType{{64}, DType::Float32};

NodeId addParameter(Graph& g, const std::string& name) {
    Node n;
    n.name = name;
    n.op = &OpRegistry::global().parameter();
    n.outputs = {kType};
    return g.addNode(std::move(n));
}

NodeId addOp(Graph& g, const char* op, std::vector<ValueRef> inputs) {
    Node n;
    n.name = "%" + std::to_string(g.size());
    n.op = OpRegistry::global().find(op);
    n.inputs = std::move(inputs);
    n.outputs = {kType};
    return g.addNode(std::move(n));
}

/// Pins about one node in `every` to the CPU, so the planner has work to do.
void pinSome(Graph& g, std::uint32_t every) {
    for (std::uint32_t i = every; i < g.size(); i += every)
        g.node(NodeId(i)).pin = Pin{PinKind::Plain, DeviceId(0), "bench"};
}

Graph chain(std::size_t n) {
    Graph g;
    NodeId last = addParameter(g, "%x");
    while (g.size() < n)
        last = addOp(g, "nn.relu", {ValueRef{last, 0}});
    g.addOutput({ValueRef{last, 0}, {}});
    pinSome(g, 97);
    return g;
}

Graph ladder(std::size_t n) {
    Graph g;
    NodeId a = addParameter(g, "%x"), b = addParameter(g, "%y");
    while (g.size() + 2 <= n) {
        const NodeId na = addOp(g, "add", {ValueRef{a, 0}, ValueRef{b, 0}});
        const NodeId nb = addOp(g, "multiply", {ValueRef{a, 0}, ValueRef{b, 0}});
        a = na;
        b = nb;
    }
    g.addOutput({ValueRef{a, 0}, {}});
    g.addOutput({ValueRef{b, 0}, {}});
    pinSome(g, 89);
    return g;
}

Graph randomDag(std::size_t n) {
    Graph g;
    std::mt19937 rng(42);
    for (int i = 0; i < 8; ++i)
        addParameter(g, "%p" + std::to_string(i));
    while (g.size() < n) {
        const auto size = static_cast<std::uint32_t>(g.size());
        auto operand = [&]() {
            const std::uint32_t back = 1 + rng() % std::min<std::uint32_t>(size, 64);
            return ValueRef{NodeId(size - back), 0};
        };
        if (rng() % 3 == 0)
            addOp(g, "exp", {operand()});
        else
            addOp(g, "add", {operand(), operand()});
    }
    g.addOutput({ValueRef{NodeId(static_cast<std::uint32_t>(g.size() - 1)), 0}, {}});
    pinSome(g, 53);
    return g;
}

/// Blocks shaped like a transformer encoder layer: projections, attention, residuals, norms.
Graph transformer(std::size_t n) {
    Graph g;
    NodeId x = addParameter(g, "%x");
    int layer = 0;
    while (g.size() + 12 <= n) {
        const ValueRef in{x, 0};
        const NodeId q = addOp(g, "nn.relu", {in});
        const NodeId k = addOp(g, "negative", {in});
        const NodeId v = addOp(g, "exp", {in});
        const NodeId s = addOp(g, "multiply", {ValueRef{q, 0}, ValueRef{k, 0}});
        const NodeId p = addOp(g, "sigmoid", {ValueRef{s, 0}});
        const NodeId a = addOp(g, "multiply", {ValueRef{p, 0}, ValueRef{v, 0}});
        const NodeId r1 = addOp(g, "add", {ValueRef{a, 0}, in});
        const NodeId n1 = addOp(g, "tanh", {ValueRef{r1, 0}});
        const NodeId f1 = addOp(g, "nn.relu", {ValueRef{n1, 0}});
        const NodeId f2 = addOp(g, "sqrt", {ValueRef{f1, 0}});
        const NodeId r2 = addOp(g, "add", {ValueRef{f2, 0}, ValueRef{n1, 0}});
        x = addOp(g, "tanh", {ValueRef{r2, 0}});
        if (layer++ % 2 == 1) // every other layer's attention on the CPU
            g.node(s).pin = Pin{PinKind::Plain, DeviceId(0), "bench"};
    }
    g.addOutput({ValueRef{x, 0}, {}});
    return g;
}

template <typename F> double bestSeconds(int repeats, F&& f) {
    double best = 1e30;
    for (int i = 0; i < repeats; ++i) {
        const auto start = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

std::string relayChain(std::size_t n) {
    std::string text = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(64), float32]) {\n";
    text += "  %0 = negative(%x);\n";
    for (std::size_t i = 1; i < n; ++i) {
        text += "  %" + std::to_string(i) + " = ";
        if (i % 97 == 0)
            text += "on_device(exp(%" + std::to_string(i - 1) +
                    "), virtual_device=meta[VirtualDevice][0]);\n";
        else
            text += "add(%" + std::to_string(i - 1) + ", %x);\n";
    }
    text += "  %" + std::to_string(n - 1) + "\n}\n";
    return text;
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    const DeviceSet devices = DeviceSet::parse("cpu:cpu,gpu:cuda").take();
    const std::vector<std::size_t> sizes =
        quick ? std::vector<std::size_t>{1000, 10000}
              : std::vector<std::size_t>{1000, 10000, 100000, 1000000};
    const std::pair<const char*, std::function<Graph(std::size_t)>> shapes[] = {
        {"chain", chain},
        {"ladder", ladder},
        {"random-dag", randomDag},
        {"transformer", transformer}};

    std::printf(
        "planner, memory plan included. 'first': one call in fresh memory; 're-plan': best\n"
        "of 3 calls reusing a PlanWorkspace and recycling the plan each replaces, as the GUI\n"
        "does on every edit\n");
    std::printf("%-12s %9s %11s %12s %12s %13s %14s\n", "graph", "nodes", "first ns/n", "re-plan s",
                "re-plan ns/n", "vs smallest", "unify re-plan");
    for (const auto& [name, make] : shapes) {
        double baseline = 0;
        for (std::size_t n : sizes) {
            const Graph g = make(n);
            PlanOptions demand;
            PlanOptions unify;
            unify.mode = PlanMode::Unify;
            const double first = bestSeconds(1, [&] { planDevices(g, devices, demand); });
            // As the GUI does: one workspace, and each plan handed back when the next replaces it.
            PlanWorkspace workspace;
            Plan kept;
            const auto replan = [&](const PlanOptions& options) {
                workspace.recycle(std::move(kept));
                kept = planDevices(g, devices, options, workspace);
            };
            const double seconds = bestSeconds(3, [&] { replan(demand); });
            const double unifySeconds = bestSeconds(3, [&] { replan(unify); });
            const double nodes = static_cast<double>(g.size());
            const double perNode = seconds * 1e9 / nodes;
            if (baseline == 0)
                baseline = perNode;
            std::printf("%-12s %9zu %11.1f %12.4f %12.1f %12.2fx %14.1f\n", name, g.size(),
                        first * 1e9 / nodes, seconds, perNode, perNode / baseline,
                        unifySeconds * 1e9 / nodes);
        }
    }

    std::printf("\nRelay reader (a chain with an on_device every 97 bindings; best of 3)\n");
    std::printf("%-12s %10s %12s %10s\n", "graph", "nodes", "seconds", "ns/node");
    for (std::size_t n : sizes) {
        if (n > 200000)
            continue;
        const std::string text = relayChain(n);
        bool read = true;
        const double seconds = bestSeconds(3, [&] {
            auto graph = readRelay(text, devices, "bench.relay");
            read = read && graph.ok();
            if (!graph)
                bench::wrong("relay-chain " + std::to_string(n) + ": " + graph.error().toString());
        });
        std::printf("%-12s %10zu %12.4f %10.1f\n", "relay-chain", n, seconds,
                    seconds * 1e9 / static_cast<double>(n));
    }

    const std::size_t endToEnd = quick ? 10000 : 200000;
    const std::string path = "bench_chain_" + std::to_string(endToEnd) + ".relay";
    {
        std::ofstream file(path);
        file << relayChain(endToEnd);
    }
    std::printf("\nplacer plan end to end on %s (%zu nodes; read, plan, JSON report)\n",
                path.c_str(), endToEnd);
    for (const char* emit : {"summary", "json"}) {
        const double seconds = bestSeconds(3, [&] {
            std::istringstream in;
            std::ostringstream out, err;
            if (const int status = cli::runPlacer({"plan", path, "--emit", emit}, in, out, err);
                status != 0)
                bench::wrong(std::string("placer plan --emit ") + emit + " exited " +
                             std::to_string(status) + ": " + err.str());
        });
        std::printf("  --emit %-8s %8.3f s\n", emit, seconds);
    }
    std::remove(path.c_str());
    return bench::exitCode();
}
