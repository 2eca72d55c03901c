// Machine files (plan/MachineFile.h).
#include "plan/MachineFile.h"

#include "plan/Glob.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace placer {

namespace {

SourceError at(const std::string& path, const Json& where, const std::string& message) {
    return SourceError{path, where.line(), where.column(), message};
}

/// A required member of `object`, or an error naming it.
Result<const Json*> member(const std::string& path, const Json& object, const char* key,
                           const char* what) {
    const Json* found = object.find(key);
    if (!found)
        return at(path, object, std::string(what) + " has no \"" + key + "\"");
    return found;
}

Result<std::string> text(const std::string& path, const Json& object, const char* key,
                         const char* what) {
    auto found = member(path, object, key, what);
    if (!found)
        return found.error();
    if (!found.value()->isString() || found.value()->asString().empty())
        return at(path, *found.value(),
                  std::string(what) + "'s \"" + key + "\" must be a non-empty string");
    return found.value()->asString();
}

Result<double> positive(const std::string& path, const Json& value, const std::string& what) {
    if (!value.isNumber() || !(value.asDouble() > 0) || !std::isfinite(value.asDouble()))
        return at(path, value, what + " must be a positive number");
    return value.asDouble();
}

std::string gib(std::int64_t bytes) {
    const double value = static_cast<double>(bytes) / (1 << 30);
    char out[32];
    std::snprintf(out, sizeof out, value == std::floor(value) ? "%.0fGiB" : "%.2fGiB", value);
    return out;
}

/// Whether pattern `p` covers qualified device name `q` ("node0/cuda:0"): a glob over the
/// qualified name, or a host's name for its devices.
bool covers(const std::string& p, const std::string& q) {
    if (p.find('/') == std::string::npos)
        return globMatch(p + "/*", q);
    return globMatch(p, q);
}

} // namespace

std::string MachineDevice::virtualName() const {
    std::string out = host + ".";
    for (const char c : name) {
        if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')
            out += c;
    }
    return out;
}

std::string MachineFile::deviceSpec() const {
    std::string spec;
    int ordinal = 0;
    for (const MachineDevice& device : devices) {
        if (!spec.empty())
            spec += ",";
        spec += device.virtualName() + ":" + std::string(deviceKindName(device.kind));
        const MachineProfile& profile = profiles.at(device.profile);
        if (profile.memoryBytes)
            spec += ":mem=" + std::to_string(*profile.memoryBytes);
        if (device.kind == DeviceKind::Cuda)
            spec += ":ordinal=" + std::to_string(ordinal++);
    }
    return spec;
}

const MachineLink* MachineFile::linkBetween(const std::string& a, const std::string& b) const {
    for (const MachineLink& link : links) {
        if (link.between.size() == 1 && covers(link.between[0], a) && covers(link.between[0], b))
            return &link;
        if (link.between.size() == 2 &&
            ((covers(link.between[0], a) && covers(link.between[1], b)) ||
             (covers(link.between[1], a) && covers(link.between[0], b))))
            return &link;
    }
    return nullptr;
}

Calibration MachineFile::calibration() const {
    Calibration out;
    out.machine = name;
    for (const MachineDevice& device : devices) {
        const MachineProfile& profile = profiles.at(device.profile);
        DeviceProfile p = assumedProfile(device.qualified(), device.kind == DeviceKind::Cuda);
        const auto float32 = profile.peakTflops.find("float32");
        if (float32 != profile.peakTflops.end())
            p.flopsPerMicro = float32->second * 1e6;
        for (const auto& [type, tflops] : profile.peakTflops) {
            if (const auto dtype = parseDType(type); dtype && *dtype != DType::Float32)
                p.typedFlopsPerMicro[*dtype] = tflops * 1e6;
        }
        p.bytesPerMicro = profile.memoryGbps * 1e3;
        p.launchMicros = profile.launchMicros;
        p.calibrated = true;
        out.devices.push_back(std::move(p));
    }
    for (const MachineDevice& a : devices) {
        for (const MachineDevice& b : devices) {
            if (&a == &b)
                continue;
            if (const MachineLink* link = linkBetween(a.qualified(), b.qualified()))
                out.links[{a.qualified(), b.qualified()}] =
                    LinkProfile{link->latencyMicros, link->gbps * 1e3, true};
        }
    }
    return out;
}

Json MachineFile::toJson() const {
    Json out = Json::object();
    out.set("name", name);
    Json hosts = Json::array();
    std::vector<std::string> order;
    for (const MachineDevice& device : devices) {
        if (std::find(order.begin(), order.end(), device.host) == order.end())
            order.push_back(device.host);
    }
    for (const std::string& host : order) {
        Json entry = Json::object();
        entry.set("name", host);
        Json list = Json::array();
        for (const MachineDevice& device : devices) {
            if (device.host != host)
                continue;
            list.push(Json::object({{"name", device.name},
                                    {"kind", std::string(deviceKindName(device.kind))},
                                    {"profile", device.profile}}));
        }
        entry.set("devices", std::move(list));
        hosts.push(std::move(entry));
    }
    out.set("hosts", std::move(hosts));
    Json profileJson = Json::object();
    for (const auto& [profileName, profile] : profiles) {
        Json p = Json::object();
        if (profile.memoryBytes)
            p.set("memory", gib(*profile.memoryBytes));
        Json peaks = Json::object();
        for (const auto& [type, tflops] : profile.peakTflops)
            peaks.set(type, tflops);
        p.set("peak_tflops", std::move(peaks));
        p.set("memory_gbps", profile.memoryGbps);
        p.set("launch_us", profile.launchMicros);
        profileJson.set(profileName, std::move(p));
    }
    out.set("profiles", std::move(profileJson));
    Json linkJson = Json::array();
    for (const MachineLink& link : links) {
        Json l = Json::object();
        Json between = Json::array();
        for (const std::string& pattern : link.between)
            between.push(pattern);
        l.set("between", std::move(between));
        l.set("kind", link.kind);
        l.set("gbps", link.gbps);
        l.set("latency_us", link.latencyMicros);
        linkJson.push(std::move(l));
    }
    out.set("links", std::move(linkJson));
    return out;
}

Result<MachineFile> parseMachineFile(std::string_view source, const std::string& path) {
    auto parsed = Json::parse(source, path);
    if (!parsed)
        return parsed.error();
    const Json& root = parsed.value();
    if (!root.isObject())
        return at(path, root, "a machine file is a JSON object with hosts, profiles and links");
    MachineFile machine;
    auto name = text(path, root, "name", "the machine");
    if (!name)
        return name.error();
    machine.name = name.take();

    auto profiles = member(path, root, "profiles", "the machine");
    if (!profiles)
        return profiles.error();
    if (!profiles.value()->isObject() || profiles.value()->size() == 0)
        return at(path, *profiles.value(), "\"profiles\" must be an object of named profiles");
    for (const auto& [profileName, json] : profiles.value()->members()) {
        const std::string what = "profile '" + profileName + "'";
        if (!json.isObject())
            return at(path, json, what + " must be an object");
        MachineProfile profile;
        if (const Json* memory = json.find("memory")) {
            std::optional<std::int64_t> bytes;
            if (memory->isString())
                bytes = parseByteSize(memory->asString());
            else if (memory->isNumber() && memory->asDouble() > 0)
                bytes = static_cast<std::int64_t>(memory->asDouble());
            if (!bytes || *bytes <= 0)
                return at(path, *memory,
                          what + "'s memory must be a size such as \"80GiB\" or a byte count");
            profile.memoryBytes = bytes;
        }
        auto peaks = member(path, json, "peak_tflops", what.c_str());
        if (!peaks)
            return peaks.error();
        if (!peaks.value()->isObject() || !peaks.value()->find("float32"))
            return at(path, *peaks.value(),
                      what + "'s peak_tflops must give float32's, and may give other types'");
        for (const auto& [type, value] : peaks.value()->members()) {
            if (!parseDType(type))
                return at(path, value, what + ": '" + type + "' is not an element type");
            auto rate = positive(path, value, what + "'s peak " + type);
            if (!rate)
                return rate.error();
            profile.peakTflops[type] = rate.value();
        }
        auto gbps = member(path, json, "memory_gbps", what.c_str());
        if (!gbps)
            return gbps.error();
        auto bandwidth = positive(path, *gbps.value(), what + "'s memory_gbps");
        if (!bandwidth)
            return bandwidth.error();
        profile.memoryGbps = bandwidth.value();
        if (const Json* launch = json.find("launch_us")) {
            if (!launch->isNumber() || launch->asDouble() < 0)
                return at(path, *launch, what + "'s launch_us must be a number of at least 0");
            profile.launchMicros = launch->asDouble();
        }
        machine.profiles.emplace(profileName, profile);
    }

    auto hosts = member(path, root, "hosts", "the machine");
    if (!hosts)
        return hosts.error();
    if (!hosts.value()->isArray() || hosts.value()->items().empty())
        return at(path, *hosts.value(), "\"hosts\" must be a non-empty array");
    std::set<std::string> qualified;
    for (const Json& host : hosts.value()->items()) {
        if (!host.isObject())
            return at(path, host, "a host must be an object with a name and devices");
        auto hostName = text(path, host, "name", "a host");
        if (!hostName)
            return hostName.error();
        if (hostName.value().find('/') != std::string::npos)
            return at(path, host, "host '" + hostName.value() + "': a name without '/'");
        auto devices = member(path, host, "devices", ("host '" + hostName.value() + "'").c_str());
        if (!devices)
            return devices.error();
        if (!devices.value()->isArray() || devices.value()->items().empty())
            return at(path, *devices.value(),
                      "host '" + hostName.value() + "': \"devices\" must be a non-empty array");
        for (const Json& json : devices.value()->items()) {
            if (!json.isObject())
                return at(path, json, "a device must be an object with a name, kind and profile");
            auto deviceName = text(path, json, "name", "a device");
            if (!deviceName)
                return deviceName.error();
            const std::string what = "device '" + deviceName.value() + "'";
            auto kindText = text(path, json, "kind", what.c_str());
            if (!kindText)
                return kindText.error();
            const auto kind = parseDeviceKind(kindText.value());
            if (!kind)
                return at(path, *json.find("kind"),
                          what + ": kind '" + kindText.value() + "' is not cpu, vcpu or cuda");
            auto profile = text(path, json, "profile", what.c_str());
            if (!profile)
                return profile.error();
            if (!machine.profiles.count(profile.value()))
                return at(path, *json.find("profile"),
                          what + ": no profile '" + profile.value() + "' in \"profiles\"");
            int count = 1;
            if (const Json* many = json.find("count")) {
                if (!many->isInteger() || many->asInt() < 1 || many->asInt() > 4096)
                    return at(path, *many, what + ": count must be an integer from 1 to 4096");
                count = static_cast<int>(many->asInt());
            }
            for (int k = 0; k < count; ++k) {
                MachineDevice device;
                device.host = hostName.value();
                device.name = json.find("count") ? deviceName.value() + ":" + std::to_string(k)
                                                 : deviceName.value();
                device.kind = *kind;
                device.profile = profile.value();
                if (!qualified.insert(device.qualified()).second)
                    return at(path, json, "device '" + device.qualified() + "' is listed twice");
                machine.devices.push_back(std::move(device));
            }
        }
    }

    if (const Json* links = root.find("links")) {
        if (!links->isArray())
            return at(path, *links, "\"links\" must be an array");
        for (const Json& json : links->items()) {
            if (!json.isObject())
                return at(path, json, "a link must be an object with between, gbps, latency_us");
            MachineLink link;
            auto between = member(path, json, "between", "a link");
            if (!between)
                return between.error();
            if (!between.value()->isArray() || between.value()->items().empty() ||
                between.value()->items().size() > 2)
                return at(path, *between.value(),
                          "a link's \"between\" is one pattern (among its devices) or two (from "
                          "one set to the other)");
            for (const Json& pattern : between.value()->items()) {
                if (!pattern.isString() || pattern.asString().empty())
                    return at(path, pattern, "a link's patterns must be non-empty strings");
                const bool any =
                    std::any_of(qualified.begin(), qualified.end(), [&](const std::string& device) {
                        return covers(pattern.asString(), device);
                    });
                if (!any)
                    return at(path, pattern,
                              "link pattern '" + pattern.asString() +
                                  "' matches no device (devices are named host/device, as "
                                  "node0/cuda:0)");
                link.between.push_back(pattern.asString());
            }
            if (const Json* kind = json.find("kind"); kind && kind->isString())
                link.kind = kind->asString();
            auto gbps = member(path, json, "gbps", "a link");
            if (!gbps)
                return gbps.error();
            auto rate = positive(path, *gbps.value(), "a link's gbps");
            if (!rate)
                return rate.error();
            link.gbps = rate.value();
            auto latency = member(path, json, "latency_us", "a link");
            if (!latency)
                return latency.error();
            if (!latency.value()->isNumber() || latency.value()->asDouble() < 0)
                return at(path, *latency.value(), "a link's latency_us must be at least 0");
            link.latencyMicros = latency.value()->asDouble();
            machine.links.push_back(std::move(link));
        }
    }
    return machine;
}

MachineFile describeMachine(const std::string& host, const Calibration& calibration,
                            std::int64_t hostMemoryBytes) {
    MachineFile machine;
    machine.name = calibration.machine.empty() ? host : calibration.machine;
    std::vector<DeviceProfile> devices = calibration.devices;
    // The host's cpu stands for its cores; the vcpus are its workers, not devices of their own.
    devices.erase(
        std::remove_if(devices.begin(), devices.end(),
                       [](const DeviceProfile& d) { return d.name.rfind("vcpu", 0) == 0; }),
        devices.end());
    if (std::none_of(devices.begin(), devices.end(),
                     [](const DeviceProfile& d) { return d.name == "cpu"; }))
        devices.insert(devices.begin(), assumedProfile("cpu", false));
    for (const DeviceProfile& d : devices) {
        MachineDevice device;
        device.host = host;
        device.name = d.name;
        device.kind = d.gpu ? DeviceKind::Cuda : DeviceKind::Cpu;
        device.profile = d.name == "cpu" ? host + "-cpu" : host + "-" + d.name;
        MachineProfile profile;
        profile.peakTflops["float32"] = d.flopsPerMicro / 1e6;
        for (const auto& [type, rate] : d.typedFlopsPerMicro)
            profile.peakTflops[std::string(dtypeName(type))] = rate / 1e6;
        profile.memoryGbps = d.bytesPerMicro / 1e3;
        profile.launchMicros = d.launchMicros;
        if (!d.gpu && hostMemoryBytes > 0)
            profile.memoryBytes = hostMemoryBytes;
        machine.profiles[device.profile] = profile;
        machine.devices.push_back(std::move(device));
    }
    for (const auto& [pair, link] : calibration.links) {
        const auto known = [&](const std::string& name) {
            return std::any_of(machine.devices.begin(), machine.devices.end(),
                               [&](const MachineDevice& d) { return d.name == name; });
        };
        if (!known(pair.first) || !known(pair.second) || pair.first == pair.second)
            continue;
        MachineLink out;
        out.between = {host + "/" + pair.first, host + "/" + pair.second};
        out.kind = "measured";
        out.gbps = link.bytesPerMicro / 1e3;
        out.latencyMicros = link.latencyMicros;
        machine.links.push_back(std::move(out));
    }
    return machine;
}

CostModel machineFileCosts(const MachineFile& machine, const DeviceSet& devices) {
    const Calibration calibration = machine.calibration();
    CostModel model;
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& virtualDevice = devices[DeviceId(d)];
        const auto device = std::find_if(
            machine.devices.begin(), machine.devices.end(),
            [&](const MachineDevice& m) { return m.virtualName() == virtualDevice.name; });
        DeviceProfile profile =
            assumedProfile(virtualDevice.name, virtualDevice.kind == DeviceKind::Cuda);
        if (device != machine.devices.end()) {
            const auto measured =
                std::find_if(calibration.devices.begin(), calibration.devices.end(),
                             [&](const DeviceProfile& p) { return p.name == device->qualified(); });
            if (measured != calibration.devices.end())
                profile = *measured;
        }
        model.mapDevice(d, profile);
    }
    model.apply(calibration); // the links
    return model;
}

} // namespace placer
