// The fuzz input read a byte at a time, for targets that build values from it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace placer::fuzz {

/// Reads the fuzz input in order; zeros once it is used up.
struct FuzzBytes {
    const std::uint8_t* data;
    std::size_t size;
    std::size_t at = 0;

    std::uint8_t next() { return at < size ? data[at++] : 0; }
    /// Mostly a small signed number; one time in eight a power of two near the int64 limits
    /// (its sign from the kind byte), so that sizes and coefficients that overflow come up.
    std::int64_t smallOrHuge() {
        const std::uint8_t kind = next();
        const auto small = static_cast<std::int64_t>(static_cast<std::int8_t>(next()));
        if (kind % 8 != 0)
            return small;
        const std::int64_t huge = std::int64_t(1) << (next() % 63);
        return kind & 16 ? -huge : huge;
    }
};

} // namespace placer::fuzz
