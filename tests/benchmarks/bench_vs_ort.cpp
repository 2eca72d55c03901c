// CPU execution against ONNX Runtime's CPU provider, the engine users deploy with, measured side
// by side in one run (the machine is noisy: only the ratios mean something).
//
// For every model in $PLACER_ONNX_MODELS (scripts/export_models.py full DIR), with one thread and
// then two: our run on one vcpu (vcpu1:threads=N, the model's graph as planned, optimisations
// on, or off with --no-optimize) and ONNX Runtime 1.x through node and the npm package
// onnxruntime-node (N intra-op threads, all graph optimisations, the same file and the same seeded
// inputs; a model with one symbolic input at the shape of NAME.input.npy beside it, when there is
// one). It prints each median latency, the ratio ours / ONNX Runtime, the outputs' largest
// difference relative to the largest output value, and the geometric mean of the ratios; and
// the planned memory of what ran against that of the user's graph as planned (the optimisations
// must not raise it).
//
//   bench_vs_ort [--threads 1,2] [--iterations N] [--only NAME,NAME] [--ops K] [--no-optimize]
//   bench_vs_ort --quick      the committed tiny_resnet only (what CTest runs)
//
// --ops K also prints, per model, the K op types that take the most of our time, with the kernel
// implementation that ran: where the ratio comes from.
//
// ONNX Runtime is a yardstick, never a dependency: install it beside the checkout with
// `npm install --ignore-scripts onnxruntime-node` (the install script would download more) and
// point $PLACER_ORT_NODE_MODULES at that node_modules folder (default: ./node_modules, then
// ../node_modules of the source tree). Without node or the package every model is skipped with a
// reason.
#include "BenchFailures.h"
#include "OrtPeer.h"
#include "RunBench.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "io/ModelLoader.h"
#include "io/Npy.h"
#include "io/OnnxReader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#ifndef PLACER_SOURCE_DIR
#define PLACER_SOURCE_DIR "."
#endif

using namespace placer;
namespace fs = std::filesystem;

namespace {

struct Options {
    std::vector<int> threads{1, 2};
    int iterations = 10;
    int ops = 0;
    bool quick = false;
    bool optimize = true;
    std::vector<std::string> only;
};

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ',');)
        if (!part.empty())
            parts.push_back(part);
    return parts;
}

struct PeerResult {
    double millis = -1;
    std::string error;
    std::vector<HostTensor> outputs;
};

PeerResult runOrt(const std::string& modules, const std::string& model, int threads, int iterations,
                  const fs::path& inDir, const fs::path& outDir, std::size_t outputCount) {
    PeerResult result;
    const fs::path log = outDir / "peer.txt";
    const std::string script = std::string(PLACER_SOURCE_DIR) + "/tests/benchmarks/ort_peer.js";
    const std::string command =
        "NODE_PATH=" + bench::shellQuote(modules) + " node " + bench::shellQuote(script) + " " +
        bench::shellQuote(model) + " " + std::to_string(threads) + " 2 " +
        std::to_string(iterations) + " " + bench::shellQuote(inDir.string()) + " " +
        bench::shellQuote(outDir.string()) + " > " + bench::shellQuote(log.string()) + " 2>&1";
    const int status = std::system(command.c_str());
    std::ifstream in(log);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto key = text.find("\"median_ms\":");
    if (status != 0 || key == std::string::npos) {
        result.error = text.empty() ? "node exited with status " + std::to_string(status) : text;
        while (!result.error.empty() && result.error.back() == '\n')
            result.error.pop_back();
        return result;
    }
    result.millis = std::strtod(text.c_str() + key + 12, nullptr);
    for (std::size_t k = 0; k < outputCount; ++k) {
        auto tensor = readNpy((outDir / ("output_" + std::to_string(k) + ".npy")).string());
        if (!tensor) {
            result.error = tensor.error().toString();
            return result;
        }
        result.outputs.push_back(tensor.take());
    }
    return result;
}

double asDouble(const HostTensor& t, std::size_t i) {
    const std::byte* p = t.data.raw();
    switch (t.type.dtype) {
    case DType::Float32: {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        return v;
    }
    case DType::Float64: {
        double v;
        std::memcpy(&v, p + 8 * i, 8);
        return v;
    }
    case DType::Int64: {
        std::int64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        return static_cast<double>(v);
    }
    case DType::Int32: {
        std::int32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        return v;
    }
    default:
        return static_cast<double>(static_cast<std::uint8_t>(p[i * dtypeSize(t.type.dtype)]));
    }
}

/// The largest difference over the largest reference value, or a reason they cannot be compared.
std::string compare(const std::vector<HostTensor>& ours, const std::vector<HostTensor>& theirs,
                    double* relative) {
    if (ours.size() != theirs.size())
        return std::to_string(ours.size()) + " outputs vs " + std::to_string(theirs.size());
    double diff = 0, scale = 0;
    for (std::size_t k = 0; k < ours.size(); ++k) {
        if (ours[k].type.shape != theirs[k].type.shape ||
            ours[k].type.dtype != theirs[k].type.dtype)
            return "output " + std::to_string(k) + " is " + ours[k].type.toShortString() + " vs " +
                   theirs[k].type.toShortString();
        const std::size_t n = static_cast<std::size_t>(ours[k].type.elementCount());
        for (std::size_t i = 0; i < n; ++i) {
            const double a = asDouble(ours[k], i), b = asDouble(theirs[k], i);
            diff = std::max(diff, std::abs(a - b));
            scale = std::max(scale, std::abs(b));
        }
    }
    *relative = diff / std::max(scale, 1e-30);
    return {};
}

/// Our time per op type (and kernel implementation), largest first.
void printOps(const bench::Loaded& l, const RunResult& r, int top) {
    std::map<std::string, std::pair<double, int>> byOp;
    double total = 0;
    const Program& program = l.executor->program();
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (r.instrMicros[k].empty())
            continue;
        const double t = median(r.instrMicros[k]);
        const Instruction& in = program.code[k];
        std::string key = opcodeName(in.op).data();
        if (in.op == Opcode::Invoke)
            key = l.graph.node(in.node).op->name + "  " + l.executor->implementation(k);
        auto& [micros, count] = byOp[key];
        micros += t;
        ++count;
        total += t;
    }
    std::vector<std::pair<double, std::string>> sorted;
    for (const auto& [key, v] : byOp)
        sorted.push_back({v.first, key + " (x" + std::to_string(v.second) + ")"});
    std::sort(sorted.rbegin(), sorted.rend());
    for (int i = 0; i < top && i < static_cast<int>(sorted.size()); ++i)
        std::printf("      %6.2f ms %4.1f%%  %s\n", sorted[i].first / 1000.0,
                    100.0 * sorted[i].first / std::max(total, 1e-9), sorted[i].second.c_str());
}

struct Row {
    std::string model;
    int threads = 1;
    double ours = -1, ort = -1;
    double memory = 1; ///< planned memory of what ran over the user's graph's
};

void benchModel(const Options& options, const std::string& modules, const fs::path& path,
                std::vector<Row>* rows) {
    const std::string name = path.stem().string();
    // A model with one symbolic input runs at the shape of the reference input exported beside
    // it (NAME.input.npy: a transformer's sequence length), not with its dimensions at 1.
    InputShapes shapes;
    const fs::path reference = path.parent_path() / (name + ".input.npy");
    if (fs::exists(reference)) {
        std::ifstream file(path, std::ios::binary);
        const std::string bytes((std::istreambuf_iterator<char>(file)),
                                std::istreambuf_iterator<char>());
        const std::vector<SymbolicInput> symbolic = onnxSymbolicInputs(bytes);
        auto input = readNpy(reference.string());
        if (symbolic.size() == 1 && input)
            shapes[symbolic[0].name] = input.value().type.shape;
    }
    auto model = loadModelFile(path.string(), GraphFormat::Onnx, std::nullopt, shapes);
    if (!model) {
        std::printf("%-22s load error: %s\n", name.c_str(), model.error().toString().c_str());
        bench::wrong(name + ": " + model.error().toString());
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("placer-bench-ort-" + name);
    fs::create_directories(dir / "in");
    for (int threads : options.threads) {
        bench::Loaded l;
        l.graph = model.value().graph;
        l.devices.add(VirtualDevice{"v1", DeviceKind::VCpu});
        l.devices.chooseDefaults();
        PlanOptions planOptions;
        bench::load(l, {{"v1", "vcpu1:threads=" + std::to_string(threads)}}, {}, planOptions,
                    options.optimize
                        ? std::optional<OptimizeOptions>(OptimizeOptions{})
                        : std::optional<OptimizeOptions>(OptimizeOptions{.channelsLast = false,
                                                                         .fusion = false,
                                                                         .transposes = false,
                                                                         .packWeights = false}));
        for (std::size_t i = 0; i < l.inputs.size(); ++i) {
            if (Status s = writeNpy((dir / "in" / ("input_" + std::to_string(i) + ".npy")).string(),
                                    l.inputs[i]);
                !s.ok()) {
                std::printf("%-22s %s\n", name.c_str(), s.error().toString().c_str());
                bench::wrong(name + ": " + s.error().toString());
                return;
            }
        }
        const RunResult r = bench::run(l, 2, options.iterations);
        Row row{name, threads, median(r.latencyMicros) / 1000.0, -1,
                static_cast<double>(l.plannedBytes) /
                    static_cast<double>(std::max<std::int64_t>(l.userPlannedBytes, 1))};
        char planned[96];
        std::snprintf(planned, sizeof planned, "  planned memory %.1f MiB (%.2fx unoptimised)",
                      static_cast<double>(l.plannedBytes) / (1 << 20), row.memory);
        std::string note;
        if (modules.empty()) {
            note = "ONNX Runtime skipped";
        } else {
            const PeerResult peer = runOrt(modules, path.string(), threads, options.iterations,
                                           dir / "in", dir, r.outputs.size());
            if (!peer.error.empty()) {
                note = "ONNX Runtime: " + peer.error;
            } else {
                row.ort = peer.millis;
                double relative = 0;
                const std::string why = compare(r.outputs, peer.outputs, &relative);
                char buffer[64];
                std::snprintf(buffer, sizeof buffer, "outputs agree to %.1e", relative);
                note = why.empty() ? buffer : "outputs differ: " + why;
                if (!why.empty())
                    bench::wrong(name + ": outputs differ from ONNX Runtime's: " + why);
            }
        }
        if (row.ort > 0)
            std::printf(
                "%-22s %d thread%s  ours %9.2f ms  ONNX Runtime %9.2f ms  ratio %5.2f  %s%s\n",
                name.c_str(), threads, threads == 1 ? " " : "s", row.ours, row.ort,
                row.ours / row.ort, note.c_str(), planned);
        else
            std::printf("%-22s %d thread%s  ours %9.2f ms  %s%s\n", name.c_str(), threads,
                        threads == 1 ? " " : "s", row.ours, note.c_str(), planned);
        std::fflush(stdout);
        if (options.ops > 0)
            printOps(l, r, options.ops);
        rows->push_back(row);
    }
    fs::remove_all(dir);
}

/// The committed example --quick runs, so CTest keeps both paths working.
fs::path quickModel() {
    return fs::path(PLACER_SOURCE_DIR) / "resources" / "models" / "tiny_resnet.onnx";
}

} // namespace

int main(int argc, char** argv) {
    Options options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        const bool hasValue = i + 1 < argc;
        if (arg == "--quick") {
            options.quick = true;
            options.iterations = 2;
        } else if (arg == "--threads" && hasValue) {
            options.threads.clear();
            for (const std::string& t : split(argv[++i]))
                options.threads.push_back(std::max(1, std::atoi(t.c_str())));
        } else if (arg == "--iterations" && hasValue) {
            options.iterations = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--ops" && hasValue) {
            options.ops = std::max(0, std::atoi(argv[++i]));
        } else if (arg == "--no-optimize") {
            options.optimize = false;
        } else if (arg == "--only" && hasValue) {
            options.only = split(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: bench_vs_ort [--quick] [--threads 1,2] [--iterations N] "
                                 "[--only NAME,...] [--ops K] [--no-optimize]\n");
            return 2;
        }
    }
    installConstantFolding();
    std::string why;
    const std::string modules = bench::ortModules(&why);
    if (modules.empty())
        std::printf("ONNX Runtime is skipped: %s\n", why.c_str());
    std::vector<fs::path> models;
    if (options.quick) {
        models.push_back(quickModel());
    } else if (const char* dir = std::getenv("PLACER_ONNX_MODELS")) {
        for (const auto& entry : fs::directory_iterator(dir)) {
            const std::string stem = entry.path().stem().string();
            if (entry.path().extension() != ".onnx")
                continue;
            if (!options.only.empty() &&
                std::find(options.only.begin(), options.only.end(), stem) == options.only.end())
                continue;
            models.push_back(entry.path());
        }
        std::sort(models.begin(), models.end());
    } else {
        std::printf("skipped: set PLACER_ONNX_MODELS to a folder of models "
                    "(scripts/export_models.py full DIR)\n");
        return 0;
    }
    std::vector<Row> rows;
    for (const fs::path& path : models)
        benchModel(options, modules, path, &rows);
    for (int threads : options.threads) {
        double logSum = 0, worst = 0;
        int count = 0;
        std::string worstModel;
        for (const Row& row : rows) {
            if (row.threads != threads || row.ort <= 0)
                continue;
            const double ratio = row.ours / row.ort;
            logSum += std::log(ratio);
            ++count;
            if (ratio > worst) {
                worst = ratio;
                worstModel = row.model;
            }
        }
        if (count > 0)
            std::printf("%d thread%s: geometric mean of ours / ONNX Runtime over %d models %.2f "
                        "(goal <= 1.0); the largest %.2f (%s, goal <= 1.25)\n",
                        threads, threads == 1 ? "" : "s", count, std::exp(logSum / count), worst,
                        worstModel.c_str());
    }
    // The optimisations must not raise the planned memory (fusion drops intermediate values;
    // layout changes add some): the largest ratio over the user's graph as planned.
    const auto most = std::max_element(
        rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.memory < b.memory; });
    if (most != rows.end() && options.optimize)
        std::printf("planned memory of the optimised graph over the user's graph: at most %.2fx "
                    "(%s, goal <= 1.0)\n",
                    most->memory, most->model.c_str());
    return bench::exitCode();
}
