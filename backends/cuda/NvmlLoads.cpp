// GPU loads through NVML, opened at run time (backends/cuda/NvmlLoads.h). The few entry points
// used are declared here with NVML's C ABI (nvml.h: nvmlReturn_t is an int, a device an opaque
// handle, the two structures below), so that the build needs no NVML header.
#include "backends/cuda/NvmlLoads.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <mutex>

namespace placer::cuda {

namespace {

using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn kNvmlSuccess = 0;
struct NvmlUtilization {
    unsigned int gpu;    ///< percent of the last sample period a kernel ran
    unsigned int memory; ///< percent of it the memory was read or written
};
struct NvmlMemory {
    unsigned long long total, free, used;
};

struct Nvml {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*byPciBusId)(const char*, NvmlDevice*) = nullptr;
    NvmlReturn (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
    NvmlReturn (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
    bool ready = false;
};

template <typename Function> bool bind(void* library, const char* name, Function* function) {
    *function = reinterpret_cast<Function>(dlsym(library, name));
    return *function != nullptr;
}

const Nvml& nvml() {
    static Nvml opened;
    static std::once_flag once;
    std::call_once(once, [] {
        void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!library)
            return;
        if (bind(library, "nvmlInit_v2", &opened.init) &&
            bind(library, "nvmlDeviceGetHandleByPciBusId_v2", &opened.byPciBusId) &&
            bind(library, "nvmlDeviceGetUtilizationRates", &opened.utilization) &&
            bind(library, "nvmlDeviceGetMemoryInfo", &opened.memory))
            opened.ready = opened.init() == kNvmlSuccess;
    });
    return opened;
}

} // namespace

std::vector<DeviceLoad> nvmlLoads(int count) {
    std::vector<DeviceLoad> loads;
    const Nvml& library = nvml();
    if (!library.ready)
        return loads;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
        char busId[32] = {};
        if (cudaDeviceGetPCIBusId(busId, sizeof busId, ordinal) != cudaSuccess) {
            cudaGetLastError();
            continue;
        }
        NvmlDevice device = nullptr;
        if (library.byPciBusId(busId, &device) != kNvmlSuccess)
            continue;
        DeviceLoad load;
        load.name = "cuda:" + std::to_string(ordinal);
        load.source = "NVML";
        NvmlUtilization utilization{};
        if (library.utilization(device, &utilization) == kNvmlSuccess)
            load.busy = utilization.gpu / 100.0;
        NvmlMemory memory{};
        if (library.memory(device, &memory) == kNvmlSuccess) {
            load.freeBytes = static_cast<std::int64_t>(memory.free);
            load.totalBytes = static_cast<std::int64_t>(memory.total);
        }
        loads.push_back(std::move(load));
    }
    return loads;
}

} // namespace placer::cuda
