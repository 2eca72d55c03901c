// Device memory through a cache: freed blocks are kept and handed out again for requests of a
// similar size, so a run loop (and a re-run after re-planning) never calls cudaMalloc. When the
// device is out of memory the cache is released and the request tried once more. Knows nothing
// of CUDA itself: the raw allocation functions are given, so its bookkeeping is tested without
// a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace placer::cuda {

class CachingAllocator {
public:
    /// Raw memory: null (and a sentence in *error) when there is none.
    using RawAllocate = std::function<void*(std::int64_t bytes, std::string* error)>;
    using RawFree = std::function<void(void*)>;

    CachingAllocator(RawAllocate allocate, RawFree free);
    /// Returns every block, cached or not, to the raw allocator.
    ~CachingAllocator();
    CachingAllocator(const CachingAllocator&) = delete;
    CachingAllocator& operator=(const CachingAllocator&) = delete;

    /// Sizes are rounded up: to 512 bytes below 1 MiB, to 2 MiB from there. A cached block is
    /// reused when it is at least the rounded size and at most twice it (or 2 MiB more).
    static std::int64_t roundSize(std::int64_t bytes);

    void* allocate(std::int64_t bytes, std::string* error);
    void free(void* block);
    /// Returns the cached (free) blocks to the raw allocator.
    void releaseCached();

    struct Stats {
        std::int64_t inUse = 0;    ///< bytes of blocks handed out (rounded sizes)
        std::int64_t peak = 0;     ///< most inUse since resetPeak
        std::int64_t cached = 0;   ///< bytes of free blocks kept
        std::int64_t rawCalls = 0; ///< raw allocations made
        std::int64_t hits = 0;     ///< requests served from the cache
    };
    Stats stats() const;
    void resetPeak();

private:
    RawAllocate m_allocate;
    RawFree m_free;
    mutable std::mutex m_mutex;
    std::unordered_map<void*, std::int64_t> m_used; ///< block -> rounded size
    std::multimap<std::int64_t, void*> m_cached;    ///< rounded size -> free block
    Stats m_stats;
};

} // namespace placer::cuda
