// The process's string pool (ir/StringPool.h).
#include "ir/StringPool.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace placer {

namespace {

struct Pool {
    std::mutex mutex;
    std::deque<std::string> strings{std::string()}; // a deque keeps its elements in place
    std::unordered_map<std::string_view, StringHandle> handles{{std::string_view(), 0}};
};

Pool& pool() {
    static Pool* instance = new Pool; // never destroyed: handles outlive static destructors
    return *instance;
}

} // namespace

StringHandle internString(std::string_view text) {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    const auto found = p.handles.find(text);
    if (found != p.handles.end())
        return found->second;
    p.strings.emplace_back(text);
    const StringHandle handle = p.strings.size() - 1;
    p.handles.emplace(std::string_view(p.strings.back()), handle);
    return handle;
}

std::string_view stringOf(StringHandle handle) {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    return handle < p.strings.size() ? std::string_view(p.strings[handle]) : std::string_view();
}

} // namespace placer
