// The cost model: roofline and measured node times, copies between devices, fused groups.
#include "plan/CostModel.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <set>

namespace placer {

OpWork opWork(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    OpWork work;
    if (node.role() != OpRole::Compute)
        return work;
    for (const ValueRef input : node.inputs)
        work.bytes += static_cast<double>(graph.type(input).bytes());
    double outElems = 0;
    for (const TensorType& output : node.outputs) {
        work.bytes += static_cast<double>(output.bytes());
        outElems += static_cast<double>(output.elementCount());
    }
    work.flops = outElems;
    if (!node.outputs.empty())
        work.dtype = node.outputs[0].dtype;
    const KernelFamily family = node.op->kernel.family;
    if (family == KernelFamily::Conv && node.inputs.size() >= 2) {
        // Per output element, one multiply-add per weight of its group's filter.
        const TensorType& weights = graph.type(node.inputs[1]);
        const double perFilter =
            weights.shape.empty()
                ? 1.0
                : static_cast<double>(weights.elementCount()) /
                      static_cast<double>(std::max<std::int64_t>(1, weights.shape[0]));
        work.flops = 2 * outElems * perFilter;
    } else if (family == KernelFamily::Matmul && node.inputs.size() >= 2) {
        // The inner dimension: the one A and B share (A's last unless A is transposed).
        const TensorType& a = graph.type(node.inputs[0]);
        const TensorType& b = graph.type(node.inputs[1]);
        double inner = a.shape.empty() ? 1.0 : static_cast<double>(a.shape.back());
        if (a.rank() >= 2 && b.rank() >= 2 && a.shape.back() != b.shape[b.shape.size() - 2] &&
            a.shape.back() != b.shape.back())
            inner = static_cast<double>(a.shape[a.shape.size() - 2]);
        work.flops = 2 * outElems * inner;
    }
    return work;
}

DeviceProfile assumedProfile(const std::string& name, bool gpu) {
    DeviceProfile profile;
    profile.name = name;
    profile.gpu = gpu;
    if (gpu) {
        // A recent datacentre GPU, conservatively: 20 TFLOP/s in float32, 1.5 TB/s.
        profile.flopsPerMicro = 2e7;
        profile.bytesPerMicro = 1.5e6;
        profile.launchMicros = 6;
        profile.runMicros = 20;
    }
    return profile;
}

LinkProfile assumedLink(bool fromGpu, bool toGpu) {
    LinkProfile link;
    if (fromGpu || toGpu) {
        link.latencyMicros = 12;
        link.bytesPerMicro = 1.2e4; // PCIe-class, 12 GB/s
    }
    return link;
}

namespace {

Json profileJson(const DeviceProfile& profile) {
    Json json = Json::object({{"name", profile.name},
                              {"gpu", profile.gpu},
                              {"flops_per_us", profile.flopsPerMicro},
                              {"bytes_per_us", profile.bytesPerMicro},
                              {"launch_us", profile.launchMicros},
                              {"dispatch_us", profile.dispatchMicros},
                              {"run_us", profile.runMicros},
                              {"calibrated", profile.calibrated}});
    if (profile.slowdown != 1)
        json.set("slowdown", profile.slowdown);
    return json;
}

double number(const Json& json, const char* key, double fallback) {
    const Json* member = json.find(key);
    return member && member->isNumber() ? member->asDouble() : fallback;
}

std::string text(const Json& json, const char* key) {
    const Json* member = json.find(key);
    return member && member->isString() ? member->asString() : std::string();
}

bool flag(const Json& json, const char* key) {
    const Json* member = json.find(key);
    return member && member->isBool() && member->asBool();
}

Result<DeviceProfile> profileFrom(const Json& json) {
    if (!json.isObject())
        return SourceError{"", json.line(), json.column(), "a device profile must be an object"};
    DeviceProfile profile = assumedProfile(text(json, "name"), flag(json, "gpu"));
    profile.flopsPerMicro = number(json, "flops_per_us", profile.flopsPerMicro);
    profile.bytesPerMicro = number(json, "bytes_per_us", profile.bytesPerMicro);
    profile.launchMicros = number(json, "launch_us", profile.launchMicros);
    profile.dispatchMicros = number(json, "dispatch_us", profile.dispatchMicros);
    profile.runMicros = number(json, "run_us", profile.runMicros);
    profile.calibrated = flag(json, "calibrated");
    profile.slowdown = number(json, "slowdown", 1);
    if (!(profile.slowdown > 0))
        return SourceError{"", json.line(), json.column(),
                           "a device profile's slowdown must be positive"};
    if (profile.name.empty() || !(profile.flopsPerMicro > 0) || !(profile.bytesPerMicro > 0) ||
        !(profile.launchMicros >= 0) || !(profile.dispatchMicros >= 0) || !(profile.runMicros >= 0))
        return SourceError{"", json.line(), json.column(),
                           "a device profile needs a name and positive rates"};
    return profile;
}

Json linksJson(const std::map<std::pair<std::string, std::string>, LinkProfile>& links) {
    Json array = Json::array();
    for (const auto& [pair, link] : links) {
        array.push(Json::object({{"from", pair.first},
                                 {"to", pair.second},
                                 {"latency_us", link.latencyMicros},
                                 {"bytes_per_us", link.bytesPerMicro},
                                 {"calibrated", link.calibrated}}));
    }
    return array;
}

Status linksFrom(const Json* json,
                 std::map<std::pair<std::string, std::string>, LinkProfile>* out) {
    if (!json)
        return Status();
    if (!json->isArray())
        return SourceError{"", json->line(), json->column(), "'links' must be an array"};
    for (const Json& item : json->items()) {
        LinkProfile link;
        link.latencyMicros = number(item, "latency_us", link.latencyMicros);
        link.bytesPerMicro = number(item, "bytes_per_us", link.bytesPerMicro);
        link.calibrated = flag(item, "calibrated");
        const std::string from = text(item, "from"), to = text(item, "to");
        if (from.empty() || to.empty() || !(link.bytesPerMicro > 0) || !(link.latencyMicros >= 0))
            return SourceError{"", item.line(), item.column(),
                               "a link needs 'from', 'to', a latency and a positive bandwidth"};
        (*out)[{from, to}] = link;
    }
    return Status();
}

} // namespace

Json Calibration::toJson() const {
    Json json = Json::object();
    json.set("machine", machine);
    Json list = Json::array();
    for (const DeviceProfile& profile : devices)
        list.push(profileJson(profile));
    json.set("devices", std::move(list));
    json.set("links", linksJson(links));
    return json;
}

Result<Calibration> Calibration::fromJson(const Json& json) {
    if (!json.isObject())
        return SourceError{"", json.line(), json.column(), "a calibration must be an object"};
    Calibration calibration;
    calibration.machine = text(json, "machine");
    if (const Json* list = json.find("devices"); list && list->isArray()) {
        for (const Json& item : list->items()) {
            auto profile = profileFrom(item);
            if (!profile)
                return profile.error();
            calibration.devices.push_back(profile.value());
        }
    }
    if (Status status = linksFrom(json.find("links"), &calibration.links); !status.ok())
        return status.error();
    return calibration;
}

namespace {

/// "rank1/vcpu2" -> (1, "vcpu2"); a name without a rank is rank 0's (device/Ranks.h).
std::pair<int, std::string> rankAndName(const std::string& physical) {
    const std::size_t slash = physical.find('/');
    if (physical.rfind("rank", 0) != 0 || slash == std::string::npos)
        return {0, physical};
    return {std::atoi(physical.c_str() + 4), physical.substr(slash + 1)};
}

/// A link between ranks nobody measured: a network's latency and bandwidth.
constexpr LinkProfile kAssumedRankLink{30, 1e3, false};

} // namespace

std::uint64_t CostModel::nextStamp() {
    static std::atomic<std::uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
}

void CostModel::restamp() {
    m_stamp = nextStamp();
}

CostModel CostModel::assumed(const DeviceSet& devices, int cores, const MapRequests& requests,
                             bool hasGpu) {
    CostModel model;
    model.m_cores = cores;
    int vcpus = 0;
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        std::string physical;
        for (const auto& [name, target] : requests) {
            // "vcpu3:threads=2" is vcpu3; "cuda" is cuda:0; "rank1/vcpu3" keeps its rank.
            if (name != device.name)
                continue;
            const std::size_t slash = target.rfind("rank", 0) == 0 ? target.find('/') : target.npos;
            const std::string rank = slash == target.npos ? "" : target.substr(0, slash + 1);
            const std::string bare = slash == target.npos ? target : target.substr(slash + 1);
            physical = rank + (bare.rfind("cuda", 0) == 0 ? bare : bare.substr(0, bare.find(':')));
        }
        if (physical.empty()) {
            if (device.kind == DeviceKind::Cpu)
                physical = "cpu";
            else if (device.kind == DeviceKind::Cuda && hasGpu)
                physical = "cuda:" + std::to_string(device.ordinal);
            else
                physical = "vcpu" + std::to_string(++vcpus);
        }
        if (rankAndName(physical).second == "cuda")
            physical += ":0";
        model.mapDevice(
            d, assumedProfile(physical, rankAndName(physical).second.rfind("cuda", 0) == 0));
    }
    return model;
}

void CostModel::mapDevice(int device, const DeviceProfile& profile) {
    restamp();
    if (device >= static_cast<int>(m_physicalOf.size()))
        m_physicalOf.resize(static_cast<std::size_t>(device) + 1, 0);
    const auto found = std::find_if(m_physical.begin(), m_physical.end(),
                                    [&](const DeviceProfile& p) { return p.name == profile.name; });
    if (found != m_physical.end()) {
        m_physicalOf[static_cast<std::size_t>(device)] =
            static_cast<int>(found - m_physical.begin());
        return;
    }
    m_physicalOf[static_cast<std::size_t>(device)] = static_cast<int>(m_physical.size());
    m_physical.push_back(profile);
}

void CostModel::apply(const Calibration& calibration) {
    restamp();
    for (DeviceProfile& profile : m_physical) {
        // A vcpu is a worker on the host's cores, and which vcpuN a run creates is arbitrary:
        // the first vcpu measured stands for all of them, so that they tie.
        // Another rank's vcpus take this host's calibration where theirs was not measured.
        const bool vcpu = costClass(rankAndName(profile.name).second) == "vcpu";
        for (const DeviceProfile& measured : calibration.devices) {
            if (measured.name == profile.name || (vcpu && costClass(measured.name) == "vcpu")) {
                const std::string name = profile.name;
                profile = measured;
                profile.name = name;
                break;
            }
        }
    }
    for (const auto& [pair, link] : calibration.links)
        m_links[pair] = link;
}

double CostModel::cpuShare() const {
    if (m_cores <= 0)
        return 1;
    std::set<int> cpu;
    for (int p : m_physicalOf) {
        if (!m_physical[static_cast<std::size_t>(p)].gpu)
            cpu.insert(p);
    }
    // CPUs share their host's cores: the most crowded host sets the share.
    std::map<std::string, int> perHost;
    for (int p : cpu) {
        const int rank = rankAndName(m_physical[static_cast<std::size_t>(p)].name).first;
        const std::string host = rank < static_cast<int>(m_rankHosts.size())
                                     ? m_rankHosts[static_cast<std::size_t>(rank)]
                                     : "rank" + std::to_string(rank);
        ++perHost[host];
    }
    int count = 0;
    for (const auto& [host, devices] : perHost)
        count = std::max(count, devices);
    return count > m_cores ? static_cast<double>(m_cores) / count : 1.0;
}

LinkProfile CostModel::link(DeviceId from, DeviceId to) const {
    const DeviceProfile& a = physical(from);
    const DeviceProfile& b = physical(to);
    const auto found = m_links.find({a.name, b.name});
    if (found != m_links.end())
        return found->second;
    // Between ranks: the link measured between them, else a network's.
    const int fromRank = rankAndName(a.name).first, toRank = rankAndName(b.name).first;
    if (fromRank != toRank) {
        const auto measured =
            m_links.find({"rank" + std::to_string(fromRank), "rank" + std::to_string(toRank)});
        return measured != m_links.end() ? measured->second : kAssumedRankLink;
    }
    // A link measured between vcpus (or a vcpu and another device) stands for every vcpu.
    const std::string fromClass = costClass(a.name), toClass = costClass(b.name);
    for (const auto& [pair, link] : m_links) {
        if (costClass(pair.first) == fromClass && costClass(pair.second) == toClass)
            return link;
    }
    return assumedLink(a.gpu, b.gpu);
}

double CostModel::roofline(const OpWork& work, DeviceId device) const {
    const DeviceProfile& p = physical(device);
    const double share = p.gpu ? 1.0 : cpuShare();
    const auto typed = p.typedFlopsPerMicro.find(work.dtype);
    const double rate = typed != p.typedFlopsPerMicro.end() ? typed->second : p.flopsPerMicro;
    return p.launchMicros + std::max(work.flops / rate, work.bytes / p.bytesPerMicro) / share;
}

CostModel::NodeCost CostModel::nodeCost(const Graph& graph, NodeId node, DeviceId device) const {
    if (graph.node(node).role() != OpRole::Compute)
        return {};
    if (!m_measured.empty()) {
        const auto found =
            m_measured.find(nodeKey(graph, node) + "@" + costClass(physical(device).name));
        if (found != m_measured.end())
            return {(found->second + physical(device).dispatchMicros) * physical(device).slowdown,
                    true};
    }
    return {(roofline(opWork(graph, node), device) + physical(device).dispatchMicros) *
                physical(device).slowdown,
            false};
}

CostModel::NodeCost CostModel::groupCost(const Graph& graph, NodeId head,
                                         const std::vector<NodeId>& members,
                                         DeviceId device) const {
    const double dispatch = physical(device).dispatchMicros;
    if (!m_measured.empty()) {
        const auto found = m_measured.find(groupKey(graph, head, members) + "@" +
                                           costClass(physical(device).name));
        if (found != m_measured.end())
            return {(found->second + dispatch) * physical(device).slowdown, true};
    }
    NodeCost cost = nodeCost(graph, head, device);
    cost.measured = false;
    const double slowed = dispatch * physical(device).slowdown;
    for (const NodeId member : members)
        cost.micros += std::max(0.0, nodeCost(graph, member, device).micros - slowed);
    return cost;
}

std::vector<NodeId> CostModel::fusedGroups(const Graph& graph,
                                           const std::vector<DeviceId>& devices) const {
    if (!m_fusion)
        return {};
    std::vector<bool> cpu(m_physicalOf.size(), false);
    for (std::size_t d = 0; d < cpu.size(); ++d)
        cpu[d] = !m_physical[static_cast<std::size_t>(m_physicalOf[d])].gpu;
    return m_fusion(graph, devices, cpu);
}

double CostModel::copyMicros(std::int64_t bytes, DeviceId from, DeviceId to) const {
    if (from == to || resourceOf(from) == resourceOf(to))
        return 0;
    const LinkProfile l = link(from, to);
    return l.latencyMicros + static_cast<double>(bytes) / l.bytesPerMicro;
}

namespace {

/// FNV-1a of `text`: a body's identity in a cost key, the same in every process.
std::uint64_t fingerprint(const std::string& text) {
    std::uint64_t hash = 14695981039346656037ull;
    for (const char c : text) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash;
}

} // namespace

std::string CostModel::nodeKey(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    std::string key = node.op->name + "(";
    for (std::size_t k = 0; k < node.inputs.size(); ++k) {
        const TensorType& type = graph.type(node.inputs[k]);
        key += (k ? "," : "") + std::string(dtypeName(type.dtype)) + "[";
        // A shape found at run time has a stand-in here, the same in every model: no size.
        if (shapeFoundAtRun(graph, node.inputs[k]))
            key += "?";
        else
            for (std::size_t i = 0; i < type.shape.size(); ++i)
                key += (i ? "x" : "") + std::to_string(type.shape[i]);
        key += "]";
    }
    key += ")";
    for (const auto& [name, value] : node.attrs.entries())
        key += " " + name + "=" + formatAttrRelay(value);
    // Control flow costs what its bodies do: two Ifs alike outside are not alike.
    for (const Subgraph& body : node.subgraphs) {
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx",
                      static_cast<unsigned long long>(body.source ? fingerprint(*body.source) : 0));
        key += " " + body.attribute + "=" + hex;
    }
    return key;
}

std::string CostModel::groupKey(const Graph& graph, NodeId head,
                                const std::vector<NodeId>& members) {
    std::string key = nodeKey(graph, head) + " fused";
    for (std::size_t k = 0; k < members.size(); ++k)
        key += (k ? "," : " ") + graph.node(members[k]).op->name;
    return key;
}

std::map<std::uint32_t, std::vector<NodeId>>
CostModel::membersByHead(const std::vector<NodeId>& fusedInto) {
    std::map<std::uint32_t, std::vector<NodeId>> members;
    for (std::uint32_t i = 0; i < fusedInto.size(); ++i) {
        if (fusedInto[i].valid() && fusedInto[i].index != i)
            members[fusedInto[i].index].push_back(NodeId(i));
    }
    return members;
}

void CostModel::recordMeasured(const std::string& key, const std::string& physical, double micros) {
    restamp();
    m_measured[key + "@" + costClass(physical)] = micros;
}

std::string CostModel::costClass(const std::string& physical) {
    // Every vcpu is a worker on its host's cores: one measurement stands for all of them. Another
    // rank's are measured there (another host, maybe), and kept apart: "rank1/vcpu".
    const auto [rank, name] = rankAndName(physical);
    if (name.rfind("vcpu", 0) == 0)
        return rank == 0 ? "vcpu" : "rank" + std::to_string(rank) + "/vcpu";
    return physical;
}

bool CostModel::setSlowdown(const std::string& physical, double factor) {
    bool found = false;
    for (DeviceProfile& profile : m_physical) {
        if (profile.name == physical) {
            profile.slowdown = factor;
            found = true;
        }
    }
    if (found)
        restamp();
    return found;
}

std::size_t CostModel::measuredOn(const std::string& physical) const {
    const std::string suffix = "@" + costClass(physical);
    return static_cast<std::size_t>(
        std::count_if(m_measured.begin(), m_measured.end(), [&](const auto& entry) {
            return entry.first.size() >= suffix.size() &&
                   entry.first.compare(entry.first.size() - suffix.size(), suffix.size(), suffix) ==
                       0;
        }));
}

Json CostModel::toJson() const {
    Json json = Json::object();
    json.set("cores", m_cores);
    Json physical = Json::array();
    for (const DeviceProfile& profile : m_physical)
        physical.push(profileJson(profile));
    json.set("physical", std::move(physical));
    Json mapping = Json::array();
    for (int p : m_physicalOf)
        mapping.push(p);
    json.set("mapping", std::move(mapping));
    json.set("links", linksJson(m_links));
    Json measured = Json::object();
    for (const auto& [key, micros] : m_measured)
        measured.set(key, micros);
    json.set("measured", std::move(measured));
    return json;
}

Result<CostModel> CostModel::fromJson(const Json& json) {
    if (!json.isObject())
        return SourceError{"", json.line(), json.column(), "a cost model must be an object"};
    CostModel model;
    model.m_cores = static_cast<int>(number(json, "cores", 0));
    if (const Json* list = json.find("physical"); list && list->isArray()) {
        for (const Json& item : list->items()) {
            auto profile = profileFrom(item);
            if (!profile)
                return profile.error();
            model.m_physical.push_back(profile.value());
        }
    }
    if (const Json* mapping = json.find("mapping"); mapping && mapping->isArray()) {
        for (const Json& item : mapping->items()) {
            const std::int64_t p = item.isNumber() ? item.asInt() : -1;
            if (p < 0 || p >= static_cast<std::int64_t>(model.m_physical.size()))
                return SourceError{"", item.line(), item.column(),
                                   "a device mapping names no physical device"};
            model.m_physicalOf.push_back(static_cast<int>(p));
        }
    }
    if (Status status = linksFrom(json.find("links"), &model.m_links); !status.ok())
        return status.error();
    if (const Json* measured = json.find("measured"); measured && measured->isObject()) {
        for (const auto& [key, value] : measured->members()) {
            if (value.isNumber() && value.asDouble() >= 0)
                model.m_measured[key] = value.asDouble();
        }
    }
    return model;
}

} // namespace placer
