// Which physical devices this machine has, and the backends that make them. Core knows every
// kind of device only through DeviceBackend: every backend lives in backends/ (the host CPU and
// virtual CPU contexts, CUDA) and announces itself with registerDeviceBackend() before the first
// registry is made, as ONNX Runtime's execution providers and PyTorch's device hooks do. Nothing
// in core names a backend.
#pragma once

#include "device/Device.h"
#include "ir/Result.h"

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// What `placer devices` lists: a device this machine has, or a kind it lacks and why.
struct PhysicalDeviceInfo {
    std::string name;
    DeviceKind kind = DeviceKind::Cpu;
    bool available = true;
    std::string description; ///< what it is, or why it is absent
};

/// How busy one physical device is now, as its backend reads it (a GPU's through NVML).
struct DeviceLoad {
    std::string name;            ///< "cuda:0"
    double busy = 0;             ///< 0..1: the share of the last moments it ran kernels
    std::int64_t freeBytes = -1; ///< memory free now; -1 when unknown
    std::int64_t totalBytes = -1;
    std::string source; ///< "NVML", "cudaMemGetInfo"
};

/// A source of physical devices of one kind, named with one prefix ("cpu", "vcpu", "cuda").
class DeviceBackend {
public:
    virtual ~DeviceBackend() = default;
    virtual DeviceKind kind() const = 0;
    /// The prefix of the names of its devices; the registry sends it every spec that is the
    /// prefix alone or the prefix followed by a digit or ':' ("cuda", "cuda:0", "vcpu3:threads=2").
    virtual std::string_view prefix() const = 0;
    /// The devices it has, or one unavailable entry saying why there are none.
    virtual std::vector<PhysicalDeviceInfo> list() = 0;
    /// The name the device `spec` asks for is known by ("cuda" and "cuda:0" are "cuda:0",
    /// "vcpu2:threads=2" is "vcpu2"), or why `spec` is not a device of this backend. The
    /// registry makes one device per name.
    virtual Result<std::string> deviceName(std::string_view spec) const = 0;
    /// The device `spec` names (options such as threads=N apply now), or why it cannot be had.
    virtual Result<std::unique_ptr<Device>> create(std::string_view spec) = 0;
    /// How busy its devices are now, where it can tell (--map auto); none when it cannot.
    virtual std::vector<DeviceLoad> loads() { return {}; }
};

/// Adds a backend to every registry made from now on (backends/cpu's and backends/cuda's
/// registrations call it as the program starts). Safe to call from several threads.
void registerDeviceBackend(std::function<std::unique_ptr<DeviceBackend>()> factory);

/// A device of its own, outside every registry, from the first registered backend of `kind`
/// (the reference run's private host CPU: "cpu:threads=1"), or why there is none.
Result<std::unique_ptr<Device>> makeStandaloneDevice(DeviceKind kind, std::string_view spec);

/// The physical devices of one session: those of the registered backends (`cpu`, the host, and
/// `vcpuN` contexts created on demand, `cuda:N`), in the order of their kinds. Devices live as
/// long as the registry.
class DeviceRegistry {
public:
    DeviceRegistry();
    ~DeviceRegistry();
    DeviceRegistry(const DeviceRegistry&) = delete;
    DeviceRegistry& operator=(const DeviceRegistry&) = delete;

    /// The device named by `spec`: "cpu", "cpu:threads=2", "vcpu3", "vcpu1:threads=2:mem=1GiB",
    /// "cuda:0", and another rank's as "rank1/vcpu1" (device/Ranks.h: a RemoteDevice unless it
    /// is this rank's). The same name always gives the same device (options apply when it is
    /// first created). An error says why when no backend has it.
    Result<Device*> get(std::string_view spec);
    /// A virtual CPU no one has asked for yet: `preferred` ("vcpu2") when it is not made yet,
    /// else the lowest-numbered one not made; null when no backend of this program makes
    /// virtual CPUs (none is linked). leaseVCpu's device is null then too.
    Device* freshVCpu(std::string_view preferred = {});
    /// A virtual CPU for a run's mapping: one a finished run gave back (the lowest-numbered),
    /// or a fresh one, never one of `taken` (the mapping's others). It is the holder's until
    /// `lease` goes, so a long session (the GUI, Python, a fuzzer) keeps as many virtual CPUs
    /// as it runs at once, not one per run ever made (each has a worker thread and a memory
    /// arena).
    struct VCpuLease {
        Device* device = nullptr;
        std::shared_ptr<const void> lease;
    };
    /// `preferred`, when it names a vcpu that is idle or not made yet and not taken, comes
    /// first: a mapping asks for the same one every run.
    VCpuLease leaseVCpu(const std::vector<Device*>& taken = {}, std::string_view preferred = {});
    /// Whether a backend of `kind` has at least one usable device.
    bool hasKind(DeviceKind kind);
    /// How busy the devices of every backend that can tell are now (DeviceBackend::loads).
    std::vector<DeviceLoad> loads();
    /// Every backend's devices (or the reason it has none), and a line for each kind of device
    /// that no backend of this build provides.
    std::vector<PhysicalDeviceInfo> list();

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace placer
