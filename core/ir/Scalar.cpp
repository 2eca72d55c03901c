// Scalar constant data.
#include "ir/Scalar.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace placer {

namespace {

template <typename T> std::string bytesOf(T value) {
    std::string out(sizeof(T), '\0');
    std::memcpy(out.data(), &value, sizeof(T));
    return out;
}

/// `value` as the integer type T: NaN as 0, values past T's range as its nearest end (a cast
/// of those is undefined behaviour).
template <typename T> T saturated(double value) {
    if (std::isnan(value))
        return 0;
    if (value <= static_cast<double>(std::numeric_limits<T>::lowest()))
        return std::numeric_limits<T>::lowest();
    // T's max as a double can round up past it (2^63 - 1 becomes 2^63): compare with >=.
    if (value >= static_cast<double>(std::numeric_limits<T>::max()))
        return std::numeric_limits<T>::max();
    return static_cast<T>(value);
}

template <typename T> double valueOf(std::string_view data) {
    T value;
    std::memcpy(&value, data.data(), sizeof(T));
    return static_cast<double>(value);
}

} // namespace

std::string encodeScalar(DType dtype, double value) {
    switch (dtype) {
    case DType::Float32:
        return bytesOf(static_cast<float>(value));
    case DType::Float64:
        return bytesOf(value);
    case DType::Int8:
        return bytesOf(saturated<std::int8_t>(value));
    case DType::Int16:
        return bytesOf(saturated<std::int16_t>(value));
    case DType::Int32:
        return bytesOf(saturated<std::int32_t>(value));
    case DType::Int64:
        return bytesOf(saturated<std::int64_t>(value));
    case DType::UInt8:
        return bytesOf(saturated<std::uint8_t>(value));
    case DType::Bool:
        return bytesOf(static_cast<std::uint8_t>(value != 0 ? 1 : 0));
    case DType::UInt16:
        return bytesOf(saturated<std::uint16_t>(value));
    case DType::UInt32:
        return bytesOf(saturated<std::uint32_t>(value));
    case DType::UInt64:
        return bytesOf(saturated<std::uint64_t>(value));
    case DType::Float16:
    case DType::BFloat16:
    case DType::String: // a number is not a string
        break;
    }
    return {};
}

std::optional<double> decodeScalar(DType dtype, std::string_view data) {
    if (data.size() != static_cast<std::size_t>(dtypeSize(dtype)))
        return std::nullopt;
    switch (dtype) {
    case DType::Float32:
        return valueOf<float>(data);
    case DType::Float64:
        return valueOf<double>(data);
    case DType::Int8:
        return valueOf<std::int8_t>(data);
    case DType::Int16:
        return valueOf<std::int16_t>(data);
    case DType::Int32:
        return valueOf<std::int32_t>(data);
    case DType::Int64:
        return valueOf<std::int64_t>(data);
    case DType::UInt8:
    case DType::Bool:
        return valueOf<std::uint8_t>(data);
    case DType::UInt16:
        return valueOf<std::uint16_t>(data);
    case DType::UInt32:
        return valueOf<std::uint32_t>(data);
    case DType::UInt64:
        return valueOf<std::uint64_t>(data);
    case DType::Float16:
    case DType::BFloat16:
    case DType::String:
        break;
    }
    return std::nullopt;
}

} // namespace placer
