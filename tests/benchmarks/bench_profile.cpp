// Importing a profile of a large model (io/ProfileImport.h): a 50,000-node graph and an ONNX
// Runtime-style profile of three runs of it (names as ONNX Runtime gives them: the node's own, an
// _nchwc suffix, VALUE_output_0_nchwc for a fused node, layout changes that are no node of the
// model), imported; against the peer of parsing the same JSON alone, in the same run (goal: the
// import of a 50,000-node model's profile in at most 2 s).
//
//   bench_profile [--quick] [--nodes N]
#include "BenchFailures.h"

#include "io/ModelLoader.h"
#include "io/ProfileImport.h"

#include <chrono>
#include <cstdio>
#include <string>

using namespace placer;

namespace {

double secondsOf(const auto& work) {
    const auto start = std::chrono::steady_clock::now();
    work();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

} // namespace

int main(int argc, char** argv) {
    int nodes = 50000;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick")
            nodes = 2000;
        else if (arg == "--nodes" && i + 1 < argc)
            nodes = std::stoi(argv[++i]);
    }
    // A chain of relu and add nodes with residuals, as Relay text.
    std::string relay = "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(1, 64), float32]) {\n";
    for (int k = 0; k < nodes; ++k) {
        const std::string previous = k == 0 ? "%x" : "%" + std::to_string(k - 1);
        relay += "  %" + std::to_string(k) + " = " +
                 (k % 2 ? "add(" + previous + ", %x)" : "nn.relu(" + previous + ")") + ";\n";
    }
    relay += "  %" + std::to_string(nodes - 1) + "\n}\n";
    auto loaded = loadModelText(relay, "chain.relay", GraphFormat::Auto, std::nullopt);
    if (!loaded) {
        std::fprintf(stderr, "bench_profile: %s\n", loaded.error().toString().c_str());
        return 1;
    }
    const Graph& graph = loaded.value().graph;
    std::string profile = "[\n";
    double ts = 0;
    for (int run = 0; run < 3; ++run) {
        const double start = ts;
        for (int k = 0; k < nodes; ++k) {
            std::string name = "%" + std::to_string(k);
            std::string op = k % 2 ? "Add" : "Relu";
            if (k % 3 == 1)
                name += "_nchwc";
            if (k % 50 == 0) { // a layout change ONNX Runtime inserted
                profile += "{\"cat\":\"Node\",\"name\":\"ReorderOutput_token_" + std::to_string(k) +
                           "_kernel_time\",\"dur\":3,\"ts\":" + std::to_string(ts) +
                           ",\"args\":{\"op_name\":\"ReorderOutput\",\"provider\":"
                           "\"CPUExecutionProvider\"}},\n";
            }
            profile += "{\"cat\":\"Node\",\"name\":\"" + name +
                       "_kernel_time\",\"dur\":" + std::to_string(5 + k % 7) +
                       ",\"ts\":" + std::to_string(ts) + ",\"args\":{\"op_name\":\"" + op +
                       "\",\"provider\":\"CPUExecutionProvider\",\"output_type_shape\":"
                       "[{\"float\":[1,64]}]}},\n";
            ts += 10;
        }
        profile +=
            "{\"cat\":\"Session\",\"name\":\"model_run\",\"dur\":" + std::to_string(ts - start) +
            ",\"ts\":" + std::to_string(start) + "},\n";
        ts += 100;
    }
    profile += "{\"cat\":\"Session\",\"name\":\"session_initialization\",\"dur\":1,\"ts\":0}\n]\n";

    double parse = 1e9, import = 1e9;
    Result<ProfileImport> imported = SourceError::sentence("not run");
    for (int round = 0; round < 3; ++round) {
        parse = std::min(parse, secondsOf([&] { (void)Json::parse(profile, "profile.json"); }));
        import = std::min(import, secondsOf([&] {
                              imported = importOnnxRuntimeProfile(graph, profile, "profile.json");
    }));
}
if (!imported) {
    bench::wrong("import: " + imported.error().toString());
    return bench::exitCode();
}
const ProfileImport& p = imported.value();
if (p.nodesWithTimes() != p.computeNodes)
    bench::wrong("only " + std::to_string(p.nodesWithTimes()) + " of " +
                 std::to_string(p.computeNodes) + " nodes have a time");
std::printf("profile of %d nodes, %d events, %.1f MB: import %.3f s (goal 2 s), parsing "
            "the JSON alone %.3f s: import / parse %.2fx; %d of %d compute nodes matched\n",
            nodes, p.events, static_cast<double>(profile.size()) / 1e6, import, parse,
            import / parse, p.nodesWithTimes(), p.computeNodes);
return bench::exitCode();
}
