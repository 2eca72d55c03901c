// The CUDA backend's checks that need no CUDA (backends/cuda/CudaChecks.h).
#include "backends/cuda/CudaChecks.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <sstream>

#include <fcntl.h>
#include <unistd.h>

namespace placer::cuda {

std::int64_t contiguousPeriod(const std::vector<std::int64_t>& operand,
                              const std::vector<std::int64_t>& out) {
    std::size_t first = 0;
    while (first < operand.size() && operand[first] == 1)
        ++first;
    const std::size_t rank = operand.size() - first;
    if (rank == 0)
        return 1;
    if (rank > out.size())
        return 0;
    for (std::size_t i = 0; i < rank; ++i) {
        if (operand[first + i] != out[out.size() - rank + i])
            return 0;
    }
    const std::int64_t count = std::accumulate(operand.begin() + static_cast<std::ptrdiff_t>(first),
                                               operand.end(), std::int64_t{1}, std::multiplies<>());
    return std::max<std::int64_t>(1, count);
}

std::optional<std::string> intOverflow(const std::vector<std::int64_t>& values,
                                       const std::string& what, const std::string& library) {
    for (std::int64_t v : values) {
        if (v > INT_MAX || v < INT_MIN)
            return what + " " + std::to_string(v) + " is more than an int holds (" + library +
                   " takes int)";
    }
    return std::nullopt;
}

std::string libraryVersionProblem(const std::string& what, int major, int minor, int builtMajor,
                                  int builtMinor) {
    if (major == builtMajor)
        return {};
    return "this build needs " + what + " " + std::to_string(builtMajor) +
           ".x (it was compiled against " + std::to_string(builtMajor) + "." +
           std::to_string(builtMinor) + "), and the library found is " + std::to_string(major) +
           "." + std::to_string(minor);
}

AlgorithmCache::AlgorithmCache(std::string path) : m_path(std::move(path)) {}

void AlgorithmCache::loadOnce() {
    if (m_loaded)
        return;
    m_loaded = true;
    if (m_path.empty())
        return;
    std::ifstream in(m_path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string key;
        Choice choice;
        std::string rest;
        if (!(fields >> key >> choice.algorithm >> choice.workspace) || choice.workspace < 0)
            continue; // a line cut short by a crash, or not ours
        if (fields >> choice.engine && (fields >> rest))
            continue;
        m_choices.emplace(key, choice); // the first wins
    }
}

std::optional<AlgorithmCache::Choice> AlgorithmCache::find(const std::string& key) {
    std::lock_guard lock(m_mutex);
    loadOnce();
    const auto it = m_choices.find(key);
    if (it == m_choices.end())
        return std::nullopt;
    return it->second;
}

void AlgorithmCache::remember(const std::string& key, Choice choice) {
    std::lock_guard lock(m_mutex);
    loadOnce();
    if (!m_choices.emplace(key, choice).second || m_path.empty())
        return;
    std::error_code ignored;
    std::filesystem::create_directories(std::filesystem::path(m_path).parent_path(), ignored);
    if (choice.engine.find_first_of(" \t\n") != std::string::npos)
        return; // would not read back
    const std::string line = key + " " + std::to_string(choice.algorithm) + " " +
                             std::to_string(choice.workspace) +
                             (choice.engine.empty() ? "" : " " + choice.engine) + "\n";
    // A cache that cannot be written only means the next process measures again.
    const int fd = ::open(m_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    [[maybe_unused]] const ssize_t written = ::write(fd, line.data(), line.size());
    ::close(fd);
}

std::string cacheFilePath(const std::string& name) {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
        return std::string(xdg) + "/placement-explorer/" + name;
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/placement-explorer/" + name;
    return {};
}

} // namespace placer::cuda
