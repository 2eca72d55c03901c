// Mapping model files read-only into memory, and noticing when a mapped file changes on disk.
//
// A mapped file cut short under the process (another program truncates or rewrites it) makes a
// read of a page past its new end raise SIGBUS, which kills the process by default: the GUI with
// the user's edits. So every mapping is registered in a fixed table that a SIGBUS handler reads:
// a fault inside a registered mapping replaces the rest of that mapping with zero pages (the read
// then returns zeros instead of faulting), and marks the mapping cut short, which changedOnDisk()
// reports, so the run that read it fails with the file's name. A fault anywhere else goes to the
// handler that was there before, or kills the process as it would have.
#include "io/MappedFile.h"
#include "io/TextFile.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace placer {

namespace {

/// A registered mapping: [start, end), and whether a fault cut it short. Read by the handler
/// without locks; start is written last and cleared first, so a non-zero start is a whole entry.
struct GuardedRange {
    std::atomic<std::uintptr_t> start{0};
    std::atomic<std::uintptr_t> end{0};
    std::atomic<int> faulted{0};
};
constexpr int kGuardedRanges = 4096;
GuardedRange g_ranges[kGuardedRanges];
std::mutex g_rangesMutex;
struct sigaction g_previous {};
std::uintptr_t g_pageSize = 4096;

void onSigbus(int signal, siginfo_t* info, void* context) {
    const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);
    for (GuardedRange& range : g_ranges) {
        const std::uintptr_t start = range.start.load(std::memory_order_acquire);
        const std::uintptr_t end = range.end.load(std::memory_order_acquire);
        if (start == 0 || address < start || address >= end)
            continue;
        // Zero pages from the faulting page to the mapping's end: the read is retried on them.
        const std::uintptr_t page = address & ~(g_pageSize - 1);
        void* zeros = ::mmap(reinterpret_cast<void*>(page), end - page, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (zeros != MAP_FAILED) {
            range.faulted.store(1, std::memory_order_release);
            return;
        }
        break;
    }
    // Not a mapping of ours: whoever handled SIGBUS before (a sanitizer), else the default
    // action, which the retried read then meets.
    if ((g_previous.sa_flags & SA_SIGINFO) != 0 && g_previous.sa_sigaction) {
        g_previous.sa_sigaction(signal, info, context);
        return;
    }
    if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN &&
        g_previous.sa_handler) {
        g_previous.sa_handler(signal);
        return;
    }
    ::signal(signal, SIG_DFL);
}

void installSigbusHandler() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (const long size = ::sysconf(_SC_PAGESIZE); size > 0)
            g_pageSize = static_cast<std::uintptr_t>(size);
        struct sigaction action {};
        action.sa_sigaction = onSigbus;
        action.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &g_previous);
    });
}

/// The table entry guarding [data, data + size), or -1 when the table is full (the mapping is
/// then unguarded, as before).
int guard(const char* data, std::size_t size) {
    installSigbusHandler();
    std::lock_guard lock(g_rangesMutex);
    for (int i = 0; i < kGuardedRanges; ++i) {
        GuardedRange& range = g_ranges[i];
        if (range.start.load(std::memory_order_relaxed) != 0)
            continue;
        range.faulted.store(0, std::memory_order_relaxed);
        range.end.store(reinterpret_cast<std::uintptr_t>(data) + size, std::memory_order_relaxed);
        range.start.store(reinterpret_cast<std::uintptr_t>(data), std::memory_order_release);
        return i;
    }
    return -1;
}

void unguard(int entry) {
    if (entry < 0)
        return;
    std::lock_guard lock(g_rangesMutex);
    g_ranges[entry].start.store(0, std::memory_order_release);
    g_ranges[entry].end.store(0, std::memory_order_relaxed);
}

} // namespace

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return SourceError{path, 0, 0, std::string("cannot open file: ") + std::strerror(errno)};
    struct stat info {};
    const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
    std::shared_ptr<MappedFile> file(new MappedFile);
    if (regular && info.st_size > 0) {
        void* data = ::mmap(nullptr, static_cast<std::size_t>(info.st_size), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE, fd, 0);
        if (data != MAP_FAILED) {
            ::close(fd);
            file->m_data = static_cast<const char*>(data);
            file->m_size = static_cast<std::size_t>(info.st_size);
            file->m_mapped = true;
            file->m_path = path;
            file->m_stat = info;
            file->m_guard = guard(file->m_data, file->m_size);
            return std::shared_ptr<const MappedFile>(std::move(file));
        }
    }
    ::close(fd);
    if (regular && info.st_size == 0)
        return std::shared_ptr<const MappedFile>(std::move(file));
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    file->m_copy = text.take();
    file->m_data = file->m_copy.data();
    file->m_size = file->m_copy.size();
    return std::shared_ptr<const MappedFile>(std::move(file));
}

std::string MappedFile::changedOnDisk() const {
    if (m_guard >= 0 && g_ranges[m_guard].faulted.load(std::memory_order_acquire) != 0)
        return "'" + m_path + "' was cut short while it was read (" +
               std::to_string(m_stat.st_size) +
               " bytes when it was opened): its pages past the new end read as zeros; open the "
               "model again";
    struct stat now {};
    if (!m_mapped || ::stat(m_path.c_str(), &now) != 0 || now.st_dev != m_stat.st_dev ||
        now.st_ino != m_stat.st_ino)
        return {};
    if (now.st_size == m_stat.st_size && now.st_mtim.tv_sec == m_stat.st_mtim.tv_sec &&
        now.st_mtim.tv_nsec == m_stat.st_mtim.tv_nsec)
        return {};
    return "'" + m_path + "' changed on disk since it was read (" + std::to_string(m_stat.st_size) +
           " bytes then, " + std::to_string(now.st_size) + " now); open the model again";
}

MappedFile::~MappedFile() {
    unguard(m_guard);
    if (m_mapped)
        ::munmap(const_cast<char*>(m_data), m_size);
}

} // namespace placer
