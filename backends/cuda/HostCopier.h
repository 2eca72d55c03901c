// Large host memcpys split over a few threads. A GPU's copies from pageable host memory go
// through pinned staging buffers, the host filling one while the DMA engine drains another; one
// thread's memcpy fills them at some 8 GB/s on an H100's host, while the DMA engine moves 50 and
// more, so the host's copy was the whole cost of a large input (ResNet-50's 19 MB batch of 32:
// 2.4 ms). Needs no CUDA, so that it is tested everywhere.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace placer::cuda {

class HostCopier {
public:
    /// `helpers` threads beside the caller's (none: every copy is the caller's memcpy).
    explicit HostCopier(int helpers);
    ~HostCopier();
    HostCopier(const HostCopier&) = delete;
    HostCopier& operator=(const HostCopier&) = delete;

    /// The helpers a machine with `cores` cores gets: none below 6 cores (the copy would take
    /// them from the CPU devices' kernels), then a third of them, at most 5.
    static int helpersFor(unsigned cores);
    /// Below this, one memcpy: waking the helpers costs more than they save.
    static constexpr std::size_t kSplitBytes = std::size_t{1} << 20;

    /// memcpy(dst, src, bytes), in parts over the helpers and the caller; returns when all is
    /// copied. Callers take turns.
    void copy(void* dst, const void* src, std::size_t bytes);
    int helpers() const { return static_cast<int>(m_threads.size()); }

private:
    void work(int index);
    /// Part `index` of the current copy, of helpers() + 1 parts.
    void copyPart(int index) const;

    std::mutex m_callers; ///< one copy at a time
    std::mutex m_mutex;
    std::condition_variable m_wake, m_done;
    std::uint64_t m_generation = 0;
    int m_pending = 0;
    bool m_stop = false;
    std::byte* m_dst = nullptr;
    const std::byte* m_src = nullptr;
    std::size_t m_bytes = 0;
    std::vector<std::thread> m_threads;
};

} // namespace placer::cuda
