// Mapping virtual devices by the machine's load (device/LoadMapping.h).
#include "device/LoadMapping.h"

#include "ir/TensorType.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

namespace placer {

namespace {

std::mutex& readerMutex() {
    static std::mutex mutex;
    return mutex;
}

std::function<std::optional<std::string>(const std::string&)>& procReader() {
    static std::function<std::optional<std::string>(const std::string&)> reader;
    return reader;
}

std::optional<std::string> readProcFile(const std::string& path) {
    {
        std::lock_guard lock(readerMutex());
        if (procReader())
            return procReader()(path);
    }
    std::ifstream file(path);
    if (!file)
        return std::nullopt;
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

bool faked() {
    std::lock_guard lock(readerMutex());
    return static_cast<bool>(procReader());
}

/// Per core of /proc/stat: (busy, total) jiffies so far.
using CoreTimes = std::map<int, std::pair<double, double>>;

CoreTimes coreTimes(const std::string& stat) {
    CoreTimes times;
    std::istringstream lines(stat);
    std::string line;
    while (std::getline(lines, line)) {
        // "cpu3 user nice system idle iowait irq softirq steal ..."; "cpu " is the total.
        if (line.size() < 4 || line.compare(0, 3, "cpu") != 0 || line[3] < '0' || line[3] > '9')
            continue;
        std::istringstream fields(line.substr(3));
        int core = -1;
        fields >> core;
        double value = 0, total = 0, idle = 0;
        for (int k = 0; fields >> value; ++k) {
            if (k >= 8) // guest times are already in user and nice
                break;
            total += value;
            if (k == 3 || k == 4) // idle, iowait
                idle += value;
        }
        if (core >= 0)
            times[core] = {total - idle, total};
    }
    return times;
}

std::int64_t memAvailable(const std::string& meminfo) {
    std::istringstream lines(meminfo);
    std::string line;
    while (std::getline(lines, line)) {
        long long kib = 0;
        if (std::sscanf(line.c_str(), "MemAvailable: %lld kB", &kib) == 1)
            return static_cast<std::int64_t>(kib) * 1024;
    }
    return -1;
}

/// The cores this process may run on.
std::vector<int> allowedCores(const CoreTimes& listed) {
    std::vector<int> cores;
    cpu_set_t set;
    CPU_ZERO(&set);
    const bool known = !faked() && sched_getaffinity(0, sizeof set, &set) == 0;
    for (const auto& [core, times] : listed) {
        if (!known || (core < CPU_SETSIZE && CPU_ISSET(core, &set)))
            cores.push_back(core);
    }
    return cores;
}

struct Reading {
    CoreTimes times;
    std::chrono::steady_clock::time_point at;
};

std::string percent(double share) {
    return std::to_string(static_cast<int>(std::lround(share * 100))) + " %";
}

} // namespace

void setProcFileReader(std::function<std::optional<std::string>(const std::string& path)> reader) {
    std::lock_guard lock(readerMutex());
    procReader() = std::move(reader);
}

HostLoad measureHostLoad(std::chrono::milliseconds look) {
    // The previous reading serves as the start of this look when it is recent: a session that
    // runs in a loop does not wait for every run.
    static std::mutex mutex;
    static std::optional<Reading> previous;
    std::lock_guard lock(mutex);
    const auto read = [] {
        const std::optional<std::string> stat = readProcFile("/proc/stat");
        return Reading{stat ? coreTimes(*stat) : CoreTimes{}, std::chrono::steady_clock::now()};
    };
    Reading now = read();
    Reading start;
    const auto age = previous ? now.at - previous->at : std::chrono::steady_clock::duration::max();
    if (!faked() && previous && age >= look && age < std::chrono::seconds(10)) {
        start = *previous;
    } else {
        start = now;
        if (!faked())
            std::this_thread::sleep_for(look);
        now = read();
    }
    previous = now;
    HostLoad load;
    load.seconds = std::chrono::duration<double>(now.at - start.at).count();
    for (int core : allowedCores(now.times)) {
        const auto& [busy, total] = now.times[core];
        const auto before = start.times.find(core);
        double share = 0;
        if (before != start.times.end() && total > before->second.second)
            share = (busy - before->second.first) / (total - before->second.second);
        else if (total > 0) // one reading (a test's, or no time passed): since boot
            share = busy / total;
        load.cores.push_back({core, std::clamp(share, 0.0, 1.0)});
    }
    if (const auto meminfo = readProcFile("/proc/meminfo"))
        load.availableBytes = memAvailable(*meminfo);
    return load;
}

Result<LoadMapping> mapDevicesByLoad(const DeviceSet& devices,
                                     const std::vector<DeviceMapRequest>& requests,
                                     DeviceRegistry& registry, const HostLoad& load,
                                     const std::vector<std::int64_t>& peakBytes,
                                     std::vector<std::string>* warnings,
                                     std::vector<std::shared_ptr<const void>>* leases) {
    LoadMapping out;
    out.mapping.assign(static_cast<std::size_t>(devices.size()), nullptr);
    out.reasons.assign(out.mapping.size(), std::string());
    const auto peak = [&](int d) {
        return static_cast<std::size_t>(d) < peakBytes.size()
                   ? peakBytes[static_cast<std::size_t>(d)]
                   : 0;
    };
    // The requests, as mapDevices takes them; the rest stay null here.
    for (const DeviceMapRequest& request : requests) {
        const auto id = devices.find(request.device);
        if (!id)
            return SourceError::sentence(
                "--map " + request.device + "=" + request.physical +
                ": unknown virtual device (devices: " + devices.namesList() + ")");
        auto device = registry.get(request.physical);
        if (!device)
            return SourceError::sentence("--map " + request.device + "=" + request.physical + ": " +
                                         device.error().message);
        out.mapping[id->index] = device.value();
        out.reasons[id->index] = "--map " + request.device + "=" + request.physical;
    }
    // Cores from the least busy; each taken once before any is taken twice.
    std::vector<HostLoad::Core> cores = load.cores;
    std::stable_sort(cores.begin(), cores.end(),
                     [](const HostLoad::Core& a, const HostLoad::Core& b) {
                         return a.busy < b.busy - 0.05; // within 5 %: by number
                     });
    std::map<int, std::vector<std::string>> onCore; // core -> virtual devices bound there
    std::size_t nextCore = 0;
    std::vector<DeviceLoad> gpus;
    const bool hasGpu = registry.hasKind(DeviceKind::Cuda);
    if (hasGpu)
        gpus = registry.loads();
    std::map<std::string, int> onGpu;
    std::int64_t hostNeeds = 0;
    for (int d = 0; d < devices.size(); ++d) {
        Device*& physical = out.mapping[static_cast<std::size_t>(d)];
        if (physical)
            continue;
        const VirtualDevice& device = devices[DeviceId(d)];
        std::string& reason = out.reasons[static_cast<std::size_t>(d)];
        if (device.kind == DeviceKind::Cpu) {
            auto cpu = registry.get("cpu");
            if (!cpu)
                return SourceError::sentence("virtual device '" + device.name +
                                             "' has no physical device: " + cpu.error().message);
            physical = cpu.value();
            reason = "the host cpu";
            hostNeeds += peak(d);
            continue;
        }
        if (device.kind == DeviceKind::Cuda && hasGpu) {
            // The GPU with room for the plan's peak and the least load; those already given a
            // virtual device last.
            std::string best;
            const DeviceLoad* chosen = nullptr;
            for (const DeviceLoad& gpu : gpus) {
                const bool fits = gpu.freeBytes < 0 || gpu.freeBytes >= peak(d);
                if (!fits)
                    continue;
                const auto key = [&](const DeviceLoad& g) {
                    return std::tuple(onGpu[g.name], g.busy, -g.freeBytes);
                };
                if (!chosen || key(gpu) < key(*chosen))
                    chosen = &gpu;
            }
            const std::string name =
                chosen ? chosen->name : "cuda:" + std::to_string(device.ordinal);
            auto cuda = registry.get(name);
            if (!cuda)
                return SourceError::sentence(device.name + ": " + cuda.error().message);
            physical = cuda.value();
            if (chosen) {
                reason = name + ": " + percent(chosen->busy) + " busy" +
                         (chosen->freeBytes >= 0
                              ? ", " + formatBytes(chosen->freeBytes) + " free" +
                                    (peak(d) > 0 ? " (the plan needs " + formatBytes(peak(d)) + ")"
                                                 : std::string())
                              : std::string()) +
                         " (" + chosen->source + ")";
                if (onGpu[name] > 0)
                    reason += "; shared with " + std::to_string(onGpu[name]) +
                              " other virtual device(s): fewer GPUs than virtual ones";
            } else {
                reason = name + ": by ordinal, no GPU reports its load" +
                         (gpus.empty() ? std::string()
                                       : " or has room for the plan's " + formatBytes(peak(d)));
                if (!gpus.empty())
                    warnings->push_back("virtual device '" + device.name + "' needs " +
                                        formatBytes(peak(d)) +
                                        ", more than any GPU has free now; it runs on " + name);
            }
            ++onGpu[name];
            continue;
        }
        // A vcpu of its own (as mapDevices leases it), bound to the least busy core left.
        const std::string preferred = "vcpu" + std::to_string(d + 1);
        DeviceRegistry::VCpuLease lease = registry.leaseVCpu(out.mapping, preferred);
        if (!lease.device)
            return SourceError::sentence("virtual device '" + device.name +
                                         "' has no physical device: no backend makes virtual CPUs");
        leases->push_back(std::move(lease.lease));
        physical = lease.device;
        hostNeeds += peak(d);
        if (cores.empty()) {
            reason = physical->name() + ": the cores' load cannot be read (no /proc/stat)";
            continue;
        }
        const HostLoad::Core core = cores[nextCore % cores.size()];
        ++nextCore;
        if (Status bound = physical->bindToCores({core.core}); !bound.ok()) {
            reason = physical->name() + ", unbound: " + bound.error().message;
            continue;
        }
        std::vector<std::string>& sharing = onCore[core.core];
        reason = physical->name() + " on core " + std::to_string(core.core) + ", " +
                 percent(core.busy) + " busy";
        if (!sharing.empty())
            reason += ", shared with " + sharing.front() +
                      (sharing.size() > 1 ? " and " + std::to_string(sharing.size() - 1) + " more"
                                          : std::string()) +
                      ": more virtual devices than cores";
        if (device.kind == DeviceKind::Cuda)
            reason += "; a cuda device on a machine without a GPU";
        sharing.push_back(device.name);
    }
    if (load.availableBytes >= 0 && hostNeeds > load.availableBytes)
        warnings->push_back("the plan needs " + formatBytes(hostNeeds) + " of host memory, and " +
                            formatBytes(load.availableBytes) + " is available now");
    return out;
}

} // namespace placer
