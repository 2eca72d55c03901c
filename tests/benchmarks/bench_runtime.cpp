// Runtime figures, each a ratio measured in one run (the machine is noisy):
//  1. ResNet-18/-50 (batch 1, 224x224) on one vcpu vs PyTorch on the CPU with one thread,
//     when $PLACER_ONNX_MODELS holds resnet18.onnx / resnet50.onnx (scripts/export_models.py
//     full DIR) and Debian's python3-torch is installed; skipped with a reason otherwise.
//  2. A two-branch graph (two chains of three 3x3 convolutions, the last of each pinned to its
//     own virtual device) in three textual orders: its devices on two vcpus vs on one.
//  3. Inception-style blocks (GoogLeNet's shape) with the 3x3 branches on a second vcpu, and
//     GoogLeNet itself when $PLACER_ONNX_MODELS holds googlenet.onnx: latency vs the busier
//     device's busy time.
//  4. Homogeneous splitting: ResNet-50 at batch 8 (resnet50_batch8.onnx in $PLACER_ONNX_MODELS;
//     with --quick, a small CNN at batch 8), --split '*=v1,v2' on two vcpus vs the whole model
//     on one vcpu, both optimised as placer run does, with the outputs compared.
//  5. Pipelining: the same model in two stages by hand on two vcpus, in 8 micro-batches
//     (--micro-batches 8) and without, vs the whole model on one vcpu, outputs bit for bit;
//     and in the stages --mode auto chooses for 8 micro-batches.
//     And sharding inside ops (--shard '*=v1,v2'): a transformer's feed-forward layers at
//     batch 1 on two vcpus vs one, the outputs compared.
//  6. vcpu -> vcpu copy bandwidth vs a plain memcpy of the same size.
//  7. Executor overhead per instruction on a chain of 10,000 tiny ops.
//  8. One plan at several shapes: the transformer encoder of $PLACER_ONNX_MODELS
//     (transformer_encoder.onnx, batch x tokens x 256; with --quick or without it,
//     tests/models/dyn_encoder.onnx) opened once without data and run at 8, 128 and 512
//     tokens in one session: the plan is made once and instantiated per shape (the session's
//     counters), and instantiating it at a shape (shapes and folded sizes evaluated, every
//     node's types checked by its shape function there, memory planned there) vs reading and
//     planning the model at that shape.
//
//   bench_runtime            the full run
//   bench_runtime --quick    small sizes (what CTest runs)
//   bench_runtime pipeline   only the benchmarks named (pytorch, two-branch, inception,
//                            googlenet, split, shard, pipeline, copy, overhead, shapes,
//                            stream)
#include "BenchFailures.h"
#include "OutputCompare.h"
#include "RunBench.h"
#include "TwoBranchGraph.h"

#include "device/DeviceMapping.h"
#include "io/ModelLoader.h"
#include "passes/PassManager.h"
#include "passes/PostOpFusion.h"
#include "plan/Annotations.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "report/RunReport.h"
#include "session/Session.h"
#include "vm/Bytecode.h"
#include "vm/Calibrate.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"
#include "vm/RunTimeShapes.h"
#include "vm/Schedule.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <thread>

using namespace placer;

namespace {

using bench::load;
using bench::Loaded;
using bench::run;
using test::BranchOrder;

DeviceSet vcpus(int count) {
    DeviceSet set;
    for (int i = 0; i < count; ++i)
        set.add(VirtualDevice{"v" + std::to_string(i + 1), DeviceKind::VCpu});
    set.chooseDefaults();
    set.setDefaultDevice(DeviceId(0)); // unpinned work on v1; pins say what goes elsewhere
    return set;
}

double pytorchMillis(const std::string& model) {
    if (std::system("/usr/bin/python3 -c 'import torch, torchvision' >/dev/null 2>&1") != 0)
        return -1;
    const std::string script =
        (std::filesystem::temp_directory_path() / "placer_bench_torch.py").string();
    std::ofstream(script)
        << "import sys, time, torch, torchvision\n"
           "torch.set_num_threads(1)\n"
           "m = getattr(torchvision.models, sys.argv[1])(weights=None).eval()\n"
           "x = torch.randn(1, 3, 224, 224)\n"
           "with torch.no_grad():\n"
           "    for _ in range(3): m(x)\n"
           "    ts = []\n"
           "    for _ in range(10):\n"
           "        t = time.perf_counter(); m(x); ts.append(time.perf_counter() - t)\n"
           "print(sorted(ts)[5] * 1000)\n";
    const std::string out =
        (std::filesystem::temp_directory_path() / "placer_bench_torch.txt").string();
    if (std::system(
            ("/usr/bin/python3 " + script + " " + model + " > " + out + " 2>/dev/null").c_str()) !=
        0)
        return -1;
    double ms = -1;
    std::ifstream(out) >> ms;
    return ms;
}

void resnetVsPyTorch(bool quick) {
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    for (const char* name : {"resnet18", "resnet50"}) {
        const std::string path = dir ? std::string(dir) + "/" + name + ".onnx" : "";
        if (quick || !dir || !std::filesystem::exists(path)) {
            std::printf("%-10s skipped: %s\n", name,
                        quick ? "--quick"
                              : "set PLACER_ONNX_MODELS to a folder with resnet18/50.onnx");
            continue;
        }
        auto model = loadModelFile(path, GraphFormat::Onnx, std::nullopt);
        if (!model) {
            std::printf("%-10s %s\n", name, model.error().toString().c_str());
            bench::wrong(std::string(name) + ": " + model.error().toString());
            continue;
        }
        Loaded l;
        l.graph = std::move(model.value().graph);
        l.devices = vcpus(1);
        load(l);
        const RunResult r = run(l, 3, 10);
        const double ours = median(r.latencyMicros) / 1000.0;
        const double torch = pytorchMillis(name);
        if (torch < 0)
            std::printf("%-10s one vcpu %.1f ms; PyTorch not measured (python3-torch missing)\n",
                        name, ours);
        else
            std::printf(
                "%-10s one vcpu %.1f ms, PyTorch 1 thread %.1f ms: ratio %.2f (goal <= 1.0)\n",
                name, ours, torch, ours / torch);
    }
}

/// The same plan (virtual devices a and b) with a and b on one vcpu, then on two, for each
/// textual order of the graph.
void twoBranchSplit(bool quick) {
    const std::int64_t channels = quick ? 8 : 64, size = quick ? 16 : 56;
    const int depth = 3;
    const int iterations = quick ? 3 : 10;
    for (BranchOrder order : {BranchOrder::AThenB, BranchOrder::BThenA, BranchOrder::Interleaved}) {
        Loaded one, two;
        for (Loaded* l : {&one, &two}) {
            l->graph = test::twoBranchGraph(channels, size, depth, order, true);
            l->devices = vcpus(2);
        }
        load(one, {{"v1", "vcpu1"}, {"v2", "vcpu1"}});
        load(two, {{"v1", "vcpu1"}, {"v2", "vcpu2"}});
        // Interleave so both see the same machine state.
        std::vector<double> a, b;
        for (int round = 0; round < 3; ++round) {
            const RunResult ra = run(one, 1, iterations);
            const RunResult rb = run(two, 1, iterations);
            a.insert(a.end(), ra.latencyMicros.begin(), ra.latencyMicros.end());
            b.insert(b.end(), rb.latencyMicros.begin(), rb.latencyMicros.end());
        }
        std::printf("two branches of %d conv3x3+relu %lldx%lldx%lld, %-11s: a,b on one vcpu "
                    "%.2f ms, on two vcpus %.2f ms: speedup %.2fx (goal >= 1.8x)\n",
                    depth, static_cast<long long>(channels), static_cast<long long>(size),
                    static_cast<long long>(size), test::branchOrderName(order), median(a) / 1000.0,
                    median(b) / 1000.0, median(a) / median(b));
    }
}

/// Inception-style blocks (GoogLeNet's inception3b at 28x28, 256 channels in and out: a 1x1
/// branch, 1x1 -> 3x3, 1x1 -> 3x3 -> 3x3 and pool -> 1x1, concatenated), the two 3x3 branches
/// pinned to device 1 when `split` (their 1x1 reductions follow them there).
Graph inceptionGraph(int blocks, std::int64_t size, bool split) {
    Graph graph;
    std::mt19937 rng(3);
    const std::int64_t channels = 256;
    auto act = [&](std::int64_t c) { return TensorType{{1, c, size, size}, DType::Float32}; };
    ValueRef x{bench::parameter(graph, "%x", act(channels)), 0};
    for (int b = 0; b < blocks; ++b) {
        const std::string block = "/inception" + std::to_string(b) + "/";
        auto conv = [&](const std::string& name, ValueRef in, std::int64_t inC, std::int64_t outC,
                        int k, bool onB) {
            const NodeId w = bench::constant(graph, block + name + "_w",
                                             {{outC, inC, k, k}, DType::Float32}, rng);
            const NodeId c = bench::op(graph, block + name, "nn.conv2d", {in, {w, 0}}, act(outC),
                                       split && onB ? DeviceId(1) : DeviceId());
            if (k == 3)
                graph.node(c).attrs.set("padding", std::vector<std::int64_t>{1, 1});
            return ValueRef{
                bench::op(graph, block + name + "_relu", "nn.relu", {{c, 0}}, act(outC)), 0};
        };
        const ValueRef b1 = conv("branch1", x, channels, 64, 1, false);
        const ValueRef b2 =
            conv("branch2_3x3", conv("branch2_1x1", x, channels, 96, 1, false), 96, 128, 3, true);
        const ValueRef b3a = conv("branch3_1x1", x, channels, 16, 1, false);
        const ValueRef b3 =
            conv("branch3_3x3b", conv("branch3_3x3a", b3a, 16, 32, 3, true), 32, 32, 3, true);
        const NodeId pool =
            bench::op(graph, block + "branch4_pool", "nn.max_pool2d", {x}, act(channels));
        graph.node(pool).attrs.set("pool_size", std::vector<std::int64_t>{3, 3});
        graph.node(pool).attrs.set("padding", std::vector<std::int64_t>{1, 1});
        const ValueRef b4 = conv("branch4", {pool, 0}, channels, 32, 1, false);
        const NodeId cat =
            bench::op(graph, block + "concat", "concatenate", {b1, b2, b3, b4}, act(256));
        graph.node(cat).attrs.set("axis", std::int64_t{1});
        x = {cat, 0};
    }
    graph.addOutput(GraphOutput{x, {}, {}});
    return graph;
}

/// The longest path through a run's dependence graph, each instruction at its median measured
/// time: no order of the same placement can finish sooner.
double criticalPathMicros(const Executor& executor, const RunResult& result) {
    const Schedule& schedule = executor.schedule();
    const Program& program = executor.program();
    std::vector<double> finish(program.code.size(), 0);
    double longest = 0;
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        double start = 0;
        for (std::uint32_t d : schedule.deps[k])
            start = std::max(start, finish[d]);
        finish[k] = start + (result.instrMicros[k].empty() ? 0.0 : median(result.instrMicros[k]));
        longest = std::max(longest, finish[k]);
    }
    return longest;
}

/// Latency on two vcpus against what the placement allows at best: the busier device's busy
/// time, or the critical path when that is longer (work one device must do before the other can
/// start); and against one vcpu.
void reportSplit(const char* what, Loaded& one, Loaded& two, int iterations) {
    std::vector<double> a, b, busiest, critical;
    for (int round = 0; round < 3; ++round) {
        const RunResult ra = run(one, 1, iterations);
        const RunResult rb = run(two, 1, iterations);
        a.insert(a.end(), ra.latencyMicros.begin(), ra.latencyMicros.end());
        b.insert(b.end(), rb.latencyMicros.begin(), rb.latencyMicros.end());
        for (std::size_t i = 0; i < rb.latencyMicros.size(); ++i) {
            double most = 0;
            for (const StreamInfo& stream : rb.streams)
                most = std::max(most, stream.busyMicros[i]);
            busiest.push_back(most);
        }
        critical.push_back(criticalPathMicros(*two.executor, rb));
    }
    const double bound = std::max(median(busiest), median(critical));
    std::printf("%s: %.2f ms; busier device busy %.2f ms (ratio %.2f, goal <= 1.1), critical path "
                "%.2f ms: %.2f of the better bound; one vcpu %.2f ms: speedup %.2fx\n",
                what, median(b) / 1000.0, median(busiest) / 1000.0, median(b) / median(busiest),
                median(critical) / 1000.0, median(b) / bound, median(a) / 1000.0,
                median(a) / median(b));
}

/// GoogLeNet from $PLACER_ONNX_MODELS (scripts/export_models.py full DIR) with every Inception
/// block's two 3x3 branches on the second vcpu.
void googlenetSplit(bool quick) {
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    const std::string path = dir ? std::string(dir) + "/googlenet.onnx" : "";
    if (quick || !dir || !std::filesystem::exists(path)) {
        std::printf("googlenet  skipped: %s\n",
                    quick ? "--quick" : "set PLACER_ONNX_MODELS to a folder with googlenet.onnx");
        return;
    }
    Loaded one, two;
    for (Loaded* l : {&one, &two}) {
        auto model = loadModelFile(path, GraphFormat::Onnx, std::nullopt);
        if (!model) {
            std::printf("googlenet  %s\n", model.error().toString().c_str());
            bench::wrong("googlenet: " + model.error().toString());
            return;
        }
        l->graph = std::move(model.value().graph);
        l->devices = vcpus(l == &one ? 1 : 2);
    }
    const Status pinned = applyPinRequests(
        two.graph, two.devices, {{"*/branch2/*", "v2", false}, {"*/branch3/*", "v2", false}});
    if (!pinned.ok()) {
        std::printf("googlenet  %s\n", pinned.error().message.c_str());
        bench::wrong("googlenet: " + pinned.error().message);
        return;
    }
    load(one);
    load(two, {{"v1", "vcpu1"}, {"v2", "vcpu2"}});
    reportSplit("googlenet, the 3x3 branches on vcpu2", one, two, 10);
}

/// The Inception-style graph on two vcpus, its 3x3 branches on the second.
void inceptionSplit(bool quick) {
    const int blocks = quick ? 1 : 4;
    const std::int64_t size = quick ? 8 : 28;
    Loaded one, two;
    one.graph = inceptionGraph(blocks, size, false);
    one.devices = vcpus(1);
    load(one);
    two.graph = inceptionGraph(blocks, size, true);
    two.devices = vcpus(2);
    load(two, {{"v1", "vcpu1"}, {"v2", "vcpu2"}});
    char what[128];
    std::snprintf(what, sizeof what,
                  "%d Inception-style blocks at %lldx%lld, 3x3 branches on vcpu2", blocks,
                  static_cast<long long>(size), static_cast<long long>(size));
    reportSplit(what, one, two, quick ? 3 : 10);
}

void copyBandwidth(bool quick) {
    const std::int64_t elements = quick ? (1 << 16) : (16 << 20); // 64 MiB of float32
    Loaded l;
    l.devices = vcpus(2);
    Node x;
    x.name = "%x";
    x.op = &OpRegistry::global().parameter();
    x.outputs = {{{elements}, DType::Float32}};
    x.pin = Pin{PinKind::Plain, DeviceId(0), "bench"};
    const NodeId input = l.graph.addNode(std::move(x));
    Node use;
    use.name = "%y";
    use.op = OpRegistry::global().find("negative");
    use.inputs = {{input, 0}};
    use.outputs = {{{elements}, DType::Float32}};
    use.pin = Pin{PinKind::Plain, DeviceId(1), "bench"};
    const NodeId y = l.graph.addNode(std::move(use));
    l.graph.addOutput(GraphOutput{{y, 0}, {}, {}});
    load(l);
    run(l, 2, 1); // warm: every storage touched once
    const std::size_t bytes = static_cast<std::size_t>(elements) * 4;
    std::vector<char> src(bytes, 1), dst(bytes, 2);
    // Interleaved rounds, so both see the same machine: one run's copy, then one memcpy.
    std::vector<double> copies, plain;
    for (int i = 0; i < (quick ? 3 : 15); ++i) {
        const RunResult r = run(l, 0, 1);
        for (std::size_t k = 0; k < l.executor->program().code.size(); ++k) {
            if (l.executor->program().code[k].op == Opcode::DeviceCopy)
                copies.push_back(r.instrMicros[k].front());
        }
        // Like the run: the source was just written (the run's input upload), then copied.
        std::memset(src.data(), i & 0xff, bytes);
        const auto t0 = std::chrono::steady_clock::now();
        std::memcpy(dst.data(), src.data(), bytes);
        plain.push_back(
            std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                .count());
    }
    const double copy = median(copies);
    const double gbps = static_cast<double>(bytes) / copy / 1e3;
    const double memcpyGbps = static_cast<double>(bytes) / median(plain) / 1e3;
    std::printf("vcpu1 -> vcpu2 copy of %s: %.2f GB/s, memcpy %.2f GB/s: %.0f%% (goal >= 70%%)\n",
                formatBytes(static_cast<std::int64_t>(bytes)).c_str(), gbps, memcpyGbps,
                100.0 * gbps / memcpyGbps);
}

void executorOverhead(bool quick) {
    const int count = quick ? 1000 : 10000;
    Loaded l;
    l.devices = vcpus(1);
    Node x;
    x.name = "%x";
    x.op = &OpRegistry::global().parameter();
    x.outputs = {{{1}, DType::Float32}};
    NodeId prev = l.graph.addNode(std::move(x));
    for (int i = 0; i < count; ++i) {
        Node n;
        n.name = "%" + std::to_string(i);
        n.op = OpRegistry::global().find(i % 2 ? "negative" : "abs");
        n.inputs = {{prev, 0}};
        n.outputs = {{{1}, DType::Float32}};
        prev = l.graph.addNode(std::move(n));
    }
    l.graph.addOutput(GraphOutput{{prev, 0}, {}, {}});
    load(l);
    const RunResult r = run(l, 2, quick ? 3 : 10);
    const Program& p = l.executor->program();
    const std::size_t instructions = p.code.size() - p.runStart;
    double kernels = 0;
    for (std::size_t k = p.runStart; k < p.code.size(); ++k) {
        if (p.code[k].op == Opcode::Invoke)
            kernels += median(r.instrMicros[k]);
    }
    const double latency = median(r.latencyMicros);
    std::printf("%d tiny ops (%zu instructions): %.3f ms, %.3f us per instruction, of which "
                "%.3f us outside kernels (goal <= 2 us)\n",
                count, instructions, latency / 1000.0, latency / static_cast<double>(instructions),
                (latency - kernels) / static_cast<double>(instructions));
}

/// A small CNN at batch 8 for --quick: four 3x3 convolutions of 64 channels at 32x32 with
/// ReLUs, global pooling and a dense layer.
Graph smallBatchedCnn() {
    Graph graph;
    std::mt19937 rng(5);
    const std::int64_t batch = 8, channels = 64, size = 32;
    auto act = [&](std::int64_t c, std::int64_t s) {
        return TensorType{{batch, c, s, s}, DType::Float32};
    };
    ValueRef x{bench::parameter(graph, "%x", act(3, size)), 0};
    std::int64_t in = 3;
    for (int k = 0; k < 4; ++k) {
        const std::string name = "%conv" + std::to_string(k);
        const NodeId w =
            bench::constant(graph, name + "_w", {{channels, in, 3, 3}, DType::Float32}, rng);
        const NodeId c = bench::op(graph, name, "nn.conv2d", {x, {w, 0}}, act(channels, size));
        graph.node(c).attrs.set("padding", std::vector<std::int64_t>{1, 1});
        x = {bench::op(graph, name + "_relu", "nn.relu", {{c, 0}}, act(channels, size)), 0};
        in = channels;
    }
    const NodeId pool = bench::op(graph, "%pool", "nn.global_avg_pool2d", {x}, act(channels, 1));
    const NodeId flat = bench::op(graph, "%flat", "nn.batch_flatten", {{pool, 0}},
                                  {{batch, channels}, DType::Float32});
    const NodeId w = bench::constant(graph, "%fc_w", {{10, channels}, DType::Float32}, rng);
    const NodeId fc =
        bench::op(graph, "%fc", "nn.dense", {{flat, 0}, {w, 0}}, {{batch, 10}, DType::Float32});
    graph.addOutput(GraphOutput{{fc, 0}, {}, {}});
    return graph;
}

/// ResNet-50 at batch 8 from $PLACER_ONNX_MODELS (unless `quick`), else the small CNN, into
/// each of `into` on two vcpus; whether it is ResNet-50, or nothing when it cannot be read.
std::optional<bool> loadBatchModel(bool quick, const char* what,
                                   std::initializer_list<Loaded*> into) {
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    const std::string path = dir ? std::string(dir) + "/resnet50_batch8.onnx" : "";
    const bool resnet = !quick && dir && std::filesystem::exists(path);
    if (!quick && !resnet)
        std::printf("%s: resnet50 batch 8 skipped: set PLACER_ONNX_MODELS to a folder with "
                    "resnet50_batch8.onnx (scripts/export_models.py full DIR); a small CNN "
                    "instead\n",
                    what);
    for (Loaded* l : into) {
        if (resnet) {
            auto model = loadModelFile(path, GraphFormat::Onnx, std::nullopt);
            if (!model) {
                std::printf("%s: %s\n", what, model.error().toString().c_str());
                bench::wrong(std::string(what) + ": " + model.error().toString());
                return std::nullopt;
            }
            l->graph = std::move(model.value().graph);
        } else {
            l->graph = smallBatchedCnn();
        }
        l->devices = vcpus(2);
    }
    return resnet;
}

/// Two loaded plans run in turn, three rounds of `iterations` each (the machine is noisy):
/// their latencies, and how far the second's outputs are from the first's.
struct Interleaved {
    std::vector<double> a, b;
    double difference = 0;
};
Interleaved interleaved(Loaded& one, Loaded& two, int iterations) {
    Interleaved out;
    for (int round = 0; round < 3; ++round) {
        const RunResult ra = run(one, 1, iterations);
        const RunResult rb = run(two, 1, iterations);
        out.a.insert(out.a.end(), ra.latencyMicros.begin(), ra.latencyMicros.end());
        out.b.insert(out.b.end(), rb.latencyMicros.begin(), rb.latencyMicros.end());
        out.difference = std::max(out.difference, test::relativeDifference(rb.outputs, ra.outputs));
    }
    return out;
}

/// The whole batch on one vcpu against --split '*=v1,v2' on two, both optimised for their
/// devices as placer run does.
void batchSplit(bool quick) {
    Loaded one, two;
    const std::optional<bool> loaded = loadBatchModel(quick, "batch split", {&one, &two});
    if (!loaded)
        return;
    const bool resnet = *loaded;
    PlanOptions split;
    split.splits.push_back(parseSplitRequest("*=v1,v2").take());
    load(one, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, {}, OptimizeOptions{});
    load(two, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, split, OptimizeOptions{});
    const int iterations = quick ? 3 : 10;
    const auto [a, b, difference] = interleaved(one, two, iterations);
    std::printf("%s batch 8: one vcpu %.2f ms, --split '*=v1,v2' on two vcpus %.2f ms: "
                "speedup %.2fx (goal >= 1.8x); outputs differ by %.1e of their largest (%s)\n",
                resnet ? "resnet50" : "small CNN", median(a) / 1000.0, median(b) / 1000.0,
                median(a) / median(b), difference, difference < 1e-4 ? "match" : "MISMATCH");
    if (!(difference < 1e-4))
        bench::wrong("batch split: the split run's outputs differ from the unsplit run's");
}

/// A transformer's feed-forward layers at batch 1 ([1, tokens, width], four layers, each
/// MatMul to 4x the width, Relu, MatMul back, the residual added and LayerNormalization), as
/// ONNX ops: what --shard cuts Megatron's way.
Graph feedForwardStack(std::int64_t tokens, std::int64_t width, int layers) {
    Graph graph;
    std::mt19937 rng(7);
    const TensorType act{{1, tokens, width}, DType::Float32};
    const TensorType wide{{1, tokens, 4 * width}, DType::Float32};
    ValueRef h{bench::parameter(graph, "x", act), 0};
    for (int k = 0; k < layers; ++k) {
        const std::string name = "layer" + std::to_string(k) + "/";
        const NodeId w1 =
            bench::constant(graph, name + "w1", {{width, 4 * width}, DType::Float32}, rng);
        const NodeId up = bench::op(graph, name + "up", "MatMul", {h, {w1, 0}}, wide);
        const NodeId relu = bench::op(graph, name + "relu", "Relu", {{up, 0}}, wide);
        const NodeId w2 =
            bench::constant(graph, name + "w2", {{4 * width, width}, DType::Float32}, rng);
        const NodeId down = bench::op(graph, name + "down", "MatMul", {{relu, 0}, {w2, 0}}, act);
        const NodeId add = bench::op(graph, name + "residual", "Add", {{down, 0}, h}, act);
        const NodeId scale = bench::constant(graph, name + "ln_s", {{width}, DType::Float32}, rng);
        const NodeId bias = bench::constant(graph, name + "ln_b", {{width}, DType::Float32}, rng);
        h = {bench::op(graph, name + "ln", "LayerNormalization", {{add, 0}, {scale, 0}, {bias, 0}},
                       act),
             0};
    }
    graph.addOutput(GraphOutput{h, {}, {}});
    return graph;
}

/// Sharding inside ops at batch 1: the feed-forward stack on one vcpu against --shard '*=v1,v2'
/// on two (each holding half of every weight, one AllReduce per layer), outputs compared.
void tensorShard(bool quick) {
    Loaded one, two;
    const std::int64_t tokens = quick ? 8 : 32, width = quick ? 256 : 512;
    for (Loaded* l : {&one, &two}) {
        l->graph = feedForwardStack(tokens, width, 4);
        l->devices = vcpus(2);
    }
    PlanOptions shard;
    shard.splits.push_back(parseSplitRequest("*=v1,v2", "--shard").take());
    shard.splits.back().tensor = true;
    load(one, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, {}, OptimizeOptions{});
    load(two, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, shard, OptimizeOptions{});
    const int iterations = quick ? 5 : 20;
    const auto [a, b, difference] = interleaved(one, two, iterations);
    auto largest = [](const Plan& plan) {
        std::int64_t bytes = 0;
        for (const DeviceMemory& device : plan.memory.devices)
            bytes = std::max(bytes, device.peakBytes);
        return static_cast<double>(bytes) / (1 << 20);
    };
    std::printf("feed-forward stack [1,%lld,%lld] x4 at batch 1: one vcpu %.2f ms, --shard "
                "'*=v1,v2' on two vcpus %.2f ms: speedup %.2fx (goal >= 1.6x); the fullest device "
                "planned %.1f MiB vs %.1f MiB; outputs differ by %.1e of their largest (%s)\n",
                static_cast<long long>(tokens), static_cast<long long>(width), median(a) / 1000.0,
                median(b) / 1000.0, median(a) / median(b), largest(one.plan), largest(two.plan),
                difference, difference < 1e-4 ? "match" : "MISMATCH");
    if (!(difference < 1e-4))
        bench::wrong("tensor shard: the sharded run's outputs differ from the unsharded run's");
}

/// Pipelining: the whole batch on one vcpu against the model in two stages by hand (ResNet-50's
/// layer3, layer4 and head on the second vcpu; the small CNN's second half) run as 8
/// micro-batches (--micro-batches 8), and the same stages without micro-batches; all optimised
/// as placer run does, the outputs compared bit for bit.
void batchPipeline(bool quick) {
    Loaded one, staged, piped, chosen, calibrated;
    const std::optional<bool> loaded =
        loadBatchModel(quick, "pipeline", {&one, &staged, &piped, &chosen, &calibrated});
    if (!loaded)
        return;
    const bool resnet = *loaded;
    // The second stage: ResNet-50's layer3, layer4 and head; the small CNN's later half.
    const auto secondStage = [&](const std::string& name) {
        if (resnet)
            return name.starts_with("/layer3") || name.starts_with("/layer4") ||
                   name.starts_with("/avgpool") || name.starts_with("/Flatten") ||
                   name.starts_with("/fc");
        return name >= "%conv2" || name.starts_with("%pool") || name.starts_with("%flat") ||
               name.starts_with("%fc");
    };
    PlanOptions stages;
    stages.rules.push_back(OpRule{"*", "v1"});
    for (Loaded* l : {&staged, &piped}) {
        for (std::uint32_t i = 0; i < l->graph.size(); ++i) {
            const Node& node = l->graph.node(NodeId(i));
            if (node.role() == OpRole::Compute && secondStage(node.name))
                l->graph.setPin(NodeId(i), Pin{PinKind::Plain, DeviceId(1), "bench"});
        }
    }
    PlanOptions pipelined = stages;
    pipelined.microBatches = 8;
    load(one, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, {}, OptimizeOptions{});
    load(staged, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, stages, OptimizeOptions{});
    load(piped, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, pipelined, OptimizeOptions{});
    // The stages chosen by auto mode (plan/PipelineStages.h), on two cost models:
    // - assumed: the vcpus on their own cores at assumed rates, post-ops fused
    //   (core/session machineCosts without a workspace);
    // - calibrated: the same with this machine's calibration applied, as `placer run --mode
    //   auto` plans on a workspace it has just calibrated (it calibrates one that has none).
    CostModel model =
        CostModel::assumed(chosen.devices, static_cast<int>(std::thread::hardware_concurrency()),
                           {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, false);
    model.setFusion(fusedGroups);
    const auto autoStages = [&](Loaded& loaded, const CostModel& costs, const char* what) {
        PlanOptions automatic;
        automatic.mode = PlanMode::Auto;
        automatic.microBatches = 8;
        automatic.costs = std::make_shared<const CostModel>(costs);
        const Plan planned = planDevices(loaded.graph, loaded.devices, automatic);
        for (const std::string& note : planned.notes)
            if (note.starts_with("pipeline stages") || note.starts_with("auto mode kept"))
                std::printf("pipeline (%s costs): %s\n", what, note.c_str());
        load(loaded, {{"v1", "vcpu1"}, {"v2", "vcpu2"}}, {}, automatic, OptimizeOptions{});
        return planned.prediction ? planned.prediction->makespanMicros / 1000 : 0.0;
    };
    const double predicted = autoStages(chosen, model, "assumed");
    CostModel calibratedModel = model;
    if (auto calibration = calibrateThisMachine(CalibrationOptions{}))
        calibratedModel.apply(calibration.value());
    else
        bench::wrong("pipeline: calibrating this machine failed: " + calibration.error().message);
    const double predictedCalibrated = autoStages(calibrated, calibratedModel, "calibrated");
    const int iterations = quick ? 3 : 5;
    std::vector<double> a, b, c, d, e;
    bool same = true;
    double difference = 0, apart = 0;
    for (int round = 0; round < 3; ++round) {
        const RunResult ra = run(one, 1, iterations);
        const RunResult rb = run(staged, 1, iterations);
        const RunResult rc = run(piped, 1, iterations);
        const RunResult rd = run(chosen, 1, iterations);
        const RunResult re = run(calibrated, 1, iterations);
        a.insert(a.end(), ra.latencyMicros.begin(), ra.latencyMicros.end());
        b.insert(b.end(), rb.latencyMicros.begin(), rb.latencyMicros.end());
        c.insert(c.end(), rc.latencyMicros.begin(), rc.latencyMicros.end());
        d.insert(d.end(), rd.latencyMicros.begin(), rd.latencyMicros.end());
        e.insert(e.end(), re.latencyMicros.begin(), re.latencyMicros.end());
        // A micro-batch of one row runs a layer's product as one row times its weights (the
        // GEMV kernel), whose sums run in another order than the whole batch's: the same to
        // float rounding, not bit for bit.
        same = same && rc.outputs.size() == rb.outputs.size();
        if (same)
            apart = std::max(apart, test::relativeDifference(rc.outputs, rb.outputs));
        difference = std::max(difference, test::relativeDifference(rd.outputs, ra.outputs));
        difference = std::max(difference, test::relativeDifference(re.outputs, ra.outputs));
    }
    std::printf("%s batch 8: one vcpu %.2f ms; two stages on two vcpus %.2f ms (%.2fx), the "
                "same stages in 8 micro-batches %.2f ms: speedup %.2fx over one vcpu (goal >= "
                "1.5x); outputs %s (%.1e of their largest apart)\n",
                resnet ? "resnet50" : "small CNN", median(a) / 1000.0, median(b) / 1000.0,
                median(a) / median(b), median(c) / 1000.0, median(a) / median(c),
                same && apart < 1e-5 ? "the same" : "DIFFER", apart);
    std::printf("%s batch 8: stages chosen by --mode auto --micro-batches 8 on assumed costs: "
                "%.2f ms, predicted %.2f ms: %.2fx over one vcpu\n",
                resnet ? "resnet50" : "small CNN", median(d) / 1000.0, predicted,
                median(a) / median(d));
    std::printf("%s batch 8: stages chosen by --mode auto --micro-batches 8 on this machine's "
                "calibration (placer run's first auto plan): %.2f ms, predicted %.2f ms: speedup "
                "%.2fx over one vcpu (goal >= 1.7x); outputs differ from one vcpu's by %.1e of "
                "their largest (%s)\n",
                resnet ? "resnet50" : "small CNN", median(e) / 1000.0, predictedCalibrated,
                median(a) / median(e), difference, difference < 1e-4 ? "match" : "MISMATCH");
    if (!same || apart >= 1e-5)
        bench::wrong("pipeline: the pipelined outputs differ from the unpipelined ones");
    if (!(difference < 1e-4))
        bench::wrong("pipeline: the automatic stages' outputs differ from one vcpu's");
}

double medianOf(std::vector<double> values) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

/// Throughput mode (--stream): 4 batches back to back through the automatic stages in 8
/// micro-batches each, against the same pipeline run on one batch at a time and against one
/// vcpu, as placer run does them (Session): items per second, a batch's latency in the
/// stream, and the prediction. The stream's outputs are checked against each batch run alone.
void batchStream(bool quick) {
    Loaded base;
    const std::optional<bool> loaded = loadBatchModel(quick, "stream", {&base});
    if (!loaded)
        return;
    const bool resnet = *loaded;
    const std::filesystem::path workspace =
        std::filesystem::temp_directory_path() / "bench_runtime_stream.db";
    std::filesystem::remove(workspace);
    Session session(SessionOptions{workspace.string()});
    const std::vector<DeviceMapRequest> maps = {{"v1", "vcpu1"}, {"v2", "vcpu2"}};
    const int batches = 4, microBatches = quick ? 4 : 8;
    const auto planned = [&](PlanRequest request) -> std::shared_ptr<const PlannedModel> {
        request.maps = maps;
        auto plan = session.plan(LoadedModel{base.graph, base.devices, {}}, request);
        if (!plan) {
            bench::wrong("stream: " + plan.error().toString());
            return nullptr;
        }
        return std::make_shared<const PlannedModel>(plan.take());
    };
    PlanRequest alone;
    alone.options.rules.push_back(OpRule{"*", "v1"});
    PlanRequest piped;
    piped.options.mode = PlanMode::Auto;
    piped.options.microBatches = microBatches;
    PlanRequest streamed = piped;
    streamed.options.streamBatches = batches;
    const auto one = planned(alone), pipeline = planned(piped), stream = planned(streamed);
    if (!one || !pipeline || !stream)
        return;
    for (const std::string& note : stream->plan.notes)
        if (note.starts_with("pipeline stages") || note.starts_with("auto mode kept"))
            std::printf("stream: %s\n", note.c_str());
    const int iterations = quick ? 2 : 3;
    std::vector<double> a, b, c, spans;
    double predicted = 0;
    bool checked = true;
    for (int round = 0; round < 3; ++round) {
        for (const auto& [plan, into] :
             {std::pair{one, &a}, std::pair{pipeline, &b}, std::pair{stream, &c}}) {
            RunRequest request;
            request.maps = maps;
            request.warmup = 1;
            request.iterations = iterations;
            request.reference = round == 0 && plan == stream; // each batch alone, once
            auto ran = session.run(plan, request);
            if (!ran)
                return bench::wrong("stream: " + ran.error().toString());
            const RunOutcome& outcome = *ran.value();
            into->insert(into->end(), outcome.result.latencyMicros.begin(),
                         outcome.result.latencyMicros.end());
            if (outcome.reference)
                checked = outcome.reference->ok;
            if (plan == stream) {
                if (const auto times = streamRunTimes(outcome)) {
                    spans.insert(spans.end(), times->spanMicros.begin(), times->spanMicros.end());
                    predicted = times->predictedMicros;
                }
            }
        }
    }
    const double items = 8.0 * batches;
    const double oneRate = 8.0 / (median(a) / 1e6), pipeRate = 8.0 / (median(b) / 1e6),
                 streamRate = items / (median(c) / 1e6);
    std::printf("%s batch 8: one vcpu %.2f ms a batch (%.1f items/s); the automatic stages in %d "
                "micro-batches %.2f ms a batch (%.1f items/s); --stream %d: %.2f ms for %d "
                "batches, %.1f items/s, %.2fx the pipeline's one batch at a time and %.2fx one "
                "vcpu's; a batch's latency in the stream %.2f ms (median span); predicted %.2f "
                "ms for the stream (measured/predicted %.2f); each batch against its run alone: "
                "%s\n",
                resnet ? "resnet50" : "small CNN", median(a) / 1000.0, oneRate, microBatches,
                median(b) / 1000.0, pipeRate, batches, median(c) / 1000.0, batches, streamRate,
                streamRate / pipeRate, streamRate / oneRate, median(spans) / 1000.0,
                predicted / 1000.0, predicted > 0 ? median(c) / predicted : 0.0,
                checked ? "match" : "MISMATCH");
    if (!checked)
        bench::wrong("stream: a batch of the stream differs from its run alone");
    std::filesystem::remove(workspace);
}

/// Benchmark 8: one plan run at several shapes.
void oneplanSeveralShapes(bool quick) {
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    std::string path = std::string(PLACER_SOURCE_DIR) + "/tests/models/dyn_encoder.onnx";
    if (!quick && dir && std::filesystem::exists(std::string(dir) + "/transformer_encoder.onnx"))
        path = std::string(dir) + "/transformer_encoder.onnx";
    const std::filesystem::path workspace =
        std::filesystem::temp_directory_path() / "bench_runtime_shapes.db";
    std::filesystem::remove(workspace);
    Session session(SessionOptions{workspace.string()});
    PlanRequest request;
    request.devices = "a:vcpu";
    auto opened = session.open(ModelSource{path}, request);
    if (!opened)
        return bench::wrong("shapes: " + opened.error().toString());
    const auto planned = std::make_shared<const PlannedModel>(opened.take());
    const Graph& graph = planned->model.graph;
    if (graph.openInputs.empty() || graph.symbolValues.empty())
        return bench::wrong("shapes: " + path + " names no dimension");
    const OpenInput& input = graph.openInputs.front();
    const std::string name = std::filesystem::path(path).filename().string();
    std::printf("one plan at several shapes: %s (%zu nodes)%s\n", name.c_str(), graph.size(),
                graph.sizeBound.empty() ? ""
                                        : (", bound to its sizes: " + graph.sizeBound).c_str());
    using Clock = std::chrono::steady_clock;
    const auto millis = [](Clock::duration d) {
        return std::chrono::duration<double, std::milli>(d).count();
    };
    double instantiateTotal = 0, readTotal = 0;
    for (const std::int64_t tokens : {8, 128, 512}) {
        std::vector<std::int64_t> shape;
        std::size_t named = 0;
        for (const std::string& dim : input.declaredDims) {
            const bool number = !dim.empty() && std::isdigit(static_cast<unsigned char>(dim[0]));
            // The first named dimension is the batch (1), the next the sequence.
            shape.push_back(number ? std::stoll(dim) : named++ == 0 ? 1 : tokens);
        }
        const HostTensor data = randomTensor(TensorType{shape, DType::Float32}, 7);
        // The peer: the model read and planned at this shape, as each shape was before.
        ModelSource source{path};
        source.runInputs[input.name] = data;
        const auto readStart = Clock::now();
        auto read = loadSource(source, planned->model.devices);
        Plan direct;
        if (read)
            direct = planDevices(read.value().graph, planned->model.devices, planned->options);
        const double readMs = millis(Clock::now() - readStart);
        if (!read)
            return bench::wrong("shapes: " + read.error().toString());
        // This: the plan made once, instantiated at the data's sizes.
        const auto instantiateStart = Clock::now();
        SymbolValues sizes = read.value().graph.symbolValues;
        auto sized = instantiateAtSizes(graph, sizes);
        if (sized) {
            if (Status checked = checkTypesAtSizes(sized.value(), graph.onnxOpset()); !checked.ok())
                return bench::wrong("shapes: " + checked.error().toString());
        }
        std::optional<Plan> resized;
        if (sized) {
            auto plan =
                planAtSizes(sized.value(), planned->model.devices, planned->options, planned->plan);
            if (plan)
                resized = plan.take();
        }
        const double instantiateMs = millis(Clock::now() - instantiateStart);
        std::int64_t peak = 0, directPeak = 0;
        for (const DeviceMemory& memory : direct.memory.devices)
            directPeak += memory.peakBytes;
        if (resized) {
            for (const DeviceMemory& memory : resized->memory.devices)
                peak += memory.peakBytes;
            if (peak != directPeak)
                bench::wrong("shapes: the instantiated memory plan's peak differs from a plan "
                             "read at that shape");
        }
        // And the run itself, through the session as every front end runs it.
        RunRequest run;
        run.inputs = {{input.name, data}};
        run.warmup = 1;
        run.iterations = quick ? 2 : 5;
        const auto runStart = Clock::now();
        auto ran = session.run(planned, run);
        const double runMs = millis(Clock::now() - runStart);
        if (!ran)
            return bench::wrong("shapes: " + ran.error().toString());
        if (ran.value()->reference && !ran.value()->reference->ok)
            bench::wrong("shapes: the outputs at " + data.type.toShortString() +
                         " differ from the reference");
        instantiateTotal += instantiateMs;
        readTotal += readMs;
        std::printf("  %-22s instantiated %.2f ms vs read and planned %.2f ms (%.1fx); memory "
                    "plan peak %s; the run (%d iterations and its reference) %.0f ms, median "
                    "%.2f ms\n",
                    data.type.toShortString().c_str(), instantiateMs, readMs,
                    instantiateMs > 0 ? readMs / instantiateMs : 0.0, formatBytes(peak).c_str(),
                    run.iterations, runMs, medianOf(ran.value()->result.latencyMicros) / 1000.0);
    }
    const SessionCounters& counters = session.counters();
    std::printf("  the session read the model %d time(s), made %d plan(s) and instantiated %d; "
                "instantiating took %.2f ms in all vs %.2f ms reading and planning (%.1fx)\n",
                counters.modelsRead, counters.plansMade, counters.instantiated, instantiateTotal,
                readTotal, instantiateTotal > 0 ? readTotal / instantiateTotal : 0.0);
    if (graph.sizeBound.empty() && (counters.plansMade != 1 || counters.instantiated != 3))
        bench::wrong("shapes: the plan was not made once and instantiated per shape");
    std::filesystem::remove(workspace);
}

} // namespace

int main(int argc, char** argv) {
    // bench_runtime [--quick] [NAME...]: every benchmark, or those named (split, pipeline, ...).
    bool quick = false;
    std::vector<std::string> only;
    for (int k = 1; k < argc; ++k) {
        if (std::string(argv[k]) == "--quick")
            quick = true;
        else
            only.emplace_back(argv[k]);
    }
    const auto wanted = [&](const char* name) {
        return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
    };
    const std::pair<const char*, void (*)(bool)> benchmarks[] = {
        {"pytorch", resnetVsPyTorch},   {"two-branch", twoBranchSplit},
        {"inception", inceptionSplit},  {"googlenet", googlenetSplit},
        {"split", batchSplit},          {"shard", tensorShard},
        {"pipeline", batchPipeline},    {"copy", copyBandwidth},
        {"overhead", executorOverhead}, {"shapes", oneplanSeveralShapes},
        {"stream", batchStream}};
    for (const auto& [name, benchmark] : benchmarks)
        if (wanted(name))
            benchmark(quick);
    return bench::exitCode();
}
