// Scalar constant data: one element of a dtype as little-endian bytes.
#pragma once

#include "ir/DType.h"

#include <optional>
#include <string>
#include <string_view>

namespace placer {

/// The bytes of one `dtype` element holding `value`: integers truncated towards zero and
/// saturated at their type's range (NaN as 0), booleans true for any non-zero value; empty for
/// the half-precision types, whose scalars are kept shape-only.
std::string encodeScalar(DType dtype, double value);

/// The value held by `data` if it is exactly one element of `dtype`.
std::optional<double> decodeScalar(DType dtype, std::string_view data);

} // namespace placer
