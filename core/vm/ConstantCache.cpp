// Constants kept on their devices from one load to the next (vm/ConstantCache.h).
#include "vm/ConstantCache.h"

#include <algorithm>

namespace placer {

std::shared_ptr<CachedConstant> ConstantCache::find(const Key& key) {
    std::lock_guard lock(m_mutex);
    const auto it = m_byKey.find(key);
    if (it == m_byKey.end())
        return nullptr;
    std::shared_ptr<CachedConstant> found = it->second.lock();
    if (!found || !found->written) {
        if (!found)
            m_byKey.erase(it);
        return nullptr;
    }
    ++m_hits;
    return found;
}

Result<std::shared_ptr<CachedConstant>>
ConstantCache::allocate(const Key& key, std::shared_ptr<const void> source) {
    Result<std::byte*> data = key.device->allocate(key.bytes);
    if (!data)
        return data.error();
    auto made = std::make_shared<CachedConstant>(key.device, data.value(), key.bytes);
    made->source = std::move(source);
    std::lock_guard lock(m_mutex);
    m_byKey[key] = made;
    ++m_writes;
    return made;
}

void ConstantCache::keepOnly(const std::vector<std::shared_ptr<CachedConstant>>& used) {
    std::lock_guard lock(m_mutex);
    m_kept = used;
    for (auto it = m_byKey.begin(); it != m_byKey.end();) {
        if (it->second.expired())
            it = m_byKey.erase(it);
        else
            ++it;
    }
}

std::int64_t ConstantCache::bytesKept() const {
    std::lock_guard lock(m_mutex);
    std::int64_t total = 0;
    for (const auto& constant : m_kept)
        total += constant->bytes();
    return total;
}

} // namespace placer
