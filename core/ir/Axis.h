// Axis arguments as operators take them: negative counts from the end.
#pragma once

#include <cstdint>

namespace placer {

/// The axis in [0, rank), or -1 when out of range.
inline int normalizeAxis(std::int64_t axis, int rank) {
    if (axis < 0)
        axis += rank;
    return axis >= 0 && axis < rank ? static_cast<int>(axis) : -1;
}

} // namespace placer
