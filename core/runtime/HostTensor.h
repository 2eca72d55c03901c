// Tensors in host memory: a run's inputs and outputs, and seeded random data for inputs.
#pragma once

#include "ir/TensorType.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace placer {

/// A tensor in host memory: run inputs and outputs.
struct HostTensor {
    TensorType type;
    std::vector<std::byte> data;
};

/// Seeded random data for a tensor: floats uniform in [-1, 1), integers in [0, 4), bools 0/1.
HostTensor randomTensor(const TensorType& type, std::uint64_t seed);

} // namespace placer
