#include "backends/cuda/HostCopier.h"

#include <algorithm>
#include <cstring>

namespace placer::cuda {

HostCopier::HostCopier(int helpers) {
    for (int i = 0; i < helpers; ++i)
        m_threads.emplace_back([this, i] { work(i + 1); });
}

HostCopier::~HostCopier() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    for (std::thread& thread : m_threads)
        thread.join();
}

int HostCopier::helpersFor(unsigned cores) {
    if (cores < 6)
        return 0;
    return static_cast<int>(std::min(5u, cores / 3));
}

void HostCopier::copyPart(int index) const {
    const std::size_t parts = m_threads.size() + 1;
    // Parts of whole cache lines, so that two threads never write one line.
    const std::size_t part = (m_bytes / parts + 63) / 64 * 64;
    const std::size_t begin = std::min(m_bytes, part * static_cast<std::size_t>(index));
    const std::size_t end =
        index + 1 == static_cast<int>(parts) ? m_bytes : std::min(m_bytes, begin + part);
    if (end > begin)
        std::memcpy(m_dst + begin, m_src + begin, end - begin);
}

void HostCopier::copy(void* dst, const void* src, std::size_t bytes) {
    if (m_threads.empty() || bytes < kSplitBytes) {
        std::memcpy(dst, src, bytes);
        return;
    }
    std::lock_guard caller(m_callers);
    {
        std::lock_guard lock(m_mutex);
        m_dst = static_cast<std::byte*>(dst);
        m_src = static_cast<const std::byte*>(src);
        m_bytes = bytes;
        m_pending = static_cast<int>(m_threads.size());
        ++m_generation;
    }
    m_wake.notify_all();
    copyPart(0);
    std::unique_lock lock(m_mutex);
    m_done.wait(lock, [&] { return m_pending == 0; });
}

void HostCopier::work(int index) {
    std::uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock lock(m_mutex);
            m_wake.wait(lock, [&] { return m_stop || m_generation != seen; });
            if (m_stop)
                return;
            seen = m_generation;
        }
        copyPart(index);
        std::lock_guard lock(m_mutex);
        if (--m_pending == 0)
            m_done.notify_one();
    }
}

} // namespace placer::cuda
