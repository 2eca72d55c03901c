// What the CPU kernels share beyond the backend-neutral scaffolding (kernels/KernelSupport.h):
// their error sentence and the kernel families that CpuKernels.cpp dispatches to from the other
// files.
#pragma once

#include "kernels/KernelSupport.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace placer {
struct CpuKernelContext;
}

namespace placer::cpu {

/// "nn.conv2d node '%3': message", the error a kernel factory returns.
inline SourceError specError(const KernelSpec& spec, const std::string& message) {
    return SourceError{"", 0, 0,
                       "no CPU kernel for " + spec.node->op->name + " node '" + spec.node->name +
                           "': " + message};
}

// The data movement kernels CpuKernels.cpp registers from DataMovementKernels.cpp: output 0
// copied, filled, cast, transposed, concatenated, split, sliced, expanded, tiled, gathered or
// padded from the inputs, a range, a shape; in any element type. An error says why not.
Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> fillKernel(const KernelSpec& spec, double value);
Result<std::unique_ptr<Kernel>> castKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> transposeKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> concatKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> splitKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> sliceKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> expandKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> tileKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> gatherKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> padKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> rangeKernel(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> shapeKernel(const KernelSpec& spec);

// The kernel families CpuKernels.cpp registers from DnnlKernels.cpp.
Result<std::unique_ptr<Kernel>> makeConvolution(const KernelSpec& spec,
                                                ::placer::CpuKernelContext& ctx);
Result<std::unique_ptr<Kernel>> makeMatmul(const KernelSpec& spec, ::placer::CpuKernelContext& ctx);
Result<std::unique_ptr<Kernel>> makePooling(const KernelSpec& spec,
                                            ::placer::CpuKernelContext& ctx);
Result<std::unique_ptr<Kernel>> makeBatchNorm(const KernelSpec& spec,
                                              ::placer::CpuKernelContext& ctx);
Result<std::unique_ptr<Kernel>> makeLayerNorm(const KernelSpec& spec,
                                              ::placer::CpuKernelContext& ctx);
Result<std::unique_ptr<Kernel>> makeSoftmax(const KernelSpec& spec,
                                            ::placer::CpuKernelContext& ctx);
/// Weight packing (passes/WeightPacking.h): for a node this context would run, the layout its
/// kernel wants constant input `input` in, when that differs from the input's own and takes the
/// same bytes, as text the kernel and packConstant() read back; empty otherwise. A matrix
/// product's one weight matrix has such a layout: oneDNN's blocked one, which it would
/// otherwise copy the weights into on every run.
std::string packedLayout(const KernelSpec& spec, std::size_t input,
                         ::placer::CpuKernelContext& context);

/// Whether a matrix product with strided views (KernelHints::views) runs oneDNN's
/// implementation for dense operands of the same shapes: only then are the views worth taking.
bool viewsKeepSpeed(const KernelSpec& spec, ::placer::CpuKernelContext& context);

/// Writes a constant's own `bytes` into `dst` in `layout` (from packedLayout()): empty when done,
/// else why not (a layout this process did not make, or of another size).
std::string packConstant(std::byte* dst, const void* src, std::int64_t bytes,
                         const std::string& layout, ::placer::CpuKernelContext& context);

/// Outputs of at most this many elements are computed by plain loops rather than oneDNN
/// primitives, whose making (tens of microseconds, again for every shape a run brings, as each
/// step of a generation does) and calling cost more than the work.
inline constexpr std::int64_t kPlainElements = 1 << 14;
bool plainIsCheaper(const KernelSpec& spec);

/// An op that computes (element-wise math, reductions, products, convolutions, pooling,
/// normalisations, softmax) with float16 or bfloat16 operands: its float32 kernel, made by
/// `make`, on those operands converted to float32, its 16-bit results converted back (rounded to
/// nearest even); nothing where the op moves bytes, has no 16-bit operand, or has no float32
/// kernel (the type's own kernel runs then).
std::optional<Result<std::unique_ptr<Kernel>>>
viaFloat32(const KernelSpec& spec,
           const std::function<Result<std::unique_ptr<Kernel>>(const KernelSpec&)>& make);

/// ONNX Runtime's MatMulNBits (com.microsoft): A times B's blocks of 2-, 4- or 8-bit codes,
/// decoded as the product reads them (backends/cpu/BlockQuantKernel.cpp).
Result<std::unique_ptr<Kernel>> makeMatMulNBits(const KernelSpec& spec);

/// Convolution and matrix products in any element type, for what oneDNN (float32) does not take.
Result<std::unique_ptr<Kernel>> makePlainConvolution(const KernelSpec& spec);
Result<std::unique_ptr<Kernel>> makePlainMatmul(const KernelSpec& spec);
/// oneDNN element-wise / binary / reduction for float32, or null when oneDNN has no match.
std::unique_ptr<Kernel> makeDnnlEltwise(const KernelSpec& spec, ::placer::CpuKernelContext& ctx,
                                        UnaryFn function, float alpha, float beta);
/// x ** exponent for a constant scalar exponent (LayerNorm's decomposed x ** 2), or null.
std::unique_ptr<Kernel> makeDnnlPower(const KernelSpec& spec, ::placer::CpuKernelContext& ctx,
                                      float exponent);
/// A float32 or int32 transpose as a oneDNN reorder (a strided destination), or null when
/// oneDNN cannot take it (the plain strided copy runs instead).
std::unique_ptr<Kernel> makeDnnlTranspose(const KernelSpec& spec, ::placer::CpuKernelContext& ctx,
                                          const Dims& perm);
std::unique_ptr<Kernel> makeDnnlBinary(const KernelSpec& spec, ::placer::CpuKernelContext& ctx,
                                       BinaryFn function);
/// RNN, GRU and LSTM in float32: the input projection as one oneDNN matrix product and the
/// steps as vectorised loops; null for other types (the shared functor runs them).
std::unique_ptr<Kernel> makeRecurrent(const KernelSpec& spec, ::placer::CpuKernelContext& ctx);
/// Resize in float32 where only the last two dimensions change, separable with vector rows;
/// null for the rest (the shared functor runs them).
std::unique_ptr<Kernel> makeResize(const KernelSpec& spec);
/// TopK in float32, float64, int64 or int32 by partial selection, O(n + k log k) a line; null
/// for other types (the shared functor runs them).
std::unique_ptr<Kernel> makeTopK(const KernelSpec& spec);
/// RoiAlign in float32 with each region's sampling taps shared by its channels; null for other
/// types (the shared functor runs them).
std::unique_ptr<Kernel> makeRoiAlign(const KernelSpec& spec);
/// ONNX Runtime's GroupQueryAttention in float32, each query row rotated once and its scores and
/// values as vector products; null for other types (the shared functor runs them).
std::unique_ptr<Kernel> makeGroupQueryAttention(const KernelSpec& spec);
/// RMS normalisation (SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization) in float32
/// (RmsNormKernel.cpp); null for other types, which the shared functor runs.
std::unique_ptr<Kernel> makeRmsNorm(const KernelSpec& spec);
/// ConvTranspose in float32 without groups as oneDNN's deconvolution; null where oneDNN has no
/// fast implementation or the padding is past what it takes (the shared functor runs those).
std::unique_ptr<Kernel> makeDnnlDeconvolution(const KernelSpec& spec,
                                              ::placer::CpuKernelContext& ctx);
std::unique_ptr<Kernel> makeDnnlReduction(const KernelSpec& spec, ::placer::CpuKernelContext& ctx,
                                          ReduceFn function, const Dims& keptShape);

} // namespace placer::cpu
