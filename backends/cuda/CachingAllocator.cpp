// The caching allocator's bookkeeping, which needs no CUDA (backends/cuda/CachingAllocator.h).
#include "backends/cuda/CachingAllocator.h"

#include <algorithm>

namespace placer::cuda {

namespace {
constexpr std::int64_t kSmall = 512;
constexpr std::int64_t kLarge = 2 << 20;
} // namespace

CachingAllocator::CachingAllocator(RawAllocate allocate, RawFree free)
    : m_allocate(std::move(allocate)), m_free(std::move(free)) {}

CachingAllocator::~CachingAllocator() {
    releaseCached();
    for (auto& [block, size] : m_used)
        m_free(block);
}

std::int64_t CachingAllocator::roundSize(std::int64_t bytes) {
    bytes = std::max<std::int64_t>(bytes, 1);
    if (bytes < (1 << 20))
        return (bytes + kSmall - 1) / kSmall * kSmall;
    return (bytes + kLarge - 1) / kLarge * kLarge;
}

void* CachingAllocator::allocate(std::int64_t bytes, std::string* error) {
    const std::int64_t size = roundSize(bytes);
    std::lock_guard lock(m_mutex);
    // The smallest cached block that fits and does not waste more than it holds.
    auto it = m_cached.lower_bound(size);
    if (it != m_cached.end() && it->first <= std::max(2 * size, size + kLarge)) {
        void* block = it->second;
        const std::int64_t blockSize = it->first;
        m_cached.erase(it);
        m_stats.cached -= blockSize;
        m_used.emplace(block, blockSize);
        m_stats.inUse += blockSize;
        m_stats.peak = std::max(m_stats.peak, m_stats.inUse);
        ++m_stats.hits;
        return block;
    }
    std::string why;
    void* block = m_allocate(size, &why);
    if (!block && !m_cached.empty()) {
        // Out of memory: give the cache back and try once more.
        for (auto& [cachedSize, cachedBlock] : m_cached)
            m_free(cachedBlock);
        m_cached.clear();
        m_stats.cached = 0;
        why.clear();
        block = m_allocate(size, &why);
    }
    if (!block) {
        if (error)
            *error = why;
        return nullptr;
    }
    ++m_stats.rawCalls;
    m_used.emplace(block, size);
    m_stats.inUse += size;
    m_stats.peak = std::max(m_stats.peak, m_stats.inUse);
    return block;
}

void CachingAllocator::free(void* block) {
    if (!block)
        return;
    std::lock_guard lock(m_mutex);
    const auto it = m_used.find(block);
    if (it == m_used.end())
        return;
    m_stats.inUse -= it->second;
    m_stats.cached += it->second;
    m_cached.emplace(it->second, block);
    m_used.erase(it);
}

void CachingAllocator::releaseCached() {
    std::lock_guard lock(m_mutex);
    for (auto& [size, block] : m_cached)
        m_free(block);
    m_cached.clear();
    m_stats.cached = 0;
}

CachingAllocator::Stats CachingAllocator::stats() const {
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void CachingAllocator::resetPeak() {
    std::lock_guard lock(m_mutex);
    m_stats.peak = m_stats.inUse;
}

} // namespace placer::cuda
