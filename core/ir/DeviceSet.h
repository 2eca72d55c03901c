// Virtual devices: the devices a plan is made for, mapped to physical ones only at run time.
#pragma once

#include "ir/DType.h"
#include "ir/Ids.h"
#include "ir/Result.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

enum class DeviceKind : std::uint8_t { Cpu, Cuda, VCpu };
inline constexpr int kDeviceKindCount = 3;

std::string_view deviceKindName(DeviceKind kind);
std::optional<DeviceKind> parseDeviceKind(std::string_view name);

struct VirtualDevice {
    std::string name; ///< "cpu", "gpu", "vcpu1", ...
    DeviceKind kind = DeviceKind::Cpu;
    int ordinal = 0;                            ///< n-th device of its kind, unless given
    std::optional<std::int64_t> memoryCapacity; ///< bytes
    std::string target;                         ///< optional compiler target string
    std::string memoryScope;                    ///< optional memory scope
    /// The precision policy: the type its float32 work is computed in (float16 or bfloat16),
    /// with casts where values cross from or to float32 (plan/Precision.h). Float32: none.
    DType computeType = DType::Float32;

    bool operator==(const VirtualDevice&) const = default;
};

/// The virtual devices of a session, with the default device (where unconstrained work goes) and
/// the host device (where host-only ops run).
class DeviceSet {
public:
    DeviceSet() = default;

    /// Adds a device; returns its id. Names must be unique (checked by parse(), asserted here).
    DeviceId add(VirtualDevice device);

    int size() const { return static_cast<int>(m_devices.size()); }
    bool empty() const { return m_devices.empty(); }
    const VirtualDevice& operator[](DeviceId id) const { return m_devices[id.index]; }
    const std::vector<VirtualDevice>& devices() const { return m_devices; }

    std::optional<DeviceId> find(std::string_view name) const;
    /// "cpu, gpu": the names in order, for messages.
    std::string namesList() const;

    DeviceId defaultDevice() const { return m_default; }
    DeviceId hostDevice() const { return m_host; }
    void setDefaultDevice(DeviceId id) { m_default = id; }
    void setHostDevice(DeviceId id) { m_host = id; }

    /// Fills in the default (first non-host device, else the host) and the host (first cpu-kind
    /// device, else first vcpu-kind device) where they are unset.
    void chooseDefaults();

    /// Parses "NAME:KIND[:mem=SIZE][:ordinal=N][:target=T][:scope=S][:dtype=T],...", or says what
    /// is wrong.
    static Result<DeviceSet> parse(std::string_view spec);

    bool operator==(const DeviceSet&) const = default;

private:
    std::vector<VirtualDevice> m_devices;
    DeviceId m_default;
    DeviceId m_host;
};

/// A device's dtype= option: "bf16"/"bfloat16", "f16"/"float16", "f32"/"float32".
std::optional<DType> parseComputeType(std::string_view text);
/// The short word dtype= writes it with: "bf16", "f16", "f32".
std::string_view computeTypeWord(DType type);

/// Parses "8GiB", "512MB", "1024", "1.5GiB" into bytes; std::nullopt if malformed.
std::optional<std::int64_t> parseByteSize(std::string_view text);

} // namespace placer
