// Virtual device sets and their textual specification.
#include "ir/DeviceSet.h"

#include <array>
#include <cassert>
#include <charconv>
#include <cmath>
#include <string>

namespace placer {

namespace {

constexpr std::array<std::string_view, kDeviceKindCount> kKindNames{"cpu", "cuda", "vcpu"};

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t end = text.find(separator, start);
        parts.push_back(text.substr(start, end - start));
        if (end == std::string_view::npos)
            break;
        start = end + 1;
    }
    return parts;
}

bool isValidDeviceName(std::string_view name) {
    if (name.empty())
        return false;
    for (char c : name) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        if (!ok)
            return false;
    }
    return true;
}

} // namespace

std::string_view deviceKindName(DeviceKind kind) {
    return kKindNames[static_cast<int>(kind)];
}

std::optional<DeviceKind> parseDeviceKind(std::string_view name) {
    for (int i = 0; i < kDeviceKindCount; ++i) {
        if (kKindNames[i] == name)
            return static_cast<DeviceKind>(i);
    }
    if (name == "gpu")
        return DeviceKind::Cuda;
    return std::nullopt;
}

DeviceId DeviceSet::add(VirtualDevice device) {
    assert(!find(device.name) && "device names are unique");
    m_devices.push_back(std::move(device));
    return DeviceId(static_cast<std::int32_t>(m_devices.size() - 1));
}

std::optional<DeviceId> DeviceSet::find(std::string_view name) const {
    for (std::size_t i = 0; i < m_devices.size(); ++i) {
        if (m_devices[i].name == name)
            return DeviceId(static_cast<std::int32_t>(i));
    }
    return std::nullopt;
}

std::string DeviceSet::namesList() const {
    std::string out;
    for (const VirtualDevice& device : m_devices) {
        if (!out.empty())
            out += ", ";
        out += device.name;
    }
    return out;
}

void DeviceSet::chooseDefaults() {
    auto firstOfKind = [this](DeviceKind kind) -> DeviceId {
        for (std::size_t i = 0; i < m_devices.size(); ++i) {
            if (m_devices[i].kind == kind)
                return DeviceId(static_cast<std::int32_t>(i));
        }
        return DeviceId();
    };
    if (!m_host.valid())
        m_host = firstOfKind(DeviceKind::Cpu);
    if (!m_host.valid())
        m_host = firstOfKind(DeviceKind::VCpu);
    if (!m_default.valid()) {
        for (std::size_t i = 0; i < m_devices.size(); ++i) {
            if (DeviceId(static_cast<std::int32_t>(i)) != m_host) {
                m_default = DeviceId(static_cast<std::int32_t>(i));
                break;
            }
        }
    }
    if (!m_default.valid())
        m_default = m_host;
}

Result<DeviceSet> DeviceSet::parse(std::string_view spec) {
    DeviceSet set;
    std::array<int, kDeviceKindCount> kindCounts{};
    for (std::string_view entry : split(spec, ',')) {
        const std::vector<std::string_view> fields = split(entry, ':');
        if (fields.size() < 2) {
            return SourceError::sentence("device '" + std::string(entry) +
                                         "' is not of the form NAME:KIND (e.g. gpu:cuda)");
        }
        VirtualDevice device;
        device.name = std::string(fields[0]);
        if (!isValidDeviceName(device.name)) {
            return SourceError::sentence("device name '" + device.name +
                                         "' is not valid: use letters, digits, '_', '-' and '.'");
        }
        if (set.find(device.name)) {
            return SourceError::sentence("device '" + device.name + "' is listed twice");
        }
        const std::optional<DeviceKind> kind = parseDeviceKind(fields[1]);
        if (!kind) {
            return SourceError::sentence("device '" + device.name + "' has unknown kind '" +
                                         std::string(fields[1]) + "' (kinds: cpu, cuda, vcpu)");
        }
        device.kind = *kind;
        device.ordinal = kindCounts[static_cast<int>(*kind)]++;
        for (std::size_t i = 2; i < fields.size(); ++i) {
            const std::string_view option = fields[i];
            const std::size_t eq = option.find('=');
            const std::string_view key = option.substr(0, eq);
            const std::string_view value =
                eq == std::string_view::npos ? std::string_view() : option.substr(eq + 1);
            if (eq == std::string_view::npos || value.empty()) {
                return SourceError::sentence("device '" + device.name + "': option '" +
                                             std::string(option) +
                                             "' is not of the form KEY=VALUE");
            }
            if (key == "mem" || key == "memory") {
                device.memoryCapacity = parseByteSize(value);
                if (!device.memoryCapacity) {
                    return SourceError::sentence("device '" + device.name + "': memory size '" +
                                                 std::string(value) +
                                                 "' is not a size such as 8GiB or 512MB");
                }
            } else if (key == "ordinal") {
                int ordinal = 0;
                const auto [ptr, ec] =
                    std::from_chars(value.data(), value.data() + value.size(), ordinal);
                if (ec != std::errc() || ptr != value.data() + value.size() || ordinal < 0) {
                    return SourceError::sentence("device '" + device.name + "': ordinal '" +
                                                 std::string(value) +
                                                 "' is not a non-negative integer");
                }
                device.ordinal = ordinal;
            } else if (key == "target") {
                device.target = std::string(value);
            } else if (key == "scope") {
                device.memoryScope = std::string(value);
            } else if (key == "dtype") {
                const std::optional<DType> type = parseComputeType(value);
                if (!type) {
                    return SourceError::sentence(
                        "device '" + device.name + "': dtype '" + std::string(value) +
                        "' is not a compute type (bf16, f16 or f32; or bfloat16, float16, "
                        "float32)");
                }
                device.computeType = *type;
            } else {
                return SourceError::sentence("device '" + device.name + "': unknown option '" +
                                             std::string(key) +
                                             "' (options: mem, ordinal, target, scope, dtype)");
            }
        }
        set.add(std::move(device));
    }
    if (set.empty()) {
        return SourceError::sentence("no devices given");
    }
    set.chooseDefaults();
    return set;
}

std::optional<DType> parseComputeType(std::string_view text) {
    if (text == "bf16" || text == "bfloat16")
        return DType::BFloat16;
    if (text == "f16" || text == "fp16" || text == "float16" || text == "half")
        return DType::Float16;
    if (text == "f32" || text == "fp32" || text == "float32" || text == "float")
        return DType::Float32;
    return std::nullopt;
}

std::string_view computeTypeWord(DType type) {
    return type == DType::BFloat16 ? "bf16" : type == DType::Float16 ? "f16" : "f32";
}

std::optional<std::int64_t> parseByteSize(std::string_view text) {
    std::size_t unitStart = 0;
    while (unitStart < text.size() &&
           ((text[unitStart] >= '0' && text[unitStart] <= '9') || text[unitStart] == '.'))
        ++unitStart;
    if (unitStart == 0)
        return std::nullopt;
    double number = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + unitStart, number);
    if (ec != std::errc() || ptr != text.data() + unitStart)
        return std::nullopt;
    const std::string_view unit = text.substr(unitStart);
    struct Unit {
        std::string_view name;
        double factor;
    };
    static constexpr Unit kUnits[] = {
        {"", 1},
        {"B", 1},
        {"KB", 1e3},
        {"KiB", 1024.0},
        {"MB", 1e6},
        {"MiB", 1048576.0},
        {"GB", 1e9},
        {"GiB", 1073741824.0},
        {"TB", 1e12},
        {"TiB", 1099511627776.0},
        {"K", 1024.0},
        {"M", 1048576.0},
        {"G", 1073741824.0},
    };
    for (const Unit& u : kUnits) {
        if (u.name == unit) {
            const double bytes = std::floor(number * u.factor);
            if (!(bytes < 9.2e18))
                return std::nullopt;
            return static_cast<std::int64_t>(bytes);
        }
    }
    return std::nullopt;
}

} // namespace placer
