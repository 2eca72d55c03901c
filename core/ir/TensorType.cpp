// Tensor type sizes and spellings.
#include "ir/TensorType.h"

#include <cstdio>
#include <limits>

namespace placer {

std::int64_t TensorType::elementCount() const {
    std::int64_t count = 1;
    for (std::int64_t d : shape) {
        if (d <= 0)
            return 0;
        if (count > std::numeric_limits<std::int64_t>::max() / d)
            return std::numeric_limits<std::int64_t>::max();
        count *= d;
    }
    return count;
}

std::int64_t TensorType::bytes() const {
    const std::int64_t count = elementCount();
    const int size = dtypeSize(dtype);
    if (count > std::numeric_limits<std::int64_t>::max() / size)
        return std::numeric_limits<std::int64_t>::max();
    return count * size;
}

std::string TensorType::toRelay() const {
    std::string out = "Tensor[(";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            out += ", ";
        out += std::to_string(shape[i]);
    }
    out += "), ";
    out += dtypeName(dtype);
    out += "]";
    return out;
}

std::string TensorType::toShortString() const {
    std::string out;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (i > 0)
            out += "x";
        out += std::to_string(shape[i]);
    }
    if (shape.empty())
        out = "scalar";
    out += " ";
    out += dtypeName(dtype);
    return out;
}

std::string formatBytes(std::int64_t bytes) {
    static const char* const kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
    if (bytes < 1024)
        return std::to_string(bytes) + " B";
    double value = static_cast<double>(bytes);
    int unit = -1;
    while (value >= 1024.0 && unit < 3) {
        value /= 1024.0;
        ++unit;
    }
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, value < 10.0 ? "%.2f %s" : "%.1f %s", value, kUnits[unit]);
    return buffer;
}

} // namespace placer
