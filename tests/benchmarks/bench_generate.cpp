// Generation against ONNX Runtime's CPU provider, the same greedy loop on the same file in the
// same run (the machine is noisy: only the ratios mean something): Session::generate on one vcpu
// and with the layers split over two, and tests/benchmarks/ort_generate.js on one thread. Prints
// per model the time to the first token, the prompt's run alone (prefill, as ONNX Runtime's
// first token is: its session is made before), decode tokens/s, per-token p50/p99, the share of
// a decode step its kernels take (what a call costs beyond them), the ratios ours / ONNX
// Runtime, and whether the tokens agree with the expected ones (NAME.expected.npy: PyTorch's
// for scripts/make_decoder_model.py's decoders, ONNX Runtime's for make_gqa_decoder.py's). Our
// first token includes the check of the program that runs every step
// (GenerateRequest::checkFirstStep); making that program is before it, as ONNX Runtime's session
// is.
//
//   bench_generate [--tokens N] [--rounds R] [--only NAME,NAME]
//                                                    the decoders in $PLACER_ONNX_MODELS
//                                                    (scripts/make_decoder_model.py small|large
//                                                    DIR)
//   bench_generate --quick                           the committed tiny_decoder (what CTest runs)
//
// --rounds R runs each model R times, ONNX Runtime's loop and ours one after the other, and
// prints the median of the rounds' ratios with their range: on a noisy machine one round's
// ratio can be a fifth off.
//
// ONNX Runtime is a yardstick, never a dependency (tests/benchmarks/OrtPeer.h says where it is
// found); without it the peer's columns say why not.
#include "BenchFailures.h"
#include "OrtPeer.h"

#include "io/Json.h"
#include "io/Npy.h"
#include "session/Session.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#ifndef PLACER_SOURCE_DIR
#define PLACER_SOURCE_DIR "."
#endif

using namespace placer;
namespace fs = std::filesystem;

namespace {

std::vector<std::int64_t> readIds(const std::string& path) {
    auto tensor = readNpy(path);
    if (!tensor)
        return {};
    const HostTensor& t = tensor.value();
    std::vector<std::int64_t> out;
    for (std::int64_t e = 0; e < t.type.elementCount(); ++e)
        out.push_back(t.type.dtype == DType::Int64 ? t.as<std::int64_t>()[e]
                                                   : t.as<std::int32_t>()[e]);
    return out;
}

struct PeerRun {
    std::vector<std::int64_t> tokens;
    double firstMs = -1;
    std::vector<double> decodeMs;
    std::string why;
};

PeerRun ortGenerate(const std::string& model, const std::string& prompt, int tokens,
                    const std::string& cacheShape) {
    PeerRun out;
    const std::string modules = bench::ortModules(&out.why);
    if (modules.empty())
        return out;
    const std::string script = std::string(PLACER_SOURCE_DIR) + "/tests/benchmarks/ort_generate.js";
    const std::string command = "NODE_PATH=" + bench::shellQuote(modules) + " node " +
                                bench::shellQuote(script) + " " + bench::shellQuote(model) + " " +
                                bench::shellQuote(prompt) + " " + std::to_string(tokens) + " 1 " +
                                cacheShape + " 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) {
        out.why = "node could not be started";
        return out;
    }
    std::string text;
    char buffer[4096];
    while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe))
        text.append(buffer, n);
    pclose(pipe);
    auto json = Json::parse(text, "ort_generate");
    if (!json || !json.value().isObject()) {
        out.why = "ONNX Runtime said: " + text.substr(0, 300);
        return out;
    }
    if (const Json* error = json.value().find("error")) {
        out.why = "ONNX Runtime: " + error->asString();
        return out;
    }
    for (const Json& t : json.value().find("tokens")->items())
        out.tokens.push_back(t.asInt());
    out.firstMs = json.value().find("time_to_first_token_ms")->asDouble();
    for (const Json& d : json.value().find("decode_ms")->items())
        out.decodeMs.push_back(d.asDouble());
    return out;
}

double median(std::vector<double> values) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

/// The empty cache's shape for the peer: the first past input's, named dimensions 0 but the
/// batch.
std::string cacheShapeOf(const Graph& graph) {
    for (const OpenInput& open : graph.openInputs) {
        if (open.name.rfind("past", 0) != 0)
            continue;
        std::string out;
        for (std::size_t a = 0; a < open.declaredDims.size(); ++a) {
            const std::string& dim = open.declaredDims[a];
            const bool fixed = !dim.empty() && std::isdigit(static_cast<unsigned char>(dim[0]));
            out += (a ? "," : "") + (fixed ? dim : a == 0 ? std::string("1") : std::string("0"));
        }
        return out;
    }
    return "1,1,0,1";
}

/// One round's ratios for a model, where measured (0 where not).
struct Ratios {
    double decode = 0;  ///< our decode tokens/s / ONNX Runtime's
    double prefill = 0; ///< our prompt's run / ONNX Runtime's first token
    double split = 0;   ///< decode tokens/s over 2 vcpus / over 1
};

Ratios benchModel(const std::string& dir, const std::string& name, int tokens) {
    Ratios ratios;
    const std::string model = dir + "/" + name + ".onnx";
    const std::string promptFile = dir + "/" + name + ".prompt.npy";
    const std::vector<std::int64_t> prompt = readIds(promptFile);
    std::vector<std::int64_t> expected = readIds(dir + "/" + name + ".expected.npy");
    if (prompt.empty()) {
        std::printf("%-16s skipped: no %s\n", name.c_str(), promptFile.c_str());
        return ratios;
    }
    const fs::path workspace = fs::temp_directory_path() / ("bench_generate_" + name + ".db");
    fs::remove(workspace);
    const std::string cacheShape = [&] {
        Session probe(SessionOptions{workspace.string()});
        auto loaded = probe.load(ModelSource{model});
        return loaded ? cacheShapeOf(loaded.value().graph) : std::string("1,1,0,1");
    }();
    const PeerRun peer = ortGenerate(model, promptFile, tokens, cacheShape);
    struct Layout {
        const char* label;
        PlanRequest request;
    };
    std::vector<Layout> layouts(2);
    layouts[0].label = "1 vcpu";
    layouts[0].request.devices = "a:vcpu";
    layouts[1].label = "2 vcpus, split";
    layouts[1].request.devices = "a:vcpu,b:vcpu";
    double oneVcpu = 0;
    for (Layout& layout : layouts) {
        Session session(SessionOptions{workspace.string()});
        if (layout.label[0] == '2') {
            // The first half of the layers on a, the second on b: layers named as PyTorch's
            // exports name them (/blocks.N/, /layers.N/) or as ONNX Runtime's model builder
            // does (layers.N.).
            auto loaded = session.load(ModelSource{model});
            const std::regex layerName(R"((?:^|[/.])(?:blocks|layers)\.(\d+)[/.])");
            int blocks = 0;
            if (loaded) {
                for (const Node& node : loaded.value().graph.nodes()) {
                    std::smatch match;
                    if (std::regex_search(node.name, match, layerName))
                        blocks = std::max(blocks, std::stoi(match[1].str()) + 1);
                }
            }
            for (int k = 0; k < blocks; ++k)
                layout.request.pins.push_back(
                    PinRequest{"re:(^|[/.])(blocks|layers)\\." + std::to_string(k) + "[/.]",
                               k < blocks / 2 ? "a" : "b", false});
        }
        auto opened = session.open(ModelSource{model}, layout.request);
        if (!opened) {
            bench::wrong(name + " (" + layout.label + "): " + opened.error().toString());
            continue;
        }
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        GenerateRequest request;
        request.prompt = prompt;
        request.maxNewTokens = tokens;
        auto made = session.generate(planned, request);
        if (!made) {
            bench::wrong(name + " (" + layout.label + "): " + made.error().toString());
            continue;
        }
        const GenerationReport& report = made.value();
        if (expected.size() > static_cast<std::size_t>(tokens))
            expected.resize(static_cast<std::size_t>(tokens));
        const bool same = expected.empty() || report.tokens == expected;
        if (!same)
            bench::wrong(name + " (" + layout.label + "): the tokens differ from the expected");
        const double perSecond = report.decodeTokensPerSecond();
        if (layout.label[0] == '1')
            oneVcpu = perSecond;
        std::printf("%-16s %-15s first token %8.2f ms  decode %8.1f tokens/s  p50 %7.2f ms  "
                    "p99 %7.2f ms  kernels %5.1f %%  tokens %s  read %d time(s)\n",
                    name.c_str(), layout.label, report.timeToFirstTokenMs(), perSecond,
                    report.decodeLatencyMs(50), report.decodeLatencyMs(99),
                    100.0 * (1.0 - report.overheadShare()),
                    expected.empty() ? "unchecked" : (same ? "= expected" : "DIFFER"),
                    session.counters().modelsRead);
        if (layout.label[0] == '2' && oneVcpu > 0) {
            ratios.split = perSecond / oneVcpu;
            std::printf("%-16s split over 2 vcpus / 1 vcpu decode tokens/s: %.2fx\n", name.c_str(),
                        ratios.split);
        }
        if (layout.label[0] == '1') {
            if (peer.firstMs < 0) {
                std::printf("%-16s ONNX Runtime    skipped: %s\n", name.c_str(), peer.why.c_str());
            } else {
                const double peerPerSecond = 1000.0 / median(peer.decodeMs);
                const double ourMedian = report.decodeLatencyMs(50);
                std::printf("%-16s ONNX Runtime    first token %8.2f ms  decode %8.1f tokens/s  "
                            "p50 %7.2f ms  tokens %s\n",
                            name.c_str(), peer.firstMs, peerPerSecond, median(peer.decodeMs),
                            peer.tokens == report.tokens ? "= ours" : "differ from ours");
                const double prefill = report.steps.empty() ? 0 : report.steps.front().kernelsMs;
                ratios.decode = perSecond / peerPerSecond;
                ratios.prefill = prefill / peer.firstMs;
                std::printf("%-16s ours / ONNX Runtime: decode tokens/s %.2fx, per token %.2fx, "
                            "prefill %.2fx (%.2f ms), first token %.2fx; ours made its program "
                            "in %.0f ms before\n",
                            name.c_str(), perSecond / peerPerSecond,
                            ourMedian / median(peer.decodeMs), prefill / peer.firstMs, prefill,
                            report.timeToFirstTokenMs() / peer.firstMs, report.prepareMs);
            }
        }
    }
    fs::remove(workspace);
    return ratios;
}

/// The median of the rounds' ratios of one kind, with their range: "0.97x (0.91-1.02x)".
std::string spread(const std::vector<Ratios>& rounds, double Ratios::*field) {
    std::vector<double> values;
    for (const Ratios& r : rounds) {
        if (r.*field > 0)
            values.push_back(r.*field);
    }
    if (values.empty())
        return "not measured";
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    char text[96];
    std::snprintf(text, sizeof text, "%.2fx (%.2f-%.2fx)", median(values), *low, *high);
    return text;
}

} // namespace

int main(int argc, char** argv) {
    int tokens = 64, rounds = 1;
    bool quick = false;
    std::vector<std::string> only;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--quick") {
            quick = true;
        } else if (arg == "--tokens" && i + 1 < argc) {
            tokens = std::max(2, std::atoi(argv[++i]));
        } else if (arg == "--rounds" && i + 1 < argc) {
            rounds = std::max(1, std::atoi(argv[++i]));
        } else if (arg == "--only" && i + 1 < argc) {
            std::stringstream in(argv[++i]);
            for (std::string part; std::getline(in, part, ',');)
                only.push_back(part);
        } else {
            std::fprintf(stderr, "usage: bench_generate [--quick] [--tokens N] [--rounds R] "
                                 "[--only NAMES]\n");
            return 2;
        }
    }
    if (quick) {
        benchModel(std::string(PLACER_SOURCE_DIR) + "/tests/models", "tiny_decoder",
                   std::min(tokens, 16));
        return bench::exitCode();
    }
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    std::vector<std::string> names =
        only.empty() ? std::vector<std::string>{"decoder30m", "decoder110m"} : only;
    for (const std::string& name : names) {
        if (!dir || !fs::exists(std::string(dir) + "/" + name + ".onnx")) {
            std::printf("%-16s skipped: not in $PLACER_ONNX_MODELS (scripts/make_decoder_model.py "
                        "small|large DIR writes it)\n",
                        name.c_str());
            continue;
        }
        std::vector<Ratios> measured;
        for (int round = 0; round < rounds; ++round)
            measured.push_back(benchModel(dir, name, tokens));
        if (rounds > 1)
            std::printf("%-16s over %d rounds, median (range): decode tokens/s %s of ONNX "
                        "Runtime's, prefill %s of its first token, split over 2 vcpus %s of 1\n",
                        name.c_str(), rounds, spread(measured, &Ratios::decode).c_str(),
                        spread(measured, &Ratios::prefill).c_str(),
                        spread(measured, &Ratios::split).c_str());
    }
    return bench::exitCode();
}
