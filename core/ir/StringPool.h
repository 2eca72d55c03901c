// The process's strings: a tensor of strings holds 8-byte handles, so that it is planned, stored
// and copied like any fixed-size tensor, and only string kernels read it.
//
// Equal strings have equal handles, so comparing two tensors of strings compares their handles.
// A string of up to 7 bytes is its own handle (its bytes and length packed into it) and takes
// no memory; a longer one is interned in a pool for the life of the process, which holds at most
// kMaxPooledStringBytes of them (1 GiB): past that, interning throws StringPoolFull, which the
// readers and the run report as an error. Handle 0 is "".
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace placer {

using StringHandle = std::uint64_t;

/// The most bytes of distinct strings longer than 7 bytes the process keeps, unless
/// setStringPoolLimit() says otherwise.
inline constexpr std::int64_t kMaxPooledStringBytes = std::int64_t{1} << 30;

/// Thrown when a string would take the pool past kMaxPooledStringBytes.
class StringPoolFull : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// The handle of `text`: packed when it has at most 7 bytes, else interned if new. Thread-safe.
StringHandle internString(std::string_view text);

/// The string behind a handle; "" for a handle the pool never gave (an uninitialised tensor).
/// Thread-safe.
std::string stringOf(StringHandle handle);

/// The bytes of the strings the pool keeps (those longer than 7 bytes), and how many.
struct StringPoolSize {
    std::int64_t bytes = 0;
    std::int64_t strings = 0;
};
StringPoolSize stringPoolSize();
/// Sets the most bytes the pool keeps (tests make it small); strings kept stay.
void setStringPoolLimit(std::int64_t bytes);

} // namespace placer
