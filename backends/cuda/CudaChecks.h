// The CUDA backend's checks that need no CUDA, so that they are tested everywhere
// (tests/backends/cuda/tst_cudaops.cpp): which element-wise operands the contiguous kernels take,
// sizes that cuBLAS's and cuDNN's int parameters cannot hold, and library versions.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace placer::cuda {

/// How often an operand of shape `operand` repeats over an output of shape `out` when it is the
/// output's trailing axes (after leading 1s): the operand's element count (the output's own
/// when they are the same shape); 1 for a scalar; 0 when it broadcasts any other way.
std::int64_t contiguousPeriod(const std::vector<std::int64_t>& operand,
                              const std::vector<std::int64_t>& out);

/// Why `values` (the extents, leading dimensions and counts a library call takes as int) cannot
/// be passed as int: "the convolution's input extent 3000000000 is more than an int holds (cuDNN
/// takes int)", naming the first too large; nullopt when all fit.
std::optional<std::string> intOverflow(const std::vector<std::int64_t>& values,
                                       const std::string& what, const std::string& library);

/// "this build needs cuDNN 9.x (it was compiled against 9.1), and the library found is 8.9", or
/// empty when the major versions agree.
std::string libraryVersionProblem(const std::string& what, int major, int minor, int builtMajor,
                                  int builtMinor);

/// Library algorithms chosen by measuring on this machine (cuDNN's convolution search), kept in
/// a file so that every later process takes the same one for the same problem: a measured choice
/// can differ from process to process, and the outputs' bits follow the algorithm. One line per
/// problem, "KEY ALGORITHM WORKSPACE_BYTES [ENGINE]" (ENGINE: a configuration of cuDNN's graph
/// API as text, without spaces); the first line for a key wins (two processes that measure at
/// once may each append one), lines that do not parse are skipped. Thread-safe.
class AlgorithmCache {
public:
    struct Choice {
        int algorithm = 0;
        std::int64_t workspace = 0;
        std::string engine; ///< empty, or a graph engine's configuration
    };
    /// `path` empty: in memory only.
    explicit AlgorithmCache(std::string path);
    std::optional<Choice> find(const std::string& key);
    /// Keeps the choice, and appends it to the file (one write, so lines of processes writing
    /// at once do not interleave); a key already known keeps its first choice.
    void remember(const std::string& key, Choice choice);
    const std::string& path() const { return m_path; }

private:
    void loadOnce();
    std::string m_path;
    std::mutex m_mutex;
    bool m_loaded = false;
    std::map<std::string, Choice> m_choices;
};

/// Where the algorithm cache lives: $XDG_CACHE_HOME/placement-explorer/NAME, else
/// ~/.cache/placement-explorer/NAME; empty when neither is set.
std::string cacheFilePath(const std::string& name);

} // namespace placer::cuda
