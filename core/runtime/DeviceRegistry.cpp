#include "runtime/Device.h"

#include "runtime/cpu/CpuDevice.h"

#include "ir/DeviceSet.h"

#if PLACER_HAVE_CUDA
#include "cuda/CudaBackend.h"
#endif

#include <charconv>
#include <map>
#include <mutex>
#include <thread>

namespace placer {

namespace {

std::vector<std::function<std::unique_ptr<DeviceBackend>()>>& backendFactories() {
    static std::vector<std::function<std::unique_ptr<DeviceBackend>()>> factories;
    return factories;
}

SourceError deviceError(std::string message) {
    return SourceError{"", 0, 0, std::move(message)};
}

bool parsePositive(std::string_view text, int* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value > 0;
}

} // namespace

std::string_view physicalKindName(PhysicalKind kind) {
    switch (kind) {
    case PhysicalKind::Cpu:
        return "cpu";
    case PhysicalKind::VCpu:
        return "vcpu";
    case PhysicalKind::Cuda:
        return "cuda";
    }
    return "?";
}

void registerDeviceBackend(std::function<std::unique_ptr<DeviceBackend>()> factory) {
    backendFactories().push_back(std::move(factory));
}

struct DeviceRegistry::Impl {
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<Device>, std::less<>> devices;
    std::vector<std::unique_ptr<DeviceBackend>> backends;
    int nextVCpu = 1;

    DeviceBackend* backend(PhysicalKind kind) {
        for (auto& backend : backends) {
            if (backend->kind() == kind)
                return backend.get();
        }
        return nullptr;
    }
};

DeviceRegistry::DeviceRegistry() : m_impl(std::make_unique<Impl>()) {
    for (const auto& factory : backendFactories())
        m_impl->backends.push_back(factory());
#if PLACER_HAVE_CUDA
    if (!m_impl->backend(PhysicalKind::Cuda))
        m_impl->backends.push_back(cuda::makeCudaBackend());
#endif
}

DeviceRegistry::~DeviceRegistry() = default;

Result<Device*> DeviceRegistry::get(std::string_view spec) {
    std::lock_guard lock(m_impl->mutex);
    if (spec.starts_with("cuda")) {
        const std::string name(spec == "cuda" ? "cuda:0" : spec);
        if (auto it = m_impl->devices.find(name); it != m_impl->devices.end())
            return it->second.get();
        DeviceBackend* backend = m_impl->backend(PhysicalKind::Cuda);
        if (!backend)
            return deviceError("no CUDA device: this build of placer has no CUDA backend "
                               "(configure on a machine with the CUDA toolkit)");
        auto device = backend->create(name);
        if (!device)
            return device.error();
        Device* raw = device.value().get();
        m_impl->devices.emplace(name, device.take());
        return raw;
    }
    const std::size_t colon = spec.find(':');
    const std::string_view name = spec.substr(0, colon);
    int threads = 1;
    std::int64_t arena = 0;
    // Options after the name, each after a colon: threads=N, mem=SIZE (a vcpu's arena).
    for (std::size_t at = colon; at != std::string_view::npos;) {
        const std::size_t next = spec.find(':', at + 1);
        const std::string_view option = spec.substr(at + 1, next == std::string_view::npos
                                                                ? std::string_view::npos
                                                                : next - at - 1);
        at = next;
        if (option.starts_with("threads=")) {
            if (!parsePositive(option.substr(8), &threads) || threads > 256)
                return deviceError("physical device '" + std::string(spec) +
                                   "': threads takes a whole number from 1 to 256");
        } else if (option.starts_with("mem=")) {
            const auto bytes = parseByteSize(option.substr(4));
            if (!bytes || *bytes <= 0)
                return deviceError("physical device '" + std::string(spec) +
                                   "': mem takes a size such as 512MiB or 2GiB");
            arena = *bytes;
        } else {
            return deviceError("physical device '" + std::string(spec) +
                               "': options are threads=N and, for a vcpu, mem=SIZE");
        }
    }
    PhysicalKind kind = PhysicalKind::Cpu;
    if (name == "cpu") {
        kind = PhysicalKind::Cpu;
    } else if (name.starts_with("vcpu")) {
        int number = 0;
        if (!parsePositive(name.substr(4), &number))
            return deviceError("physical device '" + std::string(spec) +
                               "': virtual CPUs are called vcpu1, vcpu2, ...");
        kind = PhysicalKind::VCpu;
        m_impl->nextVCpu = std::max(m_impl->nextVCpu, number + 1);
    } else {
        return deviceError("unknown physical device '" + std::string(spec) +
                           "' (this machine has cpu, vcpuN and cuda:N when a GPU is present)");
    }
    if (auto it = m_impl->devices.find(name); it != m_impl->devices.end())
        return it->second.get();
    if (arena > 0 && kind != PhysicalKind::VCpu)
        return deviceError("physical device '" + std::string(spec) +
                           "': only a vcpu has an arena of its own (mem=SIZE)");
    auto device = std::make_unique<CpuDevice>(std::string(name), kind, threads, arena);
    Device* raw = device.get();
    m_impl->devices.emplace(std::string(name), std::move(device));
    return raw;
}

Device* DeviceRegistry::freshVCpu() {
    std::string name;
    {
        std::lock_guard lock(m_impl->mutex);
        while (m_impl->devices.count("vcpu" + std::to_string(m_impl->nextVCpu)))
            ++m_impl->nextVCpu;
        name = "vcpu" + std::to_string(m_impl->nextVCpu++);
    }
    return get(name).value();
}

bool DeviceRegistry::hasKind(PhysicalKind kind) {
    if (kind != PhysicalKind::Cuda)
        return true;
    DeviceBackend* backend = m_impl->backend(kind);
    if (!backend)
        return false;
    for (const PhysicalDeviceInfo& info : backend->list()) {
        if (info.available)
            return true;
    }
    return false;
}

std::vector<PhysicalDeviceInfo> DeviceRegistry::list() {
    std::vector<PhysicalDeviceInfo> result;
    const unsigned cores = std::thread::hardware_concurrency();
    result.push_back({"cpu", PhysicalKind::Cpu, true,
                      "the host CPU (" + std::to_string(cores) +
                          " cores); kernels use 1 thread unless cpu:threads=N"});
    result.push_back({"vcpuN", PhysicalKind::VCpu, true,
                      "virtual CPU contexts, created on demand (vcpu1, vcpu2, ...), each with its "
                      "own worker thread and memory arena; vcpuN:threads=M for more threads, "
                      "vcpuN:mem=SIZE to bound its arena"});
    if (DeviceBackend* backend = m_impl->backend(PhysicalKind::Cuda)) {
        for (PhysicalDeviceInfo& info : backend->list())
            result.push_back(std::move(info));
    } else {
        result.push_back({"cuda", PhysicalKind::Cuda, false,
                          "absent: this build has no CUDA backend (it is built only where CMake "
                          "finds a CUDA compiler); cuda devices run on virtual CPUs"});
    }
    return result;
}

} // namespace placer
