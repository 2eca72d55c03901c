// Peak host memory of planning and running, against ONNX Runtime on the same files.
//
// For every model in $PLACER_ONNX_MODELS (scripts/export_models.py full DIR; a large external-data
// transformer with scripts/export_models.py encoder-large DIR), each measured as a child process
// of its own (peak resident set size from wait4, wall time):
//   plan  placer plan MODEL --devices v1:vcpu
//   run   placer run MODEL --devices v1:vcpu --iterations 1 --warmup 0, with the reference check
//   ORT   ONNX Runtime's CPU provider (node and onnxruntime-node, one thread), load and one run,
//         on the same input files
// and printed side by side: plan against the model's bytes (the .onnx and its NAME.onnx.data),
// run against ONNX Runtime. ONNX Runtime is found as bench_vs_ort finds it; without it that
// column is empty. --quick measures the committed tiny models (the CTest smoke run).
#include "OrtPeer.h"

#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "ir/HostTensor.h"
#include "kernels/RandomTensor.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#ifndef PLACER_BINARY
#define PLACER_BINARY "placer"
#endif

using namespace placer;
namespace fs = std::filesystem;

namespace {

struct Measured {
    double megabytes = -1; ///< peak RSS, MB (10^6 bytes), or -1 when it failed
    double seconds = 0;
    int status = 0;
};

/// Runs `argv` as a child with its output in `log`, and measures it.
Measured measure(const std::vector<std::string>& argv, const fs::path& log,
                 const std::vector<std::string>& environment = {}) {
    const auto start = std::chrono::steady_clock::now();
    std::fflush(stdout); // or the child would print what is still buffered
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::FILE* out = std::freopen(log.c_str(), "w", stdout);
        (void)out;
        ::dup2(STDOUT_FILENO, STDERR_FILENO);
        for (const std::string& variable : environment)
            ::putenv(const_cast<char*>(variable.c_str()));
        std::vector<char*> args;
        for (const std::string& arg : argv)
            args.push_back(const_cast<char*>(arg.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        std::perror(args[0]);
        std::_Exit(127);
    }
    Measured m;
    if (pid < 0)
        return m;
    int status = 0;
    struct rusage usage {};
    if (::wait4(pid, &status, 0, &usage) < 0)
        return m;
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (m.status == 0)
        m.megabytes = static_cast<double>(usage.ru_maxrss) * 1024.0 / 1e6;
    return m;
}

std::string cell(const Measured& m) {
    char text[64];
    if (m.megabytes < 0)
        std::snprintf(text, sizeof text, "%17s", m.status ? "failed" : "-");
    else
        std::snprintf(text, sizeof text, "%8.0f MB %5.2f s", m.megabytes, m.seconds);
    return text;
}

void benchModel(const fs::path& path, const std::string& modules) {
    const std::string name = path.stem().string();
    const fs::path dir = fs::temp_directory_path() / ("placer-bench-memory-" + name);
    fs::create_directories(dir / "in");
    double modelBytes = static_cast<double>(fs::file_size(path));
    for (const fs::path& data :
         {fs::path(path.string() + ".data"), path.parent_path() / (name + ".data")}) {
        if (fs::exists(data))
            modelBytes += static_cast<double>(fs::file_size(data));
    }
    // Inputs: NAME.input.npy where the export left one (a transformer's sequence length), else
    // seeded random data at the model's shapes; the same files for both.
    std::vector<std::string> inputArgs, shapeArgs;
    const fs::path given = path.parent_path() / (name + ".input.npy");
    auto model = loadModelFile(path.string(), GraphFormat::Onnx, std::nullopt);
    if (!model) {
        std::printf("%-24s load error: %s\n", name.c_str(), model.error().toString().c_str());
        return;
    }
    std::size_t k = 0;
    for (const Node& node : model.value().graph.nodes()) {
        if (!node.isParameter())
            continue;
        const fs::path file = dir / "in" / ("input_" + std::to_string(k) + ".npy");
        HostTensor tensor = randomTensor(node.outputs[0], 1000003u + k);
        if (fs::exists(given) && k == 0) {
            if (auto read = readNpy(given.string()))
                tensor = read.take();
        }
        std::string dims;
        for (std::int64_t d : tensor.type.shape)
            dims += (dims.empty() ? "" : ",") + std::to_string(d);
        if (tensor.type.shape != node.outputs[0].shape)
            shapeArgs.insert(shapeArgs.end(), {"--input-shape", node.name + "=" + dims});
        if (Status s = writeNpy(file.string(), tensor); !s.ok()) {
            std::printf("%-24s %s\n", name.c_str(), s.error().toString().c_str());
            return;
        }
        inputArgs.insert(inputArgs.end(), {"--input", node.name + "=" + file.string()});
        ++k;
    }
    std::vector<std::string> plan{PLACER_BINARY, "plan", path.string(), "--devices", "v1:vcpu"};
    plan.insert(plan.end(), shapeArgs.begin(), shapeArgs.end());
    std::vector<std::string> run{PLACER_BINARY,  "run", path.string(), "--devices", "v1:vcpu",
                                 "--iterations", "1",   "--warmup",    "0"};
    run.insert(run.end(), shapeArgs.begin(), shapeArgs.end());
    run.insert(run.end(), inputArgs.begin(), inputArgs.end());
    const Measured planned = measure(plan, dir / "plan.txt");
    const Measured ran = measure(run, dir / "run.txt");
    Measured ort;
    if (!modules.empty()) {
        fs::create_directories(dir / "out");
        ort = measure({"node", std::string(PLACER_SOURCE_DIR) + "/tests/benchmarks/ort_peer.js",
                       path.string(), "1", "0", "1", (dir / "in").string(), (dir / "out").string()},
                      dir / "ort.txt", {"NODE_PATH=" + modules});
    }
    char ratio[64] = "";
    if (ran.megabytes > 0 && ort.megabytes > 0)
        std::snprintf(ratio, sizeof ratio, "%6.2f", ran.megabytes / ort.megabytes);
    std::printf("%-24s %8.0f MB  plan %s (%4.2fx model)  run %s  ORT %s  run/ORT %s\n",
                name.c_str(), modelBytes / 1e6, cell(planned).c_str(),
                planned.megabytes > 0 ? planned.megabytes * 1e6 / modelBytes : 0.0,
                cell(ran).c_str(), cell(ort).c_str(), ratio);
    for (const auto& [what, m, log] :
         {std::tuple{"plan", planned, "plan.txt"}, std::tuple{"run", ran, "run.txt"}}) {
        if (m.status != 0)
            std::printf("    %s failed (status %d); see %s\n", what, m.status, (dir / log).c_str());
    }
    std::fflush(stdout);
}

} // namespace

int main(int argc, char** argv) {
    bool quick = false;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            quick = true;
        } else if (arg == "--only" && i + 1 < argc) {
            std::string list = argv[++i];
            for (std::size_t at = 0; at <= list.size();) {
                const std::size_t comma = std::min(list.find(',', at), list.size());
                if (comma > at)
                    only.push_back(list.substr(at, comma - at));
                at = comma + 1;
            }
        } else {
            std::fprintf(stderr, "usage: bench_memory [--quick] [--only NAME,NAME]\n");
            return 2;
        }
    }
    const char* env = std::getenv("PLACER_ONNX_MODELS");
    const fs::path dir =
        quick || !env ? fs::path(PLACER_SOURCE_DIR) / "resources/models" : fs::path(env);
    if (!quick && !env)
        std::printf("PLACER_ONNX_MODELS is not set: measuring the committed tiny models\n");
    std::string why;
    const std::string modules = bench::ortModules(&why);
    if (modules.empty())
        std::printf("no ONNX Runtime column: %s\n", why.c_str());
    std::printf("peak resident memory (RSS) of each command as a process of its own\n");
    std::vector<fs::path> models;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.path().extension() != ".onnx")
            continue;
        const std::string name = entry.path().stem().string();
        if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end())
            continue;
        models.push_back(entry.path());
    }
    std::sort(models.begin(), models.end());
    if (quick && models.size() > 2)
        models.resize(2);
    for (const fs::path& model : models)
        benchModel(model, modules);
    return 0;
}
