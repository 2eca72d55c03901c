// The process's string pool (ir/StringPool.h).
#include "ir/StringPool.h"

#include <deque>
#include <mutex>
#include <unordered_map>

namespace placer {

namespace {

/// A packed handle: the top bit set, the length in bits 56-58, the bytes in bits 0-55.
constexpr StringHandle kPacked = StringHandle{1} << 63;
constexpr std::size_t kPackedBytes = 7;

struct Pool {
    std::mutex mutex;
    std::deque<std::string> strings{std::string()}; // a deque keeps its elements in place
    std::unordered_map<std::string_view, StringHandle> handles{{std::string_view(), 0}};
    std::int64_t bytes = 0;
    std::int64_t limit = kMaxPooledStringBytes;
};

Pool& pool() {
    static Pool* instance = new Pool; // never destroyed: handles outlive static destructors
    return *instance;
}

} // namespace

StringHandle internString(std::string_view text) {
    if (text.empty())
        return 0;
    if (text.size() <= kPackedBytes) {
        StringHandle handle = kPacked | (static_cast<StringHandle>(text.size()) << 56);
        for (std::size_t i = 0; i < text.size(); ++i)
            handle |= static_cast<StringHandle>(static_cast<unsigned char>(text[i])) << (8 * i);
        return handle;
    }
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    const auto found = p.handles.find(text);
    if (found != p.handles.end())
        return found->second;
    if (p.bytes + static_cast<std::int64_t>(text.size()) > p.limit)
        throw StringPoolFull("the process holds " + std::to_string(p.bytes >> 20) +
                             " MiB of distinct strings, the most it keeps; a string of " +
                             std::to_string(text.size()) + " bytes is one too many");
    p.strings.emplace_back(text);
    p.bytes += static_cast<std::int64_t>(text.size());
    const StringHandle handle = p.strings.size() - 1;
    p.handles.emplace(std::string_view(p.strings.back()), handle);
    return handle;
}

std::string stringOf(StringHandle handle) {
    if (handle & kPacked) {
        const std::size_t size = std::min<std::size_t>((handle >> 56) & 7, kPackedBytes);
        std::string text(size, '\0');
        for (std::size_t i = 0; i < size; ++i)
            text[i] = static_cast<char>((handle >> (8 * i)) & 0xff);
        return text;
    }
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    return handle < p.strings.size() ? p.strings[handle] : std::string();
}

void setStringPoolLimit(std::int64_t bytes) {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    p.limit = bytes;
}

StringPoolSize stringPoolSize() {
    Pool& p = pool();
    const std::lock_guard lock(p.mutex);
    return {p.bytes, static_cast<std::int64_t>(p.strings.size()) - 1};
}

} // namespace placer
