// What every physical device shares: clocks, and the process's peak resident memory.
#include "device/Device.h"
#include "kernels/IndexingPlan.h"

#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <limits>

namespace placer {

namespace {

const auto kProcessStart = std::chrono::steady_clock::now();

} // namespace

double hostClockMicros() {
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() -
                                                     kProcessStart)
        .count();
}

std::int64_t hostAvailableMemory() {
    // MemAvailable counts reclaimable caches as well as free pages: what the kernel can hand out
    // without swapping.
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    std::int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit) {
        if (key == "MemAvailable:")
            return kib * 1024;
    }
    const long pages = sysconf(_SC_AVPHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0)
        return static_cast<std::int64_t>(pages) * pageSize;
    return std::numeric_limits<std::int64_t>::max(); // unknown: allocation itself will tell
}

std::string copyInAndWait(Device& device, std::byte* dst, const void* src, std::int64_t bytes) {
    std::string error;
    device.enqueue([&] {
        try {
            device.copyIn(dst, src, bytes);
        } catch (const std::exception& e) {
            error = e.what();
        }
    });
    device.synchronize();
    if (error.empty())
        error = device.takeAsyncError();
    return error;
}

std::int64_t processPeakResidentBytes() {
    struct rusage usage {};
    if (::getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    return static_cast<std::int64_t>(usage.ru_maxrss) * 1024; // Linux reports kilobytes
}

std::int64_t Device::kernelMemoryBytes(const std::vector<KernelSpec>& specs) const {
    std::int64_t bytes = 0;
    for (const KernelSpec& spec : specs)
        bytes += indexingScratchBytes(spec);
    return bytes;
}

} // namespace placer
