// The process's strings: a tensor of strings holds 8-byte handles into this pool, so that it is
// planned, stored and copied like any fixed-size tensor, and only string kernels read it.
//
// A string is interned once and kept for the life of the process: equal strings have equal
// handles, so comparing two tensors of strings compares their handles. Handle 0 is "".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace placer {

using StringHandle = std::uint64_t;

/// The handle of `text`, interned if new. Thread-safe.
StringHandle internString(std::string_view text);

/// The string behind a handle; "" for a handle the pool never gave (an uninitialised tensor).
/// The view stays valid for the life of the process. Thread-safe.
std::string_view stringOf(StringHandle handle);

} // namespace placer
