// CUDA figures, each a ratio measured in one run on one GPU (the machines are noisy):
//  1. ResNet-50 at batch 1 and batch 32 on cuda:0 vs PyTorch eager on the same GPU, both timing
//     the input's copy in from the host and the network, both in float32 without TF32 (goal:
//     <= 1.2x PyTorch). Needs
//     $PLACER_ONNX_MODELS with resnet50.onnx and resnet50_batch32.onnx
//     (`scripts/export_models.py full DIR`) and a python3 with CUDA PyTorch ($PLACER_PYTHON,
//     else python3, else /usr/bin/python3).
//  2. Host -> device bandwidth of a 256 MiB copy: the executor's cpu -> cuda:0 copy (a pinned
//     host storage), CudaDevice::copyIn from pageable memory (pinned staging buffers), and
//     cudaMemcpy from pinned memory (goal: >= 90 %).
//  3. A CPU/GPU split with large copies, one in and one out: how much of each copy ran while
//     the GPU's compute stream ran kernels, from the run's trace.
// Without a GPU each part says why it is skipped, and the program succeeds.
//
//   bench_cuda            the full run
//   bench_cuda --quick    small sizes, no ResNet (what CTest runs)
#include "RunBench.h"

#include "backends/cuda/CudaBackend.h"
#include "device/DeviceMapping.h"
#include "io/ModelLoader.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

using namespace placer;

namespace {

/// Why cuda:0 cannot be used here, or empty.
std::string whyNoGpu(DeviceRegistry& registry) {
    for (const PhysicalDeviceInfo& info : registry.list()) {
        if (info.kind == DeviceKind::Cuda && !info.available)
            return info.description;
    }
    return registry.hasKind(DeviceKind::Cuda) ? std::string() : "no CUDA device";
}

using bench::load;
using bench::Loaded;
using bench::op;
using bench::parameter;
using bench::run;

DeviceSet devices(std::initializer_list<VirtualDevice> list) {
    DeviceSet set;
    for (const VirtualDevice& device : list)
        set.add(device);
    set.chooseDefaults();
    return set;
}

// ---- 1. ResNet-50 vs PyTorch
// ---------------------------------------------------------------------

/// A python3 that has PyTorch with CUDA, or empty.
std::string cudaPython() {
    std::vector<std::string> candidates;
    if (const char* chosen = std::getenv("PLACER_PYTHON"))
        candidates.push_back(chosen);
    candidates.push_back("python3");
    candidates.push_back("/usr/bin/python3");
    for (const std::string& python : candidates) {
        const std::string probe = python + " -c 'import torch, torchvision, sys; "
                                           "sys.exit(0 if torch.cuda.is_available() else 1)'"
                                           " >/dev/null 2>&1";
        if (std::system(probe.c_str()) == 0)
            return python;
    }
    return {};
}

/// PyTorch eager ResNet-50 on cuda:0 in float32 without TF32 (as ours): the median milliseconds
/// of the input's copy from the host plus the network, or -1.
double pytorchMillis(const std::string& python, int batch) {
    const auto temp = std::filesystem::temp_directory_path();
    const std::string script = (temp / "placer_bench_cuda_torch.py").string();
    const std::string out = (temp / "placer_bench_cuda_torch.txt").string();
    std::ofstream(script)
        << "import sys, time, torch, torchvision\n"
           "batch = int(sys.argv[1])\n"
           "# The same math as ours: float32 without TF32, and the fastest cuDNN\n"
           "# algorithm found once per shape.\n"
           "torch.backends.cudnn.allow_tf32 = False\n"
           "torch.backends.cuda.matmul.allow_tf32 = False\n"
           "torch.backends.cudnn.benchmark = True\n"
           "m = torchvision.models.resnet50(weights=None).eval().cuda()\n"
           "x = torch.randn(batch, 3, 224, 224)\n"
           "with torch.no_grad():\n"
           "    for _ in range(10): m(x.cuda())\n"
           "    torch.cuda.synchronize()\n"
           "    ts = []\n"
           "    for _ in range(30):\n"
           "        t = time.perf_counter(); y = m(x.cuda())\n"
           "        torch.cuda.synchronize(); ts.append(time.perf_counter() - t)\n"
           "print(sorted(ts)[len(ts) // 2] * 1000)\n";
    const std::string command =
        python + " " + script + " " + std::to_string(batch) + " > " + out + " 2>/dev/null";
    if (std::system(command.c_str()) != 0)
        return -1;
    double ms = -1;
    std::ifstream(out) >> ms;
    return ms;
}

void resnetVsPyTorch(DeviceRegistry& registry, const std::string& noGpu, bool quick) {
    const char* dir = std::getenv("PLACER_ONNX_MODELS");
    const std::string python = noGpu.empty() && !quick ? cudaPython() : std::string();
    for (const auto& [file, batch] :
         {std::pair{"resnet50", 1}, std::pair{"resnet50_batch32", 32}}) {
        const std::string path = dir ? std::string(dir) + "/" + file + ".onnx" : "";
        const char* skip = quick            ? "--quick"
                           : !noGpu.empty() ? noGpu.c_str()
                           : !dir           ? "set PLACER_ONNX_MODELS to a folder with it"
                           : !std::filesystem::exists(path) ? "not in PLACER_ONNX_MODELS"
                                                            : nullptr;
        if (skip) {
            std::printf("ResNet-50 batch %-2d skipped: %s\n", batch, skip);
            continue;
        }
        auto model = loadModelFile(path, GraphFormat::Onnx, devices({{"gpu", DeviceKind::Cuda}}));
        if (!model) {
            std::printf("ResNet-50 batch %-2d %s\n", batch, model.error().toString().c_str());
            continue;
        }
        Loaded l;
        l.graph = std::move(model.value().graph);
        l.devices = std::move(model.value().devices);
        load(l, {}, {registry.get("cuda:0").value()});
        const RunResult r = run(l, 10, 30);
        const double ours = median(r.latencyMicros) / 1000.0;
        // Where the time goes: the GPU's busy time (kernels and copies, overlaps once).
        const double busy = median(r.streams[0].busyMicros) / 1000.0;
        const double torch = python.empty() ? -1 : pytorchMillis(python, batch);
        if (torch < 0)
            std::printf("ResNet-50 batch %-2d cuda:0 %.2f ms (GPU busy %.2f ms); PyTorch not "
                        "measured (no python3 with CUDA PyTorch)\n",
                        batch, ours, busy);
        else
            std::printf("ResNet-50 batch %-2d cuda:0 %.2f ms (GPU busy %.2f ms), PyTorch eager "
                        "%.2f ms: ratio %.2f (goal <= 1.2)\n",
                        batch, ours, busy, torch, ours / torch);
    }
}

// ---- 2. host -> device bandwidth
// ------------------------------------------------------------------

bool cudaOk(cudaError_t status, const char* what) {
    if (status == cudaSuccess)
        return true;
    std::printf("bandwidth: %s failed: %s\n", what, cudaGetErrorString(status));
    return false;
}

void hostToDeviceBandwidth(DeviceRegistry& registry, const std::string& noGpu, std::int64_t bytes) {
    if (!noGpu.empty()) {
        std::printf("host -> device bandwidth skipped: %s\n", noGpu.c_str());
        return;
    }
    const TensorType type{{bytes / 4}, DType::Float32};
    Device* gpu = registry.get("cuda:0").value();

    // The executor's copy: %x on the host, negated on the GPU.
    Loaded l;
    l.devices = devices({{"cpu", DeviceKind::Cpu}, {"gpu", DeviceKind::Cuda}});
    const NodeId x = parameter(l.graph, "%x", type, DeviceId(0));
    const NodeId y = op(l.graph, "%y", "negative", {{x, 0}}, type, DeviceId(1));
    l.graph.addOutput(GraphOutput{{y, 0}, {}, {}});
    load(l, {}, {registry.get("cpu").value(), gpu});
    const RunResult r = run(l, 2, 10);
    std::vector<double> executorCopies;
    for (std::size_t k = 0; k < l.executor->program().code.size(); ++k) {
        if (l.executor->program().code[k].op == Opcode::DeviceCopy)
            executorCopies = r.instrMicros[k];
    }

    // CudaDevice::copyIn from pageable memory, through the staging buffers.
    std::vector<std::byte> pageable(static_cast<std::size_t>(bytes), std::byte{1});
    auto allocated = gpu->allocate(bytes);
    if (!allocated) {
        std::printf("bandwidth: %s\n", allocated.error().message.c_str());
        return;
    }
    std::byte* target = allocated.value();
    std::vector<double> staged;
    for (int i = 0; i < 12; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        gpu->enqueue([&] {
            gpu->setLane(gpu->laneFor(WorkKind::CopyIn));
            gpu->copyIn(target, pageable.data(), bytes);
        });
        gpu->synchronize();
        if (i >= 2)
            staged.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count());
    }

    // The reference: cudaMemcpy from pinned memory, timed with events.
    void* pinned = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    std::vector<double> reference;
    if (cudaOk(cudaMallocHost(&pinned, static_cast<std::size_t>(bytes)), "cudaMallocHost") &&
        cudaOk(cudaEventCreate(&start), "cudaEventCreate") &&
        cudaOk(cudaEventCreate(&stop), "cudaEventCreate")) {
        std::memset(pinned, 1, static_cast<std::size_t>(bytes));
        for (int i = 0; i < 12; ++i) {
            cudaEventRecord(start);
            cudaMemcpy(target, pinned, static_cast<std::size_t>(bytes), cudaMemcpyHostToDevice);
            cudaEventRecord(stop);
            cudaEventSynchronize(stop);
            float ms = 0;
            cudaEventElapsedTime(&ms, start, stop);
            if (i >= 2)
                reference.push_back(ms * 1000.0);
        }
    }
    // The peer of copyIn from pageable memory: cudaMemcpy from the same pageable memory (what
    // PyTorch's x.cuda() does), timed on the host as copyIn is.
    std::vector<double> pageableReference;
    for (int i = 0; i < 12; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!cudaOk(cudaMemcpy(target, pageable.data(), static_cast<std::size_t>(bytes),
                               cudaMemcpyHostToDevice),
                    "cudaMemcpy from pageable memory"))
            break;
        if (i >= 2)
            pageableReference.push_back(
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0)
                    .count());
    }
    gpu->free(target);
    if (pinned)
        cudaFreeHost(pinned);
    if (start)
        cudaEventDestroy(start);
    if (stop)
        cudaEventDestroy(stop);
    if (reference.empty() || executorCopies.empty())
        return;
    auto gbps = [&](const std::vector<double>& micros) {
        return static_cast<double>(bytes) / median(micros) / 1e3;
    };
    const double best = gbps(reference);
    std::printf("host -> cuda:0, %s: cudaMemcpy from pinned %.1f GB/s; executor copy (pinned "
                "storage) %.1f GB/s: %.0f%%; copyIn from pageable (staging) %.1f GB/s: %.0f%% "
                "(goal >= 90%%)\n",
                formatBytes(bytes).c_str(), best, gbps(executorCopies),
                100.0 * gbps(executorCopies) / best, gbps(staged), 100.0 * gbps(staged) / best);
    if (!pageableReference.empty())
        std::printf("host -> cuda:0, %s from pageable memory: copyIn %.1f GB/s, cudaMemcpy "
                    "%.1f GB/s: %.0f%%\n",
                    formatBytes(bytes).c_str(), gbps(staged), gbps(pageableReference),
                    100.0 * gbps(staged) / gbps(pageableReference));
}

// ---- 3. copy and compute overlap
// ------------------------------------------------------------------

/// Microseconds of [a0, a1] covered by the union of `intervals` (sorted by start).
double covered(double a0, double a1, const std::vector<std::pair<double, double>>& intervals) {
    double total = 0, until = a0;
    for (const auto& [b0, b1] : intervals) {
        const double from = std::max(b0, until), to = std::min(b1, a1);
        if (to > from) {
            total += to - from;
            until = to;
        }
    }
    return total;
}

void copyComputeOverlap(DeviceRegistry& registry, const std::string& noGpu, bool quick) {
    // Without a GPU the same graphs run with a virtual CPU in its place, so that the benchmark
    // itself is checked; the figures then mean nothing and are not printed.
    const bool dryRun = !noGpu.empty();
    const bool small = quick || dryRun;
    // While the GPU runs a long chain of matrix products on its own input, a large host input
    // is copied in (and added to the chain's result), and a large tensor the GPU made first is
    // copied out to the host (and negated there).
    const std::int64_t n = small ? 64 : 4096, chain = small ? 4 : 30;
    const TensorType big{{small ? 1 << 16 : 16 << 20}, DType::Float32};
    const TensorType square{{n, n}, DType::Float32};
    Loaded l;
    l.devices = devices({{"cpu", DeviceKind::Cpu}, {"gpu", DeviceKind::Cuda}});
    const DeviceId cpu(0), gpu(1);
    std::mt19937 rng(3);
    const NodeId early =
        op(l.graph, "%early", "negative", {{parameter(l.graph, "%e", big, gpu), 0}}, big, gpu);
    const NodeId back = op(l.graph, "%back", "negative", {{early, 0}}, big, cpu);
    const NodeId h = parameter(l.graph, "%h", big, cpu);
    NodeId prev = parameter(l.graph, "%g", square, gpu);
    const NodeId w = bench::constant(l.graph, "%w", square, rng, 0.02f);
    for (int i = 0; i < chain; ++i)
        prev = op(l.graph, "%mm" + std::to_string(i), "nn.dense", {{prev, 0}, {w, 0}}, square, gpu);
    const NodeId total = op(l.graph, "%sum", "sum", {{prev, 0}}, {{}, DType::Float32}, gpu);
    const NodeId joined = op(l.graph, "%joined", "add", {{h, 0}, {total, 0}}, big, gpu);
    l.graph.addOutput(GraphOutput{{joined, 0}, {}, {}});
    l.graph.addOutput(GraphOutput{{back, 0}, {}, {}});
    Device* device = dryRun ? registry.freshVCpu() : registry.get("cuda:0").value();
    load(l, {}, {registry.get("cpu").value(), device});
    const RunResult r = run(l, 2, 5);
    const Program& program = l.executor->program();
    std::vector<std::pair<double, double>> kernels;
    for (const TimedEvent& event : r.trace) {
        if (r.streams[static_cast<std::size_t>(event.stream)].physical == device->name() &&
            program.code[event.instruction].op == Opcode::Invoke)
            kernels.emplace_back(event.start, event.end);
    }
    std::sort(kernels.begin(), kernels.end());
    int copies = 0;
    for (const TimedEvent& event : r.trace) {
        const Instruction& instr = program.code[event.instruction];
        if (instr.op != Opcode::DeviceCopy || instr.bytes != big.bytes() || dryRun) {
            copies += instr.op == Opcode::DeviceCopy && instr.bytes == big.bytes();
            continue;
        }
        const bool in = instr.device == gpu;
        const double copy = event.end - event.start;
        const double hidden = covered(event.start, event.end, kernels);
        std::printf("copy %s of %s during %d matrix products %lldx%lld: %.2f ms, %.2f ms of it "
                    "while kernels ran (%.0f%% overlapped; goal: visible overlap)\n",
                    in ? "cpu -> cuda:0" : "cuda:0 -> cpu", formatBytes(big.bytes()).c_str(),
                    static_cast<int>(chain), static_cast<long long>(n), static_cast<long long>(n),
                    copy / 1000.0, hidden / 1000.0, copy > 0 ? 100.0 * hidden / copy : 0.0);
    }
    if (dryRun)
        std::printf("copy/compute overlap skipped: %s (its graph ran on %s instead, %d large "
                    "copies and %zu kernels traced)\n",
                    noGpu.c_str(), device->name().c_str(), copies, kernels.size());
    else
        std::printf("split run latency %.2f ms\n", median(r.latencyMicros) / 1000.0);
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    cuda::registerCudaBackend();
    DeviceRegistry registry;
    const std::string noGpu = whyNoGpu(registry);
    resnetVsPyTorch(registry, noGpu, quick);
    // 256 MiB, and ResNet-50's input at batch 32 (19 MB).
    for (const std::int64_t bytes :
         quick ? std::vector<std::int64_t>{8 << 20}
               : std::vector<std::int64_t>{256 << 20, std::int64_t{32} * 3 * 224 * 224 * 4})
        hostToDeviceBandwidth(registry, noGpu, bytes);
    copyComputeOverlap(registry, noGpu, quick);
    return 0;
}
