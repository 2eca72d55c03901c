// The device registry: the registered backends, and the devices made from them.
#include "device/DeviceRegistry.h"

#include "device/Ranks.h"

#include <algorithm>
#include <map>
#include <mutex>

namespace placer {

namespace {

std::mutex& factoriesMutex() {
    static std::mutex mutex;
    return mutex;
}

std::vector<std::function<std::unique_ptr<DeviceBackend>()>>& backendFactories() {
    static std::vector<std::function<std::unique_ptr<DeviceBackend>()>> factories;
    return factories;
}

SourceError deviceError(std::string message) {
    return SourceError{"", 0, 0, std::move(message)};
}

/// Whether `spec` names a device of the backend with `prefix`: the prefix alone, or followed
/// by a digit or ':' ("cuda", "cuda:0", "vcpu2", "cpu:threads=2", but not "cpux").
bool hasPrefix(std::string_view spec, std::string_view prefix) {
    if (!spec.starts_with(prefix))
        return false;
    if (spec.size() == prefix.size())
        return true;
    const char next = spec[prefix.size()];
    return next == ':' || (next >= '0' && next <= '9');
}

constexpr DeviceKind kKinds[] = {DeviceKind::Cpu, DeviceKind::VCpu, DeviceKind::Cuda};

/// Where a kind stands in kKinds: the order in which the registry lists backends.
int kindOrder(DeviceKind kind) {
    return static_cast<int>(std::find(std::begin(kKinds), std::end(kKinds), kind) -
                            std::begin(kKinds));
}

} // namespace

void registerDeviceBackend(std::function<std::unique_ptr<DeviceBackend>()> factory) {
    std::lock_guard lock(factoriesMutex());
    backendFactories().push_back(std::move(factory));
}

/// The leased virtual CPUs given back, by name; shared with every lease, which may outlive
/// the registry.
struct IdleVCpus {
    std::mutex mutex;
    std::vector<std::string> names;
};

struct DeviceRegistry::Impl {
    std::shared_ptr<IdleVCpus> idle = std::make_shared<IdleVCpus>();
    std::mutex mutex;
    std::map<std::string, std::unique_ptr<Device>, std::less<>> devices;
    std::vector<std::unique_ptr<DeviceBackend>> backends; ///< by kind, then as registered
    int nextVCpu = 1;

    DeviceBackend* backendFor(std::string_view spec) {
        DeviceBackend* best = nullptr;
        for (auto& backend : backends) {
            if (hasPrefix(spec, backend->prefix()) &&
                (!best || backend->prefix().size() > best->prefix().size()))
                best = backend.get();
        }
        return best;
    }
};

DeviceRegistry::DeviceRegistry() : m_impl(std::make_unique<Impl>()) {
    std::lock_guard lock(factoriesMutex());
    for (const auto& factory : backendFactories())
        m_impl->backends.push_back(factory());
    // The same order whichever registration ran first as the program started.
    std::stable_sort(
        m_impl->backends.begin(), m_impl->backends.end(),
        [](const auto& a, const auto& b) { return kindOrder(a->kind()) < kindOrder(b->kind()); });
}

Result<std::unique_ptr<Device>> makeStandaloneDevice(DeviceKind kind, std::string_view spec) {
    std::vector<std::function<std::unique_ptr<DeviceBackend>()>> factories;
    {
        std::lock_guard lock(factoriesMutex());
        factories = backendFactories();
    }
    for (const auto& factory : factories) {
        std::unique_ptr<DeviceBackend> backend = factory();
        if (backend->kind() == kind)
            return backend->create(spec);
    }
    return deviceError("no " + std::string(deviceKindName(kind)) +
                       " device: this program links no " + std::string(deviceKindName(kind)) +
                       " backend");
}

DeviceRegistry::~DeviceRegistry() = default;

Result<Device*> DeviceRegistry::get(std::string_view qualified) {
    auto split = splitRank(qualified);
    if (!split)
        return split.error();
    const int rank = split.value().first;
    const std::string_view spec = split.value().second;
    std::lock_guard lock(m_impl->mutex);
    DeviceBackend* backend = m_impl->backendFor(spec);
    if (!backend) {
        for (DeviceKind kind : kKinds) {
            if (hasPrefix(spec, deviceKindName(kind)))
                return deviceError("no " + std::string(deviceKindName(kind)) +
                                   " device: this build of placer has no " +
                                   std::string(deviceKindName(kind)) + " backend");
        }
        std::string names;
        for (const auto& known : m_impl->backends)
            names += (names.empty() ? "" : ", ") + std::string(known->prefix());
        return deviceError("unknown physical device '" + std::string(spec) + "' (this build has " +
                           names + " devices)");
    }
    auto name = backend->deviceName(spec);
    if (!name)
        return name.error();
    // Keys are alike on every rank: rank 0's devices by their name, other ranks' qualified.
    const std::string qualifiedName = "rank" + std::to_string(rank) + "/" + name.value();
    const std::string key = rank == 0 ? name.value() : qualifiedName;
    if (auto it = m_impl->devices.find(key); it != m_impl->devices.end())
        return it->second.get();
    std::unique_ptr<Device> device;
    if (rank == localRank()) {
        auto made = backend->create(spec);
        if (!made)
            return made.error();
        device = made.take();
    } else {
        // The same device made here answers what its kernels prefer; a CPU's only (a GPU's
        // answers are the defaults, and a context on this rank's GPU is not the remote one's).
        std::unique_ptr<Device> prototype;
        if (backend->kind() != DeviceKind::Cuda) {
            if (auto made = backend->create(spec))
                prototype = made.take();
        }
        device = std::make_unique<RemoteDevice>(rank, qualifiedName, backend->kind(),
                                                std::move(prototype));
    }
    // Fresh vcpus are rank 0's, numbered alike on every rank.
    if (backend->kind() == DeviceKind::VCpu && rank == 0) {
        const int number = std::atoi(name.value().c_str() + backend->prefix().size());
        m_impl->nextVCpu = std::max(m_impl->nextVCpu, number + 1);
    }
    Device* raw = device.get();
    m_impl->devices.emplace(key, std::move(device));
    return raw;
}

Device* DeviceRegistry::freshVCpu(std::string_view preferred) {
    std::string name;
    {
        std::lock_guard lock(m_impl->mutex);
        if (!preferred.empty() && !m_impl->devices.count(preferred)) {
            name = preferred;
        } else {
            while (m_impl->devices.count("vcpu" + std::to_string(m_impl->nextVCpu)))
                ++m_impl->nextVCpu;
            name = "vcpu" + std::to_string(m_impl->nextVCpu++);
        }
    }
    auto device = get(name);
    return device ? device.value() : nullptr; // no backend of this program makes vcpus
}

DeviceRegistry::VCpuLease DeviceRegistry::leaseVCpu(const std::vector<Device*>& taken,
                                                    std::string_view preferred) {
    std::shared_ptr<IdleVCpus> idle = m_impl->idle;
    VCpuLease lease;
    {
        std::lock_guard lock(idle->mutex);
        // The lowest-numbered idle one that the mapping has not taken.
        auto number = [](const std::string& name) { return std::atoi(name.c_str() + 4); };
        std::sort(
            idle->names.begin(), idle->names.end(),
            [&](const std::string& a, const std::string& b) { return number(a) < number(b); });
        // The preferred one first: idle, or not made yet (then no lease holds it).
        if (!preferred.empty()) {
            const auto it = std::find(idle->names.begin(), idle->names.end(), preferred);
            bool made = false;
            {
                std::lock_guard registryLock(m_impl->mutex);
                made = m_impl->devices.count(preferred) > 0;
            }
            if (it != idle->names.end() || !made) {
                auto device = get(preferred);
                if (device &&
                    std::find(taken.begin(), taken.end(), device.value()) == taken.end()) {
                    lease.device = device.value();
                    if (it != idle->names.end())
                        idle->names.erase(it);
                }
            }
        }
        for (auto it = idle->names.begin(); !lease.device && it != idle->names.end(); ++it) {
            auto device = get(*it);
            if (!device || std::find(taken.begin(), taken.end(), device.value()) != taken.end())
                continue;
            lease.device = device.value();
            idle->names.erase(it);
            break;
        }
    }
    if (!lease.device)
        lease.device = freshVCpu();
    if (!lease.device)
        return lease; // no backend of this program makes vcpus: nothing to lease
    const std::string name = lease.device->name();
    lease.lease = std::shared_ptr<const void>(lease.device, [idle, name](const void*) {
        std::lock_guard lock(idle->mutex);
        idle->names.push_back(name);
    });
    return lease;
}

bool DeviceRegistry::hasKind(DeviceKind kind) {
    for (auto& backend : m_impl->backends) {
        if (backend->kind() != kind)
            continue;
        for (const PhysicalDeviceInfo& info : backend->list()) {
            if (info.available)
                return true;
        }
    }
    return false;
}

std::vector<DeviceLoad> DeviceRegistry::loads() {
    std::vector<DeviceLoad> result;
    for (auto& backend : m_impl->backends) {
        for (DeviceLoad& load : backend->loads())
            result.push_back(std::move(load));
    }
    return result;
}

std::vector<PhysicalDeviceInfo> DeviceRegistry::list() {
    std::vector<PhysicalDeviceInfo> result;
    for (auto& backend : m_impl->backends) {
        for (PhysicalDeviceInfo& info : backend->list())
            result.push_back(std::move(info));
    }
    for (DeviceKind kind : kKinds) {
        const bool provided = std::any_of(m_impl->backends.begin(), m_impl->backends.end(),
                                          [&](const auto& b) { return b->kind() == kind; });
        if (!provided) {
            const std::string name(deviceKindName(kind));
            result.push_back({name, kind, false,
                              "absent: this build has no " + name + " backend; " + name +
                                  " devices run on virtual CPUs"});
        }
    }
    return result;
}

} // namespace placer
