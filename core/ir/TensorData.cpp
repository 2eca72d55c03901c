// Tensor bytes: giving a mapped view's pages back to the kernel once a device holds a copy.
#include "ir/TensorData.h"

#include <sys/mman.h>
#include <unistd.h>

namespace placer {

void TensorData::releasePages() const {
    if (!m_file || !m_file->mapped())
        return;
    static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(m_view) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(m_view) + m_viewSize) / page * page;
    // The mapping is private and never written through a view (data() copies first), so its
    // pages are the file's: dropping them loses nothing.
    if (end > begin)
        ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

} // namespace placer
