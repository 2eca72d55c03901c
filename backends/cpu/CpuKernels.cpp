// CPU kernels: the table of kernel families, and the plain kernels (element-wise ops oneDNN has
// no algorithm for, other element types than float32); data movement has a file of its own
// (DataMovementKernels.cpp).
#include "backends/cpu/CpuKernels.h"

#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "ir/Scalar.h"
#include "ir/StringPool.h"
#include "kernels/IndexingPlan.h"
#include "kernels/KernelTable.h"
#include "kernels/OpGeometry.h"
#include "kernels/Selection.h"

#include <omp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace placer {

namespace cpu {

namespace {

using Body = FunctionKernel::Body;

/// The type arithmetic is done in: float for float32, double for everything else.
template <typename T> using Calc = std::conditional_t<std::is_same_v<T, float>, float, double>;

template <typename T> T fromCalc(Calc<T> v) {
    if constexpr (std::is_same_v<T, bool>)
        return v != 0;
    else
        return static_cast<T>(v);
}

using geometry::constantInts;

} // namespace

bool plainIsCheaper(const KernelSpec& spec) {
    return !spec.outputs.empty() && spec.outputs[0].elementCount() <= kPlainElements;
}

namespace {

// ---- element-wise ------------------------------------------------------------------------------

template <typename T, UnaryFn Fn> Body unaryLoop(std::int64_t n, double alpha, double beta) {
    using C = Calc<T>;
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    return [n, a, b](const std::byte* const* in, std::byte* const* out) {
        const T* x = reinterpret_cast<const T*>(in[0]);
        T* y = reinterpret_cast<T*>(out[0]);
        for (std::int64_t i = 0; i < n; ++i)
            y[i] = fromCalc<T>(functors::applyUnary<C>(Fn, static_cast<C>(x[i]), a, b));
    };
}

/// A typed loop with the function fixed at compile time, so the arithmetic inlines.
template <typename T> Body unaryBody(UnaryFn fn, std::int64_t n, double alpha, double beta) {
    switch (fn) {
#define PLACER_UNARY_FN(Fn, name, onnx, relay)                                                     \
    case UnaryFn::Fn:                                                                              \
        return unaryLoop<T, UnaryFn::Fn>(n, alpha, beta);
#include "ir/ElementFunctions.def"
    }
    return {};
}

/// oneDNN's eltwise for float32 where it has the function; otherwise a typed loop, or the shared
/// UnaryAny functor for float16 and bfloat16.
Result<std::unique_ptr<Kernel>> unaryKernel(const KernelSpec& spec, CpuKernelContext& ctx) {
    geometry::Unary unary;
    if (auto error = geometry::readUnary(spec, &unary))
        return specError(spec, *error);
    // Plain variables, not a structured binding: lambdas below capture them (clang before 16
    // refuses to capture bindings, and the fuzz build is clang).
    const UnaryFn fn = unary.fn;
    const double alpha = unary.a, beta = unary.b;
    const DType dtype = unary.dtype, outType = unary.outType;
    const bool predicate = unary.predicate;
    const int aInput = unary.aInput, bInput = unary.bInput;
    const bool runtimeBounds = unary.runtimeBounds();
    if (dtype == DType::Float32 && !runtimeBounds && !predicate && !plainIsCheaper(spec)) {
        if (auto kernel =
                makeDnnlEltwise(spec, ctx, fn, static_cast<float>(alpha), static_cast<float>(beta)))
            return kernel;
    }
    const std::int64_t n = spec.outputs[0].elementCount();
    if (dtype == DType::Float32 && fn == UnaryFn::Erf) {
        // oneDNN has no erf (only GELU's): the vectorised loop (GELU's decomposed form).
        return makeKernel("vector:erf", [n](const std::byte* const* in, std::byte* const* out) {
            vec::erf(reinterpret_cast<const float*>(in[0]), reinterpret_cast<float*>(out[0]), n);
        });
    }
    const std::string name = std::string("plain:") + unaryFnName(fn);
    Body body;
    if (runtimeBounds || predicate || !visitNumeric(dtype, [&](auto tag) {
            body = unaryBody<decltype(tag)>(fn, n, alpha, beta);
        })) {
        functors::UnaryAny any{nullptr, nullptr, elemOf(dtype), fn, alpha, beta, elemOf(outType)};
        if (aInput >= 0)
            any.aElem = elemOf(spec.inputs[static_cast<std::size_t>(aInput)].dtype);
        if (bInput >= 0)
            any.bElem = elemOf(spec.inputs[static_cast<std::size_t>(bInput)].dtype);
        body = [op = any, n, aInput, bInput](const std::byte* const* in,
                                             std::byte* const* out) mutable {
            op.x = in[0];
            op.y = out[0];
            op.aInput = aInput >= 0 ? in[aInput] : nullptr;
            op.bInput = bInput >= 0 ? in[bInput] : nullptr;
            functors::runOnHost(op, n);
        };
    }
    return makeKernel(name, std::move(body));
}

/// out = a fn b with numpy broadcasting; TI the inputs' type, TO the output's.
template <typename TI, typename TO, BinaryFn Fn>
void binaryRuns(const Dims& shape, const Dims& sa, const Dims& sb, const TI* a, const TI* b,
                TO* y) {
    using C = Calc<TI>;
    forEachRun<2>(
        shape, {sa, sb},
        [&](std::int64_t out, const std::array<std::int64_t, 2>& off, std::int64_t count,
            const std::array<std::int64_t, 2>& step) {
            const TI* pa = a + off[0];
            const TI* pb = b + off[1];
            TO* py = y + out;
            for (std::int64_t i = 0; i < count; ++i)
                py[i] = fromCalc<TO>(static_cast<Calc<TO>>(functors::applyBinary<C>(
                    Fn, static_cast<C>(pa[i * step[0]]), static_cast<C>(pb[i * step[1]]))));
        });
}

template <typename TI, typename TO>
using BinaryImpl = void (*)(const Dims&, const Dims&, const Dims&, const TI*, const TI*, TO*);

template <typename TI, typename TO> BinaryImpl<TI, TO> binaryImpl(BinaryFn fn) {
    switch (fn) {
#define PLACER_BINARY_CASE(F)                                                                      \
    case BinaryFn::F:                                                                              \
        return binaryRuns<TI, TO, BinaryFn::F>;
        PLACER_BINARY_CASE(Add)
        PLACER_BINARY_CASE(Sub)
        PLACER_BINARY_CASE(Mul)
        PLACER_BINARY_CASE(Div)
        PLACER_BINARY_CASE(Pow)
        PLACER_BINARY_CASE(Max)
        PLACER_BINARY_CASE(Min)
        PLACER_BINARY_CASE(FloorDiv)
        PLACER_BINARY_CASE(Mod)
        PLACER_BINARY_CASE(And)
        PLACER_BINARY_CASE(Or)
        PLACER_BINARY_CASE(Eq)
        PLACER_BINARY_CASE(Ne)
        PLACER_BINARY_CASE(Lt)
        PLACER_BINARY_CASE(Gt)
        PLACER_BINARY_CASE(Le)
        PLACER_BINARY_CASE(Ge)
        PLACER_BINARY_CASE(Xor)
        PLACER_BINARY_CASE(FloorMod)
        PLACER_BINARY_CASE(PRelu)
        PLACER_BINARY_CASE(ShiftLeft)
        PLACER_BINARY_CASE(ShiftRight)
#undef PLACER_BINARY_CASE
    }
    return nullptr;
}

/// A float32 power by a constant scalar exponent that is a small whole number or a half (an
/// RMS norm's square, a square root): products and roots, which vectorise, not std::pow per
/// element, which is fifty times slower. Nothing for another exponent.
std::optional<Result<std::unique_ptr<Kernel>>> scalarPower(const KernelSpec& spec) {
    if (geometry::binaryFunction(spec) != BinaryFn::Pow || spec.inputs.size() != 2 ||
        spec.inputs[0].dtype != DType::Float32 || spec.outputs[0].dtype != DType::Float32 ||
        spec.inputs[1].dtype != DType::Float32 || spec.inputs[1].elementCount() != 1 ||
        spec.inputs[0].shape != spec.outputs[0].shape || spec.constantData.size() < 2 ||
        !spec.constantData[1] || spec.constantData[1]->size() != 4)
        return std::nullopt;
    float exponent;
    std::memcpy(&exponent, spec.constantData[1]->data(), 4);
    const std::int64_t n = spec.outputs[0].elementCount();
    const auto loop = [n](auto f) {
        return makeKernel("plain:power", [n, f](const std::byte* const* in, std::byte* const* out) {
            const auto* x = reinterpret_cast<const float*>(in[0]);
            auto* y = reinterpret_cast<float*>(out[0]);
            for (std::int64_t i = 0; i < n; ++i)
                y[i] = f(x[i]);
        });
    };
    if (exponent == 1.0f)
        return loop([](float v) { return v; });
    if (exponent == 2.0f)
        return loop([](float v) { return v * v; });
    if (exponent == 3.0f)
        return loop([](float v) { return v * v * v; });
    if (exponent == 4.0f)
        return loop([](float v) { return (v * v) * (v * v); });
    if (exponent == 0.5f)
        return loop([](float v) { return std::sqrt(v); });
    if (exponent == -1.0f)
        return loop([](float v) { return 1.0f / v; });
    if (exponent == -0.5f)
        return loop([](float v) { return 1.0f / std::sqrt(v); });
    return std::nullopt;
}

Result<std::unique_ptr<Kernel>> binaryKernel(const KernelSpec& spec, CpuKernelContext& ctx) {
    const BinaryFn fn = geometry::binaryFunction(spec);
    if (spec.inputs.empty())
        return specError(spec, "no inputs");
    if (spec.inputs.size() == 1) // ONNX Max/Min of one tensor is that tensor
        return copyKernel(spec);
    const DType in = spec.inputs[0].dtype;
    const DType outType = spec.outputs[0].dtype;
    if (fn == BinaryFn::Pow && spec.inputs.size() == 2 && spec.inputs[1].dtype != in &&
        outType == in) {
        // ONNX Pow takes the exponent in another type: each operand read with its own.
        const Dims out = spec.outputs[0].shape;
        functors::Shape shape;
        if (!toFunctorShape(out, &shape))
            return specError(spec, kFunctorRankError);
        functors::BinaryAny op{nullptr,
                               nullptr,
                               nullptr,
                               elemOf(in),
                               elemOf(outType),
                               fn,
                               shape,
                               toFunctorStrides(broadcastStrides(spec.inputs[0].shape, out)),
                               toFunctorStrides(broadcastStrides(spec.inputs[1].shape, out))};
        op.mixed = true;
        op.inB = elemOf(spec.inputs[1].dtype);
        const std::int64_t n = spec.outputs[0].elementCount();
        return makeKernel("plain:binary", [op, n](const std::byte* const* inputs,
                                                  std::byte* const* outputs) mutable {
            op.a = inputs[0];
            op.b = inputs[1];
            op.out = outputs[0];
            functors::runOnHost(op, n);
        });
    }
    for (const TensorType& input : spec.inputs) {
        if (input.dtype != in)
            return specError(spec, "inputs of different element types (" +
                                       std::string(dtypeName(in)) + " and " +
                                       std::string(dtypeName(input.dtype)) + ")");
    }
    if (outType != in && outType != DType::Bool)
        return specError(spec, "unexpected output type " + std::string(dtypeName(outType)));
    const bool variadic = spec.inputs.size() > 2; // ONNX Max/Min/Add with more inputs
    if (auto power = scalarPower(spec))
        return std::move(*power);
    if (in == DType::Float32 && outType == DType::Float32 && !variadic && !plainIsCheaper(spec)) {
        // A constant scalar exponent: one element-wise power, not a broadcast binary.
        if (fn == BinaryFn::Pow && spec.constantData.size() > 1 && spec.constantData[1] &&
            spec.inputs[1].elementCount() == 1 && spec.constantData[1]->size() == 4) {
            float exponent;
            std::memcpy(&exponent, spec.constantData[1]->data(), 4);
            if (auto kernel = makeDnnlPower(spec, ctx, exponent))
                return kernel;
        }
        if (auto kernel = makeDnnlBinary(spec, ctx, fn))
            return kernel;
    }
    const Dims out = spec.outputs[0].shape;
    std::vector<Dims> strides;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
        strides.push_back(broadcastStrides(geometry::binaryOperandShape(spec, i), out));
    const Dims own = contiguousStrides(out);
    Body body;
    const bool ok = visitNumeric(in, [&](auto tag) {
        using TI = decltype(tag);
        auto make = [&](auto outTag) {
            using TO = decltype(outTag);
            const BinaryImpl<TI, TO> first = binaryImpl<TI, TO>(fn);
            const BinaryImpl<TO, TO> rest = binaryImpl<TO, TO>(fn);
            body = [=](const std::byte* const* inputs, std::byte* const* outputs) {
                TO* y = reinterpret_cast<TO*>(outputs[0]);
                first(out, strides[0], strides[1], reinterpret_cast<const TI*>(inputs[0]),
                      reinterpret_cast<const TI*>(inputs[1]), y);
                for (std::size_t k = 2; k < strides.size(); ++k)
                    rest(out, own, strides[k], y, reinterpret_cast<const TO*>(inputs[k]), y);
            };
        };
        if (outType == DType::Bool)
            make(bool{});
        else
            make(TI{});
    });
    if (ok)
        return makeKernel("plain:binary", std::move(body));
    // float16 and bfloat16: the shared BinaryAny functor, computing in double.
    functors::Shape shape;
    if (!toFunctorShape(out, &shape))
        return specError(spec, kFunctorRankError);
    std::vector<functors::Strides> operandStrides;
    for (const Dims& s : strides)
        operandStrides.push_back(toFunctorStrides(s));
    const functors::Strides ownStrides = toFunctorStrides(own);
    const functors::Elem ein = elemOf(in), eout = elemOf(outType);
    const std::int64_t n = spec.outputs[0].elementCount();
    return makeKernel("plain:binary", [=](const std::byte* const* inputs,
                                          std::byte* const* outputs) {
        functors::runOnHost(functors::BinaryAny{inputs[0], inputs[1], outputs[0], ein, eout, fn,
                                                shape, operandStrides[0], operandStrides[1]},
                            n);
        for (std::size_t k = 2; k < operandStrides.size(); ++k)
            functors::runOnHost(functors::BinaryAny{outputs[0], inputs[k], outputs[0], eout, eout,
                                                    fn, shape, ownStrides, operandStrides[k]},
                                n);
    });
}

Result<std::unique_ptr<Kernel>> whereKernel(const KernelSpec& spec) {
    const Dims out = spec.outputs[0].shape;
    const Dims sc = broadcastStrides(spec.inputs[0].shape, out);
    const Dims sx = broadcastStrides(spec.inputs[1].shape, out);
    const Dims sy = broadcastStrides(spec.inputs[2].shape, out);
    const int size = dtypeSize(spec.outputs[0].dtype);
    const DType condType = spec.inputs[0].dtype;
    return makeKernel("plain:where", [=](const std::byte* const* in, std::byte* const* outp) {
        forEachRun<3>(out, {sc, sx, sy},
                      [&](std::int64_t o, const std::array<std::int64_t, 3>& off,
                          std::int64_t count, const std::array<std::int64_t, 3>& step) {
                          for (std::int64_t i = 0; i < count; ++i) {
                              const bool c = readIndex(in[0], condType, off[0] + i * step[0]) != 0;
                              const std::int64_t src =
                                  c ? off[1] + i * step[1] : off[2] + i * step[2];
                              std::memcpy(outp[0] + (o + i) * size, in[c ? 1 : 2] + src * size,
                                          static_cast<std::size_t>(size));
                          }
                      });
    });
}

// ---- reductions --------------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> reduceKernel(const KernelSpec& spec, CpuKernelContext& ctx) {
    const ReduceFn fn = spec.node->op->kernel.reduce();
    const int rank = spec.inputs[0].rank();
    Dims kept;
    std::int64_t count = 1;
    if (auto error = geometry::readReduction(spec, &kept, &count))
        return specError(spec, *error);
    if (product(kept) != spec.outputs[0].elementCount())
        return specError(spec, "the reduced shape does not match the output type");
    if (spec.outputs[0].dtype == DType::Float32 && rank > 0 && count > 0) {
        if (auto kernel = makeDnnlReduction(spec, ctx, fn, kept))
            return kernel;
    }
    // Everything oneDNN does not take: the shared Reduce functor, one row per output element.
    functors::Reduce op;
    std::int64_t rows = 0;
    if (auto error = geometry::readReduceFunctor(spec, &op, &rows))
        return specError(spec, *error);
    return makeKernel(std::string("plain:reduce_") + reduceFnName(fn),
                      [op, rows](const std::byte* const* in, std::byte* const* out) mutable {
                          op.x = in[0];
                          op.y = out[0];
                          functors::runRowsOnHost(op, rows);
                      });
}

// ---- convolution and matrix products in other types than float32 -------------------------------

/// A direct convolution in any element type (oneDNN takes float32): double accumulation, one
/// rounding per output element. Slow, and meant for the integer and double models that need it.
Result<std::unique_ptr<Kernel>> plainConvolution(const KernelSpec& spec,
                                                 const geometry::Convolution& conv) {
    const Dims in = spec.inputs[0].shape, w = spec.inputs[1].shape, out = spec.outputs[0].shape;
    const std::size_t spatial = in.size() - 2;
    const Dims inSpatial(in.begin() + 2, in.end()), outSpatial(out.begin() + 2, out.end());
    const Dims kernelSpatial(w.begin() + 2, w.end());
    const std::int64_t batch = in[0], inChannels = in[1], outChannels = out[1];
    const std::int64_t groups = conv.groups, groupIn = inChannels / groups,
                       groupOut = outChannels / groups;
    const std::int64_t inSize = product(inSpatial), outSize = product(outSpatial),
                       kernelSize = product(kernelSpatial);
    const geometry::Window window = conv.window;
    const bool hasBias = conv.hasBias;
    const DType inType = spec.inputs[0].dtype, wType = spec.inputs[1].dtype,
                outType = spec.outputs[0].dtype,
                biasType = hasBias ? spec.inputs[2].dtype : DType::Float32;
    return makeKernel("plain:convolution", [=](const std::byte* const* inputs,
                                               std::byte* const* outputs) {
        Dims o(spatial), k(spatial);
        for (std::int64_t n = 0; n < batch; ++n) {
            for (std::int64_t oc = 0; oc < outChannels; ++oc) {
                const std::int64_t g = oc / groupOut;
                const double bias = hasBias ? loadAsDouble(inputs[2], biasType, oc) : 0.0;
                for (std::int64_t op = 0; op < outSize; ++op) {
                    for (std::size_t d = spatial, rest = static_cast<std::size_t>(op); d-- > 0;) {
                        o[d] = static_cast<std::int64_t>(rest) % outSpatial[d];
                        rest /= static_cast<std::size_t>(outSpatial[d]);
                    }
                    double acc = bias;
                    for (std::int64_t kp = 0; kp < kernelSize; ++kp) {
                        std::int64_t rest = kp, inOffset = 0;
                        bool inside = true;
                        for (std::size_t d = spatial; d-- > 0;) {
                            k[d] = rest % kernelSpatial[d];
                            rest /= kernelSpatial[d];
                        }
                        for (std::size_t d = 0; d < spatial && inside; ++d) {
                            const std::int64_t x = o[d] * window.strides[d] - window.padL[d] +
                                                   k[d] * window.dilation[d];
                            inside = x >= 0 && x < inSpatial[d];
                            inOffset = inOffset * inSpatial[d] + x;
                        }
                        if (!inside)
                            continue;
                        for (std::int64_t ic = 0; ic < groupIn; ++ic) {
                            const std::int64_t channel = g * groupIn + ic;
                            acc += loadAsDouble(inputs[0], inType,
                                                (n * inChannels + channel) * inSize + inOffset) *
                                   loadAsDouble(inputs[1], wType,
                                                (oc * groupIn + ic) * kernelSize + kp);
                        }
                    }
                    storeFromDouble(outputs[0], outType, (n * outChannels + oc) * outSize + op,
                                    acc);
                }
            }
        }
    });
}

/// C = alpha * A x B (+ beta * C-input) in any element type, double accumulation.
Result<std::unique_ptr<Kernel>> plainMatmul(const KernelSpec& spec,
                                            const geometry::MatrixProduct& mp) {
    const auto offsets = geometry::batchOffsets(mp.a.batch, mp.b.batch, mp.outBatch);
    const geometry::MatrixOperand a = mp.a, b = mp.b;
    const std::int64_t m = mp.m, n = mp.n, k = mp.k;
    const double alpha = mp.alpha, beta = mp.beta;
    const int biasInput = mp.biasInput;
    const Dims biasStrides =
        biasInput >= 0
            ? broadcastStrides(spec.inputs[static_cast<std::size_t>(biasInput)].shape, Dims{m, n})
            : Dims{};
    const DType aType = spec.inputs[0].dtype, bType = spec.inputs[1].dtype,
                outType = spec.outputs[0].dtype,
                biasType = biasInput >= 0 ? spec.inputs[static_cast<std::size_t>(biasInput)].dtype
                                          : DType::Float32;
    return makeKernel(
        "plain:matmul", [=](const std::byte* const* inputs, std::byte* const* outputs) {
            for (std::size_t batch = 0; batch < offsets.size(); ++batch) {
                const std::int64_t aBase = offsets[batch].first * a.matrixSize();
                const std::int64_t bBase = offsets[batch].second * b.matrixSize();
                const std::int64_t cBase = static_cast<std::int64_t>(batch) * m * n;
                for (std::int64_t i = 0; i < m; ++i) {
                    for (std::int64_t j = 0; j < n; ++j) {
                        double acc = 0;
                        for (std::int64_t p = 0; p < k; ++p) {
                            const std::int64_t ai = a.transposed ? p * m + i : i * k + p;
                            const std::int64_t bi = b.transposed ? j * k + p : p * n + j;
                            acc += loadAsDouble(inputs[0], aType, aBase + ai) *
                                   loadAsDouble(inputs[1], bType, bBase + bi);
                        }
                        acc *= alpha;
                        if (biasInput >= 0)
                            acc += beta * loadAsDouble(inputs[biasInput], biasType,
                                                       i * biasStrides[0] + j * biasStrides[1]);
                        storeFromDouble(outputs[0], outType, cBase + i * n + j, acc);
                    }
                }
            }
        });
}

// ---- outputs whose extent the data decides (kernels/Selection.h) -------------------------------

Result<std::unique_ptr<Kernel>> selectionKernel(const KernelSpec& spec) {
    auto selection = planSelection(spec);
    if (!selection)
        return specError(spec, selection.error().message);
    Selection s = selection.take();
    return std::unique_ptr<Kernel>(std::make_unique<SelectionKernel>(
        "plain:" + s.name, std::move(s.bounded), std::move(s.compute)));
}

// ---- indexing and layout: the shared functors of kernels/IndexingPlan.h ------------------------

Result<std::unique_ptr<Kernel>> indexingKernel(const KernelSpec& spec) {
    auto plan = planIndexing(spec);
    if (!plan)
        return specError(spec, plan.error().message);
    const std::size_t inputs = spec.inputs.size(), outputs = spec.outputs.size();
    std::vector<IndexingStep> steps = plan.take();
    // Each step's scratch (state a GPU thread would keep), as doubles for alignment.
    std::vector<std::vector<double>> scratch;
    for (IndexingStep& step : steps) {
        scratch.emplace_back(static_cast<std::size_t>((step.scratchBytes + 7) / 8));
        bindScratch(step.op, reinterpret_cast<std::byte*>(scratch.back().data()));
    }
    return makeKernel(
        std::string("plain:") + kernelFamilyName(spec.node->op->kernel.family),
        [steps = std::move(steps), scratch = std::move(scratch), inputs,
         outputs](const std::byte* const* in, std::byte* const* out) mutable {
            for (IndexingStep& step : steps) {
                bindIndexing(step.op, in, inputs, out, outputs);
                std::visit(
                    [&](const auto& op) {
                        using Op = std::decay_t<decltype(op)>;
                        if constexpr (std::is_invocable_v<const Op&, functors::i64, int, int>)
                            functors::runRowsOnHost(op, step.count);
                        else
                            functors::runOnHost(op, step.count);
                    },
                    step.op);
            }
        });
}

} // namespace

Result<std::unique_ptr<Kernel>> makePlainConvolution(const KernelSpec& spec) {
    geometry::Convolution conv;
    if (auto error = geometry::readConvolution(spec, &conv))
        return specError(spec, *error);
    return plainConvolution(spec, conv);
}

Result<std::unique_ptr<Kernel>> makePlainMatmul(const KernelSpec& spec) {
    geometry::MatrixProduct mp;
    if (auto error = geometry::readMatrixProduct(spec, &mp))
        return specError(spec, *error);
    return plainMatmul(spec, mp);
}

namespace {

// ---- the table ---------------------------------------------------------------------------------

const KernelTable<CpuKernelContext>& table() {
    using F = KernelFamily;
    static const KernelTable<CpuKernelContext> kTable = [] {
        KernelTable<CpuKernelContext> t;
        // Factories that need no context.
        auto plain = [&t](F family, Result<std::unique_ptr<Kernel>> (*make)(const KernelSpec&)) {
            t.add(family, [make](const KernelSpec& spec, CpuKernelContext&) { return make(spec); });
        };
        t.add(F::Unary, unaryKernel);
        t.add(F::Binary, binaryKernel);
        t.add(F::Reduce, reduceKernel);
        plain(F::Copy, copyKernel);
        plain(F::Fill,
              [](const KernelSpec& spec) { return fillKernel(spec, geometry::fillValue(spec)); });
        plain(F::Cast, castKernel);
        plain(F::Where, whereKernel);
        t.add(F::Transpose, [](const KernelSpec& spec, CpuKernelContext& ctx) {
            Dims perm;
            // A reorder takes longer to make than a plain copy of a few of these takes to run.
            if (!geometry::readTransposePerm(spec, &perm) &&
                spec.outputs[0].elementCount() > 4 * kPlainElements) {
                if (auto kernel = makeDnnlTranspose(spec, ctx, perm))
                    return Result<std::unique_ptr<Kernel>>(std::move(kernel));
            }
            return transposeKernel(spec);
        });
        plain(F::Concat, concatKernel);
        plain(F::Split, splitKernel);
        plain(F::Slice, sliceKernel);
        plain(F::Gather, gatherKernel);
        plain(F::Pad, padKernel);
        plain(F::Expand, expandKernel);
        plain(F::Tile, tileKernel);
        plain(F::Range, rangeKernel);
        plain(F::Shape, shapeKernel);
        plain(F::Selection, selectionKernel);
        t.add({{F::Conv, makeConvolution},
               {F::Matmul, makeMatmul},
               {F::Pool, makePooling},
               {F::BatchNorm, makeBatchNorm},
               {F::LayerNorm, makeLayerNorm},
               {F::Softmax, makeSoftmax}});
        for (const F family : indexingFamilies())
            plain(family, indexingKernel);
        return t;
    }();
    return kTable;
}

} // namespace

} // namespace cpu

namespace {

/// Roughly the multiply-adds (convolutions, matrix products) or the elements (the rest) of a
/// kernel's run.
double workOf(const KernelSpec& spec) {
    const auto elements = [](const TensorType& t) { return static_cast<double>(t.elementCount()); };
    double out = 0;
    for (const TensorType& t : spec.outputs)
        out += elements(t);
    const KernelFamily family = spec.node->op->kernel.family;
    if (family == KernelFamily::Matmul && !spec.inputs.empty() && !spec.inputs[0].shape.empty())
        return out * static_cast<double>(spec.inputs[0].shape.back());
    if (family == KernelFamily::Conv && spec.inputs.size() > 1 && spec.inputs[1].rank() > 0 &&
        spec.inputs[1].shape[0] > 0)
        return out * elements(spec.inputs[1]) / static_cast<double>(spec.inputs[1].shape[0]);
    for (const TensorType& t : spec.inputs)
        out = std::max(out, elements(t));
    return out;
}

/// A kernel that runs on one thread in a context with more: it is created (oneDNN fixes some
/// primitives' thread counts then) and run with OpenMP set to one thread.
class SingleThreaded final : public Kernel {
public:
    explicit SingleThreaded(std::unique_ptr<Kernel> kernel) : m_kernel(std::move(kernel)) {}
    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const ScopedOmpThreads one(1);
        m_kernel->run(inputs, outputs);
    }
    std::string implementation() const override { return m_kernel->implementation(); }
    bool boundsOutput(std::size_t k) const override { return m_kernel->boundsOutput(k); }
    const std::vector<std::vector<std::int64_t>>* ranShapes() const override {
        return m_kernel->ranShapes();
    }

private:
    std::unique_ptr<Kernel> m_kernel;
};

/// Below this much work a kernel runs on one thread even in a context with more: waking a
/// second thread for every small op (an Add of a transformer's 64 tokens) costs more than it
/// saves, which made two threads slower than one on small models.
constexpr double kParallelMacs = 1 << 21;
constexpr double kParallelElements = 1 << 17;

} // namespace

namespace {

Result<std::unique_ptr<Kernel>> makeKernelFor(const KernelSpec& spec, CpuKernelContext& context) {
    if (auto problem = geometry::checkBroadcast(spec))
        return cpu::specError(spec, *problem);
    // Nothing to write (a batch or sequence of 0): no library is asked (oneDNN divides by a
    // dimension of 0 while it plans a matrix product).
    if (!spec.outputs.empty() && spec.node->op->kernel.family != KernelFamily::Selection &&
        std::all_of(spec.outputs.begin(), spec.outputs.end(),
                    [](const TensorType& type) { return type.elementCount() == 0; }))
        return std::unique_ptr<Kernel>(std::make_unique<FunctionKernel>(
            "empty", [](const std::byte* const*, std::byte* const*) {}));
    // float16 and bfloat16: the float32 kernel, on the operands converted.
    if (auto wide = cpu::viaFloat32(
            spec, [&](const KernelSpec& widened) { return makeKernelFor(widened, context); }))
        return std::move(*wide);
    if (spec.node->op->kernel.family == KernelFamily::Recurrent) {
        try {
            if (auto kernel = cpu::makeRecurrent(spec, context))
                return Result<std::unique_ptr<Kernel>>(std::move(kernel));
        } catch (const dnnl::error&) {
            // oneDNN refused the projection: the shared functor runs it
        }
    }
    if (spec.node->op->kernel.family == KernelFamily::Resize) {
        if (auto kernel = cpu::makeResize(spec))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    if (spec.node->op->kernel.family == KernelFamily::TopK) {
        if (auto kernel = cpu::makeTopK(spec))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    if (spec.node->op->name == "ConvTranspose") {
        if (auto kernel = cpu::makeDnnlDeconvolution(spec, context))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    if (spec.node->op->name == "RoiAlign") {
        if (auto kernel = cpu::makeRoiAlign(spec))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    if (spec.node->op->kernel.family == KernelFamily::GroupQueryAttention) {
        if (auto kernel = cpu::makeGroupQueryAttention(spec))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    if (spec.node->op->kernel.family == KernelFamily::RmsNorm) {
        if (auto kernel = cpu::makeRmsNorm(spec))
            return Result<std::unique_ptr<Kernel>>(std::move(kernel));
    }
    // MatMulNBits in float32: the CPU's own kernel, which keeps the weights in their codes as
    // it streams them (the shared functor runs the other types).
    if (spec.node->op->kernel.family == KernelFamily::BlockQuantMatmul &&
        spec.inputs[0].dtype == DType::Float32)
        return cpu::makeMatMulNBits(spec);
    if (runsAsSharedFunctors(spec))
        return cpu::indexingKernel(spec);
    const auto* factory = cpu::table().find(*spec.node->op);
    if (!factory)
        return cpu::specError(spec, "the CPU backend has no kernel for this operator");
    try {
        return (*factory)(spec, context);
    } catch (const dnnl::error& error) {
        return cpu::specError(spec, std::string("oneDNN refused it: ") + error.what());
    }
}

} // namespace

ScopedOmpThreads::ScopedOmpThreads(int threads) : m_before(omp_get_max_threads()) {
    if (threads > 0)
        omp_set_num_threads(threads);
}

ScopedOmpThreads::~ScopedOmpThreads() {
    omp_set_num_threads(m_before);
}

namespace {

/// Whether the kernel for `spec` runs on one thread in a context with more.
bool runsSingleThreaded(const KernelSpec& spec, const CpuKernelContext& context) {
    const KernelFamily family = spec.node->op->kernel.family;
    const bool computeBound = family == KernelFamily::Matmul || family == KernelFamily::Conv;
    return context.threads > 1 && workOf(spec) < (computeBound ? kParallelMacs : kParallelElements);
}

} // namespace

bool viewsKeepSpeedFor(const KernelSpec& spec, CpuKernelContext& context) {
    const ScopedOmpThreads threads(runsSingleThreaded(spec, context) ? 1 : 0);
    return cpu::viewsKeepSpeed(spec, context);
}

std::string packedLayoutFor(const KernelSpec& spec, std::size_t input, CpuKernelContext& context) {
    // With the thread count its kernel is created with: oneDNN's preferred layout may depend on it.
    const ScopedOmpThreads threads(runsSingleThreaded(spec, context) ? 1 : 0);
    return cpu::packedLayout(spec, input, context);
}

Result<std::unique_ptr<Kernel>> makeCpuKernel(const KernelSpec& spec, CpuKernelContext& context) {
    if (!runsSingleThreaded(spec, context))
        return makeKernelFor(spec, context);
    // oneDNN fixes some primitives' thread counts from the creating thread's OpenMP setting.
    const ScopedOmpThreads one(1);
    auto kernel = makeKernelFor(spec, context);
    if (!kernel)
        return kernel;
    return std::unique_ptr<Kernel>(std::make_unique<SingleThreaded>(kernel.take()));
}

std::vector<KernelFamily> cpuKernelFamilies() {
    return cpu::table().families();
}

} // namespace placer
