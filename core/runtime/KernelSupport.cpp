#include "runtime/KernelSupport.h"

#include <cmath>

namespace placer {

double loadAsDouble(const std::byte* data, DType dtype, std::int64_t i) {
    switch (dtype) {
    case DType::Float32: {
        float v;
        std::memcpy(&v, data + 4 * i, 4);
        return v;
    }
    case DType::Float64: {
        double v;
        std::memcpy(&v, data + 8 * i, 8);
        return v;
    }
    case DType::Float16: {
        std::uint16_t v;
        std::memcpy(&v, data + 2 * i, 2);
        return halfToFloat(v);
    }
    case DType::BFloat16: {
        std::uint16_t v;
        std::memcpy(&v, data + 2 * i, 2);
        return bfloat16ToFloat(v);
    }
    default:
        return static_cast<double>(readIndex(data, dtype, i));
    }
}

void storeFromDouble(std::byte* data, DType dtype, std::int64_t i, double value) {
    auto put = [&](auto v) { std::memcpy(data + sizeof(v) * i, &v, sizeof(v)); };
    switch (dtype) {
    case DType::Float32:
        put(static_cast<float>(value));
        break;
    case DType::Float64:
        put(value);
        break;
    case DType::Float16:
        put(floatToHalf(static_cast<float>(value)));
        break;
    case DType::BFloat16:
        put(floatToBFloat16(static_cast<float>(value)));
        break;
    case DType::Int8:
        put(static_cast<std::int8_t>(value));
        break;
    case DType::Int16:
        put(static_cast<std::int16_t>(value));
        break;
    case DType::Int32:
        put(static_cast<std::int32_t>(value));
        break;
    case DType::Int64:
        put(static_cast<std::int64_t>(value));
        break;
    case DType::UInt8:
        put(static_cast<std::uint8_t>(value));
        break;
    case DType::Bool:
        put(static_cast<std::uint8_t>(value != 0 ? 1 : 0));
        break;
    }
}

float halfToFloat(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1f;
    std::uint32_t mantissa = h & 0x3ff;
    std::uint32_t bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { // subnormal: normalise
            exponent = 127 - 15 + 1;
            while (!(mantissa & 0x400)) {
                mantissa <<= 1;
                --exponent;
            }
            bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
        }
    } else if (exponent == 0x1f) {
        bits = sign | 0x7f800000 | (mantissa << 13);
    } else {
        bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::uint16_t floatToHalf(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000);
    const std::uint32_t absBits = bits & 0x7fffffff;
    if (absBits >= 0x7f800000) // inf or nan
        return sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0);
    if (absBits >= 0x477ff000) // rounds to beyond the largest half
        return sign | 0x7c00;
    if (absBits < 0x38800000) {                          // subnormal half (or zero)
        const float scaled = std::fabs(f) * 16777216.0f; // 2^24
        return sign | static_cast<std::uint16_t>(std::nearbyint(scaled));
    }
    const std::uint32_t rounded = absBits + 0xfff + ((absBits >> 13) & 1);
    return sign | static_cast<std::uint16_t>((rounded - 0x38000000) >> 13);
}

std::uint16_t floatToBFloat16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    if ((bits & 0x7fffffff) > 0x7f800000)
        return static_cast<std::uint16_t>((bits >> 16) | 0x40);
    bits += 0x7fff + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

} // namespace placer
