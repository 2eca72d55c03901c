// Seeded random run inputs (kernels/RandomTensor.h).

#include "kernels/RandomTensor.h"
#include "ir/StringPool.h"
#include "kernels/KernelSupport.h"

#include <cstring>
#include <random>

namespace placer {

HostTensor randomTensor(const TensorType& type, std::uint64_t seed) {
    HostTensor tensor = HostTensor::zeros(type);
    std::mt19937_64 rng(seed);
    const std::int64_t n = type.elementCount();
    auto put = [&](std::int64_t i, auto v) {
        std::memcpy(tensor.data.data() + static_cast<std::size_t>(i) * sizeof(v), &v, sizeof(v));
    };
    std::uniform_real_distribution<double> real(-1.0, 1.0);
    std::uniform_int_distribution<int> small(0, 3);
    for (std::int64_t i = 0; i < n; ++i) {
        switch (type.dtype) {
        case DType::Float32:
            put(i, static_cast<float>(real(rng)));
            break;
        case DType::Float64:
            put(i, real(rng));
            break;
        case DType::Float16:
            put(i, floatToHalf(static_cast<float>(real(rng))));
            break;
        case DType::BFloat16:
            put(i, floatToBFloat16(static_cast<float>(real(rng))));
            break;
        case DType::Int8:
            put(i, static_cast<std::int8_t>(small(rng)));
            break;
        case DType::Int16:
            put(i, static_cast<std::int16_t>(small(rng)));
            break;
        case DType::Int32:
            put(i, static_cast<std::int32_t>(small(rng)));
            break;
        case DType::Int64:
            put(i, static_cast<std::int64_t>(small(rng)));
            break;
        case DType::UInt8:
            put(i, static_cast<std::uint8_t>(small(rng)));
            break;
        case DType::Bool:
            put(i, static_cast<std::uint8_t>(small(rng) & 1));
            break;
        case DType::UInt16:
            put(i, static_cast<std::uint16_t>(small(rng)));
            break;
        case DType::UInt32:
            put(i, static_cast<std::uint32_t>(small(rng)));
            break;
        case DType::UInt64:
            put(i, static_cast<std::uint64_t>(small(rng)));
            break;
        case DType::String: // short words: "a" to "zz"
            put(i, internString(std::string(1, static_cast<char>('a' + rng() % 26)) +
                                (rng() % 2 ? std::string(1, static_cast<char>('a' + rng() % 26))
                                           : std::string())));
            break;
        }
    }
    return tensor;
}

} // namespace placer
