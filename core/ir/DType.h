// Element types of tensors, with their sizes and Relay/ONNX-style spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace placer {

enum class DType : std::uint8_t {
    Float32,
    Float16,
    BFloat16,
    Float64,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    Bool,
    UInt16,
    UInt32,
    UInt64,
    /// A string, held as a handle into the process's string pool (ir/StringPool.h): tensors of
    /// strings move like tensors of 8-byte integers, and only string kernels read them.
    String,
};

inline constexpr int kDTypeCount = 14;

/// Bytes per element (Bool is stored as one byte, a String as an 8-byte handle).
int dtypeSize(DType t);
/// The Relay spelling: "float32", "int64", "bool", ...
std::string_view dtypeName(DType t);
/// Parses a Relay spelling; std::nullopt for anything else.
std::optional<DType> parseDType(std::string_view name);
bool isFloatingPoint(DType t);

/// A set of dtypes as a bit mask, used for kernel capabilities.
using DTypeMask = std::uint32_t;
constexpr DTypeMask dtypeBit(DType t) {
    return DTypeMask{1} << static_cast<int>(t);
}
/// Every numeric type (all but String, which only kernels that name it take).
inline constexpr DTypeMask kAllDTypes = dtypeBit(DType::String) - 1;
inline constexpr DTypeMask kStringDType = dtypeBit(DType::String);
inline constexpr DTypeMask kFloatDTypes = dtypeBit(DType::Float32) | dtypeBit(DType::Float16) |
                                          dtypeBit(DType::BFloat16) | dtypeBit(DType::Float64);
inline constexpr DTypeMask kIntDTypes = dtypeBit(DType::Int8) | dtypeBit(DType::Int16) |
                                        dtypeBit(DType::Int32) | dtypeBit(DType::Int64) |
                                        dtypeBit(DType::UInt8) | dtypeBit(DType::UInt16) |
                                        dtypeBit(DType::UInt32) | dtypeBit(DType::UInt64);

} // namespace placer
