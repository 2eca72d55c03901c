// CPU kernels: the dispatch by op name, and the plain kernels (data movement, element-wise ops
// oneDNN has no algorithm for, other element types than float32, gathers, casts).
#include "runtime/cpu/CpuKernels.h"

#include "ir/Scalar.h"
#include "runtime/OpGeometry.h"
#include "runtime/cpu/KernelUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

template <typename T, typename F> Body unaryLoop(std::int64_t n, F f) {
    return [n, f](const std::byte* const* in, std::byte* const* out) {
        const T* x = reinterpret_cast<const T*>(in[0]);
        T* y = reinterpret_cast<T*>(out[0]);
        for (std::int64_t i = 0; i < n; ++i)
            y[i] = fromCalc<T>(f(static_cast<Calc<T>>(x[i])));
    };
}

template <typename T>
Body unaryBody(std::string_view fn, std::int64_t n, double alpha, double beta) {
    using C = Calc<T>;
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    if (fn == "negative")
        return unaryLoop<T>(n, [](C v) { return -v; });
    if (fn == "abs")
        return unaryLoop<T>(n, [](C v) { return std::abs(v); });
    if (fn == "exp")
        return unaryLoop<T>(n, [](C v) { return std::exp(v); });
    if (fn == "log")
        return unaryLoop<T>(n, [](C v) { return std::log(v); });
    if (fn == "sqrt")
        return unaryLoop<T>(n, [](C v) { return std::sqrt(v); });
    if (fn == "rsqrt")
        return unaryLoop<T>(n, [](C v) { return C(1) / std::sqrt(v); });
    if (fn == "reciprocal")
        return unaryLoop<T>(n, [](C v) { return C(1) / v; });
    if (fn == "tanh")
        return unaryLoop<T>(n, [](C v) { return std::tanh(v); });
    if (fn == "sigmoid")
        return unaryLoop<T>(n, [](C v) { return C(1) / (C(1) + std::exp(-v)); });
    if (fn == "erf")
        return unaryLoop<T>(n, [](C v) { return std::erf(v); });
    if (fn == "floor")
        return unaryLoop<T>(n, [](C v) { return std::floor(v); });
    if (fn == "ceil")
        return unaryLoop<T>(n, [](C v) { return std::ceil(v); });
    if (fn == "round")
        return unaryLoop<T>(n, [](C v) { return std::nearbyint(v); });
    if (fn == "relu")
        return unaryLoop<T>(n, [](C v) { return v > 0 ? v : C(0); });
    if (fn == "leaky_relu")
        return unaryLoop<T>(n, [a](C v) { return v >= 0 ? v : a * v; });
    if (fn == "clip")
        return unaryLoop<T>(n, [a, b](C v) { return std::min(std::max(v, a), b); });
    if (fn == "hard_sigmoid")
        return unaryLoop<T>(n, [a, b](C v) { return std::min(C(1), std::max(C(0), a * v + b)); });
    if (fn == "hard_swish")
        return unaryLoop<T>(
            n, [](C v) { return v * std::min(C(1), std::max(C(0), v / C(6) + C(0.5))); });
    if (fn == "not")
        return unaryLoop<T>(n, [](C v) { return v == 0 ? C(1) : C(0); });
    if (fn == "zeros")
        return unaryLoop<T>(n, [](C) { return C(0); });
    if (fn == "ones")
        return unaryLoop<T>(n, [](C) { return C(1); });
    return {};
}

/// oneDNN's eltwise algorithm for a function, with its alpha/beta (DnnlKernels.cpp maps names).
Result<std::unique_ptr<Kernel>> unaryKernel(const KernelSpec& spec, CpuKernelContext& ctx,
                                            std::string_view fn, double alpha = 0,
                                            double beta = 0) {
    const DType dtype = spec.outputs[0].dtype;
    if (dtype == DType::Float32) {
        if (auto kernel =
                makeDnnlEltwise(spec, ctx, fn, static_cast<float>(alpha), static_cast<float>(beta)))
            return kernel;
    }
    const std::int64_t n = spec.outputs[0].elementCount();
    Body body;
    visitNumeric(dtype, [&](auto tag) {
        using T = decltype(tag);
        body = unaryBody<T>(fn, n, alpha, beta);
    });
    if (!body)
        return specError(spec, "no kernel for " + std::string(dtypeName(dtype)));
    return makeKernel("plain:" + std::string(fn), std::move(body));
}

enum class BinaryFn {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Max,
    Min,
    FloorDiv,
    Mod,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge
};

std::optional<BinaryFn> binaryFn(std::string_view name) {
    static const std::unordered_map<std::string_view, BinaryFn> kNames = {
        {"add", BinaryFn::Add},         {"Add", BinaryFn::Add},
        {"nn.bias_add", BinaryFn::Add}, {"subtract", BinaryFn::Sub},
        {"Sub", BinaryFn::Sub},         {"multiply", BinaryFn::Mul},
        {"Mul", BinaryFn::Mul},         {"divide", BinaryFn::Div},
        {"Div", BinaryFn::Div},         {"power", BinaryFn::Pow},
        {"Pow", BinaryFn::Pow},         {"maximum", BinaryFn::Max},
        {"Max", BinaryFn::Max},         {"minimum", BinaryFn::Min},
        {"Min", BinaryFn::Min},         {"floor_divide", BinaryFn::FloorDiv},
        {"mod", BinaryFn::Mod},         {"logical_and", BinaryFn::And},
        {"And", BinaryFn::And},         {"logical_or", BinaryFn::Or},
        {"Or", BinaryFn::Or},           {"equal", BinaryFn::Eq},
        {"Equal", BinaryFn::Eq},        {"not_equal", BinaryFn::Ne},
        {"less", BinaryFn::Lt},         {"Less", BinaryFn::Lt},
        {"greater", BinaryFn::Gt},      {"Greater", BinaryFn::Gt},
        {"less_equal", BinaryFn::Le},   {"greater_equal", BinaryFn::Ge}};
    const auto it = kNames.find(name);
    return it == kNames.end() ? std::nullopt : std::optional(it->second);
}

template <typename C> C applyBinary(BinaryFn fn, C a, C b) {
    switch (fn) {
    case BinaryFn::Add:
        return a + b;
    case BinaryFn::Sub:
        return a - b;
    case BinaryFn::Mul:
        return a * b;
    case BinaryFn::Div:
        return a / b;
    case BinaryFn::Pow:
        return std::pow(a, b);
    case BinaryFn::Max:
        return std::max(a, b);
    case BinaryFn::Min:
        return std::min(a, b);
    case BinaryFn::FloorDiv:
        return std::floor(a / b);
    case BinaryFn::Mod:
        return std::fmod(a, b);
    case BinaryFn::And:
        return (a != 0 && b != 0) ? 1 : 0;
    case BinaryFn::Or:
        return (a != 0 || b != 0) ? 1 : 0;
    case BinaryFn::Eq:
        return a == b ? 1 : 0;
    case BinaryFn::Ne:
        return a != b ? 1 : 0;
    case BinaryFn::Lt:
        return a < b ? 1 : 0;
    case BinaryFn::Gt:
        return a > b ? 1 : 0;
    case BinaryFn::Le:
        return a <= b ? 1 : 0;
    case BinaryFn::Ge:
        return a >= b ? 1 : 0;
    }
    return 0;
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
                py[i] = fromCalc<TO>(static_cast<Calc<TO>>(applyBinary<C>(
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
#undef PLACER_BINARY_CASE
    }
    return nullptr;
}

/// The shape of input `b` of nn.bias_add as seen by broadcasting: its length on `axis`.
Dims biasShape(const KernelSpec& spec) {
    const int rank = spec.inputs[0].rank();
    const int axis = normalizeAxis(spec.node->attrs.getInt("axis", 1).value_or(1), rank);
    Dims shape(static_cast<std::size_t>(rank), 1);
    if (axis >= 0)
        shape[static_cast<std::size_t>(axis)] = spec.inputs[1].elementCount();
    return shape;
}

Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec);

Result<std::unique_ptr<Kernel>> binaryKernel(const KernelSpec& spec, CpuKernelContext& ctx) {
    const std::string& op = spec.node->op->name;
    const BinaryFn fn = *binaryFn(op);
    if (spec.inputs.empty())
        return specError(spec, "no inputs");
    if (spec.inputs.size() == 1) // ONNX Max/Min of one tensor is that tensor
        return copyKernel(spec);
    const DType in = spec.inputs[0].dtype;
    const DType outType = spec.outputs[0].dtype;
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
        if (auto kernel = makeDnnlBinary(spec, ctx, op))
            return kernel;
    }
    const Dims out = spec.outputs[0].shape;
    std::vector<Dims> strides;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
        const Dims shape = (op == "nn.bias_add" && i == 1) ? biasShape(spec) : spec.inputs[i].shape;
        strides.push_back(broadcastStrides(shape, out));
    }
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
    if (!ok)
        return specError(spec, "no kernel for " + std::string(dtypeName(in)));
    return makeKernel("plain:binary", std::move(body));
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

Result<std::unique_ptr<Kernel>> reduceKernel(const KernelSpec& spec, CpuKernelContext& ctx,
                                             std::string_view fn) {
    const Dims& in = shapeOf(spec, 0);
    const int rank = static_cast<int>(in.size());
    Dims kept;
    std::int64_t count = 1;
    if (auto error = geometry::readReduction(spec, &kept, &count))
        return specError(spec, *error);
    if (product(kept) != spec.outputs[0].elementCount())
        return specError(spec, "the reduced shape does not match the output type");
    const DType dtype = spec.outputs[0].dtype;
    if (dtype == DType::Float32 && rank > 0 && count > 0) {
        if (auto kernel = makeDnnlReduction(spec, ctx, fn, kept))
            return kernel;
    }
    const Dims outStrides = broadcastStrides(kept, in);
    const std::int64_t outCount = product(kept);
    Body body;
    const bool ok = visitNumeric(dtype, [&](auto tag) {
        using T = decltype(tag);
        using Acc = std::conditional_t<std::is_floating_point_v<T>, double, double>;
        const std::string f(fn);
        body = [=](const std::byte* const* inputs, std::byte* const* outputs) {
            const T* x = reinterpret_cast<const T*>(inputs[0]);
            T* y = reinterpret_cast<T*>(outputs[0]);
            Acc init = 0;
            if (f == "prod")
                init = 1;
            else if (f == "max")
                init = -std::numeric_limits<Acc>::infinity();
            else if (f == "min")
                init = std::numeric_limits<Acc>::infinity();
            std::vector<Acc> acc(static_cast<std::size_t>(outCount), init);
            forEachRun<1>(in, {outStrides},
                          [&](std::int64_t src, const std::array<std::int64_t, 1>& off,
                              std::int64_t n, const std::array<std::int64_t, 1>& step) {
                              for (std::int64_t i = 0; i < n; ++i) {
                                  Acc& a = acc[static_cast<std::size_t>(off[0] + i * step[0])];
                                  const Acc v = static_cast<Acc>(x[src + i]);
                                  if (f == "sum" || f == "mean")
                                      a += v;
                                  else if (f == "prod")
                                      a *= v;
                                  else if (f == "max")
                                      a = std::max(a, v);
                                  else
                                      a = std::min(a, v);
                              }
                          });
            for (std::int64_t i = 0; i < outCount; ++i) {
                Acc v = acc[static_cast<std::size_t>(i)];
                if (f == "mean")
                    v /= static_cast<Acc>(count);
                y[i] = fromCalc<T>(static_cast<Calc<T>>(v));
            }
        };
    });
    if (!ok)
        return specError(spec, "no kernel for " + std::string(dtypeName(dtype)));
    return makeKernel("plain:reduce_" + std::string(fn), std::move(body));
}

// ---- data movement -----------------------------------------------------------------------------

Result<std::unique_ptr<Kernel>> copyKernel(const KernelSpec& spec) {
    const std::int64_t bytes = spec.outputs[0].bytes();
    if (bytes != spec.inputs[0].bytes())
        return specError(spec, "input and output sizes differ");
    const std::size_t extra = spec.outputs.size(); // Dropout's mask output is all true
    std::vector<std::int64_t> maskBytes;
    for (std::size_t k = 1; k < extra; ++k)
        maskBytes.push_back(spec.outputs[k].bytes());
    return makeKernel("plain:copy", [=](const std::byte* const* in, std::byte* const* out) {
        if (out[0] != in[0])
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
    const int axis =
        normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0), static_cast<int>(out.size()));
    if (axis < 0)
        return specError(spec, "axis out of range");
    const std::int64_t outer = product(out, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.outputs[0].dtype);
    std::vector<std::int64_t> chunk; // bytes per outer index of each input
    for (const TensorType& input : spec.inputs)
        chunk.push_back(product(input.shape, static_cast<std::size_t>(axis)) * size);
    return makeKernel("plain:concat", [=](const std::byte* const* in, std::byte* const* outp) {
        std::byte* dst = outp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
                std::memcpy(dst, in[k] + o * chunk[k], static_cast<std::size_t>(chunk[k]));
                dst += chunk[k];
            }
        }
    });
}

Result<std::unique_ptr<Kernel>> splitKernel(const KernelSpec& spec) {
    const Dims& in = shapeOf(spec, 0);
    const int axis =
        normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0), static_cast<int>(in.size()));
    if (axis < 0)
        return specError(spec, "axis out of range");
    const std::int64_t outer = product(in, 0, static_cast<std::size_t>(axis));
    const std::int64_t size = dtypeSize(spec.inputs[0].dtype);
    std::vector<std::int64_t> chunk;
    std::int64_t total = 0;
    for (const TensorType& output : spec.outputs) {
        chunk.push_back(product(output.shape, static_cast<std::size_t>(axis)) * size);
        total += chunk.back();
    }
    if (total != product(in, static_cast<std::size_t>(axis)) * size)
        return specError(spec, "the outputs do not add up to the input");
    return makeKernel("plain:split", [=](const std::byte* const* inp, std::byte* const* out) {
        const std::byte* src = inp[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            for (std::size_t k = 0; k < chunk.size(); ++k) {
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
    // View the output as (repeat, dim) pairs; the input repeats along each `repeat`.
    const Dims& in = shapeOf(spec, 0);
    const Dims& out = spec.outputs[0].shape;
    if (in.size() != out.size())
        return specError(spec, "the output rank differs from the input's");
    const Dims own = contiguousStrides(in);
    Dims shape, strides;
    for (std::size_t d = 0; d < in.size(); ++d) {
        if (in[d] == 0 || out[d] % in[d] != 0)
            return specError(spec, "the output is not a whole number of tiles");
        shape.push_back(out[d] / in[d]);
        strides.push_back(0);
        shape.push_back(in[d]);
        strides.push_back(own[d]);
    }
    const int size = dtypeSize(spec.outputs[0].dtype);
    const StridedCopy copy = stridedCopyFor(size);
    return makeKernel("plain:tile", [=](const std::byte* const* inp, std::byte* const* outp) {
        copy(outp[0], inp[0], shape, strides);
    });
}

Result<std::unique_ptr<Kernel>> gatherKernel(const KernelSpec& spec) {
    const Dims& data = shapeOf(spec, 0);
    const TensorType indices = spec.inputs[1];
    const bool relay = spec.node->op->dialect == OpDialect::Relay;
    const AttrValue* axisAttr = spec.node->attrs.find("axis");
    const bool flat = relay && (!axisAttr || std::holds_alternative<std::monostate>(*axisAttr));
    int axis = 0;
    if (!flat) {
        axis = normalizeAxis(spec.node->attrs.getInt("axis", 0).value_or(0),
                             static_cast<int>(data.size()));
        if (axis < 0)
            return specError(spec, "axis out of range");
    }
    const std::int64_t outer = flat ? 1 : product(data, 0, static_cast<std::size_t>(axis));
    const std::int64_t dim = flat ? product(data) : data[static_cast<std::size_t>(axis)];
    const std::int64_t inner =
        flat ? 1
             : product(data, static_cast<std::size_t>(axis) + 1) * dtypeSize(spec.inputs[0].dtype);
    const std::int64_t innerBytes = flat ? dtypeSize(spec.inputs[0].dtype) : inner;
    const std::int64_t count = indices.elementCount();
    const std::string mode =
        relay ? spec.node->attrs.getString("mode", "clip").value_or("clip") : "raise";
    const std::string name = spec.node->name;
    return makeKernel("plain:gather", [=](const std::byte* const* in, std::byte* const* out) {
        std::byte* dst = out[0];
        for (std::int64_t o = 0; o < outer; ++o) {
            const std::byte* base = in[0] + o * dim * innerBytes;
            for (std::int64_t i = 0; i < count; ++i) {
                std::int64_t index = readIndex(in[1], indices.dtype, i);
                if (mode == "clip") {
                    index = std::clamp<std::int64_t>(index, 0, dim - 1);
                } else if (mode == "wrap") {
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
    const bool hasValue = spec.inputs.size() > 2 && spec.inputs[2].elementCount() == 1;
    const double attrValue = spec.node->attrs.getFloat("value", 0).value_or(0);
    const DType valueType = hasValue ? spec.inputs[2].dtype : dtype;
    const std::int64_t total = product(out);
    return makeKernel("plain:pad", [=](const std::byte* const* inp, std::byte* const* outp) {
        const double value = hasValue ? loadAsDouble(inp[2], valueType, 0) : attrValue;
        Dims index(rank, 0);
        for (std::int64_t o = 0; o < total; ++o) {
            std::int64_t src = 0;
            bool outside = false;
            for (std::size_t d = 0; d < rank; ++d) {
                const std::int64_t i = source[d][static_cast<std::size_t>(index[d])];
                outside = outside || i < 0;
                src += i * own[d];
            }
            if (outside)
                storeFromDouble(outp[0], dtype, o, value);
            else
                std::memcpy(outp[0] + o * size, inp[0] + src * size,
                            static_cast<std::size_t>(size));
            for (std::size_t d = rank; d-- > 0;) {
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

// ---- dispatch ----------------------------------------------------------------------------------

using Factory =
    std::function<Result<std::unique_ptr<Kernel>>(const KernelSpec&, CpuKernelContext&)>;

Factory unary(std::string fn) {
    return
        [fn](const KernelSpec& spec, CpuKernelContext& ctx) { return unaryKernel(spec, ctx, fn); };
}

const std::unordered_map<std::string, Factory>& factories() {
    static const std::unordered_map<std::string, Factory> table = [] {
        std::unordered_map<std::string, Factory> t;
        const std::pair<const char*, const char*> unaries[] = {{"negative", "negative"},
                                                               {"Neg", "negative"},
                                                               {"abs", "abs"},
                                                               {"Abs", "abs"},
                                                               {"exp", "exp"},
                                                               {"fast_exp", "exp"},
                                                               {"Exp", "exp"},
                                                               {"log", "log"},
                                                               {"Log", "log"},
                                                               {"sqrt", "sqrt"},
                                                               {"Sqrt", "sqrt"},
                                                               {"rsqrt", "rsqrt"},
                                                               {"Reciprocal", "reciprocal"},
                                                               {"tanh", "tanh"},
                                                               {"fast_tanh", "tanh"},
                                                               {"Tanh", "tanh"},
                                                               {"sigmoid", "sigmoid"},
                                                               {"Sigmoid", "sigmoid"},
                                                               {"erf", "erf"},
                                                               {"fast_erf", "erf"},
                                                               {"Erf", "erf"},
                                                               {"floor", "floor"},
                                                               {"ceil", "ceil"},
                                                               {"round", "round"},
                                                               {"nn.relu", "relu"},
                                                               {"Relu", "relu"},
                                                               {"HardSwish", "hard_swish"},
                                                               {"Not", "not"}};
        for (const auto& [op, fn] : unaries)
            t[op] = unary(fn);
        auto leaky = [](const KernelSpec& spec, CpuKernelContext& ctx) {
            const double alpha = spec.node->attrs.getFloat("alpha", 0.01).value_or(0.01);
            return unaryKernel(spec, ctx, "leaky_relu", alpha);
        };
        t["nn.leaky_relu"] = leaky;
        t["LeakyRelu"] = leaky;
        t["HardSigmoid"] = [](const KernelSpec& spec, CpuKernelContext& ctx) {
            return unaryKernel(spec, ctx, "hard_sigmoid",
                               spec.node->attrs.getFloat("alpha", 0.2).value_or(0.2),
                               spec.node->attrs.getFloat("beta", 0.5).value_or(0.5));
        };
        t["clip"] = [](const KernelSpec& spec, CpuKernelContext& ctx) {
            return unaryKernel(spec, ctx, "clip",
                               spec.node->attrs.getFloat("a_min", -INFINITY).value_or(-INFINITY),
                               spec.node->attrs.getFloat("a_max", INFINITY).value_or(INFINITY));
        };
        t["Clip"] = [](const KernelSpec& spec, CpuKernelContext& ctx) {
            double lo = spec.node->attrs.getFloat("min", -INFINITY).value_or(-INFINITY);
            double hi = spec.node->attrs.getFloat("max", INFINITY).value_or(INFINITY);
            for (std::size_t k = 1; k < spec.inputs.size(); ++k) {
                if (k >= spec.constantData.size() || !spec.constantData[k] ||
                    spec.inputs[k].elementCount() != 1)
                    return Result<std::unique_ptr<Kernel>>(
                        specError(spec, "the min and max inputs must be constant scalars"));
                const double v =
                    loadAsDouble(reinterpret_cast<const std::byte*>(spec.constantData[k]->data()),
                                 spec.inputs[k].dtype, 0);
                (k == 1 ? lo : hi) = v;
            }
            KernelSpec unarySpec = spec;
            unarySpec.inputs.resize(1);
            return unaryKernel(unarySpec, ctx, "clip", lo, hi);
        };
        for (const char* op :
             {"copy", "stop_gradient", "Identity", "Dropout", "reshape", "Reshape",
              "nn.batch_flatten", "Flatten", "squeeze", "Squeeze", "expand_dims", "Unsqueeze"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return copyKernel(spec); };
        t["zeros_like"] = [](const KernelSpec& spec, CpuKernelContext&) {
            return fillKernel(spec, 0);
        };
        t["ones_like"] = [](const KernelSpec& spec, CpuKernelContext&) {
            return fillKernel(spec, 1);
        };
        t["ConstantOfShape"] = [](const KernelSpec& spec, CpuKernelContext&) {
            return fillKernel(spec, spec.node->attrs.getFloat("value", 0).value_or(0));
        };
        for (const char* op : {"cast", "Cast"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return castKernel(spec); };
        for (const char* op :
             {"add",        "subtract",      "multiply",     "divide", "power",
              "maximum",    "minimum",       "floor_divide", "mod",    "logical_and",
              "logical_or", "equal",         "not_equal",    "less",   "greater",
              "less_equal", "greater_equal", "nn.bias_add",  "Add",    "Sub",
              "Mul",        "Div",           "Pow",          "Min",    "Max",
              "Equal",      "Less",          "Greater",      "And",    "Or"})
            t[op] = binaryKernel;
        for (const char* op : {"where", "Where"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return whereKernel(spec); };
        const std::pair<const char*, const char*> reductions[] = {
            {"sum", "sum"},         {"mean", "mean"},     {"max", "max"},
            {"min", "min"},         {"prod", "prod"},     {"ReduceSum", "sum"},
            {"ReduceMean", "mean"}, {"ReduceMax", "max"}, {"ReduceMin", "min"}};
        for (const auto& [op, fn] : reductions) {
            const std::string f = fn;
            t[op] = [f](const KernelSpec& spec, CpuKernelContext& ctx) {
                return reduceKernel(spec, ctx, f);
            };
        }
        for (const char* op : {"transpose", "Transpose"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return transposeKernel(spec); };
        for (const char* op : {"concatenate", "Concat"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return concatKernel(spec); };
        for (const char* op : {"split", "Split"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return splitKernel(spec); };
        for (const char* op : {"strided_slice", "Slice"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return sliceKernel(spec); };
        for (const char* op : {"take", "Gather"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return gatherKernel(spec); };
        t["Pad"] = [](const KernelSpec& spec, CpuKernelContext&) { return padKernel(spec); };
        t["Expand"] = [](const KernelSpec& spec, CpuKernelContext&) { return expandKernel(spec); };
        t["Tile"] = [](const KernelSpec& spec, CpuKernelContext&) { return tileKernel(spec); };
        t["Range"] = [](const KernelSpec& spec, CpuKernelContext&) { return rangeKernel(spec); };
        for (const char* op : {"shape_of", "Shape", "Size"})
            t[op] = [](const KernelSpec& spec, CpuKernelContext&) { return shapeKernel(spec); };
        for (const char* op : {"nn.conv2d", "Conv"})
            t[op] = makeConvolution;
        for (const char* op : {"nn.dense", "nn.matmul", "nn.batch_matmul", "Gemm", "MatMul"})
            t[op] = makeMatmul;
        for (const char* op : {"nn.max_pool2d", "nn.avg_pool2d", "nn.global_avg_pool2d",
                               "nn.global_max_pool2d", "nn.adaptive_avg_pool2d", "MaxPool",
                               "AveragePool", "GlobalAveragePool", "GlobalMaxPool"})
            t[op] = makePooling;
        for (const char* op : {"nn.batch_norm", "BatchNormalization"})
            t[op] = makeBatchNorm;
        for (const char* op : {"nn.layer_norm", "LayerNormalization"})
            t[op] = makeLayerNorm;
        for (const char* op :
             {"nn.softmax", "nn.log_softmax", "nn.fast_softmax", "Softmax", "LogSoftmax"})
            t[op] = makeSoftmax;
        return t;
    }();
    return table;
}

} // namespace

} // namespace cpu

Result<std::unique_ptr<Kernel>> makeCpuKernel(const KernelSpec& spec, CpuKernelContext& context) {
    const Node& node = *spec.node;
    const auto& table = cpu::factories();
    const auto it = table.find(node.op->name);
    if (it == table.end())
        return cpu::specError(spec, "the CPU backend has no kernel for this operator");
    try {
        return it->second(spec, context);
    } catch (const dnnl::error& error) {
        return cpu::specError(spec, std::string("oneDNN refused it: ") + error.what());
    }
}

std::vector<std::string> cpuKernelOperators() {
    std::vector<std::string> names;
    for (const auto& entry : cpu::factories())
        names.push_back(entry.first);
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace placer
