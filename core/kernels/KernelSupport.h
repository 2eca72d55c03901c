// Scaffolding for the kernels of every backend: shapes, strides, broadcasting, element access in
// any dtype, and kernels made from a function. Backend-neutral: the CPU kernels (backends/cpu/)
// and the CUDA backend's host code (cuda/) build on it alike.
#pragma once

#include "ir/Axis.h"
#include "kernels/ElementFunctors.h"
#include "kernels/Kernel.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace placer {

using Dims = std::vector<std::int64_t>;

inline std::int64_t product(const Dims& dims, std::size_t begin = 0,
                            std::size_t end = static_cast<std::size_t>(-1)) {
    std::int64_t n = 1;
    for (std::size_t i = begin; i < dims.size() && i < end; ++i)
        n *= dims[i];
    return n;
}

/// Row-major strides in elements.
inline Dims contiguousStrides(const Dims& dims) {
    Dims strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i-- > 1;)
        strides[i - 1] = strides[i] * dims[i];
    return strides;
}

/// A kernel whose work is a function, with the name of its implementation.
class FunctionKernel final : public Kernel {
public:
    using Body = std::function<void(const std::byte* const*, std::byte* const*)>;
    FunctionKernel(std::string implementation, Body body)
        : m_implementation(std::move(implementation)), m_body(std::move(body)) {}
    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        m_body(inputs, outputs);
    }
    std::string implementation() const override { return m_implementation; }

private:
    std::string m_implementation;
    Body m_body;
};

inline Result<std::unique_ptr<Kernel>> makeKernel(std::string implementation,
                                                  FunctionKernel::Body body) {
    return std::unique_ptr<Kernel>(
        std::make_unique<FunctionKernel>(std::move(implementation), std::move(body)));
}

/// Calls f(T{}) with the C++ type of a numeric dtype; false for float16/bfloat16.
template <typename F> bool visitNumeric(DType dtype, F&& f) {
    switch (dtype) {
    case DType::Float32:
        f(float{});
        return true;
    case DType::Float64:
        f(double{});
        return true;
    case DType::Int8:
        f(std::int8_t{});
        return true;
    case DType::Int16:
        f(std::int16_t{});
        return true;
    case DType::Int32:
        f(std::int32_t{});
        return true;
    case DType::Int64:
        f(std::int64_t{});
        return true;
    case DType::UInt8:
        f(std::uint8_t{});
        return true;
    case DType::Bool:
        f(bool{});
        return true;
    case DType::Float16:
    case DType::BFloat16:
    case DType::UInt16: // the shared functors, which convert out-of-range values safely
    case DType::UInt32:
    case DType::UInt64:
    case DType::String: // no arithmetic on strings
        return false;
    }
    return false;
}

/// Strides (in elements) of `shape` broadcast to `out` (numpy rules, right-aligned); 0 where the
/// input repeats.
inline Dims broadcastStrides(const Dims& shape, const Dims& out) {
    Dims strides(out.size(), 0);
    const Dims own = contiguousStrides(shape);
    const std::size_t offset = out.size() - shape.size();
    for (std::size_t i = 0; i < shape.size(); ++i)
        strides[offset + i] = shape[i] == 1 && out[offset + i] != 1 ? 0 : own[i];
    return strides;
}

/// Walks every element of `shape` (row-major); for each innermost run calls
/// body(outOffset, offsets of each operand, run length, operand inner strides). Operand strides
/// are in elements. Adjacent dimensions that are contiguous for every operand are merged first.
template <std::size_t N, typename Body>
void forEachRun(Dims shape, std::array<Dims, N> strides, Body&& body) {
    if (shape.empty()) {
        shape = {1};
        for (auto& s : strides)
            s = {0};
    }
    // Merge dimension i into i+1 where every operand steps uniformly across them.
    Dims mShape{shape.back()};
    std::array<Dims, N> mStrides;
    for (std::size_t k = 0; k < N; ++k)
        mStrides[k] = {strides[k].back()};
    for (std::size_t i = shape.size() - 1; i-- > 0;) {
        bool mergeable = true;
        for (std::size_t k = 0; k < N; ++k)
            mergeable = mergeable && strides[k][i] == mStrides[k].front() * mShape.front();
        if (mergeable) {
            mShape.front() *= shape[i];
        } else {
            mShape.insert(mShape.begin(), shape[i]);
            for (std::size_t k = 0; k < N; ++k)
                mStrides[k].insert(mStrides[k].begin(), strides[k][i]);
        }
    }
    const std::size_t rank = mShape.size();
    const std::int64_t inner = mShape.back();
    if (inner == 0)
        return;
    for (std::int64_t d : mShape) {
        if (d == 0)
            return;
    }
    std::array<std::int64_t, N> innerStride;
    for (std::size_t k = 0; k < N; ++k)
        innerStride[k] = mStrides[k].back();
    Dims index(rank, 0);
    std::array<std::int64_t, N> offsets{};
    std::int64_t outOffset = 0;
    for (;;) {
        body(outOffset, offsets, inner, innerStride);
        outOffset += inner;
        std::size_t d = rank - 1;
        for (;;) {
            if (d == 0)
                return;
            --d;
            ++index[d];
            for (std::size_t k = 0; k < N; ++k)
                offsets[k] += mStrides[k][d];
            if (index[d] < mShape[d])
                break;
            for (std::size_t k = 0; k < N; ++k)
                offsets[k] -= mStrides[k][d] * mShape[d];
            index[d] = 0;
        }
    }
}

/// Reads element `i` of an integer tensor of any integer dtype as int64.
inline std::int64_t readIndex(const std::byte* data, DType dtype, std::int64_t i) {
    switch (dtype) {
    case DType::Int32: {
        std::int32_t v;
        std::memcpy(&v, data + 4 * i, 4);
        return v;
    }
    case DType::Int64: {
        std::int64_t v;
        std::memcpy(&v, data + 8 * i, 8);
        return v;
    }
    case DType::Int16: {
        std::int16_t v;
        std::memcpy(&v, data + 2 * i, 2);
        return v;
    }
    case DType::Int8:
        return static_cast<std::int8_t>(data[i]);
    case DType::UInt8:
    case DType::Bool:
        return static_cast<std::uint8_t>(data[i]);
    default:
        return 0;
    }
}

/// The element functors' view of a dtype (the two enums are numbered alike).
inline functors::Elem elemOf(DType dtype) {
    return static_cast<functors::Elem>(static_cast<int>(dtype));
}
/// Whether the op has input `k` (an optional one); when it has, its element type goes to `elem`.
inline bool optionalElem(const KernelSpec& spec, std::size_t k, functors::Elem* elem) {
    if (spec.inputs.size() <= k)
        return false;
    *elem = elemOf(spec.inputs[k].dtype);
    return true;
}
static_assert(static_cast<int>(functors::Elem::Bool) == static_cast<int>(DType::Bool) &&
              static_cast<int>(functors::Elem::BF16) == static_cast<int>(DType::BFloat16));

/// `dims` as an element-functor shape; false when the rank is beyond functors::kMaxRank.
inline bool toFunctorShape(const Dims& dims, functors::Shape* shape) {
    if (dims.size() > static_cast<std::size_t>(functors::kMaxRank))
        return false;
    shape->rank = static_cast<int>(dims.size());
    for (std::size_t d = 0; d < dims.size(); ++d)
        shape->dims[d] = dims[d];
    return true;
}
inline functors::Strides toFunctorStrides(const Dims& strides) {
    functors::Strides result;
    for (std::size_t d = 0; d < strides.size() && d < std::size_t{functors::kMaxRank}; ++d)
        result.s[d] = strides[d];
    return result;
}
inline constexpr const char* kFunctorRankError = "more than 8 dimensions";

/// Element i of a tensor of any dtype as double, and back (float16/bfloat16 converted).
inline double loadAsDouble(const std::byte* data, DType dtype, std::int64_t i) {
    return functors::loadAny(data, elemOf(dtype), i);
}
inline void storeFromDouble(std::byte* data, DType dtype, std::int64_t i, double value) {
    functors::storeAny(data, elemOf(dtype), i, value);
}

/// float16 / bfloat16 <-> float conversions (round to nearest even).
using functors::floatToBFloat16;
using functors::floatToHalf;
using functors::halfToFloat;
inline float bfloat16ToFloat(std::uint16_t b) {
    return functors::bitsToFloat(static_cast<std::uint32_t>(b) << 16);
}

} // namespace placer
