// Comparing two runs' outputs, for tests and benchmarks that run one graph two ways. Every dtype
// is read as its own type (runtime's loadAsDouble); NaN matches only NaN and an infinity only the
// same infinity, anything else there is an infinite difference; integers, booleans and strings
// must match exactly.
#pragma once

#include "ir/HostTensor.h"
#include "kernels/KernelSupport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace placer::test {

inline std::vector<float> floatsOf(const HostTensor& tensor) {
    std::vector<float> values(tensor.data.size() / 4);
    std::memcpy(values.data(), tensor.data.data(), values.size() * 4);
    return values;
}

/// The largest difference between two runs' outputs, relative to the largest finite value of
/// `b`; INFINITY where they differ in count, type, a NaN, an infinity, an integer, a boolean or
/// a string.
inline double relativeDifference(const std::vector<HostTensor>& a,
                                 const std::vector<HostTensor>& b) {
    if (a.size() != b.size())
        return INFINITY;
    double diff = 0, scale = 1e-30;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].type != b[k].type || a[k].data.size() != b[k].data.size())
            return INFINITY;
        const DType dtype = a[k].type.dtype;
        const std::int64_t n = a[k].type.elementCount();
        if (dtype == DType::String) { // interned: equal strings have equal handles
            if (std::memcmp(a[k].data.data(), b[k].data.data(), a[k].data.size()) != 0)
                return INFINITY;
            continue;
        }
        const bool exact = !isFloatingPoint(dtype);
        for (std::int64_t i = 0; i < n; ++i) {
            const double x = loadAsDouble(a[k].data.raw(), dtype, i);
            const double y = loadAsDouble(b[k].data.raw(), dtype, i);
            if (std::isfinite(y))
                scale = std::max(scale, std::fabs(y));
            if ((std::isnan(x) && std::isnan(y)) || x == y)
                continue;
            if (exact || !std::isfinite(x) || !std::isfinite(y))
                return INFINITY;
            diff = std::max(diff, std::fabs(x - y));
        }
    }
    return diff / scale;
}

} // namespace placer::test
