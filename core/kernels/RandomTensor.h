// Seeded random data for a run's inputs, the same on every machine for a given seed.
#pragma once

#include "ir/HostTensor.h"

#include <cstdint>

namespace placer {

/// Seeded random data for a tensor: floats uniform in [-1, 1), integers in [0, 4), bools 0/1.
HostTensor randomTensor(const TensorType& type, std::uint64_t seed);

} // namespace placer
