// A CPU device: its worker, arena, kernels, copies and clock (backends/cpu/CpuDevice.h).
#include "backends/cpu/CpuDevice.h"

#include "device/HostEvent.h"

#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "device/WorkQueue.h"

#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace placer {

/// The context's memory: 64-byte aligned blocks, counted. Large blocks are rounded up to a
/// size class (a quarter of a power of two: at most 25 % more) and, when freed, kept for the
/// next request of their class, the latest kCachedBytes of them, as a caching allocator does:
/// tensors made at run time (a detector's per-detection masks, a Loop's growing carried value)
/// come and go every iteration, and a fresh block from the system costs its pages' faults and
/// zeroing every time. What is counted in use and at peak is what was asked for.
struct CpuDevice::Arena {
    static constexpr std::size_t kCachedFrom = std::size_t{256} << 10;
    static constexpr std::size_t kCachedBytes = std::size_t{128} << 20;

    std::mutex mutex;
    struct Block {
        std::int64_t bytes;
        std::size_t size; ///< as allocated
    };
    std::unordered_map<std::byte*, Block> blocks;
    std::deque<std::pair<std::size_t, std::byte*>> cached; ///< free blocks, the latest last
    std::size_t cachedBytes = 0;
    std::int64_t inUse = 0;
    std::int64_t peak = 0;

    /// The size a request of `bytes` is allocated at.
    static std::size_t sizeOf(std::int64_t bytes) {
        const auto size =
            static_cast<std::size_t>((std::max<std::int64_t>(bytes, 1) + 63) / 64 * 64);
        if (size < kCachedFrom)
            return size;
        std::size_t power = kCachedFrom;
        while (power * 2 <= size)
            power *= 2;
        const std::size_t quarter = power / 4;
        return (size + quarter - 1) / quarter * quarter;
    }

    /// A kept block of `size`, the latest first; null when none.
    std::byte* reuse(std::size_t size) {
        for (auto it = cached.rbegin(); it != cached.rend(); ++it) {
            if (it->first != size)
                continue;
            std::byte* data = it->second;
            cached.erase(std::next(it).base());
            cachedBytes -= size;
            return data;
        }
        return nullptr;
    }

    /// Keeps a freed block, letting the oldest go while more than kCachedBytes are kept.
    void keep(std::byte* data, std::size_t size) {
        if (size < kCachedFrom || size > kCachedBytes) {
            std::free(data);
            return;
        }
        cached.emplace_back(size, data);
        cachedBytes += size;
        while (cachedBytes > kCachedBytes) {
            std::free(cached.front().second);
            cachedBytes -= cached.front().first;
            cached.pop_front();
        }
    }

    ~Arena() {
        for (auto& [data, block] : blocks)
            std::free(data);
        for (auto& [size, data] : cached)
            std::free(data);
    }
};

namespace {

/// A block of `size` bytes for the arena. From 4 MiB up on 2 MiB boundaries, offered transparent
/// huge pages (where the kernel's setting is "madvise", as Debian's is, memory gets them only
/// when asked): a kernel sweeping a large tensor misses the TLB 512 times less often, and a copy
/// between ranks (Open MPI's single copy, the receiver's process_vm_readv) pins 512 times fewer
/// pages. The rest 64-byte aligned.
std::byte* allocateBlock(std::size_t size) {
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    if (size < 2 * kHugePage)
        return static_cast<std::byte*>(std::aligned_alloc(64, size));
    const std::size_t rounded = (size + kHugePage - 1) / kHugePage * kHugePage;
    void* data = std::aligned_alloc(kHugePage, rounded);
    if (data)
        ::madvise(data, rounded, MADV_HUGEPAGE); // only advice: refused, the pages stay small
    return static_cast<std::byte*>(data);
}

} // namespace

CpuDevice::CpuDevice(std::string name, DeviceKind kind, int threads, std::int64_t arenaCapacity)
    : m_name(std::move(name)), m_kind(kind), m_threads(threads), m_arenaCapacity(arenaCapacity),
      m_arena(std::make_unique<Arena>()), m_kernelContext(std::make_unique<CpuKernelContext>()),
      m_worker(std::make_unique<WorkQueue>([threads] {
          // OpenMP's thread count is per thread: kernels started here use `threads`.
          omp_set_num_threads(threads);
      })) {
    m_kernelContext->threads = threads;
}

CpuDevice::~CpuDevice() {
    m_worker.reset();
}

Status CpuDevice::bindToCores(const std::vector<int>& cores) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (cores.empty()) {
        // Unbound: every core this process may use.
        if (sched_getaffinity(0, sizeof set, &set) != 0)
            return SourceError::sentence(m_name +
                                         ": the cores this process may use cannot be read");
    }
    for (int core : cores) {
        if (core < 0 || core >= CPU_SETSIZE)
            return SourceError::sentence(m_name + ": there is no core " + std::to_string(core));
        CPU_SET(core, &set);
    }
    int error = 0;
    m_worker->enqueue([&] {
        error = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
        // OpenMP's threads for kernels with threads=N follow the worker where the runtime
        // places them by the process's mask; bound, they share the worker's cores.
    });
    m_worker->drain();
    if (error != 0) {
        std::string list;
        for (int core : cores)
            list += (list.empty() ? "" : ",") + std::to_string(core);
        return SourceError::sentence(m_name + ": cannot be bound to core(s) " + list +
                                     " (not among the cores this process may use)");
    }
    std::lock_guard lock(m_coresMutex);
    m_cores = cores;
    return Status();
}

std::vector<int> CpuDevice::boundCores() const {
    std::lock_guard lock(m_coresMutex);
    return m_cores;
}

std::string CpuDevice::description() const {
    const std::string threads =
        std::to_string(m_threads) + (m_threads == 1 ? " worker thread" : " worker threads");
    if (m_kind == DeviceKind::Cpu)
        return "the host CPU, " + threads + ", " +
               std::to_string(std::thread::hardware_concurrency()) + " cores on this machine";
    std::string arena = "own memory arena";
    if (m_arenaCapacity > 0)
        arena += " of " + formatBytes(m_arenaCapacity);
    return "virtual CPU context (own worker, " + arena + "), " + threads;
}

Result<std::byte*> CpuDevice::allocate(std::int64_t bytes) {
    if (m_arenaCapacity > 0 && bytes > m_arenaCapacity - bytesInUse())
        return SourceError::sentence(m_name + ": its arena of " + formatBytes(m_arenaCapacity) +
                                     " has no room for " + formatBytes(bytes) + " (" +
                                     formatBytes(bytesInUse()) + " in use)");
    const std::size_t size = Arena::sizeOf(bytes);
    std::byte* data = nullptr;
    if (size >= Arena::kCachedFrom) {
        std::lock_guard lock(m_arena->mutex);
        data = m_arena->reuse(size);
    }
    if (!data)
        data = allocateBlock(size);
    if (!data)
        return SourceError::sentence(m_name + ": out of memory allocating " + formatBytes(bytes));
    std::lock_guard lock(m_arena->mutex);
    m_arena->blocks.emplace(data, Arena::Block{bytes, size});
    m_arena->inUse += bytes;
    m_arena->peak = std::max(m_arena->peak, m_arena->inUse);
    return data;
}

void CpuDevice::free(std::byte* data) {
    if (!data)
        return;
    std::lock_guard lock(m_arena->mutex);
    const auto it = m_arena->blocks.find(data);
    if (it == m_arena->blocks.end())
        return;
    const Arena::Block block = it->second;
    m_arena->inUse -= block.bytes;
    m_arena->blocks.erase(it);
    m_arena->keep(data, block.size);
}

std::int64_t CpuDevice::bytesInUse() const {
    std::lock_guard lock(m_arena->mutex);
    return m_arena->inUse;
}

std::int64_t CpuDevice::peakBytes() const {
    std::lock_guard lock(m_arena->mutex);
    return m_arena->peak;
}

void CpuDevice::resetPeak() {
    std::lock_guard lock(m_arena->mutex);
    m_arena->peak = m_arena->inUse;
}

std::int64_t CpuDevice::allocatableBytes() const {
    const std::int64_t host = hostAvailableMemory();
    if (m_arenaCapacity <= 0)
        return host;
    return std::min(host, std::max<std::int64_t>(0, m_arenaCapacity - bytesInUse()));
}

void CpuDevice::copyIn(std::byte* dst, const void* src, std::int64_t bytes) {
    std::memcpy(dst, src, static_cast<std::size_t>(bytes));
}

void CpuDevice::copyOut(void* dst, const std::byte* src, std::int64_t bytes) {
    std::memcpy(dst, src, static_cast<std::size_t>(bytes));
}

void CpuDevice::copyPeer(std::byte* dst, Device& source, const std::byte* src, std::int64_t bytes) {
    // Host-memory devices: the destination's worker reads the source's arena directly; a GPU
    // copies its memory out itself.
    if (!source.hostAccessible()) {
        source.copyOut(dst, src, bytes);
        return;
    }
    std::memcpy(dst, src, static_cast<std::size_t>(bytes));
}

namespace {

/// What `task` returns, run on `device`'s worker and waited for. Kernels are made there: oneDNN
/// fixes a primitive's thread count when it is created, from the creating thread's OpenMP
/// setting, which only the worker has set to the context's (and the layouts and kernels oneDNN
/// picks may depend on it). On the worker itself (a kernel prepared at run time, for shapes
/// found then) the task runs at once.
template <typename Task> auto onWorker(const WorkQueue& worker, Device& device, Task task) {
    if (worker.onWorker())
        return task();
    std::optional<decltype(task())> result;
    device.enqueue([&] { result.emplace(task()); });
    device.synchronize();
    return std::move(*result);
}

} // namespace

Result<std::unique_ptr<Kernel>> CpuDevice::prepare(const KernelSpec& spec) {
    return onWorker(*m_worker, *this, [&] { return makeCpuKernel(spec, *m_kernelContext); });
}

std::string CpuDevice::packedLayout(const KernelSpec& spec, std::size_t input) {
    return onWorker(*m_worker, *this,
                    [&] { return packedLayoutFor(spec, input, *m_kernelContext); });
}

bool CpuDevice::takesViews(const KernelSpec& spec) {
    return onWorker(*m_worker, *this, [&] { return viewsKeepSpeedFor(spec, *m_kernelContext); });
}

std::string CpuDevice::loadPacked(std::byte* dst, const void* src, std::int64_t bytes,
                                  const std::string& layout) {
    return onWorker(*m_worker, *this,
                    [&] { return cpu::packConstant(dst, src, bytes, layout, *m_kernelContext); });
}

void CpuDevice::enqueue(std::function<void()> task) {
    m_worker->enqueue(std::move(task));
}

void CpuDevice::synchronize() {
    m_worker->drain();
}

std::unique_ptr<Event> CpuDevice::createEvent() {
    return std::make_unique<HostEvent>();
}

double CpuDevice::now() const {
    return hostClockMicros();
}

} // namespace placer
