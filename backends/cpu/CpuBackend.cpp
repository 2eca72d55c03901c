// The CPU backends of the registry: the host cpu and vcpuN contexts, with their options.
#include "backends/cpu/CpuBackend.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "backends/cpu/CpuDevice.h"
#include "ir/DeviceSet.h"

#include <charconv>
#include <mutex>
#include <thread>
#include <vector>

namespace placer {

namespace {

SourceError deviceError(std::string message) {
    return SourceError{"", 0, 0, std::move(message)};
}

bool parsePositive(std::string_view text, int* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value > 0;
}

/// A spec's name and options: "vcpu1:threads=2:mem=1GiB" is vcpu1 with two threads and an arena
/// of 1 GiB.
struct CpuSpec {
    std::string name;
    int threads = 1;
    std::int64_t arena = 0;
    std::vector<int> cores; ///< cpus=LIST: the host cores it runs on
};

/// "1", "0-3", "0,2,4-5" as cores; false when malformed.
bool parseCores(std::string_view text, std::vector<int>* cores) {
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        const std::size_t dash = item.find('-');
        int first = 0, last = 0;
        const auto number = [](std::string_view digits, int* value) {
            const auto [end, ec] =
                std::from_chars(digits.data(), digits.data() + digits.size(), *value);
            return ec == std::errc() && end == digits.data() + digits.size() && *value >= 0 &&
                   *value < 4096;
        };
        if (!number(item.substr(0, dash), &first))
            return false;
        last = first;
        if (dash != std::string_view::npos &&
            (!number(item.substr(dash + 1), &last) || last < first))
            return false;
        for (int core = first; core <= last; ++core)
            cores->push_back(core);
        if (comma == std::string_view::npos)
            break;
        text = text.substr(comma + 1);
    }
    return !cores->empty();
}

Result<CpuSpec> parseSpec(std::string_view spec, DeviceKind kind) {
    CpuSpec parsed;
    const std::size_t colon = spec.find(':');
    parsed.name = std::string(spec.substr(0, colon));
    const std::string spelled(spec);
    for (std::size_t at = colon; at != std::string_view::npos;) {
        const std::size_t next = spec.find(':', at + 1);
        const std::string_view option = spec.substr(
            at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1);
        at = next;
        if (option.starts_with("threads=")) {
            if (!parsePositive(option.substr(8), &parsed.threads) || parsed.threads > 256)
                return deviceError("physical device '" + spelled +
                                   "': threads takes a whole number from 1 to 256");
        } else if (option.starts_with("cpus=")) {
            if (!parseCores(option.substr(5), &parsed.cores))
                return deviceError("physical device '" + spelled +
                                   "': cpus takes host cores, such as 1, 0-3 or 0,2");
        } else if (option.starts_with("mem=") && kind == DeviceKind::VCpu) {
            const auto bytes = parseByteSize(option.substr(4));
            if (!bytes || *bytes <= 0)
                return deviceError("physical device '" + spelled +
                                   "': mem takes a size such as 512MiB or 2GiB");
            parsed.arena = *bytes;
        } else if (option.starts_with("mem=")) {
            return deviceError("physical device '" + spelled +
                               "': only a vcpu has an arena of its own (mem=SIZE)");
        } else {
            return deviceError("physical device '" + spelled +
                               "': options are threads=N, cpus=LIST and, for a vcpu, mem=SIZE");
        }
    }
    if (kind == DeviceKind::Cpu && parsed.name != "cpu")
        return deviceError("physical device '" + spelled + "': the host CPU is called cpu");
    if (kind == DeviceKind::VCpu) {
        int number = 0;
        if (!parsePositive(std::string_view(parsed.name).substr(4), &number))
            return deviceError("physical device '" + spelled +
                               "': virtual CPUs are called vcpu1, vcpu2, ...");
    }
    return parsed;
}

class CpuBackend final : public DeviceBackend {
public:
    explicit CpuBackend(DeviceKind kind) : m_kind(kind) {}

    DeviceKind kind() const override { return m_kind; }
    std::string_view prefix() const override { return m_kind == DeviceKind::Cpu ? "cpu" : "vcpu"; }

    std::vector<PhysicalDeviceInfo> list() override {
        if (m_kind == DeviceKind::Cpu)
            return {{"cpu", DeviceKind::Cpu, true,
                     "the host CPU (" + std::to_string(std::thread::hardware_concurrency()) +
                         " cores); kernels use 1 thread unless cpu:threads=N"}};
        return {{"vcpuN", DeviceKind::VCpu, true,
                 "virtual CPU contexts, created on demand (vcpu1, vcpu2, ...), each with its "
                 "own worker thread and memory arena; vcpuN:threads=M for more threads, "
                 "vcpuN:mem=SIZE to bound its arena, vcpuN:cpus=LIST to bind it to cores"}};
    }

    Result<std::string> deviceName(std::string_view spec) const override {
        auto parsed = parseSpec(spec, m_kind);
        if (!parsed)
            return parsed.error();
        return parsed.value().name;
    }

    Result<std::unique_ptr<Device>> create(std::string_view spec) override {
        auto parsed = parseSpec(spec, m_kind);
        if (!parsed)
            return parsed.error();
        const CpuSpec& cpu = parsed.value();
        auto device = std::make_unique<CpuDevice>(cpu.name, m_kind, cpu.threads, cpu.arena);
        if (!cpu.cores.empty()) {
            if (Status bound = device->bindToCores(cpu.cores); !bound.ok())
                return bound.error();
        }
        return std::unique_ptr<Device>(std::move(device));
    }

private:
    DeviceKind m_kind;
};

} // namespace

std::unique_ptr<DeviceBackend> makeHostCpuBackend() {
    return std::make_unique<CpuBackend>(DeviceKind::Cpu);
}

std::unique_ptr<DeviceBackend> makeVirtualCpuBackend() {
    return std::make_unique<CpuBackend>(DeviceKind::VCpu);
}

void registerCpuBackend() {
    static std::once_flag once;
    std::call_once(once, [] {
        registerDeviceBackend(makeHostCpuBackend);
        registerDeviceBackend(makeVirtualCpuBackend);
        offerConstantEvaluator(evaluateOnCpu);
    });
}

} // namespace placer
