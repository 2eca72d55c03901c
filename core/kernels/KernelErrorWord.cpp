// Reading the kernels' error word in the order of their lane (kernels/KernelErrorWord.h).
#include "kernels/KernelErrorWord.h"

namespace placer {

long long KernelErrorWord::registerSource(std::string name) {
    m_sources.push_back(std::move(name));
    return static_cast<long long>(m_sources.size() - 1);
}

std::string KernelErrorWord::take(std::string failure, const std::string& device,
                                  const Access& access) const {
    if (!checking())
        return failure;
    long long word[4] = {};
    if (!access.read(word))
        return failure.empty() ? device + ": could not read the kernels' error word" : failure;
    if (word[0] == 0)
        return failure;
    const bool cleared = access.clear();
    if (!failure.empty())
        return failure;
    std::string message = describe(word, device);
    if (!cleared)
        message += "; the error word could not be cleared, so later runs may report it again";
    return message;
}

std::string KernelErrorWord::describe(const long long* word, const std::string& device) const {
    const std::string source = word[1] >= 0 && static_cast<std::size_t>(word[1]) < m_sources.size()
                                   ? m_sources[static_cast<std::size_t>(word[1])]
                                   : std::string("a kernel");
    return "index " + std::to_string(word[2]) + " is out of range for an axis of length " +
           std::to_string(word[3]) + " in " + source + " (on " + device + ")";
}

} // namespace placer
