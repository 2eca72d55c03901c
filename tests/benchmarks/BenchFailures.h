// A benchmark's wrong results and errors: each is printed, and the benchmark exits non-zero at
// its end, so that a smoke run under CTest fails on a wrong result instead of timing it.
#pragma once

#include <cstdio>
#include <string>

namespace placer::bench {

inline int& failureCount() {
    static int count = 0;
    return count;
}

/// Reports a wrong result or an error (to standard error) and marks the run failed.
inline void wrong(const std::string& what) {
    std::fprintf(stderr, "WRONG: %s\n", what.c_str());
    ++failureCount();
}

/// What main returns: 1 after any wrong result or error, else 0.
inline int exitCode() {
    if (failureCount() > 0)
        std::fprintf(stderr, "%d wrong result(s) or error(s)\n", failureCount());
    return failureCount() > 0 ? 1 : 0;
}

} // namespace placer::bench
