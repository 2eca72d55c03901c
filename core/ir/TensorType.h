// The static type of a value: a shape and an element type.
#pragma once

#include "ir/DType.h"

#include <cstdint>
#include <string>
#include <vector>

namespace placer {

struct TensorType {
    std::vector<std::int64_t> shape; ///< empty for a scalar
    DType dtype = DType::Float32;

    std::int64_t elementCount() const;
    /// Size in bytes; saturates at INT64_MAX rather than overflowing.
    std::int64_t bytes() const;
    int rank() const { return static_cast<int>(shape.size()); }
    /// "Tensor[(5, 7), float32]", the Relay spelling.
    std::string toRelay() const;
    /// "5x7 float32", the short spelling used in reports.
    std::string toShortString() const;

    bool operator==(const TensorType&) const = default;
};

/// "140 B", "1.5 KiB", "3.2 MiB": a human-readable size.
std::string formatBytes(std::int64_t bytes);

} // namespace placer
