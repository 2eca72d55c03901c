// Scalar constant data: one element of a dtype as little-endian bytes.
#pragma once

#include "ir/DType.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace placer {

/// The bytes of one `dtype` element holding `value` (converted as C++ converts); empty for the
/// half-precision types, whose scalars are kept shape-only.
std::vector<std::byte> encodeScalar(DType dtype, double value);

/// The value held by `data` if it is exactly one element of `dtype`.
std::optional<double> decodeScalar(DType dtype, const std::vector<std::byte>& data);

} // namespace placer
