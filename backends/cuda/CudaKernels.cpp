// The CUDA backend's kernels, in three parts: launch wrappers around the element functors
// (ElementFunctors.h, launched by Launch.cu), cuBLAS and cuDNN wrappers for the heavy ops (the
// convolution's search has a file of its own, CudaConvolution.cpp), and the table from operator
// name to kernel factory that makeCudaKernel() dispatches on.
#include "backends/cuda/CudaKernels.h"

#include "backends/cuda/CudaKernelSupport.h"
#include "kernels/IndexingPlan.h"
#include "kernels/KernelSupport.h"
#include "kernels/KernelTable.h"
#include "kernels/OpGeometry.h"
#include "kernels/Selection.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_map>

namespace placer::cuda {

namespace {

using namespace detail;

// ---- data movement -----------------------------------------------------------------------------

/// Output 0 as a strided view of input 0 starting at element `base`.
KernelResult stridedView(const std::string& name, const KernelSpec& spec, CudaDevice& device,
                         std::int64_t base, const Dims& strides) {
    StridedCopy op;
    if (!toShape(spec.outputs[0].shape, &op.shape))
        return specError(spec, kRankError);
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.srcStrides = toStrides(strides);
    op.dstStrides = toStrides(contiguousStrides(spec.outputs[0].shape));
    op.srcBase = base;
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel(name, [=](const std::byte* const* in, std::byte* const* out) mutable {
        op.src = in[0];
        op.dst = out[0];
        launchElements(op, n, dev->computeStream());
    });
}

KernelResult copyKernel(const KernelSpec& spec, CudaDevice& device) {
    if (auto problem = checkCopy(spec))
        return specError(spec, *problem);
    const std::int64_t bytes = spec.outputs[0].bytes();
    if (bytes != spec.inputs[0].bytes())
        return specError(spec, "input and output sizes differ");
    std::vector<std::int64_t> maskCounts; // Dropout's mask output is all true
    for (std::size_t k = 1; k < spec.outputs.size(); ++k)
        maskCounts.push_back(spec.outputs[k].elementCount());
    CudaDevice* dev = &device;
    return makeKernel("copy", [=](const std::byte* const* in, std::byte* const* out) {
        if (out[0] != in[0] && bytes > 0)
            PLACER_CUDA_THROW(cudaMemcpyAsync(out[0], in[0], static_cast<std::size_t>(bytes),
                                              cudaMemcpyDeviceToDevice, dev->computeStream()));
        for (std::size_t k = 0; k < maskCounts.size(); ++k)
            launchElements(Fill{out[k + 1], Elem::Bool, 1.0}, maskCounts[k], dev->computeStream());
    });
}

KernelResult fillKernel(const KernelSpec& spec, CudaDevice& device, double value) {
    const Elem elem = elemOf(spec.outputs[0].dtype);
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("fill", [=](const std::byte* const*, std::byte* const* out) {
        launchElements(Fill{out[0], elem, value}, n, dev->computeStream());
    });
}

KernelResult castKernel(const KernelSpec& spec, CudaDevice& device) {
    if (spec.inputs[0].dtype == spec.outputs[0].dtype)
        return copyKernel(spec, device);
    const Elem from = elemOf(spec.inputs[0].dtype), to = elemOf(spec.outputs[0].dtype);
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("cast", [=](const std::byte* const* in, std::byte* const* out) {
        launchElements(Cast{in[0], out[0], from, to}, n, dev->computeStream());
    });
}

KernelResult concatKernel(const KernelSpec& spec, CudaDevice& device) {
    const Dims& out = spec.outputs[0].shape;
    int axis = 0;
    if (auto problem = geometry::readConcatAxis(spec, &axis))
        return specError(spec, *problem);
    std::vector<StridedCopy> parts;
    std::vector<std::int64_t> counts;
    const Dims outStrides = contiguousStrides(out);
    std::int64_t offset = 0;
    for (const TensorType& input : spec.inputs) {
        StridedCopy op;
        if (!toShape(input.shape, &op.shape))
            return specError(spec, kRankError);
        op.elementSize = dtypeSize(spec.outputs[0].dtype);
        op.srcStrides = toStrides(contiguousStrides(input.shape));
        op.dstStrides = toStrides(outStrides);
        op.dstBase = offset * outStrides[static_cast<std::size_t>(axis)];
        offset += input.shape[static_cast<std::size_t>(axis)];
        parts.push_back(op);
        counts.push_back(input.elementCount());
    }
    CudaDevice* dev = &device;
    return makeKernel("concat", [=](const std::byte* const* in, std::byte* const* outp) mutable {
        for (std::size_t k = 0; k < parts.size(); ++k) {
            parts[k].src = in[k];
            parts[k].dst = outp[0];
            launchElements(parts[k], counts[k], dev->computeStream());
        }
    });
}

KernelResult splitKernel(const KernelSpec& spec, CudaDevice& device) {
    const Dims& in = spec.inputs[0].shape;
    int axis = 0;
    if (auto problem = geometry::readSplitAxis(spec, &axis))
        return specError(spec, *problem);
    const Dims inStrides = contiguousStrides(in);
    std::vector<StridedCopy> parts;
    std::vector<std::int64_t> counts;
    std::int64_t offset = 0;
    for (const TensorType& output : spec.outputs) {
        StridedCopy op;
        if (!toShape(output.shape, &op.shape))
            return specError(spec, kRankError);
        op.elementSize = dtypeSize(spec.inputs[0].dtype);
        op.srcStrides = toStrides(inStrides);
        op.dstStrides = toStrides(contiguousStrides(output.shape));
        op.srcBase = offset * inStrides[static_cast<std::size_t>(axis)];
        offset += output.shape[static_cast<std::size_t>(axis)];
        parts.push_back(op);
        counts.push_back(output.elementCount());
    }
    CudaDevice* dev = &device;
    return makeKernel("split", [=](const std::byte* const* inp, std::byte* const* out) mutable {
        for (std::size_t k = 0; k < parts.size(); ++k) {
            parts[k].src = inp[0];
            parts[k].dst = out[k];
            launchElements(parts[k], counts[k], dev->computeStream());
        }
    });
}

KernelResult tileKernel(const KernelSpec& spec, CudaDevice& device) {
    Dims shape, strides;
    if (auto problem = geometry::readTile(spec, &shape, &strides))
        return specError(spec, *problem);
    StridedCopy op;
    if (!toShape(shape, &op.shape))
        return specError(spec, "unsupported rank");
    op.elementSize = dtypeSize(spec.outputs[0].dtype);
    op.srcStrides = toStrides(strides);
    op.dstStrides = toStrides(contiguousStrides(shape));
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("tile", [=](const std::byte* const* inp, std::byte* const* outp) mutable {
        op.src = inp[0];
        op.dst = outp[0];
        launchElements(op, n, dev->computeStream());
    });
}

KernelResult gatherKernel(const KernelSpec& spec, CudaDevice& device) {
    geometry::Gather g;
    if (auto problem = geometry::readGather(spec, &g))
        return specError(spec, *problem);
    functors::Gather op;
    op.dim = g.dim;
    op.inner = g.inner;
    op.count = g.count;
    op.indexElem = elemOf(spec.inputs[1].dtype);
    op.elementSize = dtypeSize(spec.inputs[0].dtype);
    op.mode = g.mode == geometry::Gather::Mode::Clip   ? 0
              : g.mode == geometry::Gather::Mode::Wrap ? 1
                                                       : 2;
    if (op.dim == 0)
        return specError(spec, "gathering from an empty axis");
    op.error = device.errorWord();
    op.kernelId = device.registerErrorSource("'" + spec.node->name + "'");
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("gather", [=](const std::byte* const* in, std::byte* const* out) mutable {
        op.data = in[0];
        op.indices = in[1];
        op.dst = out[0];
        launchElements(op, n, dev->computeStream());
    });
}

KernelResult padKernel(const KernelSpec& spec, CudaDevice& device) {
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    const std::size_t rank = in.size();
    Pad op;
    if (out.size() != rank || !toShape(in, &op.in) || !toShape(out, &op.out))
        return specError(spec, "unsupported ranks");
    Dims before;
    std::string mode;
    if (auto error = readPad(spec, &before, &mode))
        return specError(spec, *error);
    for (std::size_t d = 0; d < rank; ++d)
        op.before[d] = before[d];
    op.mode = mode == "constant" ? 0 : mode == "edge" ? 1 : 2;
    op.elem = elemOf(spec.outputs[0].dtype);
    op.value = spec.node->attrs.getFloat("value", 0).value_or(0);
    const int valueInput = inputAt(spec, 2);
    const bool hasValue =
        valueInput >= 0 && spec.inputs[static_cast<std::size_t>(valueInput)].elementCount() == 1;
    op.valueElem =
        hasValue ? elemOf(spec.inputs[static_cast<std::size_t>(valueInput)].dtype) : op.elem;
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("pad", [=](const std::byte* const* inp, std::byte* const* outp) mutable {
        op.src = inp[0];
        op.dst = outp[0];
        op.valueInput = hasValue ? inp[valueInput] : nullptr;
        launchElements(op, n, dev->computeStream());
    });
}

KernelResult rangeKernel(const KernelSpec& spec, CudaDevice& device) {
    Range op;
    op.startElem = elemOf(spec.inputs[0].dtype);
    op.deltaElem = elemOf(spec.inputs[2].dtype);
    op.elem = elemOf(spec.outputs[0].dtype);
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("range", [=](const std::byte* const* in, std::byte* const* out) mutable {
        op.start = in[0];
        op.delta = in[2];
        op.dst = out[0];
        launchElements(op, n, dev->computeStream());
    });
}

// ---- element-wise ------------------------------------------------------------------------------

KernelResult unaryKernel(const KernelSpec& spec, CudaDevice& device) {
    Unary unary;
    if (auto error = readUnary(spec, &unary))
        return specError(spec, *error);
    const auto [fn, a, b, dtype, outType, predicate, aInput, bInput] = unary;
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    if (dtype == DType::Float32 && !predicate && aInput < 0 && bInput < 0) {
        UnaryF32 op{nullptr, nullptr, fn, static_cast<float>(a), static_cast<float>(b)};
        return makeKernel("unary", [=](const std::byte* const* in, std::byte* const* out) mutable {
            op.x = reinterpret_cast<const float*>(in[0]);
            op.y = reinterpret_cast<float*>(out[0]);
            launchUnaryContiguous(op, n, dev->computeStream());
        });
    }
    UnaryAny op{nullptr, nullptr, elemOf(dtype), fn, a, b, elemOf(outType)};
    if (aInput >= 0)
        op.aElem = elemOf(spec.inputs[static_cast<std::size_t>(aInput)].dtype);
    if (bInput >= 0)
        op.bElem = elemOf(spec.inputs[static_cast<std::size_t>(bInput)].dtype);
    return makeKernel("unary", [=](const std::byte* const* in, std::byte* const* out) mutable {
        op.x = in[0];
        op.y = out[0];
        op.aInput = aInput >= 0 ? in[aInput] : nullptr;
        op.bInput = bInput >= 0 ? in[bInput] : nullptr;
        launchElements(op, n, dev->computeStream());
    });
}

KernelResult binaryKernel(const KernelSpec& spec, CudaDevice& device) {
    const BinaryFn fn = binaryFunction(spec);
    if (spec.inputs.empty())
        return specError(spec, "no inputs");
    if (spec.inputs.size() == 1) // ONNX Max/Min of one tensor is that tensor
        return copyKernel(spec, device);
    const DType in = spec.inputs[0].dtype, outType = spec.outputs[0].dtype;
    const bool mixedPow = fn == BinaryFn::Pow && spec.inputs.size() == 2 &&
                          spec.inputs[1].dtype != in && outType == in;
    for (const TensorType& input : spec.inputs) {
        if (input.dtype != in && !mixedPow)
            return specError(spec, "inputs of different element types");
    }
    if (outType != in && outType != DType::Bool)
        return specError(spec, "unexpected output type " + std::string(dtypeName(outType)));
    const Dims& out = spec.outputs[0].shape;
    Shape shape;
    if (!toShape(out, &shape))
        return specError(spec, kRankError);
    std::vector<Strides> strides;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        strides.push_back(toStrides(broadcastStrides(binaryOperandShape(spec, i), out)));
    const Strides own = toStrides(contiguousStrides(out));
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    if (mixedPow) {
        const Elem ea = elemOf(in), eb = elemOf(spec.inputs[1].dtype);
        return makeKernel("binary", [=](const std::byte* const* inp, std::byte* const* outp) {
            BinaryAny op{inp[0], inp[1], outp[0], ea, ea, fn, shape, strides[0], strides[1]};
            op.mixed = true;
            op.inB = eb;
            launchElements(op, n, dev->computeStream());
        });
    }
    if (in == DType::Float32 && outType == DType::Float32) {
        // Two operands that are each the whole output, a row it repeats or a scalar: the
        // contiguous kernel, with no index arithmetic (a residual Add, a bias row).
        std::int64_t periods[2] = {0, 0};
        for (std::size_t i = 0; i < 2 && spec.inputs.size() == 2; ++i)
            periods[i] = contiguousPeriod(binaryOperandShape(spec, i), out);
        if (periods[0] > 0 && periods[1] > 0) {
            return makeKernel("binary:contiguous", [=](const std::byte* const* inp,
                                                       std::byte* const* outp) {
                launchBinaryContiguous(fn, {reinterpret_cast<const float*>(inp[0]), periods[0]},
                                       {reinterpret_cast<const float*>(inp[1]), periods[1]},
                                       reinterpret_cast<float*>(outp[0]), n, dev->computeStream());
            });
        }
        return makeKernel("binary", [=](const std::byte* const* inp, std::byte* const* outp) {
            auto* y = reinterpret_cast<float*>(outp[0]);
            BinaryF32 op{reinterpret_cast<const float*>(inp[0]),
                         reinterpret_cast<const float*>(inp[1]),
                         y,
                         fn,
                         shape,
                         strides[0],
                         strides[1]};
            launchElements(op, n, dev->computeStream());
            // ONNX Max/Min/Sum with more inputs fold into the output.
            for (std::size_t k = 2; k < strides.size(); ++k)
                launchElements(BinaryF32{y, reinterpret_cast<const float*>(inp[k]), y, fn, shape,
                                         own, strides[k]},
                               n, dev->computeStream());
        });
    }
    const Elem ein = elemOf(in), eout = elemOf(outType);
    return makeKernel("binary", [=](const std::byte* const* inp, std::byte* const* outp) {
        launchElements(
            BinaryAny{inp[0], inp[1], outp[0], ein, eout, fn, shape, strides[0], strides[1]}, n,
            dev->computeStream());
        for (std::size_t k = 2; k < strides.size(); ++k)
            launchElements(
                BinaryAny{outp[0], inp[k], outp[0], eout, eout, fn, shape, own, strides[k]}, n,
                dev->computeStream());
    });
}

KernelResult whereKernel(const KernelSpec& spec, CudaDevice& device) {
    const Dims& out = spec.outputs[0].shape;
    Where op;
    if (!toShape(out, &op.shape))
        return specError(spec, kRankError);
    op.sc = toStrides(broadcastStrides(spec.inputs[0].shape, out));
    op.sx = toStrides(broadcastStrides(spec.inputs[1].shape, out));
    op.sy = toStrides(broadcastStrides(spec.inputs[2].shape, out));
    op.condElem = elemOf(spec.inputs[0].dtype);
    op.elem = elemOf(spec.outputs[0].dtype);
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    return makeKernel("where", [=](const std::byte* const* in, std::byte* const* outp) mutable {
        op.cond = in[0];
        op.x = in[1];
        op.y = in[2];
        op.out = outp[0];
        launchElements(op, n, dev->computeStream());
    });
}

/// Rows at least this long are reduced by a block each (launchContiguousRowReduce), shorter
/// ones by a warp each.
constexpr std::int64_t kBlockRowLength = 256;

/// Whether each output of `op` reduces a contiguous run of op.count input elements, the runs
/// one after another (the reduced axes innermost, in order).
bool contiguousRows(const Reduce& op) {
    std::int64_t expected = 1;
    for (int d = op.reduced.rank - 1; d >= 0; --d) {
        if (op.reduced.dims[d] != 1 && op.reducedStrides.s[d] != expected)
            return false;
        expected *= op.reduced.dims[d];
    }
    if (expected != op.count)
        return false;
    for (int d = op.kept.rank - 1; d >= 0; --d) {
        if (op.kept.dims[d] != 1 && op.keptStrides.s[d] != expected)
            return false;
        expected *= op.kept.dims[d];
    }
    return true;
}

/// The block-a-row reduction computing `fn`, where there is one.
std::optional<RowReduction> rowReduction(ReduceFn fn) {
    switch (fn) {
    case ReduceFn::Sum:
        return RowReduction::Sum;
    case ReduceFn::Mean:
        return RowReduction::Mean;
    case ReduceFn::Max:
        return RowReduction::Max;
    case ReduceFn::Min:
        return RowReduction::Min;
    case ReduceFn::SumSquare:
        return RowReduction::SumSquare;
    case ReduceFn::L1:
        return RowReduction::L1;
    case ReduceFn::L2:
        return RowReduction::L2;
    default:
        return std::nullopt;
    }
}

KernelResult reduceKernel(const KernelSpec& spec, CudaDevice& device) {
    Reduce op;
    std::int64_t rows = 0;
    if (auto error = readReduceFunctor(spec, &op, &rows))
        return specError(spec, *error);
    CudaDevice* dev = &device;
    if (const auto fn = rowReduction(op.fn); fn && op.elem == Elem::F32 &&
                                             op.outElem == Elem::F32 &&
                                             op.count >= kBlockRowLength && contiguousRows(op)) {
        const std::int64_t count = op.count;
        return makeKernel("reduce_rows", [=](const std::byte* const* inp, std::byte* const* out) {
            launchContiguousRowReduce(reinterpret_cast<const float*>(inp[0]),
                                      reinterpret_cast<float*>(out[0]), rows, count, *fn,
                                      dev->computeStream());
        });
    }
    return makeKernel("reduce", [=](const std::byte* const* inp, std::byte* const* out) mutable {
        op.x = inp[0];
        op.y = out[0];
        launchRows(op, rows, dev->computeStream());
    });
}

// ---- normalisation, pooling, softmax -----------------------------------------------------------

KernelResult batchNormKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    Normalization norm;
    if (auto error = readBatchNorm(spec, &norm))
        return specError(spec, *error);
    const std::int64_t n = spec.outputs[0].elementCount();
    const std::int64_t channelBytes = spec.inputs[3].bytes();
    const std::size_t extraOutputs = spec.outputs.size() - 1;
    CudaDevice* dev = &device;
    return makeKernel("batch_norm", [=](const std::byte* const* in, std::byte* const* out) {
        BatchNorm op;
        op.x = reinterpret_cast<const float*>(in[0]);
        op.y = reinterpret_cast<float*>(out[0]);
        op.gamma = norm.scale ? reinterpret_cast<const float*>(in[1]) : nullptr;
        op.beta = norm.center ? reinterpret_cast<const float*>(in[2]) : nullptr;
        op.mean = reinterpret_cast<const float*>(in[3]);
        op.var = reinterpret_cast<const float*>(in[4]);
        op.channels = norm.channels;
        op.inner = norm.inner;
        op.epsilon = norm.epsilon;
        launchElements(op, n, dev->computeStream());
        // Relay's outputs 2 and 3: the moving mean and variance, passed through.
        for (std::size_t k = 0; k < extraOutputs; ++k)
            PLACER_CUDA_THROW(cudaMemcpyAsync(out[k + 1], in[k + 3],
                                              static_cast<std::size_t>(channelBytes),
                                              cudaMemcpyDeviceToDevice, dev->computeStream()));
    });
}

KernelResult layerNormKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    Normalization norm;
    if (auto error = readLayerNorm(spec, &norm))
        return specError(spec, *error);
    const std::size_t outputs = spec.outputs.size();
    const std::int64_t rows = norm.outer * norm.inner;
    CudaDevice* dev = &device;
    return makeKernel("layer_norm", [=](const std::byte* const* in, std::byte* const* out) {
        LayerNorm op;
        op.x = reinterpret_cast<const float*>(in[0]);
        op.y = reinterpret_cast<float*>(out[0]);
        op.gamma = norm.scale ? reinterpret_cast<const float*>(in[1]) : nullptr;
        op.beta = norm.center ? reinterpret_cast<const float*>(in[2]) : nullptr;
        op.meanOut = outputs > 1 ? reinterpret_cast<float*>(out[1]) : nullptr;
        op.invStdOut = outputs > 2 ? reinterpret_cast<float*>(out[2]) : nullptr;
        op.channels = norm.channels;
        op.inner = norm.inner;
        op.epsilon = norm.epsilon;
        launchRows(op, rows, dev->computeStream());
    });
}

KernelResult poolKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    Pooling pooling;
    if (auto error = readPooling(spec, &pooling))
        return specError(spec, *error);
    const Dims& in = spec.inputs[0].shape;
    const Dims& out = spec.outputs[0].shape;
    Pool op;
    op.spatial = static_cast<int>(in.size()) - 2;
    op.isMax = pooling.isMax;
    op.includePadding = pooling.includePadding;
    op.adaptive = pooling.adaptive;
    for (int d = 0; d < op.spatial; ++d) {
        const auto s = static_cast<std::size_t>(d);
        op.in[d] = in[s + 2];
        op.out[d] = out[s + 2];
        if (!pooling.adaptive) {
            op.kernel[d] = pooling.window.kernel[s];
            op.stride[d] = pooling.window.strides[s];
            op.dilation[d] = pooling.window.dilation[s];
            op.padL[d] = pooling.window.padL[s];
        }
    }
    const std::int64_t n = spec.outputs[0].elementCount();
    CudaDevice* dev = &device;
    // A pool over each whole plane (GlobalAveragePool, GlobalMaxPool) is a reduction of
    // contiguous rows: a block a plane where the planes are large.
    bool global = true;
    std::int64_t plane = 1;
    for (int d = 0; d < op.spatial; ++d) {
        global =
            global && op.out[d] == 1 &&
            (op.adaptive || (op.kernel[d] == op.in[d] && op.padL[d] == 0 && op.dilation[d] == 1));
        plane *= op.in[d];
    }
    if (global && plane >= kBlockRowLength) {
        const RowReduction fn = op.isMax ? RowReduction::Max : RowReduction::Mean;
        return makeKernel(op.isMax ? "global_max_pool" : "global_avg_pool",
                          [=](const std::byte* const* inp, std::byte* const* outp) {
                              launchContiguousRowReduce(reinterpret_cast<const float*>(inp[0]),
                                                        reinterpret_cast<float*>(outp[0]), n, plane,
                                                        fn, dev->computeStream());
                          });
    }
    return makeKernel(op.isMax ? "max_pool" : "avg_pool",
                      [=](const std::byte* const* inp, std::byte* const* outp) mutable {
                          op.x = reinterpret_cast<const float*>(inp[0]);
                          op.y = reinterpret_cast<float*>(outp[0]);
                          launchElements(op, n, dev->computeStream());
                      });
}

KernelResult softmaxKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    Softmax softmax;
    if (auto error = readSoftmax(spec, &softmax))
        return specError(spec, *error);
    if (!device.cudnn())
        return specError(spec,
                         "needs cuDNN, which this GPU does not have: " + device.cudnnMissing());
    if (softmax.outer * softmax.channels * softmax.inner == 0)
        return emptyKernel("cudnn:softmax");
    auto desc = tensorDesc({softmax.outer, softmax.channels, softmax.inner, 1});
    if (!desc)
        return specError(spec, desc.error().message);
    const auto algorithm = softmax.log ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
    std::shared_ptr<TensorDesc> view = desc.take();
    CudaDevice* dev = &device;
    return makeKernel("cudnn:softmax", [=](const std::byte* const* in, std::byte* const* out) {
        const float one = 1, zero = 0;
        PLACER_CUDA_THROW(cudnnSoftmaxForward(dev->cudnn(), algorithm, CUDNN_SOFTMAX_MODE_CHANNEL,
                                              &one, view->handle, in[0], &zero, view->handle,
                                              out[0]));
    });
}

KernelResult matmulKernel(const KernelSpec& spec, CudaDevice& device) {
    if (!allFloat32(spec))
        return specError(spec, "float32 only");
    MatrixProduct mp;
    if (auto error = readMatrixProduct(spec, &mp))
        return specError(spec, *error);
    const MatrixOperand& ma = mp.a;
    const MatrixOperand& mb = mp.b;
    const std::int64_t m = mp.m, n = mp.n, k = mp.k;
    if (auto overflow = intOverflow({m, n, k, mp.batches}, "a matrix product's extent", "cuBLAS"))
        return specError(spec, *overflow);
    // Row-major C = A x B is column-major C^T = B^T x A^T.
    const cublasOperation_t opA = ma.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = mb.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
    // cuBLAS wants leading dimensions of at least 1, also for empty operands (k = 0: C = beta C).
    const int lda = static_cast<int>(std::max<std::int64_t>(1, ma.transposed ? m : k));
    const int ldb = static_cast<int>(std::max<std::int64_t>(1, mb.transposed ? k : n));
    const std::int64_t ba = product(ma.batch), bb = product(mb.batch);
    // Each operand either has every batch (in order) or one matrix for all: one strided call.
    const bool aFull = ba == mp.batches && broadcastShapes(ma.batch, mp.outBatch) == mp.outBatch &&
                       ma.batch.size() == mp.outBatch.size();
    const bool bFull = bb == mp.batches && broadcastShapes(mb.batch, mp.outBatch) == mp.outBatch &&
                       mb.batch.size() == mp.outBatch.size();
    const bool strided = (aFull || ba == 1) && (bFull || bb == 1);
    std::vector<std::pair<std::int64_t, std::int64_t>> offsets;
    if (!strided)
        offsets = batchOffsets(ma.batch, mb.batch, mp.outBatch);
    const long long strideA = ba == 1 ? 0 : ma.matrixSize();
    const long long strideB = bb == 1 ? 0 : mb.matrixSize();
    const std::int64_t batches = mp.batches;
    StridedCopy bias;
    const bool hasBias = mp.biasInput >= 0;
    if (hasBias) {
        toShape({m, n}, &bias.shape);
        bias.elementSize = 4;
        bias.srcStrides = toStrides(broadcastStrides(spec.inputs[2].shape, {m, n}));
        bias.dstStrides = toStrides({n, 1});
    }
    const float alpha = mp.alpha, beta = hasBias ? mp.beta : 0.0f;
    CudaDevice* dev = &device;
    return makeKernel("cublas:sgemm", [=](const std::byte* const* in,
                                          std::byte* const* out) mutable {
        const auto* a = reinterpret_cast<const float*>(in[0]);
        const auto* b = reinterpret_cast<const float*>(in[1]);
        auto* c = reinterpret_cast<float*>(out[0]);
        if (m == 0 || n == 0 || batches == 0)
            return;
        if (hasBias) {
            bias.src = in[2];
            bias.dst = c;
            launchElements(bias, m * n, dev->computeStream());
        }
        if (strided) {
            PLACER_CUDA_THROW(cublasSgemmStridedBatched(
                dev->cublas(), opB, opA, static_cast<int>(n), static_cast<int>(m),
                static_cast<int>(k), &alpha, b, ldb, strideB, a, lda, strideA, &beta, c,
                static_cast<int>(n), static_cast<long long>(m * n), static_cast<int>(batches)));
            return;
        }
        for (std::size_t i = 0; i < offsets.size(); ++i)
            PLACER_CUDA_THROW(
                cublasSgemm(dev->cublas(), opB, opA, static_cast<int>(n), static_cast<int>(m),
                            static_cast<int>(k), &alpha, b + offsets[i].second * mb.matrixSize(),
                            ldb, a + offsets[i].first * ma.matrixSize(), lda, &beta,
                            c + static_cast<std::int64_t>(i) * m * n, static_cast<int>(n)));
    });
}

// ---- the table ---------------------------------------------------------------------------------

// ---- outputs whose extent the data decides (kernels/Selection.h) -------------------------------

/// The host computation on staged copies: the inputs come down, the outputs go up, and the
/// stream is waited for, since how much was selected is only known on the host.
KernelResult selectionKernel(const KernelSpec& spec, CudaDevice& device) {
    auto selection = planSelection(spec);
    if (!selection)
        return specError(spec, selection.error().message);
    Selection s = selection.take();
    std::vector<std::int64_t> inBytes, outBytes;
    for (const TensorType& type : spec.inputs)
        inBytes.push_back(type.bytes());
    for (const TensorType& type : spec.outputs)
        outBytes.push_back(type.bytes());
    CudaDevice* dev = &device;
    auto compute = std::move(s.compute);
    auto staged = [=](const std::byte* const* in, std::byte* const* out) {
        cudaStream_t stream = dev->computeStream();
        std::vector<std::vector<std::byte>> hostIn, hostOut;
        std::vector<const std::byte*> inPointers;
        std::vector<std::byte*> outPointers;
        for (std::size_t k = 0; k < inBytes.size(); ++k) {
            hostIn.emplace_back(static_cast<std::size_t>(inBytes[k]));
            if (inBytes[k] > 0)
                PLACER_CUDA_THROW(cudaMemcpyAsync(hostIn.back().data(), in[k],
                                                  static_cast<std::size_t>(inBytes[k]),
                                                  cudaMemcpyDeviceToHost, stream));
        }
        for (std::int64_t bytes : outBytes)
            hostOut.emplace_back(static_cast<std::size_t>(bytes));
        PLACER_CUDA_THROW(cudaStreamSynchronize(stream));
        for (auto& buffer : hostIn)
            inPointers.push_back(buffer.data());
        for (auto& buffer : hostOut)
            outPointers.push_back(buffer.data());
        SelectionShapes shapes = compute(inPointers.data(), outPointers.data());
        for (std::size_t k = 0; k < outBytes.size(); ++k) {
            if (outBytes[k] > 0)
                PLACER_CUDA_THROW(cudaMemcpyAsync(out[k], hostOut[k].data(),
                                                  static_cast<std::size_t>(outBytes[k]),
                                                  cudaMemcpyHostToDevice, stream));
        }
        PLACER_CUDA_THROW(cudaStreamSynchronize(stream));
        return shapes;
    };
    return std::unique_ptr<Kernel>(
        std::make_unique<SelectionKernel>("host:" + s.name, std::move(s.bounded), staged));
}

// ---- indexing and layout: the shared functors of kernels/IndexingPlan.h ------------------------

KernelResult indexingKernel(const KernelSpec& spec, CudaDevice& device) {
    auto plan = planIndexing(spec);
    if (!plan)
        return specError(spec, plan.error().message);
    const std::size_t inputs = spec.inputs.size(), outputs = spec.outputs.size();
    CudaDevice* dev = &device;
    std::vector<IndexingStep> steps = plan.take();
    // Each step's scratch comes from the device's allocator, once, so the memory check and the
    // report count it (per-thread local memory would be reserved by the driver, counted nowhere).
    std::vector<std::byte*> blocks;
    for (IndexingStep& step : steps) {
        if (step.scratchBytes <= 0)
            continue;
        auto block = device.allocate(step.scratchBytes);
        if (!block) {
            for (std::byte* b : blocks)
                device.free(b);
            return specError(spec, "its scratch memory (" + std::to_string(step.scratchBytes) +
                                       " bytes): " + block.error().message);
        }
        blocks.push_back(block.value());
        bindScratch(step.op, block.value());
    }
    std::shared_ptr<void> scratch(nullptr, [dev, blocks](void*) {
        for (std::byte* b : blocks)
            dev->free(b);
    });
    return makeKernel(kernelFamilyName(spec.node->op->kernel.family),
                      [steps = std::move(steps), scratch, inputs, outputs,
                       dev](const std::byte* const* in, std::byte* const* out) mutable {
                          (void)scratch;
                          for (IndexingStep& step : steps) {
                              bindIndexing(step.op, in, inputs, out, outputs);
                              std::visit(
                                  [&](const auto& op) {
                                      using Op = std::decay_t<decltype(op)>;
                                      if constexpr (std::is_invocable_v<const Op&, i64, int, int>)
                                          launchRows(op, step.count, dev->computeStream());
                                      else
                                          launchElements(op, step.count, dev->computeStream());
                                  },
                                  step.op);
                          }
                      });
}

const KernelTable<CudaDevice>& table() {
    using F = KernelFamily;
    static const KernelTable<CudaDevice> kTable = [] {
        KernelTable<CudaDevice> t;
        t.add(F::Copy, copyKernel);
        t.add(F::Fill,
              [](const KernelSpec& s, CudaDevice& d) { return fillKernel(s, d, fillValue(s)); });
        t.add(F::Cast, castKernel);
        t.add(F::Unary, unaryKernel);
        t.add(F::Binary, binaryKernel);
        t.add(F::Where, whereKernel);
        t.add(F::Reduce, reduceKernel);
        t.add(F::Transpose, [](const KernelSpec& spec, CudaDevice& device) -> KernelResult {
            Dims strides;
            if (auto error = readTranspose(spec, &strides))
                return specError(spec, *error);
            return stridedView("transpose", spec, device, 0, strides);
        });
        t.add(F::Slice, [](const KernelSpec& spec, CudaDevice& device) -> KernelResult {
            std::int64_t base = 0;
            Dims strides;
            if (auto error = readSlice(spec, &base, &strides))
                return specError(spec, *error);
            return stridedView("slice", spec, device, base, strides);
        });
        t.add(F::Expand, [](const KernelSpec& spec, CudaDevice& device) {
            return stridedView("expand", spec, device, 0,
                               broadcastStrides(spec.inputs[0].shape, spec.outputs[0].shape));
        });
        t.add({{F::Concat, concatKernel},
               {F::Split, splitKernel},
               {F::Gather, gatherKernel},
               {F::Pad, padKernel},
               {F::Tile, tileKernel},
               {F::Range, rangeKernel},
               {F::Conv, convolutionKernel},
               {F::Matmul, matmulKernel},
               {F::Pool, poolKernel},
               {F::BatchNorm, batchNormKernel},
               {F::LayerNorm, layerNormKernel},
               {F::Softmax, softmaxKernel},
               {F::Selection, selectionKernel}});
        for (const F family : indexingFamilies())
            t.add(family, indexingKernel);
        return t;
    }();
    return kTable;
}

} // namespace

Result<std::unique_ptr<Kernel>> makeCudaKernel(const KernelSpec& spec, CudaDevice& device) {
    if (spec.node->op->hostOnly)
        return specError(spec, "a shape computation, which runs on the host");
    if (auto problem = geometry::checkBroadcast(spec))
        return specError(spec, *problem);
    if (runsAsSharedFunctors(spec))
        return indexingKernel(spec, device);
    const auto* factory = table().find(*spec.node->op);
    if (!factory)
        return specError(spec, "the CUDA backend has no kernel for this operator");
    for (const TensorType& t : spec.outputs) {
        if (t.elementCount() > (std::int64_t{1} << 40))
            return specError(spec, "tensor too large");
    }
    return (*factory)(spec, device);
}

std::vector<KernelFamily> cudaKernelFamilies() {
    return table().families();
}

} // namespace placer::cuda
