// Which physical device runs each virtual device of a plan: the user's requests (`--map`), then
// the defaults by device kind. Plans stay valid across machines because this happens at run time.
#pragma once

#include "device/DeviceRegistry.h"
#include "ir/DeviceSet.h"
#include "ir/Result.h"

#include <memory>
#include <string>
#include <vector>

namespace placer {

/// `--map gpu=vcpu1`: run virtual device `device` on physical device `physical`.
struct DeviceMapRequest {
    std::string device;
    std::string physical;
};

/// The physical device of every virtual device: the requests first; then cpu-kind devices run
/// on the host `cpu`, vcpu-kind devices on a vcpuN of their own each (vcpu<d+1> for virtual
/// device d where it is free, so that every run and every front end maps alike), and cuda-kind
/// devices on cuda:<ordinal> when this machine has CUDA, otherwise on a vcpuN of their own (with
/// a warning). With `leases`, those vcpus are leased (DeviceRegistry::leaseVCpu: one a finished
/// run gave back, or a fresh one) and held by the leases added there; without, each is fresh.
Result<std::vector<Device*>> mapDevices(const DeviceSet& devices,
                                        const std::vector<DeviceMapRequest>& requests,
                                        DeviceRegistry& registry,
                                        std::vector<std::string>* warnings,
                                        std::vector<std::shared_ptr<const void>>* leases = nullptr);

} // namespace placer
