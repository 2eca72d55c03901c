// ONNX import time, constant folding included (as placer and the GUI load): a ResNet-50-sized
// model (~100 MB of weights) and a 5,000-node transformer, both synthesized here with the ONNX
// protobuf API (no PyTorch needed), plus every model in $PLACER_ONNX_MODELS (e.g. from
// `scripts/export_models.py full DIR`). Reports the first import and the best of 3, how many
// nodes were folded, and the import as a multiple of reading the file alone (the peer measured
// in the same run). Goals: under 1.5 s for resnet50.onnx, under 3 s for vit_b_16.onnx. Not a
// timed test.
//
//   bench_onnx            the full run
//   bench_onnx --quick    smaller models (what CTest runs)
#include "BenchFailures.h"
#include "backends/cpu/ConstantEvaluation.h"
#include "io/ModelLoader.h"
#include "io/TextFile.h"

#include "OnnxModels.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using namespace placer;
using namespace placer::test;
using Clock = std::chrono::steady_clock;

namespace {

void addWeight(onnx::GraphProto* g, const std::string& name, std::vector<std::int64_t> dims,
               std::mt19937& rng) {
    onnx::TensorProto* t = addInitializer(g, name, dims);
    std::int64_t count = 1;
    for (std::int64_t d : dims)
        count *= d;
    std::string data(static_cast<std::size_t>(count) * 4, '\0');
    for (std::size_t i = 0; i + 4 <= data.size(); i += 4) {
        const float v = static_cast<float>(rng() % 1000) / 1000.0f - 0.5f;
        std::memcpy(&data[i], &v, 4);
    }
    t->set_raw_data(std::move(data));
}

/// 3x3 convolutions of 256 channels on 14x14 maps, with ReLUs, until the weights reach `bytes`.
onnx::ModelProto convNet(std::int64_t bytes) {
    onnx::ModelProto model = emptyModel("convnet");
    onnx::GraphProto* g = model.mutable_graph();
    std::mt19937 rng(1);
    addValue(g->mutable_input(), "x", {1, 256, 14, 14});
    std::string last = "x";
    const std::int64_t perLayer = 256 * 256 * 9 * 4;
    for (int i = 0; (i + 1) * perLayer <= bytes; ++i) {
        const std::string id = std::to_string(i);
        addWeight(g, "w" + id, {256, 256, 3, 3}, rng);
        auto* conv = addOp(g, "Conv", {last, "w" + id}, "conv" + id);
        setInts(conv, "pads", {1, 1, 1, 1});
        addOp(g, "Relu", {"conv" + id}, "relu" + id);
        last = "relu" + id;
    }
    addValue(g->mutable_output(), last, {1, 256, 14, 14});
    return model;
}

/// Encoder-like blocks of 25 nodes (projections, attention, residuals, layer norms written out).
onnx::ModelProto transformer(int nodes) {
    onnx::ModelProto model = emptyModel("transformer");
    onnx::GraphProto* g = model.mutable_graph();
    std::mt19937 rng(2);
    addValue(g->mutable_input(), "x", {1, 128, 64});
    addWeight(g, "wq", {64, 64}, rng);
    addWeight(g, "wk", {64, 64}, rng);
    addWeight(g, "wv", {64, 64}, rng);
    addWeight(g, "wo", {64, 64}, rng);
    addWeight(g, "w1", {64, 256}, rng);
    addWeight(g, "w2", {256, 64}, rng);
    addWeight(g, "scale", {1}, rng);
    std::string x = "x";
    for (int layer = 0; g->node_size() + 25 <= nodes; ++layer) {
        const std::string p = "l" + std::to_string(layer) + ".";
        addOp(g, "MatMul", {x, "wq"}, p + "q");
        addOp(g, "MatMul", {x, "wk"}, p + "k");
        addOp(g, "MatMul", {x, "wv"}, p + "v");
        auto* t = addOp(g, "Transpose", {p + "k"}, p + "kt");
        setInts(t, "perm", {0, 2, 1});
        addOp(g, "MatMul", {p + "q", p + "kt"}, p + "s");
        addOp(g, "Mul", {p + "s", "scale"}, p + "ss");
        addOp(g, "Softmax", {p + "ss"}, p + "a");
        addOp(g, "MatMul", {p + "a", p + "v"}, p + "av");
        addOp(g, "MatMul", {p + "av", "wo"}, p + "o");
        addOp(g, "Add", {p + "o", x}, p + "r1");
        addOp(g, "ReduceMean", {p + "r1"}, p + "m1");
        addOp(g, "Sub", {p + "r1", p + "m1"}, p + "c1");
        addOp(g, "Mul", {p + "c1", p + "c1"}, p + "sq1");
        addOp(g, "ReduceMean", {p + "sq1"}, p + "var1");
        addOp(g, "Sqrt", {p + "var1"}, p + "sd1");
        addOp(g, "Div", {p + "c1", p + "sd1"}, p + "n1");
        addOp(g, "MatMul", {p + "n1", "w1"}, p + "f1");
        addOp(g, "Erf", {p + "f1"}, p + "g1");
        addOp(g, "Mul", {p + "f1", p + "g1"}, p + "g2");
        addOp(g, "MatMul", {p + "g2", "w2"}, p + "f2");
        addOp(g, "Add", {p + "f2", p + "n1"}, p + "r2");
        addOp(g, "ReduceMean", {p + "r2"}, p + "m2");
        addOp(g, "Sub", {p + "r2", p + "m2"}, p + "c2");
        addOp(g, "Tanh", {p + "c2"}, p + "n2");
        addOp(g, "Identity", {p + "n2"}, p + "out");
        x = p + "out";
    }
    addValue(g->mutable_output(), x, {1, 128, 64});
    return model;
}

double seconds(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void measure(const std::string& label, const std::string& path) {
    const auto size = std::filesystem::file_size(path);
    double first = 0, best = 1e30, read = 1e30;
    std::size_t nodes = 0;
    int folded = 0;
    for (int i = 0; i < 3; ++i) {
        auto start = Clock::now();
        auto model = loadModelFile(path, GraphFormat::Onnx, std::nullopt);
        const double t = seconds(start);
        if (!model) {
            std::printf("%-28s error: %s\n", label.c_str(), model.error().toString().c_str());
            bench::wrong(label + ": " + model.error().toString());
            return;
        }
        nodes = model.value().graph.size();
        folded = model.value().graph.foldedNodes();
        first = i == 0 ? t : first;
        best = std::min(best, t);
        start = Clock::now();
        (void)readTextFile(path);
        read = std::min(read, seconds(start));
    }
    std::printf("%-28s %8.1f MiB %7zu nodes (%5d folded)  first %6.3f s  best %6.3f s  "
                "(reading the file %6.3f s: %.1fx)\n",
                label.c_str(), static_cast<double>(size) / 1048576.0, nodes, folded, first, best,
                read, best / std::max(read, 1e-9));
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    installConstantFolding();
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "placer-bench-onnx";
    std::filesystem::create_directories(dir);
    const std::int64_t weightBytes = quick ? 8LL << 20 : 100LL << 20;
    const int transformerNodes = quick ? 500 : 5000;
    struct Generated {
        std::string label;
        onnx::ModelProto model;
    };
    std::vector<Generated> generated;
    generated.push_back({"resnet50-sized conv net", convNet(weightBytes)});
    generated.push_back({"transformer", transformer(transformerNodes)});
    std::printf("ONNX import (read, parse, check, shape inference, graph), first and best of 3\n");
    for (Generated& g : generated) {
        const std::string path = (dir / (g.model.graph().name() + ".onnx")).string();
        std::ofstream out(path, std::ios::binary);
        g.model.SerializeToOstream(&out);
        out.close();
        measure(g.label, path);
        std::filesystem::remove(path);
    }
    if (const char* models = std::getenv("PLACER_ONNX_MODELS")) {
        for (const auto& entry : std::filesystem::directory_iterator(models)) {
            if (entry.path().extension() == ".onnx")
                measure(entry.path().filename().string(), entry.path().string());
        }
    }
    return bench::exitCode();
}
