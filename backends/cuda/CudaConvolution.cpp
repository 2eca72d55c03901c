// The CUDA convolution (CudaKernelSupport.h): every way cuDNN and cuBLAS offer for a shape is
// timed once on this device, on trial buffers, and the fastest kept in the algorithm cache, so
// that later processes build the same kernel and get the same bits.
#include "backends/cuda/CudaKernelSupport.h"

#include "backends/cuda/ConvEngines.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace placer::cuda::detail {

namespace {

/// A 1x1 convolution with unit strides, no padding and one group is, for each batch item, one
/// matrix product: output channels x positions = filter x input. cuBLAS is often much faster for
/// it than cuDNN's FMA algorithms (measured on an H100: ResNet-50's 1024 -> 256 channels at 14x14
/// took cuDNN's best 150 us), so it is timed against them and the faster kept.
struct PointwiseGemm {
    std::int64_t batch = 0, inChannels = 0, outChannels = 0, positions = 0;
};

/// The algorithm number the algorithm cache keeps for a convolution run as PointwiseGemm.
constexpr int kGemmAlgorithm = -1;

void launchPointwiseGemm(CudaDevice& dev, const PointwiseGemm& g, const void* x, const void* w,
                         void* y, float beta) {
    // Row-major Y[n] (K x P) = W (K x C) X[n] (C x P) is column-major Y^T = X^T W^T.
    const float alpha = 1;
    const int p = static_cast<int>(g.positions), c = static_cast<int>(g.inChannels),
              k = static_cast<int>(g.outChannels);
    PLACER_CUDA_THROW(cublasSgemmStridedBatched(
        dev.cublas(), CUBLAS_OP_N, CUBLAS_OP_N, p, k, c, &alpha, static_cast<const float*>(x), p,
        static_cast<long long>(c) * p, static_cast<const float*>(w), c, 0, &beta,
        static_cast<float*>(y), p, static_cast<long long>(k) * p, static_cast<int>(g.batch)));
}

/// The median of five timed runs of `launch` on the compute stream after two untimed ones, in
/// milliseconds; negative when it fails.
template <class Launch> float timeOnComputeStream(CudaDevice& dev, Launch&& launch) {
    cudaEvent_t start = nullptr, stop = nullptr;
    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
        cudaGetLastError();
        if (start)
            cudaEventDestroy(start);
        return -1;
    }
    std::vector<float> times;
    try {
        for (int i = 0; i < 7; ++i) {
            PLACER_CUDA_THROW(cudaEventRecord(start, dev.computeStream()));
            launch();
            PLACER_CUDA_THROW(cudaEventRecord(stop, dev.computeStream()));
            PLACER_CUDA_THROW(cudaEventSynchronize(stop));
            float ms = 0;
            PLACER_CUDA_THROW(cudaEventElapsedTime(&ms, start, stop));
            if (i >= 2)
                times.push_back(ms);
        }
    } catch (const KernelError&) {
        times.clear();
    }
    cudaStreamSynchronize(dev.computeStream());
    cudaGetLastError();
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (times.empty())
        return -1;
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

/// Trial buffers for timing one convolution's ways on the device (its input, filter and output,
/// zeroed, from the device's allocator), and the timings.
class ConvTrial {
public:
    ConvTrial(CudaDevice& device, std::int64_t xBytes, std::int64_t wBytes, std::int64_t yBytes)
        : m_device(device) {
        const std::int64_t sizes[3] = {xBytes, wBytes, yBytes};
        m_ok = true;
        for (int i = 0; i < 3 && m_ok; ++i) {
            auto block = device.allocate(sizes[i]);
            m_ok = static_cast<bool>(block);
            if (m_ok) {
                m_buffers[i] = block.value();
                m_ok = cudaMemsetAsync(m_buffers[i], 0, static_cast<std::size_t>(sizes[i]),
                                       device.computeStream()) == cudaSuccess;
            }
        }
        cudaGetLastError();
    }
    ~ConvTrial() {
        for (std::byte* buffer : m_buffers)
            m_device.free(buffer);
    }
    ConvTrial(const ConvTrial&) = delete;
    ConvTrial& operator=(const ConvTrial&) = delete;

    /// The device's workspace grown to `bytes` once for every trial (each growth keeps the old
    /// one for the device's life); false when it cannot be.
    bool reserveWorkspace(std::int64_t bytes) {
        return bytes <= 0 || static_cast<bool>(m_device.convWorkspace(bytes));
    }

    /// Milliseconds of each way (the median of five), negative when it fails.
    float legacy(const ConvAlgorithm& a, const TensorDesc& src, const FilterDesc& filter,
                 const ConvDesc& conv, const TensorDesc& dst) {
        if (!m_ok || !reserveWorkspace(static_cast<std::int64_t>(a.workspace)))
            return -1;
        return timeOnComputeStream(m_device, [&] {
            const float one = 1, zero = 0;
            PLACER_CUDA_THROW(cudnnConvolutionForward(
                m_device.cudnn(), &one, src.handle, m_buffers[0], filter.handle, m_buffers[1],
                conv.handle, a.algorithm, m_device.convWorkspacePointer(), a.workspace, &zero,
                dst.handle, m_buffers[2]));
        });
    }
    float engine(const ConvPlan& plan) {
        if (!m_ok || !reserveWorkspace(plan.workspace()))
            return -1;
        return timeOnComputeStream(m_device, [&] {
            PLACER_CUDA_THROW(plan.run(m_device.cudnn(), m_buffers[0], m_buffers[1], m_buffers[2],
                                       m_device.convWorkspacePointer()));
        });
    }
    float gemm(const PointwiseGemm& g) {
        if (!m_ok || !m_device.cublas())
            return -1;
        return timeOnComputeStream(m_device, [&] {
            launchPointwiseGemm(m_device, g, m_buffers[0], m_buffers[1], m_buffers[2], 0);
        });
    }

private:
    CudaDevice& m_device;
    std::byte* m_buffers[3] = {};
    bool m_ok = false;
};

/// The algorithm number the algorithm cache keeps for a convolution run by one of cuDNN's graph
/// engines (the configuration kept beside it).
constexpr int kEngineAlgorithm = -2;

/// How many of the graph's engine configurations a convolution's search times at most.
constexpr std::size_t kEngineTrials = 24;

/// A way a convolution runs, as its kernel's name and the search's log give it: "gemm", an
/// engine's configuration, or "algo" and the legacy algorithm's number.
std::string wayName(const ConvAlgorithm& way) {
    if (way.gemm)
        return "gemm";
    if (!way.engine.empty())
        return way.engine;
    return "algo" + std::to_string(static_cast<int>(way.algorithm));
}

/// Whether PLACER_CUDA_CONV_LOG is set: each convolution's search is then told on stderr.
bool logConvolutionSearch() {
    static const bool log = [] {
        const char* value = std::getenv("PLACER_CUDA_CONV_LOG");
        return value && *value && std::string(value) != "0";
    }();
    return log;
}

} // namespace

KernelResult convolutionKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    Convolution conv;
    if (auto error = readConvolution(spec, &conv))
        return specError(spec, *error);
    if (!device.cudnn())
        return specError(spec,
                         "needs cuDNN, which this GPU does not have: " + device.cudnnMissing());
    Dims in = spec.inputs[0].shape;
    Dims w = spec.inputs[1].shape;
    Dims out = spec.outputs[0].shape;
    if (product(out) == 0)
        return emptyKernel("cudnn:convolution");
    if (product(in) == 0 || product(w) == 0)
        return specError(spec, "an empty input or filter for a non-empty output");
    if (auto overflow = intOverflow(w, "the filter's extent", "cuDNN"))
        return specError(spec, *overflow);
    const std::size_t spatial = in.size() - 2;
    Window window = conv.window;
    // cuDNN pads symmetrically: uneven padding pads the input into a workspace first.
    bool uneven = false;
    for (std::size_t i = 0; i < spatial; ++i)
        uneven = uneven || window.padL[i] != window.padR[i];
    Pad pad;
    Dims padded = in;
    if (uneven) {
        toShape(in, &pad.in);
        for (std::size_t i = 0; i < spatial; ++i) {
            padded[i + 2] += window.padL[i] + window.padR[i];
            pad.before[i + 2] = window.padL[i];
            window.padL[i] = window.padR[i] = 0;
        }
        toShape(padded, &pad.out);
    }
    // 1-D convolutions as 2-D ones with a height of 1.
    if (spatial == 1) {
        for (Dims* dims : {&padded, &w, &out})
            dims->insert(dims->begin() + 2, 1);
        for (Dims* list : {&window.padL, &window.strides, &window.dilation})
            list->insert(list->begin(), list == &window.padL ? 0 : 1);
    }
    auto src = tensorDesc(padded);
    auto dst = tensorDesc(out);
    if (!src || !dst)
        return specError(spec, (!src ? src.error() : dst.error()).message);
    auto filter = std::make_shared<FilterDesc>();
    auto convDesc = std::make_shared<ConvDesc>();
    PLACER_CUDA_RETURN(cudnnCreateFilterDescriptor(&filter->handle));
    const std::vector<int> filterDims = intDims(w);
    PLACER_CUDA_RETURN(
        cudnnSetFilterNdDescriptor(filter->handle, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                   static_cast<int>(filterDims.size()), filterDims.data()));
    PLACER_CUDA_RETURN(cudnnCreateConvolutionDescriptor(&convDesc->handle));
    const std::vector<int> pads = intDims(window.padL), strides = intDims(window.strides),
                           dilations = intDims(window.dilation);
    PLACER_CUDA_RETURN(cudnnSetConvolutionNdDescriptor(
        convDesc->handle, static_cast<int>(pads.size()), pads.data(), strides.data(),
        dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    PLACER_CUDA_RETURN(
        cudnnSetConvolutionGroupCount(convDesc->handle, static_cast<int>(conv.groups)));
    // Full float32 arithmetic (no TF32), so results match the CPU within float rounding.
    PLACER_CUDA_RETURN(cudnnSetConvolutionMathType(convDesc->handle, CUDNN_FMA_MATH));
    // The fastest algorithm for this shape, measured once per device.
    std::string key;
    for (const Dims* dims : {&padded, &w, &out, &window.padL, &window.strides, &window.dilation}) {
        for (std::int64_t d : *dims)
            key += std::to_string(d) + ",";
        key += ";";
    }
    key += std::to_string(conv.groups);
    // A pointwise convolution (1x1, unit strides, no padding left, one group) can be matrix
    // products instead.
    bool pointwise = conv.groups == 1 && padded[0] <= std::numeric_limits<int>::max();
    PointwiseGemm gemm{padded[0], padded[1], w[0], 1};
    for (std::size_t i = 2; i < w.size(); ++i) {
        pointwise = pointwise && w[i] == 1 && window.strides[i - 2] == 1 &&
                    window.padL[i - 2] == 0 && window.padR[i - 2] == 0 && out[i] == padded[i];
        gemm.positions *= padded[i];
    }
    pointwise = pointwise && !intOverflow({gemm.positions, gemm.inChannels * gemm.positions,
                                           gemm.outChannels * gemm.positions},
                                          "", "")
                                  .has_value();
    // PLACER_CUDA_POINTWISE=gemm or cudnn takes that way for every pointwise convolution
    // instead of the faster (to compare them, and for the tests of both).
    const char* forced = std::getenv("PLACER_CUDA_POINTWISE");
    const std::string force = forced ? forced : "";
    if (pointwise && (force == "gemm" || force == "cudnn"))
        key += force == "gemm" ? ";gemm" : ";cudnn";
    // PLACER_CUDA_CONV=legacy takes cuDNN's legacy algorithms only, =engines its graph's engines
    // only (the fastest of them), =engine:N the graph's candidate N (from 0, round the list):
    // to compare them, and for the tests of each.
    const char* convWay = std::getenv("PLACER_CUDA_CONV");
    const std::string way = convWay ? convWay : "";
    const bool legacyOnly = way == "legacy";
    const int enginePick =
        way.rfind("engine:", 0) == 0 ? std::max(0, std::atoi(way.c_str() + 7)) : -1;
    const bool enginesOnly = way == "engines" || enginePick >= 0;
    if (legacyOnly || enginesOnly)
        key += ";" + way;
    // The graph sees the convolution as the legacy API does (symmetric pads by now).
    const ConvShape shape{padded,         w, out, window.padL, window.padL, window.strides,
                          window.dilation};
    auto& cache = device.convAlgorithms();
    auto found = cache.find(key);
    if (pointwise && force == "gemm" && found == cache.end() && device.cublas()) {
        ConvAlgorithm viaGemm;
        viaGemm.gemm = true;
        found = cache.emplace(key, viaGemm).first;
    }
    if (found == cache.end()) {
        // The fastest way within the fixed workspace budget, measured once per machine and kept
        // in the algorithm cache, so that every later process (and every run) takes the same
        // one, and the outputs' bits with it.
        const std::string machineKey = device.algorithmKey() + "/" + key +
                                       (pointwise ? ";or-gemm" : "") +
                                       (legacyOnly ? "" : ";engines");
        const bool gemmToo = pointwise && device.cublas() && force != "cudnn" && !enginesOnly;
        ConvAlgorithm best;
        bool any = false;
        if (const auto known = algorithmCache().find(machineKey);
            known && known->workspace <= CudaDevice::kConvWorkspaceBudget &&
            (known->algorithm != kGemmAlgorithm || gemmToo) &&
            (known->algorithm == kEngineAlgorithm) == !known->engine.empty() &&
            (known->algorithm != kEngineAlgorithm || !legacyOnly)) {
            if (known->algorithm == kGemmAlgorithm)
                best.gemm = true;
            else if (known->algorithm == kEngineAlgorithm)
                best.engine = known->engine;
            else
                best.algorithm = static_cast<cudnnConvolutionFwdAlgo_t>(known->algorithm);
            best.workspace = static_cast<std::size_t>(known->workspace);
            any = true;
        } else {
            // The searches allocate their own trial buffers: the cached blocks go back first.
            device.allocator().releaseCached();
            ConvAlgorithm legacy;
            bool haveLegacy = false;
            if (!enginesOnly) {
                int returned = 0;
                cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
                PLACER_CUDA_RETURN(cudnnFindConvolutionForwardAlgorithm(
                    device.cudnn(), src.value()->handle, filter->handle, convDesc->handle,
                    dst.value()->handle, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
                for (int i = 0; i < returned && !haveLegacy; ++i) { // fastest first
                    const cudnnConvolutionFwdAlgoPerf_t& p = perf[i];
                    if (p.status != CUDNN_STATUS_SUCCESS || p.mathType == CUDNN_TENSOR_OP_MATH ||
                        p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
                        static_cast<std::int64_t>(p.memory) > CudaDevice::kConvWorkspaceBudget)
                        continue;
                    legacy = {p.algo, p.memory};
                    haveLegacy = true;
                }
            }
            std::vector<std::shared_ptr<ConvPlan>> plans;
            std::string notes;
            if (!legacyOnly) {
                plans = convPlanCandidates(device.cudnn(), shape, CudaDevice::kConvWorkspaceBudget,
                                           kEngineTrials, &notes);
                if (enginePick >= 0 && !plans.empty())
                    plans = {plans[static_cast<std::size_t>(enginePick) % plans.size()]};
            }
            // Each way timed on the same buffers where there is a choice; the fastest kept.
            const std::size_t ways = (haveLegacy ? 1 : 0) + plans.size() + (gemmToo ? 1 : 0);
            float bestMs = -1;
            std::string log;
            auto consider = [&](float ms, const ConvAlgorithm& way) {
                log += "; " + wayName(way) + " " +
                       (ms < 0 ? std::string("failed") : std::to_string(ms));
                if (ms > 0 && (bestMs < 0 || ms < bestMs)) {
                    bestMs = ms;
                    best = way;
                    any = true;
                }
            };
            if (ways > 1) {
                ConvTrial trial(device, product(padded) * 4, product(w) * 4, product(out) * 4);
                std::int64_t workspace = static_cast<std::int64_t>(legacy.workspace);
                for (const auto& plan : plans)
                    workspace = std::max(workspace, plan->workspace());
                trial.reserveWorkspace(workspace);
                if (haveLegacy)
                    consider(trial.legacy(legacy, *src.value(), *filter, *convDesc, *dst.value()),
                             legacy);
                for (const auto& plan : plans) {
                    ConvAlgorithm viaEngine;
                    viaEngine.engine = plan->config();
                    viaEngine.workspace = static_cast<std::size_t>(plan->workspace());
                    consider(trial.engine(*plan), viaEngine);
                }
                if (gemmToo) {
                    ConvAlgorithm viaGemm;
                    viaGemm.gemm = true;
                    consider(trial.gemm(gemm), viaGemm);
                }
                cudaGetLastError();
            }
            if (!any && haveLegacy) { // the only way, or none could be timed
                best = legacy;
                any = true;
            } else if (!any && !plans.empty()) {
                best.engine = plans.front()->config();
                best.workspace = static_cast<std::size_t>(plans.front()->workspace());
                any = true;
            } else if (!any && gemmToo) {
                best.gemm = any = true;
            }
            if (logConvolutionSearch())
                std::fprintf(stderr, "placer: convolution %s: %s%s -> %s\n", key.c_str(),
                             notes.empty() ? "legacy only" : notes.c_str(), log.c_str(),
                             any ? wayName(best).c_str() : "none");
            if (!any)
                return specError(spec, "cuDNN has no algorithm for this convolution within a " +
                                           formatBytes(CudaDevice::kConvWorkspaceBudget) +
                                           " workspace" +
                                           (notes.empty() ? "" : " (" + notes + ")"));
            if ((force != "cudnn" || !pointwise) && enginePick < 0)
                algorithmCache().remember(
                    machineKey, {best.gemm              ? kGemmAlgorithm
                                 : !best.engine.empty() ? kEngineAlgorithm
                                                        : static_cast<int>(best.algorithm),
                                 static_cast<std::int64_t>(best.workspace), best.engine});
        }
        found = cache.emplace(key, best).first;
    }
    ConvAlgorithm algorithm = found->second;
    // A graph engine runs from a plan of this node's. Where its configuration cannot be built
    // (a cache written by another build of cuDNN), and at launch for tensors that are not
    // 16-byte aligned, cuDNN's legacy implicit GEMM runs instead: it needs no workspace.
    std::shared_ptr<ConvPlan> plan;
    if (!algorithm.engine.empty()) {
        auto built = ConvPlan::create(device.cudnn(), shape, algorithm.engine);
        if (built) {
            plan = built.take();
            algorithm.workspace = static_cast<std::size_t>(plan->workspace());
        } else {
            if (logConvolutionSearch())
                std::fprintf(stderr, "placer: convolution %s: %s\n", key.c_str(),
                             built.error().message.c_str());
            algorithm = ConvAlgorithm{};
            algorithm.algorithm = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        }
    }
    // The workspace is the device's, shared by its convolutions (grown here, read at launch);
    // the padded input is this node's, from the device's allocator, once.
    if (algorithm.workspace > 0) {
        auto block = device.convWorkspace(static_cast<std::int64_t>(algorithm.workspace));
        if (!block)
            return specError(spec, "the convolution's workspace: " + block.error().message);
    }
    std::byte* paddedInput = nullptr;
    if (uneven) {
        auto block = device.allocate(product(padded) * 4);
        if (!block)
            return specError(spec, block.error().message);
        paddedInput = block.value();
    }
    std::shared_ptr<void> memory(nullptr,
                                 [dev = &device, paddedInput](void*) { dev->free(paddedInput); });
    const bool hasBias = conv.hasBias;
    std::shared_ptr<TensorDesc> biasDesc;
    if (hasBias) {
        std::vector<int> dims(out.size(), 1);
        dims[1] = static_cast<int>(out[1]);
        auto bias = tensorDesc(Dims(dims.begin(), dims.end()));
        if (!bias)
            return specError(spec, bias.error().message);
        biasDesc = bias.take();
    }
    std::shared_ptr<TensorDesc> srcDesc = src.take(), dstDesc = dst.take();
    const std::int64_t paddedCount = product(padded);
    CudaDevice* dev = &device;
    // The input itself, or, where the padding is uneven, the input padded into the workspace.
    auto padInput = [pad, paddedInput, paddedCount, dev](const std::byte* input) mutable {
        if (!paddedInput)
            return static_cast<const void*>(input);
        pad.src = input;
        pad.dst = paddedInput;
        launchElements(pad, paddedCount, dev->computeStream());
        return static_cast<const void*>(paddedInput);
    };
    if (algorithm.gemm) {
        // The bias first, broadcast over the output, then the products added to it.
        StridedCopy bias;
        if (hasBias) {
            toShape({gemm.batch, gemm.outChannels, gemm.positions}, &bias.shape);
            bias.srcStrides = toStrides({0, 1, 0});
            bias.dstStrides = toStrides({gemm.outChannels * gemm.positions, gemm.positions, 1});
        }
        const std::int64_t outCount = product(out);
        return makeKernel("cublas:pointwise-convolution", [=](const std::byte* const* in,
                                                              std::byte* const* outp) mutable {
            (void)memory;
            const void* input = padInput(in[0]);
            if (hasBias) {
                bias.src = in[2];
                bias.dst = outp[0];
                launchElements(bias, outCount, dev->computeStream());
            }
            launchPointwiseGemm(*dev, gemm, input, in[1], outp[0], hasBias ? 1.0f : 0.0f);
        });
    }
    return makeKernel(
        "cudnn:convolution:" + wayName(algorithm),
        [=](const std::byte* const* in, std::byte* const* outp) mutable {
            (void)memory;
            const void* input = padInput(in[0]);
            const float one = 1, zero = 0;
            if (plan && ConvPlan::aligned(input) && ConvPlan::aligned(in[1]) &&
                ConvPlan::aligned(outp[0]))
                PLACER_CUDA_THROW(
                    plan->run(dev->cudnn(), input, in[1], outp[0], dev->convWorkspacePointer()));
            else
                PLACER_CUDA_THROW(cudnnConvolutionForward(
                    dev->cudnn(), &one, srcDesc->handle, input, filter->handle, in[1],
                    convDesc->handle,
                    plan ? CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM : algorithm.algorithm,
                    dev->convWorkspacePointer(), plan ? 0 : algorithm.workspace, &zero,
                    dstDesc->handle, outp[0]));
            if (hasBias)
                PLACER_CUDA_THROW(cudnnAddTensor(dev->cudnn(), &one, biasDesc->handle, in[2], &one,
                                                 dstDesc->handle, outp[0]));
        });
}

} // namespace placer::cuda::detail
