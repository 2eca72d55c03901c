// Random cases for every operator a backend has kernels for, and a way to run one case on any
// Device through its own memory, copies and kernels. A backend is checked by running each case on
// it and on the CPU kernels (runOp) and comparing.
#pragma once

#include "KernelTestUtil.h"

#include "device/Device.h"
#include "device/DeviceMapping.h"
#include "device/DeviceRegistry.h"
#include "ir/OpRegistry.h"
#include "ir/StringPool.h"
#include "vm/ControlFlow.h"
#include "vm/ReferenceRun.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace placer::test {

struct OpCase {
    std::string name; ///< "add [3x1x5, 4x5]"
    std::string op;
    Attrs attrs;
    std::vector<Tensor> inputs;
    std::vector<bool> constant;      ///< per input; missing entries are false
    std::vector<TensorType> outputs; ///< from the op's shape function when left empty
    double atol = 1e-5, rtol = 1e-5; ///< |actual - cpu| <= atol + rtol |cpu|
    int opset = 13;
    /// Control flow: the node's bodies, and how many of the inputs (the last) they capture.
    std::vector<Subgraph> subgraphs;
    std::uint32_t captures = 0;
};

inline HostTensor toHost(const Tensor& t) {
    return HostTensor{t.type,
                      TensorData(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size())};
}

namespace detail {

using Dims = std::vector<std::int64_t>;

class CaseMaker {
public:
    explicit CaseMaker(unsigned seed) : m_rng(seed) {}

    int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(m_rng); }
    bool coin() { return pick(0, 1) == 1; }
    float uniform(float lo, float hi) {
        return std::uniform_real_distribution<float>(lo, hi)(m_rng);
    }

    Dims shape(int rankLo, int rankHi, int lo, int hi) {
        Dims dims(static_cast<std::size_t>(pick(rankLo, rankHi)));
        for (auto& d : dims)
            d = pick(lo, hi);
        return dims;
    }
    /// A shape that broadcasts to `out`: some leading dimensions dropped, some set to 1.
    Dims broadcastPartner(const Dims& out) {
        const std::size_t drop = static_cast<std::size_t>(pick(0, static_cast<int>(out.size())));
        Dims dims(out.begin() + static_cast<std::ptrdiff_t>(drop), out.end());
        for (auto& d : dims)
            if (pick(0, 2) == 0)
                d = 1;
        return dims;
    }

    Tensor floats(Dims dims, float lo = -1, float hi = 1) {
        const TensorType type{std::move(dims), DType::Float32};
        std::vector<float> v(static_cast<std::size_t>(type.elementCount()));
        for (float& x : v)
            x = uniform(lo, hi);
        return make(type.shape, DType::Float32, v);
    }
    /// Values away from zero: magnitudes in [lo, hi], either sign.
    Tensor awayFromZero(Dims dims, float lo, float hi) {
        Tensor t = floats(std::move(dims), lo, hi);
        for (std::int64_t i = 0; i < t.type.elementCount(); ++i) {
            if (coin()) {
                const float v = -t.f(i);
                std::memcpy(t.bytes.data() + 4 * i, &v, 4);
            }
        }
        return t;
    }
    template <typename T> Tensor ints(Dims dims, DType dtype, int lo, int hi, bool noZero = false) {
        const TensorType type{std::move(dims), dtype};
        std::vector<T> v(static_cast<std::size_t>(type.elementCount()));
        for (T& x : v) {
            do
                x = static_cast<T>(pick(lo, hi));
            while (noZero && x == 0);
        }
        return make(type.shape, dtype, v);
    }
    /// Strings drawn from `words`, as handles into the string pool.
    Tensor strings(Dims dims, const std::vector<std::string>& words) {
        const TensorType type{std::move(dims), DType::String};
        std::vector<StringHandle> v(static_cast<std::size_t>(type.elementCount()));
        for (auto& x : v)
            x = internString(
                words[static_cast<std::size_t>(pick(0, static_cast<int>(words.size()) - 1))]);
        return make(type.shape, DType::String, v);
    }
    Tensor bools(Dims dims) {
        const TensorType type{std::move(dims), DType::Bool};
        std::vector<std::uint8_t> v(static_cast<std::size_t>(type.elementCount()));
        for (auto& x : v)
            x = static_cast<std::uint8_t>(coin());
        return make(type.shape, DType::Bool, v);
    }
    static Tensor int64s(Dims dims, std::vector<std::int64_t> values) {
        return make(std::move(dims), DType::Int64, values);
    }
    static Tensor scalar(float v) { return make({}, DType::Float32, std::vector<float>{v}); }

private:
    std::mt19937 m_rng;
};

inline Dims broadcast(const Dims& a, const Dims& b) {
    const std::size_t rank = std::max(a.size(), b.size());
    Dims out(rank, 1);
    for (std::size_t i = 0; i < rank; ++i) {
        const std::int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
        const std::int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
        out[i] = x == 1 ? y : x;
    }
    return out;
}

inline std::string shapeList(const std::vector<Tensor>& inputs) {
    std::string text;
    for (const Tensor& t : inputs) {
        if (!text.empty())
            text += ", ";
        text += t.type.toShortString();
    }
    return text;
}

inline std::int64_t windowOut(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                              std::int64_t p0, std::int64_t p1, bool ceil = false) {
    const std::int64_t span = (k - 1) * d + 1, steps = in + p0 + p1 - span;
    return (ceil ? (steps + s - 1) / s : steps / s) + 1;
}

} // namespace detail

/// Cases with random shapes and attributes for every operator of the CPU and CUDA backends
/// (host-only shape computations excepted). `seed` varies shapes, values and attributes.
inline std::vector<OpCase> randomOpCases(unsigned seed) {
    using detail::Dims;
    detail::CaseMaker r(seed);
    std::vector<OpCase> cases;
    auto add = [&](OpCase c) {
        if (c.name.empty())
            c.name = c.op;
        c.name += " [" + detail::shapeList(c.inputs) + "]";
        cases.push_back(std::move(c));
    };
    auto attrs = [](std::initializer_list<std::pair<std::string, AttrValue>> entries) {
        Attrs a;
        for (const auto& [name, value] : entries)
            a.set(name, value);
        return a;
    };
    const double kTranscendental = 2e-6; // a few float ulps: CUDA's libm and the CPU's differ

    // ---- unary -------------------------------------------------------------------------------
    for (const char* op :
         {"negative", "Neg",       "abs",      "Abs",      "tanh",  "fast_tanh", "Tanh",  "sigmoid",
          "Sigmoid",  "erf",       "fast_erf", "Erf",      "floor", "ceil",      "round", "nn.relu",
          "Relu",     "HardSwish", "exp",      "fast_exp", "Exp",   "Gelu"}) {
        const std::string name = op;
        const bool onnx = std::isupper(static_cast<unsigned char>(name[0]));
        const Tensor x = r.floats(r.shape(0, 4, 1, 7), -3, 3);
        add({name,
             name,
             {},
             {x},
             {},
             onnx ? std::vector{x.type} : std::vector<TensorType>{},
             kTranscendental,
             kTranscendental});
    }
    for (const char* op : {"log", "Log", "sqrt", "Sqrt", "rsqrt", "Reciprocal"}) {
        const std::string name = op;
        const Tensor x = r.floats(r.shape(1, 3, 1, 9), 0.05f, 4);
        add({name, name, {}, {x}, {}, {x.type}, kTranscendental, kTranscendental});
    }
    {
        const Tensor x = r.ints<std::int32_t>(r.shape(1, 3, 1, 6), DType::Int32, -50, 50);
        add({"abs int32", "abs", {}, {x}, {}, {}, 0, 0});
        const Tensor y = r.ints<std::int64_t>(r.shape(1, 3, 1, 6), DType::Int64, -50, 50);
        add({"negative int64", "negative", {}, {y}, {}, {}, 0, 0});
        const Tensor b = r.bools(r.shape(1, 3, 1, 6));
        add({"Not", "Not", {}, {b}, {}, {b.type}, 0, 0});
    }
    {
        const float alpha = r.uniform(0.01f, 0.5f);
        const Tensor x = r.floats(r.shape(1, 4, 1, 6));
        add({"nn.leaky_relu", "nn.leaky_relu", attrs({{"alpha", double{alpha}}}), {x}});
        add({"LeakyRelu", "LeakyRelu", attrs({{"alpha", double{alpha}}}), {x}, {}, {x.type}});
        const Tensor h = r.floats(r.shape(1, 4, 1, 6), -4, 4);
        add({"HardSigmoid",
             "HardSigmoid",
             attrs({{"alpha", 0.25}, {"beta", 0.4}}),
             {h},
             {},
             {h.type}});
        const double lo = r.uniform(-0.8f, 0), hi = r.uniform(0.1f, 0.8f);
        add({"clip", "clip", attrs({{"a_min", lo}, {"a_max", hi}}), {x}});
        add({"Clip",
             "Clip",
             {},
             {x, detail::CaseMaker::scalar(static_cast<float>(lo)),
              detail::CaseMaker::scalar(static_cast<float>(hi))},
             {false, true, true},
             {x.type}});
    }

    // ---- binary, broadcasting ------------------------------------------------------------------
    auto binaryPair = [&](auto makeA, auto makeB, Dims* out) {
        *out = r.shape(1, 4, 1, 6);
        Dims a = r.broadcastPartner(*out), b = r.broadcastPartner(*out);
        *out = detail::broadcast(a, b); // the partners may have dropped every full dimension
        return std::pair(makeA(a), makeB(b));
    };
    Dims out;
    for (const char* op :
         {"add", "subtract", "multiply", "maximum", "minimum", "Add", "Sub", "Mul", "Min", "Max"}) {
        const std::string name = op;
        auto [a, b] = binaryPair([&](Dims d) { return r.floats(d); },
                                 [&](Dims d) { return r.floats(d); }, &out);
        add({name, name, {}, {a, b}, {}, {{out, DType::Float32}}});
    }
    for (const char* op : {"divide", "Div", "floor_divide", "mod"}) {
        const std::string name = op;
        auto [a, b] = binaryPair([&](Dims d) { return r.floats(d, -4, 4); },
                                 [&](Dims d) { return r.awayFromZero(d, 0.5f, 2); }, &out);
        add({name, name, {}, {a, b}, {}, {{out, DType::Float32}}, 1e-5, 1e-5});
    }
    for (const char* op : {"power", "Pow"}) {
        const std::string name = op;
        auto [a, b] = binaryPair([&](Dims d) { return r.floats(d, 0.1f, 2); },
                                 [&](Dims d) { return r.floats(d, -2, 2); }, &out);
        add({name,
             name,
             {},
             {a, b},
             {},
             {{out, DType::Float32}},
             kTranscendental,
             kTranscendental});
    }
    for (const char* op : {"add", "multiply", "maximum", "floor_divide", "mod"}) {
        const std::string name = op;
        auto [a, b] = binaryPair(
            [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, -20, 20); },
            [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, -6, 6, true); }, &out);
        add({name + " int32", name, {}, {a, b}, {}, {{out, DType::Int32}}, 0, 0});
    }
    {
        auto [a, b] = binaryPair(
            [&](Dims d) { return r.ints<std::int64_t>(d, DType::Int64, -1000, 1000); },
            [&](Dims d) { return r.ints<std::int64_t>(d, DType::Int64, -9, 9, true); }, &out);
        add({"Div int64", "Div", {}, {a, b}, {}, {{out, DType::Int64}}, 0, 0});
    }
    for (const char* op : {"equal", "not_equal", "less", "greater", "less_equal", "greater_equal",
                           "Equal", "Less", "Greater"}) {
        const std::string name = op;
        // Few distinct values, so that equality happens.
        auto [a, b] =
            binaryPair([&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, 0, 2); },
                       [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, 0, 2); }, &out);
        add({name, name, {}, {a, b}, {}, {{out, DType::Bool}}, 0, 0});
        auto [fa, fb] = binaryPair([&](Dims d) { return r.floats(d); },
                                   [&](Dims d) { return r.floats(d); }, &out);
        add({name + " float32", name, {}, {fa, fb}, {}, {{out, DType::Bool}}, 0, 0});
    }
    for (const char* op : {"logical_and", "logical_or", "And", "Or"}) {
        const std::string name = op;
        auto [a, b] = binaryPair([&](Dims d) { return r.bools(d); },
                                 [&](Dims d) { return r.bools(d); }, &out);
        add({name, name, {}, {a, b}, {}, {{out, DType::Bool}}, 0, 0});
    }
    {
        // ONNX Max and Min with three inputs fold the third into the result.
        const Dims o = r.shape(2, 3, 2, 5);
        const Tensor a = r.floats(o), b = r.floats(r.broadcastPartner(o)),
                     c = r.floats(r.broadcastPartner(o));
        add({"Max of three", "Max", {}, {a, b, c}, {}, {{o, DType::Float32}}});
        add({"Min of three", "Min", {}, {a, b, c}, {}, {{o, DType::Float32}}});
        // With one input they are that input.
        add({"Max of one", "Max", {}, {a}, {}, {{o, DType::Float32}}});
        add({"Min of one", "Min", {}, {b}, {}, {{b.type.shape, DType::Float32}}});
        const Dims x = r.shape(2, 4, 1, 6);
        const int axis = r.pick(0, static_cast<int>(x.size()) - 1);
        const Tensor data = r.floats(x), bias = r.floats({x[static_cast<std::size_t>(axis)]});
        add({"nn.bias_add", "nn.bias_add", attrs({{"axis", std::int64_t{axis}}}), {data, bias}});
    }
    {
        const Dims o = r.shape(1, 4, 1, 5);
        const Tensor c = r.bools(r.broadcastPartner(o)), x = r.floats(r.broadcastPartner(o)),
                     y = r.floats(r.broadcastPartner(o));
        const Dims shape =
            detail::broadcast(detail::broadcast(c.type.shape, x.type.shape), y.type.shape);
        add({"where", "where", {}, {c, x, y}, {}, {{shape, DType::Float32}}, 0, 0});
        const Tensor xi = r.ints<std::int64_t>(x.type.shape, DType::Int64, -9, 9);
        const Tensor yi = r.ints<std::int64_t>(y.type.shape, DType::Int64, -9, 9);
        add({"Where int64", "Where", {}, {c, xi, yi}, {}, {{shape, DType::Int64}}, 0, 0});
    }

    // ---- casts and fills -----------------------------------------------------------------------
    {
        const Dims s = r.shape(1, 3, 1, 7);
        const Tensor f = r.floats(s, -300, 300);
        add({"cast float32 to int32",
             "cast",
             attrs({{"dtype", std::string("int32")}}),
             {f},
             {},
             {},
             0,
             0});
        add({"Cast float32 to float16", "Cast", {}, {f}, {}, {{s, DType::Float16}}, 0, 0});
        add({"Cast float32 to bool", "Cast", {}, {f}, {}, {{s, DType::Bool}}, 0, 0});
        // Strings: the shortest text that reads back as the same float, and back.
        add({"Cast float32 to string", "Cast", {}, {f}, {}, {{s, DType::String}}, 0, 0});
        add({"Cast string to float32",
             "Cast",
             {},
             {r.strings(s, {"0.5", "-3", "1e-3", "+INF", "-inf", "NaN", "12.25", " 7 "})},
             {},
             {{s, DType::Float32}},
             0,
             0});
        add({"Cast string to int64",
             "Cast",
             {},
             {r.strings(s, {"0", "-42", "9007199254740993", "x", "3"})},
             {},
             {{s, DType::Int64}},
             0,
             0});
        const Tensor i = r.ints<std::int64_t>(s, DType::Int64, -100000, 100000);
        add({"cast int64 to float32",
             "cast",
             attrs({{"dtype", std::string("float32")}}),
             {i},
             {},
             {},
             0,
             0});
        const Tensor b = r.bools(s);
        add({"Cast bool to float32", "Cast", {}, {b}, {}, {{s, DType::Float32}}, 0, 0});
        add({"cast float32 to float32",
             "cast",
             attrs({{"dtype", std::string("float32")}}),
             {f},
             {},
             {},
             0,
             0});
        std::vector<std::uint16_t> halves(static_cast<std::size_t>(f.type.elementCount()));
        for (auto& h : halves) // finite halves of either sign, subnormals included
            h = static_cast<std::uint16_t>(r.pick(0, 0x7bff) | (r.coin() ? 0x8000 : 0));
        add({"Cast float16 to float32",
             "Cast",
             {},
             {make(s, DType::Float16, halves)},
             {},
             {{s, DType::Float32}},
             0,
             0});
        add({"zeros_like", "zeros_like", {}, {f}, {}, {}, 0, 0});
        add({"ones_like", "ones_like", {}, {i}, {}, {}, 0, 0});
        const Dims shapeValues = r.shape(1, 3, 1, 5);
        add({"ConstantOfShape",
             "ConstantOfShape",
             attrs({{"value", 2.5}}),
             {detail::CaseMaker::int64s({static_cast<std::int64_t>(shapeValues.size())},
                                        shapeValues)},
             {true},
             {{shapeValues, DType::Float32}},
             0,
             0});
    }

    // ---- views that copy
    // -------------------------------------------------------------------------
    {
        const Dims s = {r.pick(1, 3), r.pick(1, 4), r.pick(1, 5)};
        const Tensor x = r.floats(s);
        const std::int64_t n = x.type.elementCount();
        for (const char* op : {"copy", "stop_gradient"})
            add({op, op, {}, {x}, {}, {}, 0, 0});
        add({"Identity", "Identity", {}, {x}, {}, {x.type}, 0, 0});
        add({"Dropout", "Dropout", {}, {x}, {}, {x.type, {s, DType::Bool}}, 0, 0});
        add({"reshape", "reshape", attrs({{"newshape", Dims{n}}}), {x}, {}, {}, 0, 0});
        add({"Reshape",
             "Reshape",
             {},
             {x, detail::CaseMaker::int64s({2}, {s[0], -1})},
             {false, true},
             {{{s[0], s[1] * s[2]}, DType::Float32}},
             0,
             0});
        add({"nn.batch_flatten", "nn.batch_flatten", {}, {x}, {}, {}, 0, 0});
        add({"Flatten",
             "Flatten",
             attrs({{"axis", std::int64_t{2}}}),
             {x},
             {},
             {{{s[0] * s[1], s[2]}, DType::Float32}},
             0,
             0});
        const Tensor y = r.floats({s[0], 1, s[2]});
        add({"squeeze", "squeeze", attrs({{"axis", Dims{1}}}), {y}, {}, {}, 0, 0});
        add({"Squeeze",
             "Squeeze",
             {},
             {y, detail::CaseMaker::int64s({1}, {1})},
             {false, true},
             {{{s[0], s[2]}, DType::Float32}},
             0,
             0});
        add({"expand_dims",
             "expand_dims",
             attrs({{"axis", std::int64_t{1}}, {"num_newaxis", std::int64_t{2}}}),
             {x},
             {},
             {},
             0,
             0});
        add({"Unsqueeze",
             "Unsqueeze",
             {},
             {x, detail::CaseMaker::int64s({1}, {0})},
             {false, true},
             {{{1, s[0], s[1], s[2]}, DType::Float32}},
             0,
             0});
    }

    // ---- reductions
    // --------------------------------------------------------------------------------
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
        const std::string name = op;
        const Dims s = r.shape(1, 4, 1, 6);
        const Tensor x = name == "prod" ? r.floats(s, 0.8f, 1.25f) : r.floats(s);
        Dims axes;
        for (std::size_t d = 0; d < s.size(); ++d)
            if (r.coin())
                axes.push_back(r.coin() ? static_cast<std::int64_t>(d)
                                        : static_cast<std::int64_t>(d) -
                                              static_cast<std::int64_t>(s.size()));
        Attrs a = attrs({{"keepdims", r.coin()}});
        if (!axes.empty() || r.coin())
            a.set("axis", axes);
        if (!axes.empty() && r.pick(0, 3) == 0)
            a.set("exclude", true);
        add({name, name, a, {x}, {}, {}, 1e-5, 1e-4});
    }
    {
        const Dims s = r.shape(2, 4, 2, 6);
        const Tensor x = r.floats(s);
        const std::int64_t axis = r.pick(0, static_cast<int>(s.size()) - 1);
        Dims kept = s, dropped = s;
        kept[static_cast<std::size_t>(axis)] = 1;
        dropped.erase(dropped.begin() + axis);
        add({"ReduceSum",
             "ReduceSum",
             attrs({{"keepdims", std::int64_t{1}}}),
             {x, detail::CaseMaker::int64s({1}, {axis})},
             {false, true},
             {{kept, DType::Float32}},
             1e-5,
             1e-4});
        for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin"})
            add({op,
                 op,
                 attrs({{"axes", Dims{axis}}, {"keepdims", std::int64_t{0}}}),
                 {x},
                 {},
                 {{dropped, DType::Float32}},
                 1e-5,
                 1e-4});
    }

    // ---- data movement
    // -----------------------------------------------------------------------------
    {
        const Dims s = r.shape(2, 5, 1, 5);
        const Tensor x = r.floats(s);
        Dims perm(s.size());
        std::iota(perm.begin(), perm.end(), 0);
        for (std::size_t i = perm.size(); i > 1; --i)
            std::swap(perm[i - 1],
                      perm[static_cast<std::size_t>(r.pick(0, static_cast<int>(i) - 1))]);
        Dims permuted;
        for (std::int64_t p : perm)
            permuted.push_back(s[static_cast<std::size_t>(p)]);
        add({"transpose", "transpose", attrs({{"axes", perm}}), {x}, {}, {}, 0, 0});
        add({"Transpose",
             "Transpose",
             attrs({{"perm", perm}}),
             {x},
             {},
             {{permuted, DType::Float32}},
             0,
             0});
    }
    {
        const Dims s = r.shape(1, 4, 2, 7);
        const Tensor x = r.floats(s);
        Dims begin, end, strides;
        for (std::int64_t d : s) {
            const int step = r.pick(1, 2); // Relay's strided_slice takes positive strides only
            const std::int64_t a = r.pick(0, static_cast<int>(d) - 1);
            begin.push_back(a);
            end.push_back(a + r.pick(1, static_cast<int>(d - a) + 2));
            strides.push_back(step);
        }
        add({"strided_slice",
             "strided_slice",
             attrs({{"begin", begin}, {"end", end}, {"strides", strides}}),
             {x},
             {},
             {},
             0,
             0});
        // ONNX Slice on one axis, with a step.
        const std::int64_t axis = r.pick(0, static_cast<int>(s.size()) - 1);
        const std::int64_t d = s[static_cast<std::size_t>(axis)];
        const std::int64_t start = r.pick(0, static_cast<int>(d) - 1);
        const std::int64_t step = r.coin() ? r.pick(1, 2) : -r.pick(1, 2); // backwards too
        Dims sliced = s;
        sliced[static_cast<std::size_t>(axis)] =
            step > 0 ? (d - start + step - 1) / step : (start + 1 - step - 1) / -step;
        add({"Slice",
             "Slice",
             {},
             {x, detail::CaseMaker::int64s({1}, {start}),
              detail::CaseMaker::int64s({1}, {step > 0 ? 1000 : -1000}),
              detail::CaseMaker::int64s({1}, {axis}), detail::CaseMaker::int64s({1}, {step})},
             {false, true, true, true, true},
             {{sliced, DType::Float32}},
             0,
             0});
    }
    {
        const Dims o = r.shape(1, 4, 1, 5);
        Dims in = o;
        for (auto& d : in)
            if (r.coin())
                d = 1;
        in.erase(in.begin(), in.begin() + r.pick(0, static_cast<int>(in.size()) - 1));
        add({"Expand",
             "Expand",
             {},
             {r.floats(in), detail::CaseMaker::int64s({static_cast<std::int64_t>(o.size())}, o)},
             {false, true},
             {{o, DType::Float32}},
             0,
             0});
        Dims repeats;
        Dims tiled;
        const Dims t = r.shape(1, 3, 1, 4);
        for (std::int64_t d : t) {
            repeats.push_back(r.pick(1, 3));
            tiled.push_back(d * repeats.back());
        }
        add({"Tile",
             "Tile",
             {},
             {r.floats(t),
              detail::CaseMaker::int64s({static_cast<std::int64_t>(repeats.size())}, repeats)},
             {false, true},
             {{tiled, DType::Float32}},
             0,
             0});
    }
    for (const char* op : {"concatenate", "Concat"}) {
        const std::string name = op;
        const Dims s = r.shape(1, 4, 1, 5);
        const int axis = r.pick(0, static_cast<int>(s.size()) - 1);
        std::vector<Tensor> parts;
        Dims joined = s;
        joined[static_cast<std::size_t>(axis)] = 0;
        for (int k = r.pick(1, 3); k >= 0; --k) {
            Dims p = s;
            p[static_cast<std::size_t>(axis)] = r.pick(1, 4);
            joined[static_cast<std::size_t>(axis)] += p[static_cast<std::size_t>(axis)];
            parts.push_back(r.floats(p));
        }
        const bool negative = r.coin();
        add({name,
             name,
             attrs({{"axis", std::int64_t{negative ? axis - static_cast<int>(s.size()) : axis}}}),
             parts,
             {},
             name == "Concat" ? std::vector<TensorType>{{joined, DType::Float32}}
                              : std::vector<TensorType>{},
             0,
             0});
    }
    {
        const Dims s = r.shape(1, 4, 2, 6);
        const int axis = r.pick(0, static_cast<int>(s.size()) - 1);
        const std::int64_t d = s[static_cast<std::size_t>(axis)];
        const std::int64_t cut = r.pick(1, static_cast<int>(d) - 1);
        add({"split",
             "split",
             attrs({{"indices_or_sections", Dims{cut}}, {"axis", std::int64_t{axis}}}),
             {r.floats(s)},
             {},
             {},
             0,
             0});
        Dims first = s, second = s;
        first[static_cast<std::size_t>(axis)] = cut;
        second[static_cast<std::size_t>(axis)] = d - cut;
        add({"Split",
             "Split",
             attrs({{"axis", std::int64_t{axis}}}),
             {r.floats(s), detail::CaseMaker::int64s({2}, {cut, d - cut})},
             {false, true},
             {{first, DType::Float32}, {second, DType::Float32}},
             0,
             0});
    }
    {
        const Dims s = r.shape(1, 3, 2, 6);
        const Tensor x = r.floats(s);
        const int axis = r.pick(0, static_cast<int>(s.size()) - 1);
        const auto d = static_cast<int>(s[static_cast<std::size_t>(axis)]);
        const Dims is = r.shape(0, 2, 1, 4);
        // Relay take: out-of-range indices clip or wrap.
        const std::string mode = r.coin() ? "clip" : "wrap";
        add({"take " + mode,
             "take",
             attrs({{"axis", std::int64_t{axis}}, {"mode", mode}}),
             {x, r.ints<std::int32_t>(is, DType::Int32, -2 * d, 2 * d)},
             {},
             {},
             0,
             0});
        add({"take flat",
             "take",
             attrs({{"mode", std::string("clip")}}),
             {x, r.ints<std::int64_t>(is, DType::Int64, -3,
                                      static_cast<int>(x.type.elementCount()) + 3)},
             {},
             {},
             0,
             0});
        // ONNX Gather: negative indices count from the end.
        Dims gathered(s.begin(), s.begin() + axis);
        gathered.insert(gathered.end(), is.begin(), is.end());
        gathered.insert(gathered.end(), s.begin() + axis + 1, s.end());
        add({"Gather",
             "Gather",
             attrs({{"axis", std::int64_t{axis}}}),
             {x, r.ints<std::int64_t>(is, DType::Int64, -d, d - 1)},
             {},
             {{gathered, DType::Float32}},
             0,
             0});
    }
    for (const char* mode : {"constant", "edge", "reflect"}) {
        const Dims s = r.shape(1, 4, 2, 5);
        Dims pads(2 * s.size()), padded = s;
        for (std::size_t d = 0; d < s.size(); ++d) {
            const int most = std::string(mode) == "reflect" ? static_cast<int>(s[d]) - 1 : 3;
            pads[d] = r.pick(0, most);
            pads[d + s.size()] = r.pick(0, most);
            padded[d] += pads[d] + pads[d + s.size()];
        }
        std::vector<Tensor> inputs = {
            r.floats(s), detail::CaseMaker::int64s({static_cast<std::int64_t>(pads.size())}, pads)};
        std::vector<bool> constant = {false, true};
        if (std::string(mode) == "constant") {
            inputs.push_back(detail::CaseMaker::scalar(r.uniform(-2, 2)));
            constant.push_back(true);
        }
        add({std::string("Pad ") + mode,
             "Pad",
             attrs({{"mode", std::string(mode)}}),
             inputs,
             constant,
             {{padded, DType::Float32}},
             0,
             0});
    }
    {
        const float start = r.uniform(-5, 5), delta = r.coin() ? 0.75f : -0.5f;
        const int count = r.pick(1, 20);
        add({"Range float32",
             "Range",
             {},
             {detail::CaseMaker::scalar(start),
              detail::CaseMaker::scalar(start + delta * static_cast<float>(count) - delta / 2),
              detail::CaseMaker::scalar(delta)},
             {},
             {{{count}, DType::Float32}},
             1e-5,
             1e-6});
        const std::int64_t from = r.pick(-10, 10), step = r.pick(1, 3);
        add({"Range int64",
             "Range",
             {},
             {make({}, DType::Int64, std::vector<std::int64_t>{from}),
              make({}, DType::Int64, std::vector<std::int64_t>{from + step * count}),
              make({}, DType::Int64, std::vector<std::int64_t>{step})},
             {},
             {{{count}, DType::Int64}},
             0,
             0});
    }

    // ---- convolution and matrix products
    // -----------------------------------------------------------
    for (int k = 0; k < 3; ++k) {
        const bool onnx = k > 0;
        const bool oneD = k == 2;
        const std::int64_t groups = r.pick(0, 2) == 0 ? r.pick(2, 3) : 1;
        const std::int64_t cin = groups * r.pick(1, 4), cout = groups * r.pick(1, 4);
        const std::int64_t n = r.pick(1, 2), h = oneD ? 1 : r.pick(3, 12), w = r.pick(3, 12);
        const std::int64_t kh = oneD ? 1 : r.pick(1, 3), kw = r.pick(1, 3);
        const std::int64_t sh = oneD ? 1 : r.pick(1, 2), sw = r.pick(1, 3);
        const std::int64_t dh = oneD ? 1 : r.pick(1, 2), dw = r.pick(1, 2);
        const std::int64_t pt = oneD ? 0 : r.pick(0, 2), pb = oneD ? 0 : r.pick(0, 2);
        const std::int64_t pl = r.pick(0, 2), pr = r.pick(0, 2);
        if ((kh - 1) * dh + 1 > h + pt + pb || (kw - 1) * dw + 1 > w + pl + pr)
            continue;
        const std::int64_t oh = detail::windowOut(h, kh, sh, dh, pt, pb);
        const std::int64_t ow = detail::windowOut(w, kw, sw, dw, pl, pr);
        const double tol = 1e-4;
        if (!onnx) {
            add({"nn.conv2d",
                 "nn.conv2d",
                 attrs({{"strides", Dims{sh, sw}},
                        {"dilation", Dims{dh, dw}},
                        {"padding", Dims{pt, pl, pb, pr}},
                        {"groups", groups}}),
                 {r.floats({n, cin, h, w}), r.floats({cout, cin / groups, kh, kw})},
                 {false, true},
                 {},
                 tol,
                 tol});
        } else if (!oneD) {
            add({"Conv",
                 "Conv",
                 attrs({{"strides", Dims{sh, sw}},
                        {"dilations", Dims{dh, dw}},
                        {"pads", Dims{pt, pl, pb, pr}},
                        {"group", groups}}),
                 {r.floats({n, cin, h, w}), r.floats({cout, cin / groups, kh, kw}),
                  r.floats({cout})},
                 {false, true, true},
                 {{{n, cout, oh, ow}, DType::Float32}},
                 tol,
                 tol});
        } else {
            add({"Conv 1-D",
                 "Conv",
                 attrs({{"strides", Dims{sw}},
                        {"dilations", Dims{dw}},
                        {"pads", Dims{pl, pr}},
                        {"group", groups}}),
                 {r.floats({n, cin, w}), r.floats({cout, cin / groups, kw}), r.floats({cout})},
                 {false, true, true},
                 {{{n, cout, ow}, DType::Float32}},
                 tol,
                 tol});
        }
    }
    {
        const std::int64_t m = r.pick(1, 9), n = r.pick(1, 9), k = r.pick(1, 40);
        const double tol = 1e-4;
        add({"nn.dense",
             "nn.dense",
             {},
             {r.floats({m, k}), r.floats({n, k})},
             {false, true},
             {},
             tol,
             tol});
        const bool ta = r.coin(), tb = r.coin();
        add({"nn.matmul",
             "nn.matmul",
             attrs({{"transpose_a", ta}, {"transpose_b", tb}}),
             {r.floats(ta ? Dims{k, m} : Dims{m, k}), r.floats(tb ? Dims{n, k} : Dims{k, n})},
             {},
             {},
             tol,
             tol});
        const std::int64_t batches = r.pick(1, 4), bb = r.coin() ? 1 : batches;
        add({"nn.batch_matmul",
             "nn.batch_matmul",
             attrs({{"transpose_a", ta}, {"transpose_b", tb}}),
             {r.floats(ta ? Dims{batches, k, m} : Dims{batches, m, k}),
              r.floats(tb ? Dims{bb, n, k} : Dims{bb, k, n})},
             {},
             {},
             tol,
             tol});
        const Dims biasShapes[] = {{n}, {m, n}, {1, n}, {m, 1}, {}};
        const Dims bias = biasShapes[r.pick(0, 4)];
        add({"Gemm",
             "Gemm",
             attrs({{"alpha", 0.5},
                    {"beta", 2.0},
                    {"transA", std::int64_t{ta}},
                    {"transB", std::int64_t{tb}}}),
             {r.floats(ta ? Dims{k, m} : Dims{m, k}), r.floats(tb ? Dims{n, k} : Dims{k, n}),
              r.floats(bias)},
             {false, true, true},
             {{{m, n}, DType::Float32}},
             tol,
             tol});
        const std::int64_t p = r.pick(1, 3), q = r.pick(1, 3);
        add({"MatMul broadcast",
             "MatMul",
             {},
             {r.floats({p, 1, m, k}), r.floats({1, q, k, n})},
             {},
             {{{p, q, m, n}, DType::Float32}},
             tol,
             tol});
        add({"MatMul batch by matrix",
             "MatMul",
             {},
             {r.floats({p, m, k}), r.floats({k, n})},
             {},
             {{{p, m, n}, DType::Float32}},
             tol,
             tol});
        add({"MatMul by vector",
             "MatMul",
             {},
             {r.floats({p, m, k}), r.floats({k})},
             {},
             {{{p, m}, DType::Float32}},
             tol,
             tol});
    }

    // ---- pooling, normalisation, softmax
    // -------------------------------------------------------------
    for (const char* op : {"nn.max_pool2d", "nn.avg_pool2d", "MaxPool", "AveragePool"}) {
        const std::string name = op;
        const bool onnx = name[0] != 'n', isMax = name.find("ax") != std::string::npos;
        const std::int64_t n = r.pick(1, 2), c = r.pick(1, 3), h = r.pick(4, 11), w = r.pick(4, 11);
        const std::int64_t kh = r.pick(1, 3), kw = r.pick(1, 3), s = r.pick(1, 2);
        std::int64_t d = isMax ? r.pick(1, 2) : 1;
        const std::int64_t p = std::min<std::int64_t>(r.pick(0, 1), kh / 2);
        const std::int64_t p2 = std::min(p, kw / 2);
        if ((kh - 1) * d + 1 > h + 2 * p || (kw - 1) * d + 1 > w + 2 * p2)
            d = 1; // a dilated window must fit the padded input
        const bool ceil = r.coin(), includePad = r.coin();
        const Tensor x = r.floats({n, c, h, w});
        if (!onnx) {
            Attrs a = attrs({{"pool_size", Dims{kh, kw}},
                             {"strides", Dims{s, s}},
                             {"padding", Dims{p, p2, p, p2}},
                             {"ceil_mode", ceil}});
            if (isMax)
                a.set("dilation", Dims{d, d});
            else
                a.set("count_include_pad", includePad);
            add({name, name, a, {x}, {}, {}, 1e-5, 1e-5});
        } else {
            Attrs a = attrs({{"kernel_shape", Dims{kh, kw}},
                             {"strides", Dims{s, s}},
                             {"pads", Dims{p, p2, p, p2}},
                             {"ceil_mode", std::int64_t{ceil}}});
            if (isMax)
                a.set("dilations", Dims{d, d});
            else
                a.set("count_include_pad", std::int64_t{includePad});
            const std::int64_t oh = detail::windowOut(h, kh, s, d, p, p, ceil);
            const std::int64_t ow = detail::windowOut(w, kw, s, d, p2, p2, ceil);
            add({name, name, a, {x}, {}, {{{n, c, oh, ow}, DType::Float32}}, 1e-5, 1e-5});
        }
    }
    {
        const Dims s = {r.pick(1, 2), r.pick(1, 4), r.pick(1, 9), r.pick(1, 9)};
        const Tensor x = r.floats(s);
        const TensorType pooled{{s[0], s[1], 1, 1}, DType::Float32};
        for (const char* op : {"nn.global_avg_pool2d", "nn.global_max_pool2d"})
            add({op, op, {}, {x}, {}, {}, 1e-5, 1e-5});
        for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"})
            add({op, op, {}, {x}, {}, {pooled}, 1e-5, 1e-5});
        add({"nn.adaptive_avg_pool2d",
             "nn.adaptive_avg_pool2d",
             attrs({{"output_size",
                     Dims{r.pick(1, static_cast<int>(s[2])), r.pick(1, static_cast<int>(s[3]))}}}),
             {x},
             {},
             {},
             1e-5,
             1e-5});
    }
    {
        const Dims s = r.shape(2, 4, 1, 6);
        const bool last = s.size() > 2 && r.coin();
        const std::int64_t axis = last ? static_cast<std::int64_t>(s.size()) - 1 : 1;
        const std::int64_t c = s[static_cast<std::size_t>(axis)];
        const Tensor x = r.floats(s);
        const Tensor gamma = r.floats({c}), beta = r.floats({c}), mean = r.floats({c}),
                     var = r.floats({c}, 0.1f, 2);
        add({"nn.batch_norm",
             "nn.batch_norm",
             attrs({{"axis", axis}, {"epsilon", 1e-3}, {"center", r.coin()}, {"scale", r.coin()}}),
             {x, gamma, beta, mean, var},
             {false, true, true, true, true},
             {},
             1e-5,
             1e-5});
        const Tensor x4 = r.floats({r.pick(1, 2), c, r.pick(1, 5), r.pick(1, 5)});
        add({"BatchNormalization",
             "BatchNormalization",
             attrs({{"epsilon", 1e-5}}),
             {x4, gamma, beta, mean, var},
             {false, true, true, true, true},
             {x4.type},
             1e-5,
             1e-5});
    }
    {
        const Dims s = r.shape(2, 4, 1, 12);
        const Tensor x = r.floats(s, -2, 2);
        const std::int64_t c = s.back();
        add({"nn.layer_norm",
             "nn.layer_norm",
             attrs({{"axis", std::int64_t{-1}}, {"epsilon", 1e-5}}),
             {x, r.floats({c}), r.floats({c})},
             {false, true, true},
             {},
             1e-5,
             1e-4});
        const auto rank = static_cast<std::int64_t>(s.size());
        const std::int64_t axis = r.pick(1, static_cast<int>(rank) - 1);
        const Dims normalized(s.begin() + axis, s.end());
        Dims stats(s.begin(), s.begin() + axis);
        stats.resize(s.size(), 1);
        add({"LayerNormalization",
             "LayerNormalization",
             attrs({{"axis", axis}, {"epsilon", 1e-5}}),
             {x, r.floats(normalized), r.floats(normalized)},
             {false, true, true},
             {x.type, {stats, DType::Float32}, {stats, DType::Float32}},
             1e-5,
             1e-4});
    }
    for (const char* op :
         {"nn.softmax", "nn.log_softmax", "nn.fast_softmax", "Softmax", "LogSoftmax"}) {
        const std::string name = op;
        const Dims s = r.shape(1, 4, 1, 9);
        const Tensor x = r.floats(s, -4, 4);
        const std::int64_t axis =
            r.pick(-static_cast<int>(s.size()), static_cast<int>(s.size()) - 1);
        const bool onnx = name[0] != 'n';
        add({name,
             name,
             attrs({{"axis", axis}}),
             {x},
             {},
             onnx ? std::vector<TensorType>{x.type} : std::vector<TensorType>{},
             1e-6,
             1e-5});
    }

    // ---- functions added with ONNX's conformance suite ------------------------------------------
    for (const char* op :
         {"Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh", "Sign",
          "Softplus", "Softsign", "Elu", "Selu", "Celu", "ThresholdedRelu", "Shrink"}) {
        const Tensor x = r.floats(r.shape(0, 4, 1, 6), -2.9f, 2.9f);
        add({op, op, {}, {x}, {}, {x.type}, kTranscendental, kTranscendental});
    }
    for (const char* op : {"Asin", "Acos", "Atanh"}) {
        const Tensor x = r.floats(r.shape(1, 3, 1, 6), -0.95f, 0.95f);
        add({op, op, {}, {x}, {}, {x.type}, kTranscendental, kTranscendental});
    }
    {
        const Tensor x = r.floats(r.shape(1, 3, 1, 6), 1.05f, 4);
        add({"Acosh", "Acosh", {}, {x}, {}, {x.type}, kTranscendental, kTranscendental});
        std::vector<float> special = {1.f, -INFINITY, NAN, INFINITY, 0.f, -2.f};
        const Tensor y = make({6}, DType::Float32, special);
        add({"IsNaN", "IsNaN", {}, {y}, {}, {{{6}, DType::Bool}}, 0, 0});
        add({"IsInf",
             "IsInf",
             attrs({{"detect_negative", std::int64_t{r.coin()}}}),
             {y},
             {},
             {{{6}, DType::Bool}},
             0,
             0});
        // Clip with its bounds as tensors computed at run time, and with only a max.
        const Tensor z = r.floats(r.shape(1, 3, 1, 6));
        add({"Clip run-time bounds",
             "Clip",
             {},
             {z, detail::CaseMaker::scalar(-0.3f), detail::CaseMaker::scalar(0.4f)},
             {false, false, false},
             {z.type}});
        add({"Clip max only",
             "Clip",
             attrs({{kInputPositionsAttr, Dims{0, 2}}}),
             {z, detail::CaseMaker::scalar(0.2f)},
             {false, true},
             {z.type}});
    }
    for (const char* op : {"GreaterOrEqual", "LessOrEqual"}) {
        auto [a, b] =
            binaryPair([&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, 0, 2); },
                       [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, 0, 2); }, &out);
        add({op, op, {}, {a, b}, {}, {{out, DType::Bool}}, 0, 0});
    }
    {
        auto [a, b] = binaryPair([&](Dims d) { return r.bools(d); },
                                 [&](Dims d) { return r.bools(d); }, &out);
        add({"Xor", "Xor", {}, {a, b}, {}, {{out, DType::Bool}}, 0, 0});
        auto [sa, sb] =
            binaryPair([&](Dims d) { return r.ints<std::uint8_t>(d, DType::UInt8, 0, 40); },
                       [&](Dims d) { return r.ints<std::uint8_t>(d, DType::UInt8, 0, 2); }, &out);
        add({"BitShift right",
             "BitShift",
             attrs({{"direction", std::string("RIGHT")}}),
             {sa, sb},
             {},
             {{out, DType::UInt8}},
             0,
             0});
        add({"BitShift left",
             "BitShift",
             attrs({{"direction", std::string("LEFT")}}),
             {sa, sb},
             {},
             {{out, DType::UInt8}},
             0,
             0});
        auto [ia, ib] = binaryPair(
            [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, -20, 20); },
            [&](Dims d) { return r.ints<std::int32_t>(d, DType::Int32, -6, 6, true); }, &out);
        add({"Mod int32", "Mod", {}, {ia, ib}, {}, {{out, DType::Int32}}, 0, 0});
        auto [fa, fb] = binaryPair([&](Dims d) { return r.floats(d, -4, 4); },
                                   [&](Dims d) { return r.awayFromZero(d, 0.5f, 2); }, &out);
        add({"Mod fmod",
             "Mod",
             attrs({{"fmod", std::int64_t{1}}}),
             {fa, fb},
             {},
             {{out, DType::Float32}},
             1e-5,
             1e-5});
        auto [pa, pb] = binaryPair([&](Dims d) { return r.floats(d); },
                                   [&](Dims d) { return r.floats(d, 0, 0.5f); }, &out);
        add({"PRelu", "PRelu", {}, {pa, pb}, {}, {{out, DType::Float32}}});
        const Dims o = r.shape(1, 3, 1, 5);
        add({"Sum of three",
             "Sum",
             {},
             {r.floats(o), r.floats(r.broadcastPartner(o)), r.floats(r.broadcastPartner(o))},
             {},
             {{o, DType::Float32}}});
        auto [wa, wb] =
            binaryPair([&](Dims d) { return r.floats(d, 0.1f, 2); },
                       [&](Dims d) { return r.ints<std::int64_t>(d, DType::Int64, -2, 3); }, &out);
        add({"Pow int64 exponent",
             "Pow",
             {},
             {wa, wb},
             {},
             {{out, DType::Float32}},
             kTranscendental,
             kTranscendental});
    }
    for (const char* op : {"ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                           "ReduceSumSquare"}) {
        const Dims s = r.shape(2, 4, 2, 5);
        const Tensor x = r.floats(s, 0.5f, 1.5f);
        const std::int64_t axis = r.pick(0, static_cast<int>(s.size()) - 1);
        Dims kept = s;
        kept[static_cast<std::size_t>(axis)] = 1;
        add({op, op, attrs({{"axes", Dims{axis}}}), {x}, {}, {{kept, DType::Float32}}, 1e-5, 1e-4});
    }
    for (const char* op : {"ArgMax", "ArgMin"}) {
        const Dims s = r.shape(1, 4, 1, 6);
        const Tensor x = r.ints<std::int32_t>(s, DType::Int32, 0, 3); // ties happen
        const std::int64_t axis = r.pick(0, static_cast<int>(s.size()) - 1);
        Dims kept = s;
        kept[static_cast<std::size_t>(axis)] = 1;
        add({op,
             op,
             attrs({{"axis", axis}, {"select_last_index", std::int64_t{r.coin()}}}),
             {x},
             {},
             {{kept, DType::Int64}},
             0,
             0});
    }

    // ---- indexing and layout (kernels/IndexingPlan.h) -------------------------------------------
    {
        const Dims s = r.shape(1, 4, 1, 5);
        const int axis = r.pick(0, static_cast<int>(s.size()) - 1);
        Dims is = s;
        is[static_cast<std::size_t>(axis)] = r.pick(1, 4);
        const auto dim = static_cast<int>(s[static_cast<std::size_t>(axis)]);
        const Tensor data = r.floats(s);
        const Tensor indices = r.ints<std::int64_t>(is, DType::Int64, -dim, dim - 1);
        add({"GatherElements",
             "GatherElements",
             attrs({{"axis", std::int64_t{axis}}}),
             {data, indices},
             {},
             {{is, DType::Float32}},
             0,
             0});
        Dims us = s;
        us[static_cast<std::size_t>(axis)] = r.pick(1, dim);
        const Tensor scatterIndices = r.ints<std::int64_t>(us, DType::Int64, -dim, dim - 1);
        for (const char* reduction : {"none", "add", "mul"})
            add({std::string("ScatterElements ") + reduction,
                 "ScatterElements",
                 attrs({{"axis", std::int64_t{axis}}, {"reduction", std::string(reduction)}}),
                 {data, scatterIndices, r.floats(us)},
                 {},
                 {{s, DType::Float32}},
                 1e-6,
                 1e-6});
    }
    {
        const Dims s = {r.pick(1, 4), r.pick(1, 4), r.pick(1, 3)};
        const Tensor data = r.floats(s);
        const std::int64_t rows = r.pick(1, 4);
        std::vector<std::int64_t> tuples;
        for (std::int64_t i = 0; i < rows; ++i) {
            tuples.push_back(r.pick(0, static_cast<int>(s[0]) - 1));
            tuples.push_back(r.pick(0, static_cast<int>(s[1]) - 1));
        }
        const Tensor indices = detail::CaseMaker::int64s({rows, 2}, tuples);
        add({"GatherND",
             "GatherND",
             {},
             {data, indices},
             {},
             {{{rows, s[2]}, DType::Float32}},
             0,
             0});
        add({"ScatterND add",
             "ScatterND",
             attrs({{"reduction", std::string("add")}}),
             {data, indices, r.floats({rows, s[2]})},
             {},
             {{s, DType::Float32}},
             1e-6,
             1e-6});
    }
    {
        const Dims s = r.shape(1, 3, 1, 4);
        const std::int64_t depth = r.pick(2, 6);
        const Tensor indices = r.ints<std::int64_t>(s, DType::Int64, -static_cast<int>(depth),
                                                    static_cast<int>(depth) - 1);
        const int axis = r.pick(-1, static_cast<int>(s.size()));
        Dims os = s;
        os.insert(os.begin() + (axis < 0 ? static_cast<std::ptrdiff_t>(os.size()) : axis), depth);
        add({"OneHot",
             "OneHot",
             attrs({{"axis", std::int64_t{axis}}}),
             {indices, detail::CaseMaker::int64s({}, {depth}),
              make({2}, DType::Float32, std::vector<float>{-1.5f, 2.5f})},
             {false, true, false},
             {{os, DType::Float32}},
             0,
             0});
    }
    {
        const Dims s = r.shape(2, 4, 1, 6);
        const Tensor x = r.floats(s);
        add({"Trilu",
             "Trilu",
             attrs({{"upper", std::int64_t{r.coin()}}}),
             {x, detail::CaseMaker::int64s({}, {r.pick(-2, 2)})},
             {false, false},
             {x.type},
             0,
             0});
        const std::int64_t axis =
            r.pick(-static_cast<int>(s.size()), static_cast<int>(s.size()) - 1);
        add({"CumSum",
             "CumSum",
             attrs({{"exclusive", std::int64_t{r.coin()}}, {"reverse", std::int64_t{r.coin()}}}),
             {x, detail::CaseMaker::int64s({}, {axis})},
             {false, false},
             {x.type},
             1e-5,
             1e-5});
        add({"Hardmax",
             "Hardmax",
             attrs({{"axis", axis}}),
             {r.ints<std::int32_t>(s, DType::Int32, 0, 2)},
             {},
             {{s, DType::Int32}},
             0,
             0});
        const std::int64_t k = r.pick(1, static_cast<int>(s.back()));
        Dims ks = s;
        ks.back() = k;
        add({"TopK",
             "TopK",
             attrs({{"largest", std::int64_t{r.coin()}}}),
             {r.ints<std::int32_t>(s, DType::Int32, 0, 4), detail::CaseMaker::int64s({1}, {k})},
             {false, true},
             {{ks, DType::Int32}, {ks, DType::Int64}},
             0,
             0});
    }
    {
        const std::int64_t b = r.pick(1, 3);
        const Dims s = {r.pick(1, 2), b * b * r.pick(1, 2), r.pick(1, 3), r.pick(1, 3)};
        const Tensor x = r.floats(s);
        for (const char* mode : {"DCR", "CRD"})
            add({std::string("DepthToSpace ") + mode,
                 "DepthToSpace",
                 attrs({{"blocksize", b}, {"mode", std::string(mode)}}),
                 {x},
                 {},
                 {{{s[0], s[1] / (b * b), s[2] * b, s[3] * b}, DType::Float32}},
                 0,
                 0});
        const Tensor y = r.floats({s[0], s[1], s[2] * b, s[3] * b});
        add({"SpaceToDepth",
             "SpaceToDepth",
             attrs({{"blocksize", b}}),
             {y},
             {},
             {{{s[0], s[1] * b * b, s[2], s[3]}, DType::Float32}},
             0,
             0});
    }
    for (const char* mode : {"nearest", "linear", "cubic"}) {
        const Dims s = {1, r.pick(1, 2), r.pick(2, 5), r.pick(2, 5)};
        const Dims o = {1, s[1], r.pick(1, 8), r.pick(1, 8)};
        static const char* const kTransforms[] = {"half_pixel", "asymmetric", "align_corners",
                                                  "pytorch_half_pixel"};
        add({std::string("Resize ") + mode,
             "Resize",
             attrs({{"mode", std::string(mode)},
                    {"coordinate_transformation_mode", std::string(kTransforms[r.pick(0, 3)])},
                    {kInputPositionsAttr, Dims{0, 3}}}),
             {r.floats(s), detail::CaseMaker::int64s({4}, o)},
             {false, true},
             {{o, DType::Float32}},
             1e-5,
             1e-5});
    }
    {
        const std::int64_t groups = r.pick(1, 2);
        const std::int64_t c = groups * r.pick(1, 2), m = groups * r.pick(1, 2);
        const Dims in = {r.pick(1, 2), c, r.pick(1, 4), r.pick(1, 4)};
        const std::int64_t k = r.pick(1, 3), stride = r.pick(1, 2), pad = r.pick(0, k - 1);
        Dims os = {in[0], m};
        for (std::size_t d = 2; d < 4; ++d)
            os.push_back(stride * (in[d] - 1) + k - 2 * pad);
        add({"ConvTranspose",
             "ConvTranspose",
             attrs({{"group", groups},
                    {"strides", Dims{stride, stride}},
                    {"pads", Dims{pad, pad, pad, pad}}}),
             {r.floats(in), r.floats({c, m / groups, k, k}), r.floats({m})},
             {true, true, true},
             {{os, DType::Float32}},
             1e-5,
             1e-5});
    }
    {
        const Dims s = {r.pick(1, 2), r.pick(1, 6), r.pick(1, 4), r.pick(1, 4)};
        add({"LRN",
             "LRN",
             attrs({{"size", std::int64_t{r.pick(1, 4)}}, {"alpha", 0.01}}),
             {r.floats(s)},
             {},
             {{s, DType::Float32}},
             1e-5,
             1e-5});
        add({"InstanceNormalization",
             "InstanceNormalization",
             {},
             {r.floats(s), r.floats({s[1]}), r.floats({s[1]})},
             {},
             {{s, DType::Float32}},
             1e-5,
             1e-4});
        const Dims m = {r.pick(1, 5), r.pick(1, 5)};
        add({"EyeLike",
             "EyeLike",
             attrs({{"k", std::int64_t{r.pick(-2, 2)}}}),
             {r.floats(m)},
             {},
             {{m, DType::Float32}},
             0,
             0});
    }

    {
        const Dims s = {r.pick(1, 2), r.pick(1, 4), r.pick(1, 4)};
        const Tensor x = r.floats(s, -3, 3);
        const Tensor scale = r.floats({s[1]}, 0.01f, 0.05f);
        const Tensor zero = r.ints<std::int8_t>({s[1]}, DType::Int8, -10, 10);
        add({"QuantizeLinear per channel",
             "QuantizeLinear",
             attrs({{"axis", std::int64_t{1}}}),
             {x, scale, zero},
             {},
             {{s, DType::Int8}},
             0,
             0});
        const Tensor q = r.ints<std::uint8_t>(s, DType::UInt8, 0, 255);
        add({"DequantizeLinear",
             "DequantizeLinear",
             {},
             {q, detail::CaseMaker::scalar(0.02f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{128})},
             {},
             {{s, DType::Float32}},
             1e-6,
             1e-6});
        add({"Mean of three",
             "Mean",
             {},
             {r.floats(s), r.floats(r.broadcastPartner(s)), r.floats(r.broadcastPartner(s))},
             {},
             {{s, DType::Float32}},
             1e-6,
             1e-6});
        std::vector<std::int64_t> lengths;
        for (std::int64_t b = 0; b < s[1]; ++b)
            lengths.push_back(r.pick(0, static_cast<int>(s[0])));
        add({"ReverseSequence",
             "ReverseSequence",
             attrs({{"time_axis", std::int64_t{0}}, {"batch_axis", std::int64_t{1}}}),
             {x, detail::CaseMaker::int64s({s[1]}, lengths)},
             {},
             {{s, DType::Float32}},
             0,
             0});
    }
    for (const char* mode : {"nearest", "bilinear", "bicubic"}) {
        const Dims in = {1, r.pick(1, 2), r.pick(2, 5), r.pick(2, 5)};
        const std::int64_t h = r.pick(1, 4), w = r.pick(1, 4);
        static const char* const kPadding[] = {"zeros", "border", "reflection"};
        add({std::string("GridSample ") + mode,
             "GridSample",
             attrs({{"mode", std::string(mode)},
                    {"padding_mode", std::string(kPadding[r.pick(0, 2)])},
                    {"align_corners", std::int64_t{r.coin()}}}),
             {r.floats(in), r.floats({1, h, w, 2}, -1.2f, 1.2f)},
             {},
             {{{1, in[1], h, w}, DType::Float32}},
             1e-5,
             1e-5});
    }
    {
        const std::int64_t b = r.pick(1, 3), i = r.pick(1, 4), j = r.pick(1, 4), k = r.pick(1, 4);
        add({"Einsum batch matmul",
             "Einsum",
             attrs({{"equation", std::string("bij,bjk->bik")}}),
             {r.floats({b, i, j}), r.floats({b, j, k})},
             {},
             {{{b, i, k}, DType::Float32}},
             1e-5,
             1e-5});
        add({"Einsum diagonal",
             "Einsum",
             attrs({{"equation", std::string("...ii->...i")}}),
             {r.floats({b, i, i})},
             {},
             {{{b, i}, DType::Float32}},
             0,
             0});
    }
    for (const char* op : {"RNN", "GRU", "LSTM"}) {
        const std::string name = op;
        const int gates = name == "LSTM" ? 4 : name == "GRU" ? 3 : 1;
        const std::int64_t steps = r.pick(1, 4), batch = r.pick(1, 3), input = r.pick(1, 4),
                           hidden = r.pick(1, 5);
        const std::int64_t dirs = r.coin() ? 2 : 1;
        add({name,
             name,
             attrs({{"hidden_size", hidden},
                    {"direction", std::string(dirs == 2 ? "bidirectional" : "forward")}}),
             {r.floats({steps, batch, input}), r.floats({dirs, gates * hidden, input}),
              r.floats({dirs, gates * hidden, hidden}), r.floats({dirs, 2 * gates * hidden})},
             {false, true, true, true},
             {{{steps, dirs, batch, hidden}, DType::Float32},
              {{dirs, batch, hidden}, DType::Float32}},
             1e-5,
             1e-5});
    }

    {
        const Dims s = {1, r.pick(1, 2), r.pick(1, 3), r.pick(1, 3)};
        const Dims o = {1, s[1], s[2] * 2, s[3] * 2};
        const std::int64_t count = 1 * s[1] * s[2] * s[3];
        std::vector<std::int64_t> positions;
        for (std::int64_t i = 0; i < count; ++i) // distinct positions within each channel
            positions.push_back((i / (s[2] * s[3])) * o[2] * o[3] + 2 * (i % (s[2] * s[3])) +
                                r.pick(0, 1));
        add({"MaxUnpool",
             "MaxUnpool",
             attrs({{"kernel_shape", Dims{2, 2}}, {"strides", Dims{2, 2}}}),
             {r.floats(s), detail::CaseMaker::int64s(s, positions)},
             {},
             {{o, DType::Float32}},
             0,
             0});
        const std::int64_t n = r.pick(1, 4);
        add({"Det", "Det", {}, {r.floats({2, n, n})}, {}, {{{2}, DType::Float32}}, 1e-5, 1e-5});
    }

    {
        const std::int64_t m = r.pick(1, 4), k = r.pick(1, 4), n = r.pick(1, 4);
        const Tensor a = r.ints<std::uint8_t>({m, k}, DType::UInt8, 0, 255);
        const Tensor b = r.ints<std::int8_t>({k, n}, DType::Int8, -128, 127);
        const Tensor az = make({}, DType::UInt8, std::vector<std::uint8_t>{12});
        add({"MatMulInteger", "MatMulInteger", {}, {a, b, az}, {}, {{{m, n}, DType::Int32}}, 0, 0});
        // ONNX Runtime's RMSNorm: over the last dimension, and input + skip (+ bias) with the sum.
        const Dims rowsShape = {r.pick(1, 3), r.pick(1, 4), r.pick(2, 9)};
        add({"SimplifiedLayerNormalization",
             "SimplifiedLayerNormalization",
             attrs({{"epsilon", 1e-3}}),
             {r.floats(rowsShape), r.floats({rowsShape[2]})},
             {},
             {{rowsShape, DType::Float32}},
             1e-5,
             1e-4,
             17});
        add({"SkipSimplifiedLayerNormalization",
             "com.microsoft.SkipSimplifiedLayerNormalization",
             {},
             {r.floats(rowsShape), r.floats(rowsShape), r.floats({rowsShape[2]}),
              r.floats({rowsShape[2]})},
             {},
             {{rowsShape, DType::Float32},
              {Dims{0}, DType::Float32},
              {Dims{0}, DType::Float32},
              {rowsShape, DType::Float32}},
             1e-5,
             1e-4,
             17});
        // ONNX Runtime's GroupQueryAttention (a decode chunk after a cache, rotary positions
        // inside) and RotaryEmbedding (position ids): tests/models/contrib_node_tests holds
        // ONNX Runtime's own outputs for these and more forms.
        {
            const std::int64_t b = r.pick(1, 2), s = r.pick(1, 3), past = r.pick(1, 4);
            const std::int64_t kv = r.pick(1, 2), heads = kv * r.pick(1, 2), h = 8;
            const auto total = static_cast<std::int32_t>(past + s);
            const Tensor lengths =
                make({b}, DType::Int32,
                     std::vector<std::int32_t>(static_cast<std::size_t>(b), total - 1));
            const Tensor length = make({1}, DType::Int32, std::vector<std::int32_t>{total});
            const Dims present = {b, kv, past + s, h};
            add({"GroupQueryAttention",
                 "com.microsoft.GroupQueryAttention",
                 attrs({{"num_heads", std::int64_t{heads}},
                        {"kv_num_heads", std::int64_t{kv}},
                        {"do_rotary", std::int64_t{1}}}),
                 {r.floats({b, s, heads * h}), r.floats({b, s, kv * h}), r.floats({b, s, kv * h}),
                  r.floats({b, kv, past, h}), r.floats({b, kv, past, h}), lengths, length,
                  r.floats({16, h / 2}), r.floats({16, h / 2})},
                 {},
                 {{{b, s, heads * h}, DType::Float32},
                  {present, DType::Float32},
                  {present, DType::Float32}},
                 1e-5,
                 1e-4,
                 17});
            const Tensor positions = r.ints<std::int64_t>({b, s}, DType::Int64, 0, 15);
            add({"RotaryEmbedding",
                 "com.microsoft.RotaryEmbedding",
                 attrs({{"num_heads", std::int64_t{heads}}}),
                 {r.floats({b, s, heads * h}), positions, r.floats({16, h / 2}),
                  r.floats({16, h / 2})},
                 {},
                 {{{b, s, heads * h}, DType::Float32}},
                 1e-5,
                 1e-4,
                 17});
        }
        // MatMulNBits: 4-bit codes in blocks of 16 along a K that is not a multiple of it, zero
        // points packed, and a bias (ONNX inputs 0, 1, 2, 3 and 5).
        const std::int64_t depth = r.pick(17, 40), rows = r.pick(1, 3), cols = r.pick(1, 5);
        const std::int64_t blocks = (depth + 15) / 16;
        Attrs nbits = attrs({{"K", depth},
                             {"N", cols},
                             {"bits", std::int64_t{4}},
                             {"block_size", std::int64_t{16}}});
        nbits.set(kInputPositionsAttr, std::vector<std::int64_t>{0, 1, 2, 3, 5});
        add({"MatMulNBits",
             "com.microsoft.MatMulNBits",
             nbits,
             {r.floats({rows, depth}),
              r.ints<std::uint8_t>({cols, blocks, 8}, DType::UInt8, 0, 255),
              r.floats({cols * blocks}),
              r.ints<std::uint8_t>({cols * ((blocks + 1) / 2)}, DType::UInt8, 0, 255),
              r.floats({cols})},
             {},
             {{{rows, cols}, DType::Float32}},
             1e-4,
             1e-4});
        add({"QLinearMatMul",
             "QLinearMatMul",
             {},
             {a, detail::CaseMaker::scalar(0.02f), az,
              r.ints<std::uint8_t>({k, n}, DType::UInt8, 0, 255), detail::CaseMaker::scalar(0.01f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{100}),
              detail::CaseMaker::scalar(0.3f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{128})},
             {},
             {{{m, n}, DType::UInt8}},
             0,
             0});
        const Dims x = {1, r.pick(1, 3), r.pick(2, 5), r.pick(2, 5)};
        const std::int64_t oc = r.pick(1, 3);
        const Tensor xi = r.ints<std::uint8_t>(x, DType::UInt8, 0, 255);
        const Tensor wi = r.ints<std::uint8_t>({oc, x[1], 2, 2}, DType::UInt8, 0, 255);
        add({"ConvInteger",
             "ConvInteger",
             attrs({{"pads", Dims{1, 1, 1, 1}}}),
             {xi, wi, make({}, DType::UInt8, std::vector<std::uint8_t>{3})},
             {},
             {{{1, oc, x[2] + 1, x[3] + 1}, DType::Int32}},
             0,
             0});
        add({"QLinearConv",
             "QLinearConv",
             {},
             {xi, detail::CaseMaker::scalar(0.01f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{5}), wi,
              detail::CaseMaker::scalar(0.02f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{7}), detail::CaseMaker::scalar(0.5f),
              make({}, DType::UInt8, std::vector<std::uint8_t>{9})},
             {},
             {{{1, oc, x[2] - 1, x[3] - 1}, DType::UInt8}},
             0,
             0});
    }

    // Outputs from the shape function where a case left them out.
    for (OpCase& c : cases) {
        if (!c.outputs.empty())
            continue;
        const OpDef* def = OpRegistry::global().find(c.op);
        if (!def || !def->inferShape)
            qFatal("case %s: no outputs and no shape function", c.name.c_str());
        std::vector<TensorType> types;
        for (const Tensor& t : c.inputs)
            types.push_back(t.type);
        const ShapeResult shape = def->inferShape(types, c.attrs);
        if (!shape.error.empty())
            qFatal("case %s: %s", c.name.c_str(), shape.error.c_str());
        c.outputs = shape.outputs;
    }
    // ---- signal, text and training operators -------------------------------------------------
    {
        const Dims x = {1, r.pick(1, 3), r.pick(3, 6), r.pick(3, 6)};
        const std::int64_t rois = r.pick(1, 3);
        std::vector<float> boxes;
        for (std::int64_t i = 0; i < rois; ++i) {
            const float x0 = r.uniform(0, 2), y0 = r.uniform(0, 2);
            boxes.insert(boxes.end(), {x0, y0, x0 + r.uniform(0.5f, 3), y0 + r.uniform(0.5f, 3)});
        }
        const std::int64_t oh = r.pick(1, 3), ow = r.pick(1, 3);
        add({"RoiAlign",
             "RoiAlign",
             attrs({{"output_height", oh},
                    {"output_width", ow},
                    {"sampling_ratio", std::int64_t{r.pick(0, 2)}},
                    {"mode", std::string(r.coin() ? "avg" : "max")}}),
             {r.floats(x), make({rois, 4}, DType::Float32, boxes),
              detail::CaseMaker::int64s({rois}, std::vector<std::int64_t>(rois, 0))},
             {},
             {{{rois, x[1], oh, ow}, DType::Float32}},
             1e-5,
             1e-5});
        const std::int64_t n = r.pick(2, 8);
        const bool onesided = r.coin();
        add({"DFT",
             "DFT",
             attrs({{"axis", std::int64_t{1}},
                    {"onesided", std::int64_t{onesided}},
                    {"inverse", std::int64_t{r.coin() && !onesided}}}),
             {r.floats({2, n, 1})},
             {},
             {{{2, onesided ? n / 2 + 1 : n, 2}, DType::Float32}},
             1e-5,
             1e-4});
        const std::int64_t frame = r.pick(2, 4), step = r.pick(1, 2), length = r.pick(4, 9);
        add({"STFT",
             "STFT",
             {},
             {r.floats({1, length, 1}), detail::CaseMaker::int64s({}, {step}),
              r.floats({frame}, 0, 1)},
             {false, true},
             {{{1, (length - frame) / step + 1, frame / 2 + 1, 2}, DType::Float32}},
             1e-5,
             1e-4});
        const std::int64_t bins = r.pick(2, 6), dftLength = 16;
        add({"MelWeightMatrix",
             "MelWeightMatrix",
             {},
             {detail::CaseMaker::int64s({}, {bins}), detail::CaseMaker::int64s({}, {dftLength}),
              detail::CaseMaker::int64s({}, {8000}), detail::CaseMaker::scalar(0),
              detail::CaseMaker::scalar(r.uniform(2000, 4000))},
             {true, true},
             {{{dftLength / 2 + 1, bins}, DType::Float32}},
             0,
             0});
        // Unigrams 2 and 3, bigrams (2, 3) and (4, 2).
        add({"TfIdfVectorizer",
             "TfIdfVectorizer",
             attrs({{"min_gram_length", std::int64_t{1}},
                    {"max_gram_length", std::int64_t{2}},
                    {"max_skip_count", std::int64_t{r.pick(0, 2)}},
                    {"mode", std::string("TF")},
                    {"ngram_counts", Dims{0, 2}},
                    {"ngram_indexes", Dims{0, 1, 2, 3}},
                    {"pool_int64s", Dims{2, 3, 2, 3, 4, 2}}}),
             {r.ints<std::int64_t>({2, r.pick(1, 8)}, DType::Int64, 1, 4)},
             {},
             {{{2, 4}, DType::Float32}},
             0,
             0});
    }

    {
        const Dims s = r.shape(1, 2, 1, 5);
        const Tensor rate = detail::CaseMaker::scalar(0.1f);
        const Tensor step = detail::CaseMaker::int64s({}, {r.pick(0, 3)});
        add({"Adagrad",
             "Adagrad",
             attrs({{"decay_factor", 0.1}, {"epsilon", 1e-6}, {"norm_coefficient", 0.01}}),
             {rate, step, r.floats(s), r.floats(s), r.floats(s, 0, 1)},
             {},
             {{s, DType::Float32}, {s, DType::Float32}},
             1e-5,
             1e-5});
        add({"Momentum",
             "Momentum",
             attrs({{"alpha", 0.9},
                    {"beta", 0.5},
                    {"norm_coefficient", 0.01},
                    {"mode", std::string(r.coin() ? "standard" : "nesterov")}}),
             {rate, step, r.floats(s), r.floats(s), r.floats(s)},
             {},
             {{s, DType::Float32}, {s, DType::Float32}},
             1e-5,
             1e-5});
        add({"Adam",
             "Adam",
             attrs({{"alpha", 0.9}, {"beta", 0.999}, {"norm_coefficient", 0.01}}),
             {rate, step, r.floats(s), r.floats(s), r.floats(s), r.floats(s, 0, 1)},
             {},
             {{s, DType::Float32}, {s, DType::Float32}, {s, DType::Float32}},
             1e-5,
             1e-5});
    }

    // ---- random operators: seeded draws, the same on every backend -----------------------------
    {
        const Dims s = r.shape(1, 3, 1, 6);
        const double seed = static_cast<double>(r.pick(0, 1000));
        add({"RandomUniform",
             "RandomUniform",
             attrs({{"low", -2.0}, {"high", 3.0}, {"seed", seed}}),
             {},
             {},
             {{s, DType::Float32}},
             1e-6,
             1e-6});
        add({"RandomNormal",
             "RandomNormal",
             attrs({{"mean", 1.0}, {"scale", 0.5}, {"seed", seed}}),
             {},
             {},
             {{s, DType::Float64}},
             1e-9,
             1e-9});
        add({"RandomUniformLike",
             "RandomUniformLike",
             attrs({{"seed", seed}}),
             {r.floats(s)},
             {},
             {{s, DType::Float32}},
             1e-6,
             1e-6});
        add({"RandomNormalLike",
             "RandomNormalLike",
             {},
             {r.floats(s)},
             {},
             {{s, DType::Float32}},
             1e-5,
             1e-5});
        add({"Bernoulli",
             "Bernoulli",
             attrs({{"seed", seed}}),
             {r.floats(s, 0, 1)},
             {},
             {{s, DType::Float32}},
             0,
             0});
        const std::int64_t batch = r.pick(1, 3), classes = r.pick(1, 5), samples = r.pick(1, 6);
        add({"Multinomial",
             "Multinomial",
             attrs({{"sample_size", samples}, {"seed", seed}}),
             {r.floats({batch, classes}, -2, 2)},
             {},
             {{{batch, samples}, DType::Int32}},
             0,
             0});
    }

    // ---- outputs whose extent the data decides: the inputs make them fill their bound, so that
    // the whole planned storage is compared -----------------------------------------------------
    {
        const Dims s = r.shape(1, 3, 1, 4);
        const std::int64_t count = TensorType{s, DType::Float32}.elementCount();
        add({"NonZero",
             "NonZero",
             {},
             {r.awayFromZero(s, 0.5f, 2)},
             {},
             {{{static_cast<std::int64_t>(s.size()), count}, DType::Int64}},
             0,
             0});
        {
            // Stop words (with or without case) dropped, then case changed; none left is "".
            const std::int64_t c = r.pick(1, 6);
            const Tensor words = r.strings(r.coin() ? Dims{c} : Dims{1, c},
                                           {"monday", "Monday", "tuesday", "Straße", "x", ""});
            const char* actions[] = {"NONE", "LOWER", "UPPER"};
            add({"StringNormalizer",
                 "StringNormalizer",
                 attrs({{"case_change_action", std::string(actions[r.pick(0, 2)])},
                        {"is_case_sensitive", std::int64_t{r.coin()}},
                        {"stopwords", joinStringList({"monday", "x"})},
                        {"stopwords.strings", true}}),
                 {words},
                 {},
                 {words.type},
                 0,
                 0});
        }
        add({"Compress",
             "Compress",
             attrs({{"axis", std::int64_t{0}}}),
             {r.floats(s), make({s[0]}, DType::Bool, std::vector<std::uint8_t>(s[0], 1))},
             {},
             {{s, DType::Float32}},
             0,
             0});
        std::vector<std::int64_t> distinct(static_cast<std::size_t>(count));
        std::iota(distinct.begin(), distinct.end(), std::int64_t{0});
        std::shuffle(distinct.begin(), distinct.end(), std::mt19937(static_cast<unsigned>(count)));
        add({"Unique",
             "Unique",
             attrs({{"sorted", std::int64_t{r.coin()}}}),
             {detail::CaseMaker::int64s({count}, distinct)},
             {},
             {{{count}, DType::Int64},
              {{count}, DType::Int64},
              {{count}, DType::Int64},
              {{count}, DType::Int64}},
             0,
             0});
        const std::int64_t boxes = r.pick(1, 4), classes = r.pick(1, 2);
        add({"NonMaxSuppression",
             "NonMaxSuppression",
             {},
             {r.floats({1, boxes, 4}, 0, 4), r.floats({1, classes, boxes}, 0, 1),
              detail::CaseMaker::int64s({}, {boxes}), detail::CaseMaker::scalar(1.0f)},
             {},
             {{{classes * boxes, 3}, DType::Int64}},
             0,
             0});
    }

    // Control flow: the bodies run node by node with the device's own kernels, reading a
    // captured outer value.
    {
        const Dims s = r.shape(1, 3, 1, 5);
        const TensorType t{s, DType::Float32};
        const Tensor x = r.floats(s), w = r.floats(s);
        auto body =
            [&](std::vector<TensorType> params,
                const std::function<std::vector<ValueRef>(Graph&, std::vector<ValueRef>)>& build) {
                auto graph = std::make_shared<Graph>();
                std::vector<ValueRef> values;
                for (std::size_t k = 0; k < params.size(); ++k) {
                    Node p;
                    p.name = "p" + std::to_string(k);
                    p.op = &OpRegistry::global().parameter();
                    p.outputs = {params[k]};
                    values.push_back(ValueRef{graph->addNode(std::move(p)), 0});
                }
                for (const ValueRef& out : build(*graph, values))
                    graph->addOutput(GraphOutput{out, DeviceId(), ""});
                return std::shared_ptr<const Graph>(graph);
            };
        auto op = [](Graph& g, const char* name, std::vector<ValueRef> inputs, TensorType type) {
            Node n;
            n.name = g.uniqueName(name);
            n.op = OpRegistry::global().find(name);
            n.inputs = std::move(inputs);
            n.outputs = {std::move(type)};
            return ValueRef{g.addNode(std::move(n)), 0};
        };
        const TensorType flag{{}, DType::Bool};
        for (const bool condition : {true, false}) {
            OpCase c{"If", "If",
                     {},   {make({}, DType::Bool, std::vector<std::uint8_t>{condition}), x, w},
                     {},   {t}};
            c.subgraphs = {
                {"then_branch",
                 body({t, t}, [&](Graph& g, auto p) { return std::vector{op(g, "Add", p, t)}; }),
                 nullptr},
                {"else_branch",
                 body({t, t}, [&](Graph& g, auto p) { return std::vector{op(g, "Mul", p, t)}; }),
                 nullptr}};
            c.captures = 2;
            add(std::move(c));
        }
        {
            const std::int64_t trips = r.pick(0, 4);
            TensorType stacked = t;
            stacked.shape.insert(stacked.shape.begin(), trips);
            OpCase c{"Loop", "Loop",      {}, {detail::CaseMaker::int64s({}, {trips}), x, w},
                     {true}, {t, stacked}};
            c.attrs.set(kInputPositionsAttr, std::vector<std::int64_t>{0, 2});
            c.subgraphs = {{"body",
                            body({TensorType{{}, DType::Int64}, flag, t, t},
                                 [&](Graph& g, auto p) {
                                     const ValueRef sum = op(g, "Add", {p[2], p[3]}, t);
                                     return std::vector{op(g, "Identity", {p[1]}, flag), sum,
                                                        op(g, "Tanh", {sum}, t)};
                                 }),
                            nullptr}};
            c.captures = 1;
            add(std::move(c));
        }
        {
            // A state of one row, scanned over x's first axis backwards, stacked on the last.
            Dims row(s.begin() + 1, s.end());
            const TensorType slice{row, DType::Float32};
            Dims outShape = row;
            outShape.push_back(s[0]);
            OpCase c{
                "Scan", "Scan", {}, {r.floats(row), x}, {}, {slice, {outShape, DType::Float32}}};
            c.attrs.set("num_scan_inputs", std::int64_t{1});
            c.attrs.set("scan_input_directions", std::vector<std::int64_t>{1});
            c.attrs.set("scan_output_axes", std::vector<std::int64_t>{-1});
            c.subgraphs = {{"body",
                            body({slice, slice},
                                 [&](Graph& g, auto p) {
                                     const ValueRef next = op(g, "Add", p, slice);
                                     return std::vector{next, op(g, "Sigmoid", {next}, slice)};
                                 }),
                            nullptr}};
            add(std::move(c));
        }
    }

    return cases;
}

/// Runs one case on the CPU kernels (the reference); empty with *error on failure.
inline std::vector<HostTensor> runOnDevice(Device& device, const OpCase& c, std::string* error);

inline std::vector<HostTensor> runOnCpu(const OpCase& c, std::string* error) {
    if (!c.subgraphs.empty()) {
        // Control flow has no kernel of its own: its bodies run on a CPU device's kernels.
        static DeviceRegistry registry;
        static Device* cpu = registry.freshVCpu();
        return runOnDevice(*cpu, c, error);
    }
    const auto outputs = runOp(c.op, c.attrs, c.inputs, c.outputs, error, c.constant, c.opset);
    std::vector<HostTensor> host;
    for (const Tensor& t : outputs)
        host.push_back(toHost(t));
    return host;
}

/// Runs one case on `device` the way the executor does: inputs copied into the device's memory,
/// the kernel prepared by the device and run on its worker (compute lane), results copied out.
/// Empty with *error on failure.
/// The case's kernel as `device` prepares it, for a node and constants that `node` and `data`
/// keep (they must outlive the kernel).
inline Result<std::unique_ptr<Kernel>>
prepareCaseKernel(Device& device, const OpCase& c, Node* node,
                  std::vector<std::shared_ptr<TensorData>>* data) {
    node->name = "n";
    node->op = OpRegistry::global().find(c.op);
    node->attrs = c.attrs;
    node->outputs = c.outputs;
    node->subgraphs = c.subgraphs;
    node->captures = c.captures;
    KernelSpec spec;
    spec.node = node;
    spec.outputs = c.outputs;
    spec.onnxOpset = c.opset;
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        spec.inputs.push_back(c.inputs[i].type);
        const bool isConstant = i < c.constant.size() && c.constant[i];
        spec.constantInputs.push_back(isConstant);
        data->push_back(std::make_shared<TensorData>(
            reinterpret_cast<const char*>(c.inputs[i].bytes.data()), c.inputs[i].bytes.size()));
        spec.constantData.push_back(isConstant ? data->back().get() : nullptr);
    }
    return prepareKernelOn(device, spec);
}

inline std::vector<HostTensor> runOnDevice(Device& device, const OpCase& c, std::string* error) {
    Node node;
    std::vector<std::shared_ptr<TensorData>> data;
    auto kernel = prepareCaseKernel(device, c, &node, &data);
    if (!kernel) {
        *error = kernel.error().message;
        return {};
    }
    std::vector<std::byte*> buffers;
    auto release = [&] {
        for (std::byte* b : buffers)
            device.free(b);
    };
    auto allocate = [&](std::int64_t bytes) -> std::byte* {
        auto b = device.allocate(std::max<std::int64_t>(bytes, 1));
        if (!b) {
            if (error)
                *error = b.error().message;
            return nullptr;
        }
        buffers.push_back(b.value());
        return b.value();
    };
    std::vector<const std::byte*> in;
    std::vector<std::byte*> out;
    for (const Tensor& t : c.inputs) {
        std::byte* b = allocate(static_cast<std::int64_t>(t.bytes.size()));
        if (!b) {
            release();
            return {};
        }
        in.push_back(b);
    }
    for (const TensorType& type : c.outputs) {
        std::byte* b = allocate(type.bytes());
        if (!b) {
            release();
            return {};
        }
        out.push_back(b);
    }
    std::vector<HostTensor> results;
    for (const TensorType& type : c.outputs)
        results.push_back(
            HostTensor{type, TensorData(static_cast<std::size_t>(type.bytes()), '\0')});
    std::string failure;
    device.enqueue([&] {
        try {
            device.setLane(device.laneFor(WorkKind::Compute)); // copies and kernel in order
            for (std::size_t i = 0; i < c.inputs.size(); ++i) {
                if (!c.inputs[i].bytes.empty())
                    device.copyIn(const_cast<std::byte*>(in[i]), c.inputs[i].bytes.data(),
                                  static_cast<std::int64_t>(c.inputs[i].bytes.size()));
            }
            kernel.value()->run(in.data(), out.data());
        } catch (const std::exception& e) {
            failure = e.what();
        }
    });
    device.synchronize();
    if (failure.empty())
        failure = device.takeAsyncError();
    if (failure.empty()) {
        device.enqueue([&] {
            try {
                for (std::size_t o = 0; o < results.size(); ++o) {
                    if (!results[o].data.empty())
                        device.copyOut(results[o].data.data(), out[o],
                                       static_cast<std::int64_t>(results[o].data.size()));
                }
            } catch (const std::exception& e) {
                failure = e.what();
            }
        });
        device.synchronize();
    }
    // An output whose extent the data decides holds what the kernel filled (a dense prefix).
    if (const auto* shapes = kernel.value()->ranShapes()) {
        for (std::size_t o = 0; o < results.size() && o < shapes->size(); ++o) {
            results[o].type.shape = (*shapes)[o];
            results[o].data.resize(static_cast<std::size_t>(results[o].type.bytes()));
        }
    }
    kernel.value().reset(); // before its workspace's device memory goes
    release();
    if (!failure.empty()) {
        *error = failure;
        return {};
    }
    return results;
}

} // namespace placer::test
