// Mapping virtual devices by what the machine has free now (`--map auto`, the GUI's default): seed
// 000's "choose the actual device at runtime based on load, capabilities, etc.".
//
//  - cpu-kind devices run on the host `cpu`;
//  - vcpu-kind devices (and cuda-kind ones on a machine without a GPU) each get a vcpu bound to
//    the least busy core this process may use, measured from /proc/stat; with more of them than
//    cores, they share the least busy cores in turn;
//  - cuda-kind devices go to the GPU with room for the plan's peak on them and the least load
//    (NVML, where the driver has it: DeviceRegistry::loads()); more virtual GPUs than GPUs
//    share them.
//
// Every choice comes with its reason ("vcpu2 on core 1, 3 % busy"), which the run report, the
// summary and the GUI's palette show.
#pragma once

#include "device/DeviceMapping.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace placer {

/// How busy each host core this process may use was over a short look, and the host's memory.
struct HostLoad {
    struct Core {
        int core = 0;
        double busy = 0; ///< 0..1
    };
    std::vector<Core> cores;          ///< by core number
    std::int64_t availableBytes = -1; ///< MemAvailable; -1 when unknown
    double seconds = 0;               ///< how long the look was
};

/// Reads /proc/stat twice, `look` apart (or once, against the previous reading when that is
/// recent enough), and /proc/meminfo.
HostLoad measureHostLoad(std::chrono::milliseconds look = std::chrono::milliseconds(60));

/// For tests: where measureHostLoad reads "/proc/stat" and "/proc/meminfo" (the file's text, or
/// nullopt when it cannot be read); `{}` puts the files back. The cores this process may use are
/// then those the fake /proc/stat lists.
void setProcFileReader(std::function<std::optional<std::string>(const std::string& path)> reader);

struct LoadMapping {
    std::vector<Device*> mapping;
    std::vector<std::string> reasons; ///< per virtual device
};

/// The physical device of every virtual device by load (see above): `requests` first, as
/// mapDevices takes them. `peakBytes`, per virtual device, is what the plan needs there (0 when
/// unknown). vcpus are leased into `leases` as mapDevices does and bound to their cores.
Result<LoadMapping> mapDevicesByLoad(const DeviceSet& devices,
                                     const std::vector<DeviceMapRequest>& requests,
                                     DeviceRegistry& registry, const HostLoad& load,
                                     const std::vector<std::int64_t>& peakBytes,
                                     std::vector<std::string>* warnings,
                                     std::vector<std::shared_ptr<const void>>* leases);

} // namespace placer
