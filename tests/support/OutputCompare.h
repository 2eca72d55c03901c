// Comparing two runs' float outputs, for tests and benchmarks that run one graph two ways.
#pragma once

#include "ir/HostTensor.h"

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

/// The largest difference between two runs' float outputs, relative to the largest value.
inline double relativeDifference(const std::vector<HostTensor>& a,
                                 const std::vector<HostTensor>& b) {
    if (a.size() != b.size())
        return INFINITY;
    double diff = 0, scale = 1e-30;
    for (std::size_t k = 0; k < a.size(); ++k) {
        if (a[k].type != b[k].type)
            return INFINITY;
        const auto x = floatsOf(a[k]), y = floatsOf(b[k]);
        for (std::size_t i = 0; i < x.size(); ++i) {
            diff = std::max(diff, static_cast<double>(std::abs(x[i] - y[i])));
            scale = std::max(scale, static_cast<double>(std::abs(y[i])));
        }
    }
    return diff / scale;
}

} // namespace placer::test
