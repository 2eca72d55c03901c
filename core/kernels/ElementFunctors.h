// The per-element arithmetic of every backend, as functors that compile for the GPU (nvcc,
// backends/cuda/Launch.cu) and for the host (any C++ compiler). The CUDA backend launches them over
// a grid; the CPU backend's plain kernels take their scalar math (applyUnary, applyBinary, loadAny,
// storeAny) from here and run the functors themselves for the types they have no typed loop for
// (float16, bfloat16) and for layer norm. One definition, so the two backends cannot drift.
//
// Element functors: `void operator()(i64 i) const` for output element i.
// Row functors: `void operator()(i64 row, int lane, int lanes) const`; on the GPU a warp (32
// lanes) shares a row and combines partial results with allReduce*; on the host lanes == 1.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/OpSemantics.h"

#if defined(__CUDACC__)
#define PLACER_HD __host__ __device__
#else
#define PLACER_HD
#endif

namespace placer::functors {

// float arguments pick the float overloads on the host as on the GPU.
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atanh;
using std::ceil;
using std::cos;
using std::cosh;
using std::erf;
using std::exp;
using std::floor;
using std::fmod;
using std::log;
using std::log10;
using std::log1p;
using std::nearbyint;
using std::pow;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;

using i64 = std::int64_t;
constexpr int kMaxRank = 8;

/// Element types, numbered as placer::DType.
enum class Elem : int { F32, F16, BF16, F64, I8, I16, I32, I64, U8, Bool, U16, U32, U64 };

PLACER_HD inline int elemSize(Elem e) {
    switch (e) {
    case Elem::F64:
    case Elem::I64:
    case Elem::U64:
        return 8;
    case Elem::F32:
    case Elem::I32:
    case Elem::U32:
        return 4;
    case Elem::F16:
    case Elem::BF16:
    case Elem::I16:
    case Elem::U16:
        return 2;
    default:
        return 1;
    }
}

template <typename T> PLACER_HD inline T loadRaw(const void* p, i64 i) {
    return static_cast<const T*>(p)[i];
}
template <typename T> PLACER_HD inline void storeRaw(void* p, i64 i, T v) {
    static_cast<T*>(p)[i] = v;
}

PLACER_HD inline float bitsToFloat(std::uint32_t bits) {
    float f;
    memcpy(&f, &bits, 4);
    return f;
}
PLACER_HD inline std::uint32_t floatToBits(float f) {
    std::uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

PLACER_HD inline float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1f;
    std::uint32_t mantissa = h & 0x3ff;
    if (exponent == 0) {
        if (mantissa == 0)
            return bitsToFloat(sign);
        exponent = 127 - 15 + 1;
        while (!(mantissa & 0x400)) {
            mantissa <<= 1;
            --exponent;
        }
        return bitsToFloat(sign | (exponent << 23) | ((mantissa & 0x3ff) << 13));
    }
    if (exponent == 0x1f)
        return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
    return bitsToFloat(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

PLACER_HD inline std::uint16_t floatToHalf(float f) {
    const std::uint32_t bits = floatToBits(f);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
    const std::uint32_t absBits = bits & 0x7fffffff;
    if (absBits >= 0x7f800000)
        return static_cast<std::uint16_t>(sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0));
    if (absBits >= 0x477ff000)
        return static_cast<std::uint16_t>(sign | 0x7c00);
    if (absBits < 0x38800000) {
        const float scaled = fabsf(f) * 16777216.0f;
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(nearbyintf(scaled)));
    }
    const std::uint32_t rounded = absBits + 0xfff + ((absBits >> 13) & 1);
    return static_cast<std::uint16_t>(sign | ((rounded - 0x38000000) >> 13));
}

PLACER_HD inline std::uint16_t floatToBFloat16(float f) {
    std::uint32_t bits = floatToBits(f);
    if ((bits & 0x7fffffff) > 0x7f800000)
        return static_cast<std::uint16_t>((bits >> 16) | 0x40);
    bits += 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

/// Element i of an integer tensor as T, converted as C++ converts (exact where T holds it); 0 for
/// a floating-point tensor.
template <typename T> PLACER_HD inline T loadInteger(const void* p, Elem e, i64 i) {
    switch (e) {
    case Elem::I8:
        return static_cast<T>(loadRaw<std::int8_t>(p, i));
    case Elem::I16:
        return static_cast<T>(loadRaw<std::int16_t>(p, i));
    case Elem::I32:
        return static_cast<T>(loadRaw<std::int32_t>(p, i));
    case Elem::I64:
        return static_cast<T>(loadRaw<std::int64_t>(p, i));
    case Elem::U8:
    case Elem::Bool:
        return static_cast<T>(loadRaw<std::uint8_t>(p, i));
    case Elem::U16:
        return static_cast<T>(loadRaw<std::uint16_t>(p, i));
    case Elem::U32:
        return static_cast<T>(loadRaw<std::uint32_t>(p, i));
    case Elem::U64:
        return static_cast<T>(loadRaw<std::uint64_t>(p, i));
    default:
        return T(0);
    }
}

/// Element i of a tensor of any type, as double.
PLACER_HD inline double loadAny(const void* p, Elem e, i64 i) {
    switch (e) {
    case Elem::F32:
        return loadRaw<float>(p, i);
    case Elem::F64:
        return loadRaw<double>(p, i);
    case Elem::F16:
        return halfToFloat(loadRaw<std::uint16_t>(p, i));
    case Elem::BF16:
        return bitsToFloat(static_cast<std::uint32_t>(loadRaw<std::uint16_t>(p, i)) << 16);
    default:
        return loadInteger<double>(p, e, i);
    }
    return 0;
}

/// Element i of an integer tensor, exactly.
PLACER_HD inline i64 loadIndex(const void* p, Elem e, i64 i) {
    return loadInteger<i64>(p, e, i);
}

/// v as an integer: truncated toward zero, saturated to int64's range, NaN as 0 (a plain cast of
/// an out-of-range double is undefined; narrower types then wrap, as C++20 defines).
PLACER_HD inline i64 toInteger(double v) {
    if (!(v == v))
        return 0;
    if (v >= 9.2233720368547758e18)
        return 0x7fffffffffffffffLL;
    if (v <= -9.2233720368547758e18)
        return -0x7fffffffffffffffLL - 1;
    return static_cast<i64>(v);
}

PLACER_HD inline void storeAny(void* p, Elem e, i64 i, double v) {
    switch (e) {
    case Elem::F32:
        storeRaw<float>(p, i, static_cast<float>(v));
        break;
    case Elem::F64:
        storeRaw<double>(p, i, v);
        break;
    case Elem::F16:
        storeRaw<std::uint16_t>(p, i, floatToHalf(static_cast<float>(v)));
        break;
    case Elem::BF16:
        storeRaw<std::uint16_t>(p, i, floatToBFloat16(static_cast<float>(v)));
        break;
    case Elem::I8:
        storeRaw<std::int8_t>(p, i, static_cast<std::int8_t>(toInteger(v)));
        break;
    case Elem::I16:
        storeRaw<std::int16_t>(p, i, static_cast<std::int16_t>(toInteger(v)));
        break;
    case Elem::I32:
        storeRaw<std::int32_t>(p, i, static_cast<std::int32_t>(toInteger(v)));
        break;
    case Elem::I64:
        storeRaw<std::int64_t>(p, i, toInteger(v));
        break;
    case Elem::U8:
        storeRaw<std::uint8_t>(p, i, static_cast<std::uint8_t>(toInteger(v)));
        break;
    case Elem::Bool:
        storeRaw<std::uint8_t>(p, i, v != 0 ? 1 : 0);
        break;
    case Elem::U16:
        storeRaw<std::uint16_t>(p, i, static_cast<std::uint16_t>(toInteger(v)));
        break;
    case Elem::U32:
        storeRaw<std::uint32_t>(p, i, static_cast<std::uint32_t>(toInteger(v)));
        break;
    case Elem::U64:
        storeRaw<std::uint64_t>(p, i,
                                v >= 9.2233720368547758e18 && v < 1.8446744073709552e19
                                    ? static_cast<std::uint64_t>(v)
                                    : static_cast<std::uint64_t>(toInteger(v)));
        break;
    }
}

/// dst[to] = src[from] for elements of `size` bytes (1, 2, 4 or 8).
PLACER_HD inline void copyElement(void* dst, i64 to, const void* src, i64 from, int size) {
    switch (size) {
    case 8:
        storeRaw<std::uint64_t>(dst, to, loadRaw<std::uint64_t>(src, from));
        break;
    case 4:
        storeRaw<std::uint32_t>(dst, to, loadRaw<std::uint32_t>(src, from));
        break;
    case 2:
        storeRaw<std::uint16_t>(dst, to, loadRaw<std::uint16_t>(src, from));
        break;
    default:
        storeRaw<std::uint8_t>(dst, to, loadRaw<std::uint8_t>(src, from));
        break;
    }
}

/// A row-major shape of at most kMaxRank dimensions and strides (in elements) over it.
struct Shape {
    int rank = 0;
    i64 dims[kMaxRank] = {};
};
struct Strides {
    i64 s[kMaxRank] = {};
};

/// The offset of row-major element i of `shape` under `strides`.
PLACER_HD inline i64 stridedOffset(i64 i, const Shape& shape, const Strides& strides) {
    i64 offset = 0;
    for (int d = shape.rank - 1; d >= 0; --d) {
        const i64 q = i / shape.dims[d];
        offset += (i - q * shape.dims[d]) * strides.s[d];
        i = q;
    }
    return offset;
}

// ---- warp combination --------------------------------------------------------------------------

/// Combines `v` over the lanes of a warp with `combine` (a butterfly of shuffles): every lane
/// gets the result. On the host a row has one lane, so `v` is the result.
template <typename Combine> PLACER_HD inline double allReduce(double v, Combine combine) {
#if defined(__CUDA_ARCH__)
    for (int offset = 16; offset > 0; offset >>= 1)
        v = combine(v, __shfl_xor_sync(0xffffffffu, v, offset));
#else
    (void)combine;
#endif
    return v;
}
struct SumOf {
    PLACER_HD double operator()(double a, double b) const { return a + b; }
};
struct MaxOf {
    PLACER_HD double operator()(double a, double b) const { return fmax(a, b); }
};
struct MinOf {
    PLACER_HD double operator()(double a, double b) const { return fmin(a, b); }
};
struct ProductOf {
    PLACER_HD double operator()(double a, double b) const { return a * b; }
};
PLACER_HD inline double allReduceSum(double v) {
    return allReduce(v, SumOf{});
}
PLACER_HD inline double allReduceMax(double v) {
    return allReduce(v, MaxOf{});
}
PLACER_HD inline double allReduceMin(double v) {
    return allReduce(v, MinOf{});
}
PLACER_HD inline double allReduceProd(double v) {
    return allReduce(v, ProductOf{});
}

/// A data-dependent failure, written by the first thread that meets one and read by the host
/// after the device synchronized: [0] 1 when set, [1] the kernel's id, [2] the bad value,
/// [3] the limit it broke.
PLACER_HD inline void reportError(long long* word, long long kernel, long long value,
                                  long long limit) {
#if defined(__CUDA_ARCH__)
    if (atomicCAS(reinterpret_cast<unsigned long long*>(word), 0ull, 1ull) == 0ull) {
        word[1] = kernel;
        word[2] = value;
        word[3] = limit;
    }
#else
    if (word[0] == 0) {
        word[0] = 1;
        word[1] = kernel;
        word[2] = value;
        word[3] = limit;
    }
#endif
}

// ---- data movement -----------------------------------------------------------------------------

/// dst[dstBase + dstStrides(i)] = src[srcBase + srcStrides(i)] for every element i of `shape`:
/// transpose, slice, expand, tile, concat (one launch per input), split (one per output).
struct StridedCopy {
    const void* src = nullptr;
    void* dst = nullptr;
    int elementSize = 4;
    Shape shape;
    Strides srcStrides, dstStrides;
    i64 srcBase = 0, dstBase = 0;

    PLACER_HD void operator()(i64 i) const {
        const i64 from = srcBase + stridedOffset(i, shape, srcStrides);
        const i64 to = dstBase + stridedOffset(i, shape, dstStrides);
        copyElement(dst, to, src, from, elementSize);
    }
};

/// Every element set to one value (zeros_like, ones_like, ConstantOfShape, Dropout's mask).
struct Fill {
    void* dst = nullptr;
    Elem elem = Elem::F32;
    double value = 0;
    PLACER_HD void operator()(i64 i) const { storeAny(dst, elem, i, value); }
};

struct Cast {
    const void* src = nullptr;
    void* dst = nullptr;
    Elem from = Elem::F32, to = Elem::F32;
    PLACER_HD void operator()(i64 i) const { storeAny(dst, to, i, loadAny(src, from, i)); }
};

/// start + i * delta, with start and delta read from device memory.
struct Range {
    const void* start = nullptr;
    const void* delta = nullptr;
    Elem startElem = Elem::F32, deltaElem = Elem::F32;
    void* dst = nullptr;
    Elem elem = Elem::F32;
    PLACER_HD void operator()(i64 i) const {
        storeAny(dst, elem, i,
                 loadAny(start, startElem, 0) +
                     static_cast<double>(i) * loadAny(delta, deltaElem, 0));
    }
};

/// Gather along an axis: data viewed as [outer, dim, inner], indices flat.
struct Gather {
    const void* data = nullptr;
    const void* indices = nullptr;
    void* dst = nullptr;
    Elem indexElem = Elem::I64;
    int elementSize = 4;
    i64 dim = 1, inner = 1, count = 1; ///< count: number of indices
    int mode = 0;                      ///< 0 clip, 1 wrap, 2 raise
    long long* error = nullptr;
    long long kernelId = 0;

    PLACER_HD void operator()(i64 i) const {
        const i64 within = i % inner;
        const i64 j = (i / inner) % count;
        const i64 o = i / (inner * count);
        i64 index = loadIndex(indices, indexElem, j);
        if (mode == 0) {
            index = index < 0 ? 0 : (index >= dim ? dim - 1 : index);
        } else if (mode == 1) {
            index = ((index % dim) + dim) % dim;
        } else {
            const i64 original = index;
            if (index < 0)
                index += dim;
            if (index < 0 || index >= dim) {
                reportError(error, kernelId, original, dim);
                index = 0;
            }
        }
        const i64 from = (o * dim + index) * inner + within;
        copyElement(dst, i, data, from, elementSize);
    }
};

/// Pad: constant (value from an attribute or a device scalar), edge or reflect.
struct Pad {
    const void* src = nullptr;
    void* dst = nullptr;
    Elem elem = Elem::F32;
    Shape in, out;
    i64 before[kMaxRank] = {};
    int mode = 0; ///< 0 constant, 1 edge, 2 reflect
    double value = 0;
    const void* valueInput = nullptr; ///< a scalar on the device, overrides `value`
    Elem valueElem = Elem::F32;

    PLACER_HD void operator()(i64 i) const {
        i64 rest = i, from = 0, stride = 1;
        bool outside = false;
        for (int d = out.rank - 1; d >= 0; --d) {
            const i64 o = rest % out.dims[d];
            rest /= out.dims[d];
            i64 k = o - before[d];
            const i64 n = in.dims[d];
            if (k < 0 || k >= n) {
                if (mode == 0 || n == 0) {
                    outside = true;
                } else if (mode == 1) {
                    k = k < 0 ? 0 : n - 1;
                } else {
                    const i64 period = 2 * (n - 1);
                    k = period == 0 ? 0 : ((k % period) + period) % period;
                    if (k >= n)
                        k = period - k;
                }
            }
            from += k * stride;
            stride *= n;
        }
        if (outside) {
            storeAny(dst, elem, i, valueInput ? loadAny(valueInput, valueElem, 0) : value);
            return;
        }
        copyElement(dst, i, src, from, elemSize(elem));
    }
};

// ---- element-wise ------------------------------------------------------------------------------

/// The arithmetic of both backends: C is float for float32, double for every other type.
template <typename C> PLACER_HD inline C applyUnary(UnaryFn fn, C v, C a, C b) {
    switch (fn) {
    case UnaryFn::Negative:
        return -v;
    case UnaryFn::Abs:
        return v < 0 ? -v : v;
    case UnaryFn::Exp:
        return exp(v);
    case UnaryFn::Log:
        return log(v);
    case UnaryFn::Sqrt:
        return sqrt(v);
    case UnaryFn::Rsqrt:
        return C(1) / sqrt(v);
    case UnaryFn::Reciprocal:
        return C(1) / v;
    case UnaryFn::Tanh:
        return tanh(v);
    case UnaryFn::Sigmoid:
        return C(1) / (C(1) + exp(-v));
    case UnaryFn::Erf:
        return erf(v);
    case UnaryFn::Floor:
        return floor(v);
    case UnaryFn::Ceil:
        return ceil(v);
    case UnaryFn::Round:
        return nearbyint(v);
    case UnaryFn::Relu:
        return v > 0 ? v : C(0);
    case UnaryFn::LeakyRelu:
        return v >= 0 ? v : a * v;
    case UnaryFn::Clip:
        return v < a ? a : (v > b ? b : v);
    case UnaryFn::HardSigmoid: {
        const C t = a * v + b;
        return t < 0 ? C(0) : (t > 1 ? C(1) : t);
    }
    case UnaryFn::HardSwish: {
        const C t = v / C(6) + C(0.5);
        return v * (t < 0 ? C(0) : (t > 1 ? C(1) : t));
    }
    case UnaryFn::Not:
        return v == 0 ? C(1) : C(0);
    case UnaryFn::Sin:
        return sin(v);
    case UnaryFn::Cos:
        return cos(v);
    case UnaryFn::Tan:
        return tan(v);
    case UnaryFn::Asin:
        return asin(v);
    case UnaryFn::Acos:
        return acos(v);
    case UnaryFn::Atan:
        return atan(v);
    case UnaryFn::Sinh:
        return sinh(v);
    case UnaryFn::Cosh:
        return cosh(v);
    case UnaryFn::Asinh:
        return asinh(v);
    case UnaryFn::Acosh:
        return acosh(v);
    case UnaryFn::Atanh:
        return atanh(v);
    case UnaryFn::Sign:
        return v > 0 ? C(1) : (v < 0 ? C(-1) : C(0));
    case UnaryFn::Softplus:
        return v > 0 ? v + log1p(exp(-v)) : log1p(exp(v));
    case UnaryFn::Softsign:
        return v / (C(1) + (v < 0 ? -v : v));
    case UnaryFn::Elu:
        return v >= 0 ? v : a * (exp(v) - C(1));
    case UnaryFn::Selu:
        return b * (v > 0 ? v : a * (exp(v) - C(1)));
    case UnaryFn::Celu:
        return (v > 0 ? v : C(0)) + (v < 0 ? a * (exp(v / a) - C(1)) : C(0));
    case UnaryFn::ThresholdedRelu:
        return v > a ? v : C(0);
    case UnaryFn::Shrink:
        return v < -a ? v + b : (v > a ? v - b : C(0));
    case UnaryFn::IsNaN:
        return v != v ? C(1) : C(0);
    case UnaryFn::IsInf:
        return ((v == C(INFINITY) && a != 0) || (v == -C(INFINITY) && b != 0)) ? C(1) : C(0);
    case UnaryFn::Gelu:
        return v * (C(1) + erf(v * C(0.70710678118654752440))) * C(0.5);
    }
    return v;
}

struct UnaryF32 {
    const float* x = nullptr;
    float* y = nullptr;
    UnaryFn fn = UnaryFn::Relu;
    float a = 0, b = 0;
    PLACER_HD void operator()(i64 i) const { y[i] = applyUnary<float>(fn, x[i], a, b); }
};

struct UnaryAny {
    const void* x = nullptr;
    void* y = nullptr;
    Elem elem = Elem::F64;
    UnaryFn fn = UnaryFn::Relu;
    double a = 0, b = 0;
    Elem outElem = Elem::F64; ///< the output's type (bool for IsNaN and IsInf, else elem)
    /// Parameters read at run time (ONNX Clip's min and max from tensors), else null.
    const void* aInput = nullptr;
    const void* bInput = nullptr;
    Elem aElem = Elem::F64, bElem = Elem::F64;
    PLACER_HD void operator()(i64 i) const {
        const double pa = aInput ? loadAny(aInput, aElem, 0) : a;
        const double pb = bInput ? loadAny(bInput, bElem, 0) : b;
        storeAny(y, outElem, i, applyUnary<double>(fn, loadAny(x, elem, i), pa, pb));
    }
};

template <typename C> PLACER_HD inline C applyBinary(BinaryFn fn, C a, C b) {
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
        return pow(a, b);
    case BinaryFn::Max:
        return a < b ? b : a;
    case BinaryFn::Min:
        return b < a ? b : a;
    case BinaryFn::FloorDiv:
        return floor(a / b);
    case BinaryFn::Mod:
        return fmod(a, b);
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
    case BinaryFn::Xor:
        return ((a != 0) != (b != 0)) ? 1 : 0;
    case BinaryFn::FloorMod: {
        const C r = fmod(a, b);
        return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case BinaryFn::PRelu:
        return a < 0 ? a * b : a;
    case BinaryFn::ShiftLeft:
        return a * pow(C(2), b);
    case BinaryFn::ShiftRight:
        return floor(a / pow(C(2), b));
    }
    return 0;
}

/// out = a fn b with numpy broadcasting (strides 0 where an operand repeats).
struct BinaryF32 {
    const float* a = nullptr;
    const float* b = nullptr;
    float* out = nullptr;
    BinaryFn fn = BinaryFn::Add;
    Shape shape;
    Strides sa, sb;
    PLACER_HD void operator()(i64 i) const {
        out[i] =
            applyBinary<float>(fn, a[stridedOffset(i, shape, sa)], b[stridedOffset(i, shape, sb)]);
    }
};

struct BinaryAny {
    const void* a = nullptr;
    const void* b = nullptr;
    void* out = nullptr;
    Elem in = Elem::F64, outElem = Elem::F64;
    BinaryFn fn = BinaryFn::Add;
    Shape shape;
    Strides sa, sb;
    bool mixed = false;   ///< b has its own type (Pow with an integer exponent)
    Elem inB = Elem::F64; ///< b's type when mixed
    PLACER_HD void operator()(i64 i) const {
        storeAny(out, outElem, i,
                 applyBinary<double>(fn, loadAny(a, in, stridedOffset(i, shape, sa)),
                                     loadAny(b, mixed ? inB : in, stridedOffset(i, shape, sb))));
    }
};

/// out = cond ? x : y, broadcast.
struct Where {
    const void* cond = nullptr;
    const void* x = nullptr;
    const void* y = nullptr;
    void* out = nullptr;
    Elem condElem = Elem::Bool, elem = Elem::F32;
    Shape shape;
    Strides sc, sx, sy;
    PLACER_HD void operator()(i64 i) const {
        const bool pick = loadAny(cond, condElem, stridedOffset(i, shape, sc)) != 0;
        storeAny(out, elem, i,
                 pick ? loadAny(x, elem, stridedOffset(i, shape, sx))
                      : loadAny(y, elem, stridedOffset(i, shape, sy)));
    }
};

// ---- normalisation and pooling -----------------------------------------------------------------

/// Inference batch norm over [outer, channels, inner].
struct BatchNorm {
    const float* x = nullptr;
    float* y = nullptr;
    const float* gamma = nullptr; ///< null: scale 1
    const float* beta = nullptr;  ///< null: shift 0
    const float* mean = nullptr;
    const float* var = nullptr;
    i64 channels = 1, inner = 1;
    float epsilon = 1e-5f;
    PLACER_HD void operator()(i64 i) const {
        const i64 c = (i / inner) % channels;
        const float g = (gamma ? gamma[c] : 1.0f) / sqrtf(var[c] + epsilon);
        const float b = (beta ? beta[c] : 0.0f) - mean[c] * g;
        y[i] = x[i] * g + b;
    }
};

/// Max or average pooling over 1 to 3 spatial dimensions (NC...), or 2-D adaptive average.
/// A pooling window over 1 to 3 spatial dimensions (unused ones have extent 1).
struct PoolWindow {
    int spatial = 2;
    i64 in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    i64 kernel[3] = {1, 1, 1}, stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, padL[3] = {};
    /// Output element i's spatial position in o; returns its plane (batch x channel).
    PLACER_HD i64 position(i64 i, i64* o) const {
        for (int d = spatial - 1; d >= 0; --d) {
            o[d] = i % out[d];
            i /= out[d];
        }
        return i;
    }
};

struct Pool : PoolWindow {
    const float* x = nullptr;
    float* y = nullptr;
    bool isMax = false, includePadding = false, adaptive = false;

    PLACER_HD void operator()(i64 i) const {
        i64 o[3] = {0, 0, 0};
        const i64 rest = position(i, o);
        i64 planeSize = 1;
        for (int d = 0; d < spatial; ++d)
            planeSize *= in[d];
        const float* plane = x + rest * planeSize;
        i64 lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1}, step[3] = {1, 1, 1};
        i64 windowSize = 1;
        for (int d = 0; d < spatial; ++d) {
            if (adaptive) {
                lo[d] = o[d] * in[d] / out[d];
                hi[d] = ((o[d] + 1) * in[d] + out[d] - 1) / out[d];
            } else {
                lo[d] = o[d] * stride[d] - padL[d];
                hi[d] = lo[d] + (kernel[d] - 1) * dilation[d] + 1;
                step[d] = dilation[d];
                windowSize *= kernel[d];
            }
        }
        double sum = 0, best = -INFINITY;
        i64 count = 0;
        for (i64 a = lo[0]; a < hi[0]; a += step[0]) {
            if (a < 0 || a >= in[0])
                continue;
            for (i64 b = lo[1]; b < hi[1]; b += step[1]) {
                if (spatial > 1 && (b < 0 || b >= in[1]))
                    continue;
                for (i64 c = lo[2]; c < hi[2]; c += step[2]) {
                    if (spatial > 2 && (c < 0 || c >= in[2]))
                        continue;
                    i64 offset = a;
                    if (spatial > 1)
                        offset = offset * in[1] + b;
                    if (spatial > 2)
                        offset = offset * in[2] + c;
                    const double v = plane[offset];
                    sum += v;
                    best = v > best ? v : best;
                    ++count;
                }
            }
        }
        if (isMax) // a window wholly in the padding: the lowest float, as oneDNN and TVM give
            y[i] = count ? static_cast<float>(best) : -3.4028234663852886e38f;
        else
            y[i] = static_cast<float>(
                sum / static_cast<double>(includePadding && !adaptive ? windowSize : count));
    }
};

/// Layer norm: row = o * inner + i normalises x[o, :, i] over `channels`.
struct LayerNorm {
    const float* x = nullptr;
    float* y = nullptr;
    const float* gamma = nullptr;
    const float* beta = nullptr;
    float* meanOut = nullptr;   ///< ONNX's optional Mean output
    float* invStdOut = nullptr; ///< and InvStdDev
    i64 channels = 1, inner = 1;
    float epsilon = 1e-5f;

    PLACER_HD void operator()(i64 row, int lane, int lanes) const {
        const i64 o = row / inner, within = row % inner;
        const i64 base = o * channels * inner + within;
        double sum = 0;
        for (i64 c = lane; c < channels; c += lanes)
            sum += x[base + c * inner];
        const double mean = allReduceSum(sum) / static_cast<double>(channels);
        double sq = 0;
        for (i64 c = lane; c < channels; c += lanes) {
            const double d = x[base + c * inner] - mean;
            sq += d * d;
        }
        const double inv = 1.0 / sqrt(allReduceSum(sq) / static_cast<double>(channels) + epsilon);
        for (i64 c = lane; c < channels; c += lanes) {
            double v = (x[base + c * inner] - mean) * inv;
            if (gamma)
                v *= gamma[c];
            if (beta)
                v += beta[c];
            y[base + c * inner] = static_cast<float>(v);
        }
        if (lane == 0 && meanOut)
            meanOut[row] = static_cast<float>(mean);
        if (lane == 0 && invStdOut)
            invStdOut[row] = static_cast<float>(inv);
    }
};

/// A reduction: output element `row` (over the kept dimensions) combines the input elements of
/// the reduced dimensions. ArgMax and ArgMin store the index (along the one reduced axis) of the
/// first extreme, or of the last with `lastIndex`.
struct Reduce {
    const void* x = nullptr;
    void* y = nullptr;
    Elem elem = Elem::F32;    ///< the input's type
    Elem outElem = Elem::F32; ///< the output's (int64 for ArgMax and ArgMin)
    ReduceFn fn = ReduceFn::Sum;
    Shape kept, reduced;
    Strides keptStrides, reducedStrides; ///< input strides of the kept and reduced dims
    i64 count = 1;                       ///< elements per output
    bool lastIndex = false;

    PLACER_HD double load(i64 base, i64 r) const {
        return loadAny(x, elem, base + stridedOffset(r, reduced, reducedStrides));
    }

    PLACER_HD void operator()(i64 row, int lane, int lanes) const {
        const i64 base = stridedOffset(row, kept, keptStrides);
        if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
            const bool max = fn == ReduceFn::ArgMax;
            double best = max ? -INFINITY : INFINITY;
            for (i64 r = lane; r < count; r += lanes) {
                const double v = load(base, r);
                best = max ? (v > best ? v : best) : (v < best ? v : best);
            }
            best = max ? allReduceMax(best) : allReduceMin(best);
            double index = lastIndex ? -1.0 : static_cast<double>(count);
            for (i64 r = lane; r < count; r += lanes) {
                if (load(base, r) == best)
                    index = lastIndex
                                ? static_cast<double>(r)
                                : (static_cast<double>(r) < index ? static_cast<double>(r) : index);
            }
            index = lastIndex ? allReduceMax(index) : allReduceMin(index);
            if (index < 0 || index >= static_cast<double>(count))
                index = 0; // every element NaN
            if (lane == 0)
                storeAny(y, outElem, row, index);
            return;
        }
        double shift = 0;
        if (fn == ReduceFn::LogSumExp) {
            double m = -INFINITY;
            for (i64 r = lane; r < count; r += lanes) {
                const double v = load(base, r);
                m = v > m ? v : m;
            }
            shift = allReduceMax(m);
            if (shift == INFINITY || shift == -INFINITY || shift != shift)
                shift = 0;
        }
        double acc = fn == ReduceFn::Prod  ? 1.0
                     : fn == ReduceFn::Max ? -INFINITY
                     : fn == ReduceFn::Min ? INFINITY
                                           : 0.0;
        for (i64 r = lane; r < count; r += lanes) {
            const double v = load(base, r);
            switch (fn) {
            case ReduceFn::Max:
                acc = v > acc ? v : acc;
                break;
            case ReduceFn::Min:
                acc = v < acc ? v : acc;
                break;
            case ReduceFn::Prod:
                acc *= v;
                break;
            case ReduceFn::L1:
                acc += v < 0 ? -v : v;
                break;
            case ReduceFn::L2:
            case ReduceFn::SumSquare:
                acc += v * v;
                break;
            case ReduceFn::LogSumExp:
                acc += exp(v - shift);
                break;
            default: // Sum, Mean, LogSum
                acc += v;
                break;
            }
        }
        switch (fn) {
        case ReduceFn::Max:
            acc = allReduceMax(acc);
            break;
        case ReduceFn::Min:
            acc = allReduceMin(acc);
            break;
        case ReduceFn::Prod:
            acc = allReduceProd(acc);
            break;
        case ReduceFn::Mean:
            acc = allReduceSum(acc) / static_cast<double>(count);
            break;
        case ReduceFn::L2:
            acc = sqrt(allReduceSum(acc));
            break;
        case ReduceFn::LogSum:
            acc = log(allReduceSum(acc));
            break;
        case ReduceFn::LogSumExp:
            acc = log(allReduceSum(acc)) + shift;
            break;
        default:
            acc = allReduceSum(acc);
            break;
        }
        if (lane == 0)
            storeAny(y, outElem, row, acc);
    }
};

/// Runs an element functor over n elements on the host.
template <typename Op> void runOnHost(const Op& op, i64 n) {
    for (i64 i = 0; i < n; ++i)
        op(i);
}
/// Runs a row functor over `rows` rows on the host, one lane per row.
template <typename Op> void runRowsOnHost(const Op& op, i64 rows) {
    for (i64 r = 0; r < rows; ++r)
        op(r, 0, 1);
}

} // namespace placer::functors
