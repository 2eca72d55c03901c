// CPU kernels: the table of kernel families, and the plain kernels (data movement, element-wise ops
// oneDNN has no algorithm for, other element types than float32, gathers, casts).
#include "runtime/cpu/CpuKernels.h"

#include "ir/Scalar.h"
#include "ir/StringPool.h"
#include "runtime/IndexingPlan.h"
#include "runtime/KernelTable.h"
#include "runtime/OpGeometry.h"
#include "runtime/Selection.h"
#include "runtime/cpu/KernelUtil.h"
#include "runtime/cpu/VectorMath.h"

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

/// Element i as ONNX casts a number to a string: the shortest text that reads back as the same
/// value of its type ("0.1", not "0.100000001"), "NaN", "INF" and "-INF"; integers exactly.
std::string numberToString(const std::byte* data, DType dtype, std::int64_t i) {
    char text[64];
    std::to_chars_result written{};
    switch (dtype) {
    case DType::Int64: {
        std::int64_t v = 0;
        std::memcpy(&v, data + i * 8, 8);
        written = std::to_chars(text, text + sizeof(text), v);
        break;
    }
    case DType::UInt64: {
        std::uint64_t v = 0;
        std::memcpy(&v, data + i * 8, 8);
        written = std::to_chars(text, text + sizeof(text), v);
        break;
    }
    case DType::Float32:
    case DType::Float16:
    case DType::BFloat16:
    case DType::Float64: {
        const double v = loadAsDouble(data, dtype, i);
        if (std::isnan(v))
            return "NaN";
        if (std::isinf(v))
            return v > 0 ? "INF" : "-INF";
        written = dtype == DType::Float64
                      ? std::to_chars(text, text + sizeof(text), v)
                      : std::to_chars(text, text + sizeof(text), static_cast<float>(v));
        break;
    }
    default:
        written = std::to_chars(text, text + sizeof(text),
                                static_cast<std::int64_t>(loadAsDouble(data, dtype, i)));
        break;
    }
    return std::string(text, written.ptr);
}

/// A string as ONNX casts it to a number: decimal or scientific text, "NaN", "INF", "-INF" (any
/// case, a "+" allowed, spaces around ignored); text that is no number is NaN, which an integer
/// type stores as 0 (storeFromDouble).
double stringToNumber(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    std::string lower(text);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    const bool hasSign = !lower.empty() && (lower[0] == '-' || lower[0] == '+');
    const std::string_view body = std::string_view(lower).substr(hasSign ? 1 : 0);
    const double sign = !lower.empty() && lower[0] == '-' ? -1.0 : 1.0;
    if (body == "inf" || body == "infinity")
        return sign * std::numeric_limits<double>::infinity();
    char* end = nullptr;
    const double v = std::strtod(lower.c_str(), &end);
    if (lower.empty() || body == "nan" || end != lower.c_str() + lower.size())
        return std::numeric_limits<double>::quiet_NaN();
    return v;
}

/// A string that is a whole decimal number, exactly (a double would round past 2^53).
template <typename T> std::optional<T> stringToInteger(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    if (!text.empty() && text.front() == '+')
        text.remove_prefix(1);
    T value{};
    const auto read = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || read.ec != std::errc() || read.ptr != text.data() + text.size())
        return std::nullopt;
    return value;
}

using Body = FunctionKernel::Body;

/// The type arithmetic is done in: float for float32, double for everything else.
template <typename T> using Calc = std::conditional_t<std::is_same_v<T, float>, float, double>;

template <typename T> T fromCalc(Calc<T> v) {
    if constexpr (std::is_same_v<T, bool>)
        return v != 0;
    else
        return static_cast<T>(v);
}

const Dims& shapeOf(const KernelSpec& spec, int input) {
    return spec.inputs[static_cast<std::size_t>(input)].shape;
}

using geometry::constantInts;

/// Copies elements of size `E` from a strided view of `src` into contiguous `dst`.
template <std::size_t E>
void gatherStrided(std::byte* dst, const std::byte* src, const Dims& shape, const Dims& strides) {
    forEachRun<1>(shape, {strides},
                  [&](std::int64_t out, const std::array<std::int64_t, 1>& offsets,
                      std::int64_t count, const std::array<std::int64_t, 1>& step) {
                      std::byte* d = dst + out * static_cast<std::int64_t>(E);
                      if (step[0] == 1) {
                          std::memcpy(d, src + offsets[0] * static_cast<std::int64_t>(E),
                                      static_cast<std::size_t>(count) * E);
                          return;
                      }
                      const std::byte* s = src + offsets[0] * static_cast<std::int64_t>(E);
                      for (std::int64_t i = 0; i < count; ++i)
                          std::memcpy(d + i * static_cast<std::int64_t>(E),
                                      s + i * step[0] * static_cast<std::int64_t>(E), E);
                  });
}

using StridedCopy = void (*)(std::byte*, const std::byte*, const Dims&, const Dims&);

StridedCopy stridedCopyFor(int elementSize) {
    switch (elementSize) {
    case 1:
        return gatherStrided<1>;
    case 2:
        return gatherStrided<2>;
    case 4:
        return gatherStrided<4>;
    default:
        return gatherStrided<8>;
    }
}

/// A kernel that writes output 0 as a strided view of input 0 starting at element `base`.
Result<std::unique_ptr<Kernel>> stridedView(std::string name, const KernelSpec& spec,
                                            std::int64_t base, Dims strides) {
    const int size = dtypeSize(spec.outputs[0].dtype);
    const StridedCopy copy = stridedCopyFor(size);
    Dims shape = spec.outputs[0].shape;
    return makeKernel(name, [=](const std::byte* const* in, std::byte* const* out) {
        copy(out[0], in[0] + base * size, shape, strides);
    });
}

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
#define PLACER_UNARY_CASE(F)                                                                       \
    case UnaryFn::F:                                                                               \
        return unaryLoop<T, UnaryFn::F>(n, alpha, beta);
        PLACER_UNARY_CASE(Negative)
        PLACER_UNARY_CASE(Abs)
        PLACER_UNARY_CASE(Exp)
        PLACER_UNARY_CASE(Log)
        PLACER_UNARY_CASE(Sqrt)
        PLACER_UNARY_CASE(Rsqrt)
        PLACER_UNARY_CASE(Reciprocal)
        PLACER_UNARY_CASE(Tanh)
        PLACER_UNARY_CASE(Sigmoid)
        PLACER_UNARY_CASE(Erf)
        PLACER_UNARY_CASE(Floor)
        PLACER_UNARY_CASE(Ceil)
        PLACER_UNARY_CASE(Round)
        PLACER_UNARY_CASE(Relu)
        PLACER_UNARY_CASE(LeakyRelu)
        PLACER_UNARY_CASE(Clip)
        PLACER_UNARY_CASE(HardSigmoid)
        PLACER_UNARY_CASE(HardSwish)
        PLACER_UNARY_CASE(Not)
        PLACER_UNARY_CASE(Sin)
        PLACER_UNARY_CASE(Cos)
        PLACER_UNARY_CASE(Tan)
        PLACER_UNARY_CASE(Asin)
        PLACER_UNARY_CASE(Acos)
        PLACER_UNARY_CASE(Atan)
        PLACER_UNARY_CASE(Sinh)
        PLACER_UNARY_CASE(Cosh)
        PLACER_UNARY_CASE(Asinh)
        PLACER_UNARY_CASE(Acosh)
        PLACER_UNARY_CASE(Atanh)
        PLACER_UNARY_CASE(Sign)
        PLACER_UNARY_CASE(Softplus)
        PLACER_UNARY_CASE(Softsign)
        PLACER_UNARY_CASE(Elu)
        PLACER_UNARY_CASE(Selu)
        PLACER_UNARY_CASE(Celu)
        PLACER_UNARY_CASE(ThresholdedRelu)
        PLACER_UNARY_CASE(Shrink)
        PLACER_UNARY_CASE(IsNaN)
        PLACER_UNARY_CASE(IsInf)
        PLACER_UNARY_CASE(Gelu)
#undef PLACER_UNARY_CASE
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
    if (dtype == DType::Float32 && !runtimeBounds && !predicate) {
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

Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec);

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
    if (in == DType::Float32 && outType == DType::Float32 && !variadic) {
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

// ---- data movement -----------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec) {
    if (auto problem = geometry::checkCopy(spec))
        return specError(spec, *problem);
    const std::int64_t bytes = spec.outputs[0].bytes();
    if (bytes != spec.inputs[0].bytes())
        return specError(spec, "input and output sizes differ");
    const std::size_t extra = spec.outputs.size(); // Dropout's mask output is all true
    std::vector<std::int64_t> maskBytes;
    for (std::size_t k = 1; k < extra; ++k)
        maskBytes.push_back(spec.outputs[k].bytes());
    return makeKernel("plain:copy", [=](const std::byte* const* in, std::byte* const* out) {
        if (out[0] != in[0] && bytes > 0)
            std::memcpy(out[0], in[0], static_cast<std::size_t>(bytes));
        for (std::size_t k = 0; k < maskBytes.size(); ++k)
            std::memset(out[k + 1], 1, static_cast<std::size_t>(maskBytes[k]));
    });
}

Result<std::unique_ptr<Kernel>> fillKernel(const KernelSpec& spec, double value) {
    const TensorType type = spec.outputs[0];
    return makeKernel("plain:fill", [=](const std::byte* const*, std::byte* const* out) {
        const std::int64_t n = type.elementCount();
        if (n == 0)
            return;
        storeFromDouble(out[0], type.dtype, 0, value);
        const int size = dtypeSize(type.dtype);
        for (std::int64_t i = 1; i < n; ++i)
            std::memcpy(out[0] + i * size, out[0], static_cast<std::size_t>(size));
    });
}

Result<std::unique_ptr<Kernel>> castKernel(const KernelSpec& spec) {
    const DType from = spec.inputs[0].dtype, to = spec.outputs[0].dtype;
    const std::int64_t n = spec.outputs[0].elementCount();
    if (from == to)
        return copyKernel(spec);
    if (to == DType::String) {
        return makeKernel(
            "plain:cast to string", [=](const std::byte* const* in, std::byte* const* out) {
                for (std::int64_t i = 0; i < n; ++i) {
                    const StringHandle handle = internString(numberToString(in[0], from, i));
                    std::memcpy(out[0] + i * sizeof(handle), &handle, sizeof(handle));
                }
            });
    }
    if (from == DType::String) {
        return makeKernel("plain:cast from string",
                          [=](const std::byte* const* in, std::byte* const* out) {
                              for (std::int64_t i = 0; i < n; ++i) {
                                  StringHandle handle = 0;
                                  std::memcpy(&handle, in[0] + i * sizeof(handle), sizeof(handle));
                                  const std::string text = stringOf(handle);
                                  if (to == DType::Int64) {
                                      if (const auto exact = stringToInteger<std::int64_t>(text)) {
                                          std::memcpy(out[0] + i * 8, &*exact, 8);
                                          continue;
                                      }
                                  } else if (to == DType::UInt64) {
                                      if (const auto exact = stringToInteger<std::uint64_t>(text)) {
                                          std::memcpy(out[0] + i * 8, &*exact, 8);
                                          continue;
                                      }
                                  }
                                  storeFromDouble(out[0], to, i, stringToNumber(text));
                              }
                          });
    }
    return makeKernel("plain:cast", [=](const std::byte* const* in, std::byte* const* out) {
        for (std::int64_t i = 0; i < n; ++i)
            storeFromDouble(out[0], to, i, loadAsDouble(in[0], from, i));
    });
}

Result<std::unique_ptr<Kernel>> transposeKernel(const KernelSpec& spec) {
    Dims strides;
    if (auto error = geometry::readTranspose(spec, &strides))
        return specError(spec, *error);
    return stridedView("plain:transpose", spec, 0, strides);
}

Result<std::unique_ptr<Kernel>> concatKernel(const KernelSpec& spec) {
    const Dims& out = spec.outputs[0].shape;
    int axis = 0;
    if (auto problem = geometry::readConcatAxis(spec, &axis))
        return specError(spec, *problem);
    const std::int64_t outer = product(out, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.outputs[0].dtype);
    std::vector<std::int64_t> chunk; // bytes per outer index of each input
    for (const TensorType& input : spec.inputs)
        chunk.push_back(product(input.shape, static_cast<std::size_t>(axis)) * size);
    return makeKernel("plain:concat", [=](const std::byte* const* in, std::byte* const* outp) {
        std::byte* dst = outp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                if (chunk[k] > 0) // a zero-size input may have no memory
                    std::memcpy(dst, in[k] + o * chunk[k], static_cast<std::size_t>(chunk[k]));
                dst += chunk[k];
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> splitKernel(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    int axis = 0;
    if (auto problem = geometry::readSplitAxis(spec, &axis))
        return specError(spec, *problem);
    const std::int64_t outer = product(in, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.inputs[0].dtype);
    std::vector<std::int64_t> chunk;
    for (const TensorType& output : spec.outputs)
        chunk.push_back(product(output.shape, static_cast<std::size_t>(axis)) * size);
    return makeKernel("plain:split", [=](const std::byte* const* inp, std::byte* const* out) {
        const std::byte* src = inp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                if (chunk[k] > 0) // a zero-size output may have no memory
                    std::memcpy(out[k] + o * chunk[k], src, static_cast<std::size_t>(chunk[k]));
                src += chunk[k];
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> sliceKernel(const KernelSpec& spec) {
    std::int64_t base = 0;
    Dims strides;
    if (auto error = geometry::readSlice(spec, &base, &strides))
        return specError(spec, *error);
    return stridedView("plain:slice", spec, base, strides);
}

Result<std::unique_ptr<Kernel>> expandKernel(const KernelSpec& spec) {
    return stridedView("plain:expand", spec, 0,
                       broadcastStrides(spec.inputs[0].shape, spec.outputs[0].shape));
}

Result<std::unique_ptr<Kernel>> tileKernel(const KernelSpec& spec) {
    Dims shape, strides;
    if (auto problem = geometry::readTile(spec, &shape, &strides))
        return specError(spec, *problem);
    const int size = dtypeSize(spec.outputs[0].dtype);
    const StridedCopy copy = stridedCopyFor(size);
    return makeKernel("plain:tile", [=](const std::byte* const* inp, std::byte* const* outp) {
        copy(outp[0], inp[0], shape, strides);
    });
}

Result<std::unique_ptr<Kernel>> gatherKernel(const KernelSpec& spec) {
    const TensorType indices = spec.inputs[1];
    geometry::Gather g;
    if (auto problem = geometry::readGather(spec, &g))
        return specError(spec, *problem);
    const std::int64_t outer = g.outer, dim = g.dim, count = g.count;
    const std::int64_t innerBytes = g.inner * dtypeSize(spec.inputs[0].dtype);
    const geometry::Gather::Mode mode = g.mode;
    const std::string name = spec.node->name;
    return makeKernel("plain:gather", [=](const std::byte* const* in, std::byte* const* out) {
        std::byte* dst = out[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            const std::byte* base = in[0] + o * dim * innerBytes;
            for (std::int64_t i = 0; i < count; ++i) {
                std::int64_t index = readIndex(in[1], indices.dtype, i);
                if (mode == geometry::Gather::Mode::Clip) {
                    index = std::clamp<std::int64_t>(index, 0, dim - 1);
                } else if (mode == geometry::Gather::Mode::Wrap) {
                    index = ((index % dim) + dim) % dim;
                } else {
                    if (index < 0)
                        index += dim;
                    if (index < 0 || index >= dim)
                        throw KernelError("index " +
                                          std::to_string(readIndex(in[1], indices.dtype, i)) +
                                          " is out of range for an axis of length " +
                                          std::to_string(dim) + " in '" + name + "'");
                }
                std::memcpy(dst, base + index * innerBytes, static_cast<std::size_t>(innerBytes));
                dst += innerBytes;
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> padKernel(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    const std::size_t rank = in.size();
    Dims before;
    std::string mode;
    if (auto error = geometry::readPad(spec, &before, &mode))
        return specError(spec, *error);
    // For each output dimension: the input index each output index reads, or -1 for the value.
    std::vector<Dims> source(rank);
    for (std::size_t d = 0; d < rank; ++d) {
        for (std::int64_t o = 0; o < out[d]; ++o) {
            std::int64_t i = o - before[d];
            if (i < 0 || i >= in[d]) {
                if (mode == "constant" || in[d] == 0) {
                    i = -1;
                } else if (mode == "edge") {
                    i = std::clamp<std::int64_t>(i, 0, in[d] - 1);
                } else {
                    const std::int64_t period = 2 * (in[d] - 1);
                    i = period == 0 ? 0 : ((i % period) + period) % period;
                    if (i >= in[d])
                        i = period - i;
                }
            }
            source[d].push_back(i);
        }
    }
    const DType dtype = spec.outputs[0].dtype;
    const int size = dtypeSize(dtype);
    const Dims own = contiguousStrides(in);
    const int valueInput = geometry::inputAt(spec, 2);
    const bool hasValue =
        valueInput >= 0 && spec.inputs[static_cast<std::size_t>(valueInput)].elementCount() == 1;
    const double attrValue = spec.node->attrs.getFloat("value", 0).value_or(0);
    const DType valueType =
        hasValue ? spec.inputs[static_cast<std::size_t>(valueInput)].dtype : dtype;
    // The last dimension as runs: consecutive output elements that read consecutive input
    // elements (one copy), or the value (one fill).
    struct Run {
        std::int64_t at, count, from; ///< from -1: the value
    };
    std::vector<Run> runs;
    const std::int64_t inner = rank == 0 ? 1 : out[rank - 1];
    for (std::int64_t o = 0; o < inner; ++o) {
        const std::int64_t i = rank == 0 ? 0 : source[rank - 1][static_cast<std::size_t>(o)];
        if (!runs.empty()) {
            Run& last = runs.back();
            const bool extends =
                i < 0 ? last.from < 0 : last.from >= 0 && i == last.from + last.count;
            if (extends) {
                ++last.count;
                continue;
            }
        }
        runs.push_back({o, 1, i});
    }
    const std::int64_t rows = inner == 0 ? 0 : product(out) / inner;
    return makeKernel("plain:pad", [=](const std::byte* const* inp, std::byte* const* outp) {
        const double value = hasValue ? loadAsDouble(inp[valueInput], valueType, 0) : attrValue;
        // One row of the value, the source of every fill.
        std::vector<std::byte> fill(static_cast<std::size_t>(inner * size));
        for (std::int64_t o = 0; o < inner; ++o)
            storeFromDouble(fill.data(), dtype, o, value);
        Dims index(rank, 0);
        for (std::int64_t row = 0; row < rows; ++row) {
            std::int64_t src = 0;
            bool outside = false;
            for (std::size_t d = 0; d + 1 < rank; ++d) {
                const std::int64_t i = source[d][static_cast<std::size_t>(index[d])];
                outside = outside || i < 0;
                src += i * own[d];
            }
            std::byte* y = outp[0] + row * inner * size;
            for (const Run& run : runs) {
                const bool fromValue = outside || run.from < 0;
                const std::byte* from = fromValue ? fill.data() : inp[0] + (src + run.from) * size;
                std::memcpy(y + run.at * size, from, static_cast<std::size_t>(run.count * size));
            }
            for (std::size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
                if (++index[d] < out[d])
                    break;
                index[d] = 0;
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> rangeKernel(const KernelSpec& spec) {
    const TensorType out = spec.outputs[0];
    const DType startType = spec.inputs[0].dtype, deltaType = spec.inputs[2].dtype;
    return makeKernel("plain:range", [=](const std::byte* const* in, std::byte* const* outp) {
        const double start = loadAsDouble(in[0], startType, 0);
        const double delta = loadAsDouble(in[2], deltaType, 0);
        for (std::int64_t i = 0; i < out.elementCount(); ++i)
            storeFromDouble(outp[0], out.dtype, i, start + static_cast<double>(i) * delta);
    });
}

Result<std::unique_ptr<Kernel>> shapeKernel(const KernelSpec& spec) {
    const std::string& op = spec.node->op->name;
    const TensorType out = spec.outputs[0];
    Dims values;
    if (op == "Size") {
        values.push_back(spec.inputs[0].elementCount());
    } else {
        const Dims& in = shapeOf(spec, 0);
        const auto rank = static_cast<std::int64_t>(in.size());
        std::int64_t start = spec.node->attrs.getInt("start", 0).value_or(0);
        std::int64_t end = spec.node->attrs.getInt("end", rank).value_or(rank);
        start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
        for (std::int64_t d = start; d < end; ++d)
            values.push_back(in[static_cast<std::size_t>(d)]);
    }
    if (static_cast<std::int64_t>(values.size()) != out.elementCount())
        return specError(spec, "the output type does not match the input's rank");
    return makeKernel("plain:shape", [=](const std::byte* const*, std::byte* const* outp) {
        for (std::size_t i = 0; i < values.size(); ++i)
            storeFromDouble(outp[0], out.dtype, static_cast<std::int64_t>(i),
                            static_cast<double>(values[i]));
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

// ---- outputs whose extent the data decides (runtime/Selection.h) -------------------------------

Result<std::unique_ptr<Kernel>> selectionKernel(const KernelSpec& spec) {
    auto selection = planSelection(spec);
    if (!selection)
        return specError(spec, selection.error().message);
    Selection s = selection.take();
    return std::unique_ptr<Kernel>(std::make_unique<SelectionKernel>(
        "plain:" + s.name, std::move(s.bounded), std::move(s.compute)));
}

// ---- indexing and layout: the shared functors of runtime/IndexingPlan.h ------------------------

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
            if (!geometry::readTransposePerm(spec, &perm)) {
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
        t.add(F::Conv, makeConvolution);
        t.add(F::Matmul, makeMatmul);
        t.add(F::Pool, makePooling);
        t.add(F::BatchNorm, makeBatchNorm);
        t.add(F::LayerNorm, makeLayerNorm);
        t.add(F::Softmax, makeSoftmax);
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
