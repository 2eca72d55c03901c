// Mapping a plan's virtual devices onto physical ones: the requests, then defaults by kind.
#include "device/DeviceMapping.h"

#include <algorithm>

namespace placer {

Result<std::vector<Device*>> mapDevices(const DeviceSet& devices,
                                        const std::vector<DeviceMapRequest>& requests,
                                        DeviceRegistry& registry,
                                        std::vector<std::string>* warnings,
                                        std::vector<std::shared_ptr<const void>>* leases) {
    std::vector<Device*> mapping(static_cast<std::size_t>(devices.size()), nullptr);
    // A vcpu of the mapping's own, vcpu<d+1> for virtual device d where it can be (the same
    // one every run, whichever front end runs it): leased when the caller holds leases, else
    // fresh.
    auto ownVCpu = [&](int d) {
        const std::string preferred = "vcpu" + std::to_string(d + 1);
        if (!leases)
            return registry.freshVCpu(preferred);
        DeviceRegistry::VCpuLease lease = registry.leaseVCpu(mapping, preferred);
        leases->push_back(std::move(lease.lease));
        return lease.device;
    };
    for (const DeviceMapRequest& request : requests) {
        const auto id = devices.find(request.device);
        if (!id)
            return SourceError{"", 0, 0,
                               "--map " + request.device + "=" + request.physical +
                                   ": unknown virtual device (devices: " + devices.namesList() +
                                   ")"};
        auto device = registry.get(request.physical);
        if (!device)
            return SourceError{"", 0, 0,
                               "--map " + request.device + "=" + request.physical + ": " +
                                   device.error().message};
        mapping[id->index] = device.value();
    }
    for (int d = 0; d < devices.size(); ++d) {
        Device*& physical = mapping[static_cast<std::size_t>(d)];
        if (physical)
            continue;
        const VirtualDevice& device = devices[DeviceId(d)];
        // A program that links no backend (only the readers) has no device to run on.
        const auto none = [&](const std::string& why) {
            return SourceError{"", 0, 0,
                               "virtual device '" + device.name + "' has no physical device: " +
                                   why + " (this program links no CPU backend)"};
        };
        switch (device.kind) {
        case DeviceKind::Cpu: {
            auto cpu = registry.get("cpu");
            if (!cpu)
                return none(cpu.error().message);
            physical = cpu.value();
            break;
        }
        case DeviceKind::VCpu:
            physical = ownVCpu(d);
            if (!physical)
                return none("no backend makes virtual CPUs");
            // One an earlier run bound to a core (--map auto) runs anywhere again.
            if (!physical->boundCores().empty())
                (void)physical->bindToCores({});
            break;
        case DeviceKind::Cuda: {
            if (registry.hasKind(DeviceKind::Cuda)) {
                auto cuda = registry.get("cuda:" + std::to_string(device.ordinal));
                if (!cuda)
                    return SourceError{"", 0, 0, device.name + ": " + cuda.error().message};
                physical = cuda.value();
            } else {
                physical = ownVCpu(d);
                if (!physical)
                    return none("no CUDA device, and no backend makes virtual CPUs");
                warnings->push_back("virtual device '" + device.name + "' (cuda) runs on " +
                                    physical->name() +
                                    ": this machine has no CUDA device (see 'placer devices')");
            }
            break;
        }
        }
    }
    return mapping;
}

} // namespace placer
