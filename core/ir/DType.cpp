// Element type sizes and names.
#include "ir/DType.h"

#include <array>

namespace placer {

namespace {
struct DTypeInfo {
    DType type;
    std::string_view name;
    int size;
};
constexpr std::array<DTypeInfo, kDTypeCount> kInfo{{
    {DType::Float32, "float32", 4},
    {DType::Float16, "float16", 2},
    {DType::BFloat16, "bfloat16", 2},
    {DType::Float64, "float64", 8},
    {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},
    {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},
    {DType::UInt8, "uint8", 1},
    {DType::Bool, "bool", 1},
    {DType::UInt16, "uint16", 2},
    {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},
    {DType::String, "string", 8},
}};
} // namespace

int dtypeSize(DType t) {
    return kInfo[static_cast<int>(t)].size;
}

std::string_view dtypeName(DType t) {
    return kInfo[static_cast<int>(t)].name;
}

std::optional<DType> parseDType(std::string_view name) {
    for (const DTypeInfo& info : kInfo) {
        if (info.name == name)
            return info.type;
    }
    return std::nullopt;
}

bool isFloatingPoint(DType t) {
    return (dtypeBit(t) & kFloatDTypes) != 0;
}

} // namespace placer
