// The word in which kernels report a data-dependent failure (functors::reportError: [0] 1 when
// set, [1] the kernel's id, [2] the bad value, [3] the limit it broke), and the protocol by which
// a device with asynchronous lanes reads it after a run:
//  - the word is read in the order of the lane the kernels ran on, so a kernel still queued there
//    has written it before it is read;
//  - once set it is always cleared, in that order too, whatever else failed: a stale word would
//    fail a later, clean run;
//  - a failure found elsewhere (a failed copy or launch) is the run's error before the word's.
// The CUDA backend keeps the word in device memory (CudaDevice), the lane test device in host
// memory; both read it through this class.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace placer {

class KernelErrorWord {
public:
    /// A kernel that may set the word, named as messages name it ("'Gather_3'"); its id.
    long long registerSource(std::string name);
    /// Whether any kernel may set the word (else take() reads nothing).
    bool checking() const { return !m_sources.empty(); }

    /// How a device reaches its word: `read` copies the four values to the host after the work
    /// queued before it, `clear` zeroes them after that work; each false when it failed.
    struct Access {
        std::function<bool(long long* word)> read;
        std::function<bool()> clear;
    };
    /// The run's error after a synchronisation on `device`: `failure` (found elsewhere) when
    /// there is one, else the word's message, else empty; the word is cleared once read set.
    std::string take(std::string failure, const std::string& device, const Access& access) const;

    /// "index 9 is out of range for an axis of length 4 in 'Gather_3' (on cuda:0)".
    std::string describe(const long long* word, const std::string& device) const;

private:
    std::vector<std::string> m_sources;
};

} // namespace placer
