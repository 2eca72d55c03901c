// CPU kernels built on oneDNN beyond convolutions and matrix products (DnnlConvolution.cpp,
// DnnlMatmul.cpp): pooling, batch and layer normalisation, softmax, and the element-wise,
// binary, transpose and reduction ops it has algorithms for. Primitives are created when the
// kernel is prepared (at load time); running binds pointers. Every primitive uses a scratchpad
// of its own, so contexts can run at the same time.
#include "backends/cpu/DnnlSupport.h"
#include "backends/cpu/VectorMath.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace placer::cpu {

using namespace geometry;

namespace {

/// Adaptive average pooling where windows differ in size (input not a multiple of output).
Result<std::unique_ptr<Kernel>> adaptiveAveragePool(const KernelSpec& spec) {
    const Dims in = spec.inputs[0].shape, out = spec.outputs[0].shape;
    return makeKernel("plain:adaptive_avg_pool", [=](const std::byte* const* inputs,
                                                     std::byte* const* outputs) {
        const auto* x = reinterpret_cast<const float*>(inputs[0]);
        auto* y = reinterpret_cast<float*>(outputs[0]);
        const std::int64_t planes = in[0] * in[1], h = in[2], w = in[3], oh = out[2], ow = out[3];
        for (std::int64_t p = 0; p < planes; ++p) {
            for (std::int64_t i = 0; i < oh; ++i) {
                const std::int64_t h0 = i * h / oh, h1 = ((i + 1) * h + oh - 1) / oh;
                for (std::int64_t j = 0; j < ow; ++j) {
                    const std::int64_t w0 = j * w / ow, w1 = ((j + 1) * w + ow - 1) / ow;
                    double sum = 0;
                    for (std::int64_t r = h0; r < h1; ++r)
                        for (std::int64_t c = w0; c < w1; ++c)
                            sum += x[(p * h + r) * w + c];
                    y[(p * oh + i) * ow + j] =
                        static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
                }
            }
        }
    });
}

} // namespace

Result<std::unique_ptr<Kernel>> makePooling(const KernelSpec& given, CpuKernelContext& ctx) {
    auto viewed = float32GeometrySpec(given);
    if (!viewed)
        return viewed.error();
    const KernelSpec spec = viewed.take();
    const bool channelsLast = given.node->hints.channelsLast;
    Pooling pooling;
    if (auto error = readPooling(spec, &pooling))
        return specError(spec, *error);
    if (pooling.adaptive && channelsLast)
        return specError(spec, "adaptive pooling is planned in NCHW only");
    if (pooling.adaptive)
        return adaptiveAveragePool(spec);
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    const Window& window = pooling.window;
    const algorithm algo = pooling.isMax            ? algorithm::pooling_max
                           : pooling.includePadding ? algorithm::pooling_avg_include_padding
                                                    : algorithm::pooling_avg_exclude_padding;
    const memory::desc src = activationDesc(in, channelsLast),
                       dst = activationDesc(out, channelsLast);
    dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algo, src, dst,
                                        window.strides, window.kernel, minusOne(window.dilation),
                                        window.padL, window.padR);
    dnnl::pooling_v2_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    auto kernel = dnnlKernel<dnnl::pooling_v2_forward>("pooling", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, src);
    kernel->bind(DNNL_ARG_DST, -1, dst);
    return std::unique_ptr<Kernel>(std::move(kernel));
}

Result<std::unique_ptr<Kernel>> makeBatchNorm(const KernelSpec& given, CpuKernelContext& ctx) {
    auto viewed = float32GeometrySpec(given);
    if (!viewed)
        return viewed.error();
    const KernelSpec spec = viewed.take();
    const bool channelsLast = given.node->hints.channelsLast;
    Normalization norm;
    if (auto error = readBatchNorm(spec, &norm))
        return specError(spec, *error);
    const Dims& in = spec.inputs[0].shape;
    const int rank = static_cast<int>(in.size());
    const int axis = norm.axis;
    const float epsilon = norm.epsilon;
    const bool center = norm.center, scale = norm.scale;
    // Outputs 2 and 3 of Relay's batch_norm are the moving mean and variance, passed through.
    const std::int64_t channelBytes = spec.inputs[3].bytes();
    const std::size_t extraOutputs = spec.outputs.size() - 1;
    // Post-op fusion (passes/PostOpFusion.h) gives a batch normalisation the Relu after it.
    const std::vector<PostOp>& postOps = spec.node->hints.postOps;
    if (!postOps.empty() && (postOps.size() != 1 || postOps[0].kind != PostOp::Kind::Unary ||
                             postOps[0].fn != UnaryFn::Relu))
        return specError(spec, "a batch normalisation takes only a Relu after it");
    const bool relu = !postOps.empty();
    if (axis == 1 && rank >= 2 && rank <= 5) {
        auto flags = dnnl::normalization_flags::use_global_stats;
        if (relu)
            flags |= dnnl::normalization_flags::fuse_norm_relu;
        if (scale)
            flags |= dnnl::normalization_flags::use_scale;
        if (center)
            flags |= dnnl::normalization_flags::use_shift;
        const memory::desc data = activationDesc(in, channelsLast && rank == 4);
        dnnl::batch_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     epsilon, flags);
        dnnl::batch_normalization_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
        auto kernel = std::make_shared<std::unique_ptr<DnnlKernel>>(
            dnnlKernel<dnnl::batch_normalization_forward>("batch_normalization", ctx, pd));
        DnnlKernel& k = **kernel;
        const memory::desc channel = plainDesc({in[1]});
        k.bind(DNNL_ARG_SRC, 0, data);
        if (scale)
            k.bind(DNNL_ARG_SCALE, 1, channel);
        if (center)
            k.bind(DNNL_ARG_SHIFT, 2, channel);
        k.bind(DNNL_ARG_MEAN, 3, channel);
        k.bind(DNNL_ARG_VARIANCE, 4, channel);
        k.bind(DNNL_ARG_DST, -1, data);
        const std::string name = k.implementation() + (relu ? "+relu" : "");
        return makeKernel(name, [kernel, extraOutputs, channelBytes](const std::byte* const* inputs,
                                                                     std::byte* const* outputs) {
            (*kernel)->run(inputs, outputs);
            for (std::size_t k = 0; k < extraOutputs; ++k)
                std::memcpy(outputs[k + 1], inputs[k + 3], static_cast<std::size_t>(channelBytes));
        });
    }
    if (channelsLast)
        return specError(spec, "channels-last batch normalisation needs channels on axis 1");
    const std::int64_t outer = norm.outer, channels = norm.channels, inner = norm.inner;
    return makeKernel(
        relu ? "plain:batch_norm+relu" : "plain:batch_norm",
        [=](const std::byte* const* inputs, std::byte* const* outputs) {
            const auto* x = reinterpret_cast<const float*>(inputs[0]);
            const auto* gamma = reinterpret_cast<const float*>(inputs[1]);
            const auto* betaIn = reinterpret_cast<const float*>(inputs[2]);
            const auto* mean = reinterpret_cast<const float*>(inputs[3]);
            const auto* var = reinterpret_cast<const float*>(inputs[4]);
            auto* y = reinterpret_cast<float*>(outputs[0]);
            for (std::int64_t o = 0; o < outer; ++o) {
                for (std::int64_t c = 0; c < channels; ++c) {
                    const float g = (scale ? gamma[c] : 1.0f) / std::sqrt(var[c] + epsilon);
                    const float b = (center ? betaIn[c] : 0.0f) - mean[c] * g;
                    const std::int64_t base = (o * channels + c) * inner;
                    for (std::int64_t i = 0; i < inner; ++i)
                        y[base + i] = x[base + i] * g + b;
                    if (relu) {
                        for (std::int64_t i = 0; i < inner; ++i)
                            y[base + i] = std::max(y[base + i], 0.0f);
                    }
                }
            }
            for (std::size_t k = 0; k < extraOutputs; ++k)
                std::memcpy(outputs[k + 1], inputs[k + 3], static_cast<std::size_t>(channelBytes));
        });
}

Result<std::unique_ptr<Kernel>> makeLayerNorm(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (!allFloat32(spec))
        return needFloat32(spec);
    Normalization norm;
    if (auto error = readLayerNorm(spec, &norm))
        return specError(spec, *error);
    const float epsilon = norm.epsilon;
    const bool scale = norm.scale, center = norm.center;
    const std::int64_t outer = norm.outer, channels = norm.channels, inner = norm.inner;
    if (inner == 1 && spec.outputs.size() == 1 && outer > 0 && channels > 0) {
        auto flags = dnnl::normalization_flags::none;
        if (scale)
            flags |= dnnl::normalization_flags::use_scale;
        if (center)
            flags |= dnnl::normalization_flags::use_shift;
        const memory::desc data = plainDesc({outer, channels});
        dnnl::layer_normalization_forward::desc desc(dnnl::prop_kind::forward_inference, data,
                                                     epsilon, flags);
        dnnl::layer_normalization_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
        auto kernel = dnnlKernel<dnnl::layer_normalization_forward>("layer_normalization", ctx, pd);
        kernel->bind(DNNL_ARG_SRC, 0, data);
        if (scale)
            kernel->bind(DNNL_ARG_SCALE, 1, plainDesc({channels}));
        if (center)
            kernel->bind(DNNL_ARG_SHIFT, 2, plainDesc({channels}));
        kernel->bind(DNNL_ARG_DST, -1, data);
        return std::unique_ptr<Kernel>(std::move(kernel));
    }
    // Normalising over an inner axis, or with ONNX's Mean and InvStdDev outputs: the shared
    // LayerNorm row functor, one row per normalised vector.
    const std::size_t outputs = spec.outputs.size();
    return makeKernel("plain:layer_norm", [=](const std::byte* const* in, std::byte* const* out) {
        functors::LayerNorm op;
        op.x = reinterpret_cast<const float*>(in[0]);
        op.y = reinterpret_cast<float*>(out[0]);
        op.gamma = scale ? reinterpret_cast<const float*>(in[1]) : nullptr;
        op.beta = center ? reinterpret_cast<const float*>(in[2]) : nullptr;
        op.meanOut = outputs > 1 ? reinterpret_cast<float*>(out[1]) : nullptr;
        op.invStdOut = outputs > 2 ? reinterpret_cast<float*>(out[2]) : nullptr;
        op.channels = channels;
        op.inner = inner;
        op.epsilon = epsilon;
        functors::runRowsOnHost(op, outer * inner);
    });
}

namespace {

/// y = x - max - log(sum exp(x - max)) over the channels of each (outer, inner) position; the
/// sum in double, so that only the final rounding is float's.
void logSoftmaxOnHost(const float* x, float* y, const Softmax& s) {
    const std::int64_t stride = s.inner;
    for (std::int64_t o = 0; o < s.outer; ++o) {
        for (std::int64_t i = 0; i < s.inner; ++i) {
            const float* row = x + o * s.channels * s.inner + i;
            float* to = y + o * s.channels * s.inner + i;
            float max = -std::numeric_limits<float>::infinity();
            for (std::int64_t c = 0; c < s.channels; ++c)
                max = std::max(max, row[c * stride]);
            double sum = 0;
            for (std::int64_t c = 0; c < s.channels; ++c)
                sum += std::exp(row[c * stride] - max);
            const double shift = static_cast<double>(max) + std::log(sum);
            for (std::int64_t c = 0; c < s.channels; ++c)
                to[c * stride] = static_cast<float>(static_cast<double>(row[c * stride]) - shift);
        }
    }
}

} // namespace

Result<std::unique_ptr<Kernel>> makeSoftmax(const KernelSpec& spec, CpuKernelContext& ctx) {
    if (!allFloat32(spec))
        return needFloat32(spec);
    Softmax softmax;
    if (auto error = readSoftmax(spec, &softmax))
        return specError(spec, *error);
    // LogSoftmax by hand: oneDNN 2.6's softmax_log takes an approximate logarithm of the sum,
    // 3.6e-6 off on values of 1 (15 ulps); this is within a few, as cuDNN's is.
    if (softmax.log)
        return makeKernel("plain:log_softmax",
                          [softmax](const std::byte* const* in, std::byte* const* out) {
                              logSoftmaxOnHost(reinterpret_cast<const float*>(in[0]),
                                               reinterpret_cast<float*>(out[0]), softmax);
                          });
    if (softmax.inner == 1 && softmax.outer * softmax.channels <= 4 * kPlainElements)
        return makeKernel(
            "vector:softmax", [softmax](const std::byte* const* in, std::byte* const* out) {
                vec::softmaxRows(reinterpret_cast<const float*>(in[0]),
                                 reinterpret_cast<float*>(out[0]), softmax.outer, softmax.channels);
            });
    const memory::desc view = plainDesc({softmax.outer, softmax.channels, softmax.inner});
    dnnl::softmax_v2_forward::desc desc(dnnl::prop_kind::forward_inference,
                                        algorithm::softmax_accurate, view, view, 1);
    dnnl::softmax_v2_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    auto kernel = dnnlKernel<dnnl::softmax_v2_forward>("softmax", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, view);
    kernel->bind(DNNL_ARG_DST, -1, view);
    return std::unique_ptr<Kernel>(std::move(kernel));
}

namespace {

/// Output 0 = algo(input 0) over output 0's shape, or null where oneDNN has only its reference
/// implementation.
std::unique_ptr<Kernel> eltwiseKernel(const KernelSpec& spec, CpuKernelContext& ctx, algorithm algo,
                                      float alpha, float beta) {
    const memory::desc data = plainDesc(spec.outputs[0].shape);
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, algo, data, alpha, beta);
    dnnl::eltwise_forward::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr;
    auto kernel = dnnlKernel<dnnl::eltwise_forward>("eltwise", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, data);
    kernel->bind(DNNL_ARG_DST, -1, data);
    return kernel;
}

} // namespace

std::unique_ptr<Kernel> makeDnnlEltwise(const KernelSpec& spec, CpuKernelContext& ctx, UnaryFn fn,
                                        float alpha, float beta) {
    const std::optional<Eltwise> eltwise = dnnlEltwise(fn, alpha, beta);
    if (!eltwise)
        return nullptr;
    return eltwiseKernel(spec, ctx, eltwise->algo, eltwise->alpha, eltwise->beta);
}

std::unique_ptr<Kernel> makeDnnlPower(const KernelSpec& spec, CpuKernelContext& ctx,
                                      float exponent) {
    if (spec.inputs[0].shape != spec.outputs[0].shape || product(spec.outputs[0].shape) == 0)
        return nullptr;
    return eltwiseKernel(spec, ctx, algorithm::eltwise_pow, 1.0f, exponent);
}

std::unique_ptr<Kernel> makeDnnlTranspose(const KernelSpec& spec, CpuKernelContext& ctx,
                                          const Dims& perm) {
    const DType type = spec.inputs[0].dtype;
    const Dims& in = spec.inputs[0].shape;
    if ((type != DType::Float32 && type != DType::Int32) || in.empty() || in.size() > 12 ||
        perm.size() != in.size() || product(in) == 0)
        return nullptr;
    // The destination is the input's dims with strides that store them in the output's order.
    const Dims outStrides = contiguousStrides(spec.outputs[0].shape);
    Dims dstStrides(in.size());
    for (std::size_t k = 0; k < perm.size(); ++k)
        dstStrides[static_cast<std::size_t>(perm[k])] = outStrides[k];
    const dt element = type == DType::Float32 ? dt::f32 : dt::s32;
    const memory::desc src(in, element, contiguousStrides(in)), dst(in, element, dstStrides);
    dnnl::reorder::primitive_desc pd(ctx.engine, src, ctx.engine, dst, scratchpadAttr());
    auto kernel = dnnlKernel<dnnl::reorder>("reorder", ctx, pd);
    kernel->bind(DNNL_ARG_FROM, 0, src);
    kernel->bind(DNNL_ARG_TO, -1, dst);
    return kernel;
}

std::unique_ptr<Kernel> makeDnnlBinary(const KernelSpec& spec, CpuKernelContext& ctx,
                                       BinaryFn function) {
    // oneDNN's algorithm, and whether the operands may be swapped (it broadcasts only its second).
    struct Binary {
        BinaryFn function;
        algorithm algo;
        bool commutes;
    };
    static constexpr Binary kBinary[] = {
        {BinaryFn::Add, algorithm::binary_add, true}, {BinaryFn::Sub, algorithm::binary_sub, false},
        {BinaryFn::Mul, algorithm::binary_mul, true}, {BinaryFn::Div, algorithm::binary_div, false},
        {BinaryFn::Max, algorithm::binary_max, true}, {BinaryFn::Min, algorithm::binary_min, true}};
    const auto found = std::find_if(std::begin(kBinary), std::end(kBinary),
                                    [&](const Binary& b) { return b.function == function; });
    if (found == std::end(kBinary))
        return nullptr;
    const std::pair<algorithm, bool> how{found->algo, found->commutes};
    const Dims& out = spec.outputs[0].shape;
    Dims a = geometry::binaryOperandShape(spec, 0), b = geometry::binaryOperandShape(spec, 1);
    int first = 0, second = 1;
    if (a != out) {
        if (b != out || !how.second)
            return nullptr; // oneDNN broadcasts only its second operand
        std::swap(a, b);
        std::swap(first, second);
    }
    while (b.size() < out.size())
        b.insert(b.begin(), 1);
    if (out.empty() || product(out) == 0)
        return nullptr;
    dnnl::binary::desc desc(how.first, plainDesc(a), plainDesc(b), plainDesc(out));
    dnnl::binary::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr; // a broadcast oneDNN has no JIT path for: the plain strided loop
    auto kernel = dnnlKernel<dnnl::binary>("binary", ctx, pd);
    kernel->bind(DNNL_ARG_SRC_0, first, plainDesc(a));
    kernel->bind(DNNL_ARG_SRC_1, second, plainDesc(b));
    kernel->bind(DNNL_ARG_DST, -1, plainDesc(out));
    return kernel;
}

std::unique_ptr<Kernel> makeDnnlReduction(const KernelSpec& spec, CpuKernelContext& ctx,
                                          ReduceFn function, const Dims& keptShape) {
    algorithm algo = algorithm::reduction_sum;
    switch (function) {
    case ReduceFn::Sum:
        algo = algorithm::reduction_sum;
        break;
    case ReduceFn::Mean:
        algo = algorithm::reduction_mean;
        break;
    case ReduceFn::Max:
        algo = algorithm::reduction_max;
        break;
    case ReduceFn::Min:
        algo = algorithm::reduction_min;
        break;
    case ReduceFn::Prod:
        algo = algorithm::reduction_mul;
        break;
    default:
        return nullptr; // the norms, log-sums and arg-reductions: the plain kernel
    }
    const Dims& in = spec.inputs[0].shape;
    if (in == keptShape)
        return nullptr; // nothing reduced: oneDNN refuses, the plain kernel copies
    dnnl::reduction::desc desc(algo, plainDesc(in), plainDesc(keptShape), 0, 0);
    dnnl::reduction::primitive_desc pd(desc, scratchpadAttr(), ctx.engine);
    if (isReference(pd))
        return nullptr;
    auto kernel = dnnlKernel<dnnl::reduction>("reduction", ctx, pd);
    kernel->bind(DNNL_ARG_SRC, 0, plainDesc(in));
    kernel->bind(DNNL_ARG_DST, -1, plainDesc(keptShape));
    return kernel;
}

} // namespace placer::cpu
