// The device planner.
//
// Placement Explorer decides where each operator of a dataflow graph runs. This file turns a
// graph with a few constraints (pins, explicit copies, op-name rules, a fallback device) into a
// device for every node, the copies the placement needs, and the reason for each decision.
//
// Vocabulary
// ----------
//  - A *value* is one output of one node. It flows along *edges* into the inputs of consumers.
//  - An edge is *hard* when both ends must be on one device, *soft* when a copy may sit on it.
//    Edges into an op are hard: a primitive reads its inputs where it runs. Edges out of a node
//    pinned with a *plain* pin (Relay on_device without constrain_result) are soft: a pin says
//    where the op runs, not where its consumers run. Edges out of a node with a *fixed* pin
//    (constrain_result=True, a parameter's virtual_device) are hard. Edges into and out of a
//    device_copy are soft; its src and dst fix the two sides.
//  - A node has its *own fixed device* when something other than the graph's shape decides it.
//
// Phases
// ------
//  1. FixedDevices: every node's own fixed device, in precedence order: an explicit pin; a
//     device_copy's destination; the first op-name rule whose glob matches the op; the fallback
//     device, for ops no rule covers when rules are given; the host, for host-only ops. A fixed
//     device that has no kernel for the op (or its dtype) is replaced by the *fallback target*
//     (the fallback device, else the host, else the default, else the first device with a
//     kernel). For a pin this is a Conflict; for a rule it is only noted in the reason.
//  2. Classes (unify mode only): union-find over hard edges. Each class collects the fixed
//     devices of its members, the src of every device_copy that reads a member, and the device
//     a graph result requires of a member.
//  3. Assignment, one walk from the outputs back to the inputs (reverse topological order), so
//     every consumer is decided before its producer:
//       - a node with its own fixed device keeps it;
//       - unify: a class with exactly one fixed device gives it to every member, a class with
//         none gives the default device; a class with several (where TVM's planner failed with
//         "Function parameters and result VirtualDevices do not match") falls through to:
//       - demand: the device most of the node's consumers run on (a device_copy consumer counts
//         as its src, a result that must be on a device counts as that device); ties go to the
//         default device, then to the lowest device index; a node nothing consumes takes the
//         default device.
//     An inferred device without a kernel for the op is replaced by the fallback target.
//  4. CopyInsertion: a value whose consumers sit on other devices lives on its producer's device
//     and is copied once per other device, shared by every consumer there (never to itself).
//     Constants are replicated instead when ConstantPolicy::Replicate (such a constant's
//     out-edges are soft: it joins no unify class and, unless pinned, goes where most of its
//     consumers are). An explicit device_copy
//     moves its input from wherever the producer ended up; a src that contradicts the
//     producer's pin is a Conflict and the copy is adjusted.
//  5. MemoryPlanner (MemoryPlanner.cpp): storages per device with lifetime-based reuse; a
//     device whose storages exceed its capacity is a Conflict.
//
// Worked example: (a+b)-(b+c), first add pinned to cpu, second to gpu, default gpu.
//     demand: %0=add(a,b) cpu (pin), %2=add(b,c) gpu (pin), subtract gpu (nothing consumes it),
//             a cpu (its only consumer), c gpu, b consumed on cpu and gpu: tie, default gpu.
//     Copies: b gpu->cpu for %0, %0 cpu->gpu for subtract. No error.
//     unify: {a, b, c, %0, %2} form one class (edges into ops are hard) holding cpu and gpu, so
//            its unpinned members are placed by demand: the same answer as above.
//
// Limits: one device per value instance (no sharding); cost is not considered (bytes are
// reported, not minimised); tuples are flattened by the readers, so fields plan independently.
#include "plan/Planner.h"

#include "plan/Glob.h"
#include "plan/MemoryPlanner.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

namespace placer {

namespace {

/// Where a node's own fixed device came from.
enum class FixedSource : std::uint8_t { None, Pin, FixedPin, Copy, Rule, RuleFallback, HostOnly };

/// Consumers of every node as a compressed sparse row: for node n, the consumer edges are
/// edges[offsets[n] .. offsets[n+1]), each the consumer node and which output of n it reads.
struct ConsumerIndex {
    std::vector<std::uint32_t> offsets;
    std::vector<std::uint32_t> consumer;
    std::vector<std::uint32_t> output;

    explicit ConsumerIndex(const Graph& graph) {
        const std::size_t n = graph.size();
        offsets.assign(n + 1, 0);
        for (const Node& node : graph.nodes()) {
            for (const ValueRef& input : node.inputs)
                ++offsets[input.node.index + 1];
        }
        std::partial_sum(offsets.begin(), offsets.end(), offsets.begin());
        consumer.resize(offsets[n]);
        output.resize(offsets[n]);
        std::vector<std::uint32_t> fill(offsets.begin(), offsets.end() - 1);
        for (std::uint32_t c = 0; c < n; ++c) {
            for (const ValueRef& input : graph.nodes()[c].inputs) {
                const std::uint32_t slot = fill[input.node.index]++;
                consumer[slot] = c;
                output[slot] = input.output;
            }
        }
    }
};

/// Union-find with path halving and union by size; iterative, so deep graphs are fine.
class DisjointSets {
public:
    explicit DisjointSets(std::size_t n) : m_parent(n), m_size(n, 1) {
        std::iota(m_parent.begin(), m_parent.end(), 0u);
    }
    std::uint32_t find(std::uint32_t x) {
        while (m_parent[x] != x) {
            m_parent[x] = m_parent[m_parent[x]];
            x = m_parent[x];
        }
        return x;
    }
    void unite(std::uint32_t a, std::uint32_t b) {
        a = find(a);
        b = find(b);
        if (a == b)
            return;
        if (m_size[a] < m_size[b])
            std::swap(a, b);
        m_parent[b] = a;
        m_size[a] += m_size[b];
    }
    std::uint32_t size(std::uint32_t root) const { return m_size[root]; }

private:
    std::vector<std::uint32_t> m_parent;
    std::vector<std::uint32_t> m_size;
};

/// The fixed devices a unify class has collected: none, one (with the node that set it), or
/// several.
struct ClassConstraint {
    DeviceId device;
    NodeId via;
    bool viaResult = false;
    bool several = false;

    void add(DeviceId d, NodeId from, bool isResult = false) {
        if (!device.valid()) {
            device = d;
            via = from;
            viaResult = isResult;
        } else if (device != d) {
            several = true;
        }
    }
};

/// "a", "a and b", "a, b and c".
std::string joinWithAnd(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

class Planner {
public:
    Planner(const Graph& graph, const DeviceSet& devices, const PlanOptions& options)
        : m_graph(graph), m_devices(devices), m_options(options), m_consumers(graph) {}

    Plan run() {
        const std::size_t n = m_graph.size();
        m_plan.devices.assign(n, DeviceId());
        m_plan.reasons.assign(n, Reason{});
        m_fixed.assign(n, DeviceId());
        m_fixedSource.assign(n, FixedSource::None);
        if (m_devices.empty())
            return std::move(m_plan);
        m_voteCounts.assign(m_devices.size(), 0);
        m_firstVoter.assign(m_devices.size(), NodeId());
        resolveOptions();
        collectOutputDemands();
        computeFixedDevices();
        if (m_options.mode == PlanMode::Unify)
            buildClasses();
        assignDevices();
        reportUnsupportedOps();
        insertCopies();
        if (m_options.planMemory) {
            m_plan.memory = planMemory(m_graph, m_devices, m_plan);
            checkCapacities();
        }
        return std::move(m_plan);
    }

private:
    // ---- options ---------------------------------------------------------------------------

    void resolveOptions() {
        m_ruleDevices.assign(m_options.rules.size(), DeviceId());
        for (std::size_t i = 0; i < m_options.rules.size(); ++i) {
            const OpRule& rule = m_options.rules[i];
            if (const auto device = m_devices.find(rule.device)) {
                m_ruleDevices[i] = *device;
                continue;
            }
            m_plan.conflicts.push_back(Conflict{
                ConflictKind::UnknownDevice,
                {},
                {"rule '" + rule.opPattern + "=" + rule.device + "'"},
                "rule '" + rule.opPattern + "=" + rule.device + "' names unknown device '" +
                    rule.device + "' (devices: " + m_devices.namesList() + ")",
                "use one of the devices " + m_devices.namesList() + ", or add '" + rule.device +
                    "' to the device set"});
        }
        if (!m_options.fallbackDevice.empty()) {
            if (const auto device = m_devices.find(m_options.fallbackDevice)) {
                m_fallback = *device;
            } else {
                m_plan.conflicts.push_back(
                    Conflict{ConflictKind::UnknownDevice,
                             {},
                             {"fallback device"},
                             "fallback device '" + m_options.fallbackDevice +
                                 "' is not a device (devices: " + m_devices.namesList() + ")",
                             "choose a fallback among " + m_devices.namesList()});
            }
        }
    }

    void collectOutputDemands() {
        for (const GraphOutput& output : m_graph.outputs()) {
            if (output.device.valid())
                m_outputDemands.emplace(output.value.node.index, output.device);
        }
    }

    // ---- kernels ---------------------------------------------------------------------------

    /// The dtype an op's kernel works on: its first input's, else its first output's.
    DType computeDType(const Node& node) const {
        if (!node.inputs.empty())
            return m_graph.type(node.inputs[0]).dtype;
        return node.outputs.empty() ? DType::Float32 : node.outputs[0].dtype;
    }

    bool canRun(const Node& node, DeviceId device) const {
        if (node.role() != OpRole::Compute)
            return true;
        if (node.op->hostOnly && device != m_devices.hostDevice())
            return false;
        return node.op->hasKernel(m_devices[device].kind, computeDType(node));
    }

    /// Where a node goes when the device it would get cannot run it; invalid if no device can.
    DeviceId fallbackTarget(const Node& node) const {
        if (node.op->hostOnly)
            return canRun(node, m_devices.hostDevice()) ? m_devices.hostDevice() : DeviceId();
        for (DeviceId candidate : {m_fallback, m_devices.hostDevice(), m_devices.defaultDevice()}) {
            if (candidate.valid() && canRun(node, candidate))
                return candidate;
        }
        for (int i = 0; i < m_devices.size(); ++i) {
            if (canRun(node, DeviceId(i)))
                return DeviceId(i);
        }
        return DeviceId();
    }

    // ---- phase 1: fixed devices ------------------------------------------------------------

    void computeFixedDevices() {
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            const Node& node = m_graph.nodes()[i];
            const NodeId id(i);
            reportRejectedPins(id);
            if (node.pin.active()) {
                m_fixed[i] = node.pin.device;
                m_fixedSource[i] =
                    node.pin.kind == PinKind::Fixed ? FixedSource::FixedPin : FixedSource::Pin;
                m_plan.reasons[i].kind =
                    node.pin.kind == PinKind::Fixed ? ReasonKind::FixedPin : ReasonKind::Pin;
                if (node.isDeviceCopy() && node.pin.device != node.copyDestination)
                    reportPinOnCopy(id);
            } else if (node.isDeviceCopy()) {
                m_fixed[i] = node.copyDestination;
                m_fixedSource[i] = FixedSource::Copy;
                m_plan.reasons[i].kind = ReasonKind::CopyDestination;
            } else if (node.role() == OpRole::Compute && !m_options.rules.empty()) {
                applyRules(id);
            } else if (node.role() == OpRole::Compute && node.op->hostOnly &&
                       m_devices.hostDevice().valid()) {
                m_fixed[i] = m_devices.hostDevice();
                m_fixedSource[i] = FixedSource::HostOnly;
                m_plan.reasons[i].kind = ReasonKind::HostOnly;
            }
            if (m_fixed[i].valid() && !canRun(node, m_fixed[i]))
                replaceUnrunnableFixedDevice(id);
        }
    }

    void applyRules(NodeId id) {
        const Node& node = m_graph.node(id);
        for (std::size_t r = 0; r < m_options.rules.size(); ++r) {
            if (!m_ruleDevices[r].valid() ||
                !globMatch(m_options.rules[r].opPattern, node.op->name))
                continue;
            m_fixed[id.index] = m_ruleDevices[r];
            m_fixedSource[id.index] = FixedSource::Rule;
            m_plan.reasons[id.index].kind = ReasonKind::Rule;
            m_plan.reasons[id.index].rule = static_cast<std::int32_t>(r);
            return;
        }
        if (m_fallback.valid()) {
            m_fixed[id.index] = m_fallback;
            m_fixedSource[id.index] = FixedSource::RuleFallback;
            m_plan.reasons[id.index].kind = ReasonKind::RuleFallback;
        } else if (node.op->hostOnly && m_devices.hostDevice().valid()) {
            m_fixed[id.index] = m_devices.hostDevice();
            m_fixedSource[id.index] = FixedSource::HostOnly;
            m_plan.reasons[id.index].kind = ReasonKind::HostOnly;
        }
    }

    void replaceUnrunnableFixedDevice(NodeId id) {
        const Node& node = m_graph.node(id);
        const DeviceId wanted = m_fixed[id.index];
        const DeviceId target = fallbackTarget(node);
        if (!target.valid())
            return; // no device can run it: reported once per op by reportUnsupportedOps()
        Reason& reason = m_plan.reasons[id.index];
        const bool pinned = m_fixedSource[id.index] == FixedSource::Pin ||
                            m_fixedSource[id.index] == FixedSource::FixedPin;
        m_fixed[id.index] = target;
        reason.wanted = wanted;
        if (!pinned) {
            reason.kind = ReasonKind::KernelFallback;
            return;
        }
        reason.kind = ReasonKind::RejectedPin;
        const std::string& wantedName = m_devices[wanted].name;
        const std::string& targetName = m_devices[target].name;
        const DType dtype = computeDType(node);
        Conflict conflict;
        conflict.nodes = {id};
        conflict.sources = {node.pin.origin};
        if (node.op->hostOnly) {
            conflict.kind = ConflictKind::HostOnly;
            conflict.message = "node '" + node.name + "' pinned to '" + wantedName + "', but '" +
                               node.op->name + "' is host-only and runs on the host '" +
                               targetName + "'";
            conflict.suggestion = "remove the pin or pin it to '" + targetName + "'";
        } else if (node.op->hasKernel(m_devices[wanted].kind)) {
            conflict.kind = ConflictKind::DType;
            conflict.message = "node '" + node.name + "' pinned to '" + wantedName + "', whose " +
                               std::string(deviceKindName(m_devices[wanted].kind)) +
                               " kernel for '" + node.op->name + "' cannot take " +
                               std::string(dtypeName(dtype)) + "; it runs on '" + targetName +
                               "' instead";
            conflict.suggestion =
                "cast the inputs to a supported type or pin it to '" + targetName + "'";
        } else {
            conflict.kind = ConflictKind::NoKernel;
            conflict.message = "node '" + node.name + "' pinned to '" + wantedName +
                               "', which has no kernel for '" + node.op->name + "'; it runs on '" +
                               targetName + "' instead";
            conflict.suggestion = "pin it to a device with a kernel for '" + node.op->name +
                                  "', such as '" + targetName + "'";
        }
        m_plan.conflicts.push_back(std::move(conflict));
    }

    void reportRejectedPins(NodeId id) {
        const Node& node = m_graph.node(id);
        for (const Pin& rejected : node.rejectedPins) {
            m_plan.conflicts.push_back(Conflict{
                ConflictKind::PinsDisagree,
                {id},
                {node.pin.origin, rejected.origin},
                "node '" + node.name + "' is pinned to '" + m_devices[node.pin.device].name +
                    "' and to '" + m_devices[rejected.device].name + "'; the first pin wins",
                "remove one of the two annotations"});
        }
    }

    void reportPinOnCopy(NodeId id) {
        const Node& node = m_graph.node(id);
        m_plan.conflicts.push_back(Conflict{
            ConflictKind::PinsDisagree,
            {id},
            {node.pin.origin, "device_copy destination"},
            "device_copy '" + node.name + "' copies to '" + m_devices[node.copyDestination].name +
                "' but is pinned to '" + m_devices[node.pin.device].name + "'; the pin wins",
            "remove the pin or change the copy's dst_virtual_device"});
    }

    // ---- phase 2: classes (unify) ----------------------------------------------------------

    /// A constant that will be replicated constrains nobody: it is on every device that needs
    /// it, so its out-edges are soft (a pin only says where its first instance lives).
    bool isReplicatedConstant(const Node& node) const {
        return node.isConstant() && m_options.constants == ConstantPolicy::Replicate;
    }

    bool isHardEdge(const Node& producer, std::uint32_t producerIndex, const Node& consumer) const {
        if (consumer.isDeviceCopy() || producer.isDeviceCopy() || isReplicatedConstant(producer))
            return false;
        const FixedSource source = m_fixedSource[producerIndex];
        return source == FixedSource::None || source == FixedSource::FixedPin;
    }

    void buildClasses() {
        const std::size_t n = m_graph.size();
        DisjointSets sets(n);
        for (std::uint32_t c = 0; c < n; ++c) {
            const Node& consumer = m_graph.nodes()[c];
            for (const ValueRef& input : consumer.inputs) {
                const Node& producer = m_graph.node(input.node);
                if (isHardEdge(producer, input.node.index, consumer))
                    sets.unite(input.node.index, c);
            }
        }
        m_classOf.resize(n);
        m_classSize.resize(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            m_classOf[i] = sets.find(i);
            m_classSize[i] = sets.size(m_classOf[i]);
        }
        m_classConstraints.assign(n, ClassConstraint{});
        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = m_graph.nodes()[i];
            if (m_fixed[i].valid() && !node.isDeviceCopy())
                m_classConstraints[m_classOf[i]].add(m_fixed[i], NodeId(i));
            if (node.isDeviceCopy())
                m_classConstraints[m_classOf[node.inputs[0].node.index]].add(node.copySource,
                                                                             NodeId(i));
        }
        for (const auto& [node, device] : m_outputDemands)
            m_classConstraints[m_classOf[node]].add(device, NodeId(node), true);
    }

    // ---- phase 3: assignment ---------------------------------------------------------------

    void assignDevices() {
        for (std::uint32_t i = static_cast<std::uint32_t>(m_graph.size()); i-- > 0;) {
            const Node& node = m_graph.nodes()[i];
            Reason& reason = m_plan.reasons[i];
            if (m_fixed[i].valid()) {
                m_plan.devices[i] = m_fixed[i];
                continue;
            }
            DeviceId device;
            if (m_options.mode == PlanMode::Unify && !isReplicatedConstant(node)) {
                const ClassConstraint& constraint = m_classConstraints[m_classOf[i]];
                reason.classSize = static_cast<std::int32_t>(m_classSize[i]);
                if (!constraint.device.valid()) {
                    device = m_devices.defaultDevice();
                    reason.kind = ReasonKind::ClassDefault;
                } else if (!constraint.several) {
                    device = constraint.device;
                    reason.kind = ReasonKind::Class;
                    reason.via = constraint.via;
                    reason.fromResult = constraint.viaResult;
                }
            }
            if (!device.valid())
                device = voteByConsumers(i, &reason);
            if (!canRun(node, device)) {
                const DeviceId target = fallbackTarget(node);
                if (target.valid()) {
                    reason.wanted = device;
                    reason.kind = ReasonKind::KernelFallback;
                    device = target;
                }
            }
            m_plan.devices[i] = device;
        }
    }

    /// The device most consumers of node i run on; ties to the default, then the lowest index.
    DeviceId voteByConsumers(std::uint32_t i, Reason* reason) {
        std::int32_t* counts = m_voteCounts.data();
        NodeId* firstVoter = m_firstVoter.data();
        std::int32_t voters = 0;
        std::uint32_t previous = UINT32_MAX;
        for (std::uint32_t e = m_consumers.offsets[i]; e < m_consumers.offsets[i + 1]; ++e) {
            const std::uint32_t c = m_consumers.consumer[e];
            if (c == previous)
                continue; // one vote per consumer, however many inputs it reads this through
            previous = c;
            const Node& consumer = m_graph.nodes()[c];
            const DeviceId d = consumer.isDeviceCopy() ? consumer.copySource : m_plan.devices[c];
            if (counts[d.index]++ == 0)
                firstVoter[d.index] = NodeId(c);
            ++voters;
        }
        const auto demands = m_outputDemands.equal_range(i);
        for (auto it = demands.first; it != demands.second; ++it) {
            const std::int32_t d = it->second.index;
            if (counts[d]++ == 0)
                firstVoter[d] = NodeId(i); // the node itself stands for "the result"
            ++voters;
        }
        reason->voters = voters;
        if (voters == 0) {
            reason->kind = ReasonKind::NoConsumers;
            return m_devices.defaultDevice();
        }
        const int deviceCount = m_devices.size();
        std::int32_t best = 0;
        for (int d = 0; d < deviceCount; ++d)
            best = std::max(best, counts[d]);
        int winners = 0;
        DeviceId chosen;
        for (int d = 0; d < deviceCount; ++d) {
            if (counts[d] != best)
                continue;
            ++winners;
            if (!chosen.valid())
                chosen = DeviceId(d);
        }
        const DeviceId preferred = m_devices.defaultDevice();
        if (winners > 1 && preferred.valid() && counts[preferred.index] == best)
            chosen = preferred;
        reason->kind = winners > 1 ? ReasonKind::ConsumersTie : ReasonKind::Consumers;
        reason->votes = best;
        reason->via = firstVoter[chosen.index];
        std::fill(m_voteCounts.begin(), m_voteCounts.end(), 0);
        return chosen;
    }

    void reportUnsupportedOps() {
        std::map<std::string, std::vector<NodeId>> byOp;
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            const Node& node = m_graph.nodes()[i];
            if (node.role() == OpRole::Compute && m_plan.devices[i].valid() &&
                !canRun(node, m_plan.devices[i]))
                byOp[node.op->name].push_back(NodeId(i));
        }
        for (auto& [op, nodes] : byOp) {
            const Node& first = m_graph.node(nodes.front());
            const std::string count = nodes.size() == 1 ? "node '" + first.name + "'"
                                                        : std::to_string(nodes.size()) + " nodes";
            m_plan.conflicts.push_back(Conflict{
                ConflictKind::Unsupported,
                nodes,
                {"op registry"},
                "no device has a kernel for '" + op + "' (" +
                    std::string(dtypeName(computeDType(first))) + "), used by " + count,
                "replace '" + op + "' with supported ops, or add a device that can run it"});
        }
    }

    // ---- phase 4: copies -------------------------------------------------------------------

    void insertCopies() {
        const int deviceCount = m_devices.size();
        std::vector<std::vector<NodeId>> consumersOn(deviceCount);
        std::vector<char> outputOn(deviceCount);
        for (std::uint32_t p = 0; p < m_graph.size(); ++p) {
            const Node& producer = m_graph.nodes()[p];
            const DeviceId home = m_plan.devices[p];
            for (std::uint32_t k = 0; k < producer.outputs.size(); ++k) {
                bool crosses = false;
                for (std::uint32_t e = m_consumers.offsets[p]; e < m_consumers.offsets[p + 1];
                     ++e) {
                    if (m_consumers.output[e] != k)
                        continue;
                    const std::uint32_t c = m_consumers.consumer[e];
                    const Node& consumer = m_graph.nodes()[c];
                    if (consumer.isDeviceCopy()) {
                        recordExplicitCopy(NodeId(c), ValueRef{NodeId(p), k});
                        continue;
                    }
                    const DeviceId d = m_plan.devices[c];
                    if (d == home)
                        continue;
                    std::vector<NodeId>& list = consumersOn[d.index];
                    if (list.empty() || list.back() != NodeId(c))
                        list.push_back(NodeId(c));
                    crosses = true;
                }
                const auto demands = m_outputDemands.equal_range(p);
                for (auto it = demands.first; it != demands.second; ++it) {
                    if (it->second != home && isOutputValue(ValueRef{NodeId(p), k}, it->second)) {
                        outputOn[it->second.index] = 1;
                        crosses = true;
                    }
                }
                if (crosses)
                    emitTransfers(ValueRef{NodeId(p), k}, home, consumersOn, outputOn);
            }
        }
    }

    bool isOutputValue(ValueRef value, DeviceId device) const {
        for (const GraphOutput& output : m_graph.outputs()) {
            if (output.value == value && output.device == device)
                return true;
        }
        return false;
    }

    void emitTransfers(ValueRef value, DeviceId home, std::vector<std::vector<NodeId>>& consumersOn,
                       std::vector<char>& outputOn) {
        const Node& producer = m_graph.node(value.node);
        const std::int64_t bytes = m_graph.type(value).bytes();
        const bool replicate =
            producer.isConstant() && m_options.constants == ConstantPolicy::Replicate;
        Replica replica{value, home, {}};
        std::vector<std::string> elsewhereNames;
        for (int d = 0; d < m_devices.size(); ++d) {
            if (consumersOn[d].empty() && !outputOn[d])
                continue;
            elsewhereNames.push_back(m_devices[DeviceId(d)].name);
            if (replicate) {
                replica.devices.push_back(DeviceId(d));
            } else {
                CopyPlan copy;
                copy.value = value;
                copy.from = home;
                copy.to = DeviceId(d);
                copy.bytes = bytes;
                copy.consumers = std::move(consumersOn[d]);
                copy.toOutput = outputOn[d] != 0;
                m_plan.copies.push_back(std::move(copy));
            }
            consumersOn[d].clear();
            outputOn[d] = 0;
        }
        const std::string elsewhere = joinWithAnd(elsewhereNames);
        const std::string name = m_graph.valueName(value);
        const std::string& homeName = m_devices[home].name;
        const std::size_t count = replicate ? replica.devices.size() : 0;
        if (replicate) {
            elsewhereNames.insert(elsewhereNames.begin(), homeName);
            m_plan.notes.push_back(name + " is used on " + joinWithAnd(elsewhereNames) +
                                   ": replicated, one instance per device, made at load time (" +
                                   formatBytes(bytes * static_cast<std::int64_t>(count)) +
                                   " extra)");
            m_plan.replicas.push_back(std::move(replica));
        } else {
            elsewhereNames.insert(elsewhereNames.begin(), homeName);
            m_plan.notes.push_back(name + " is used on " + joinWithAnd(elsewhereNames) +
                                   ": placed on " + homeName + ", copied to " + elsewhere + ", " +
                                   formatBytes(bytes) + " each");
        }
    }

    void recordExplicitCopy(NodeId copyNode, ValueRef input) {
        const Node& copy = m_graph.node(copyNode);
        const Node& producer = m_graph.node(input.node);
        const DeviceId actual = m_plan.devices[input.node.index];
        const DeviceId destination = m_plan.devices[copyNode.index];
        if (copy.copySource != actual) {
            const bool producerPinned = m_fixedSource[input.node.index] == FixedSource::Pin ||
                                        m_fixedSource[input.node.index] == FixedSource::FixedPin;
            if (producerPinned) {
                m_plan.conflicts.push_back(
                    Conflict{ConflictKind::CopySource,
                             {copyNode, input.node},
                             {"device_copy '" + copy.name + "'", producer.pin.origin},
                             "device_copy '" + copy.name + "' copies from '" +
                                 m_devices[copy.copySource].name + "', but its input '" +
                                 producer.name + "' is pinned to '" + m_devices[actual].name +
                                 "'; the copy reads from '" + m_devices[actual].name + "'",
                             "set src_virtual_device to '" + m_devices[actual].name + "'"});
            } else {
                m_plan.notes.push_back("device_copy " + copy.name + " reads " + producer.name +
                                       " on " + m_devices[actual].name + ", not " +
                                       m_devices[copy.copySource].name +
                                       " as written: source adjusted");
            }
        }
        if (actual == destination) {
            m_plan.notes.push_back("device_copy " + copy.name + " copies from " +
                                   m_devices[actual].name + " to itself: nothing to move");
            return;
        }
        CopyPlan plan;
        plan.value = input;
        plan.from = actual;
        plan.to = destination;
        plan.bytes = m_graph.type(input).bytes();
        plan.isExplicit = true;
        plan.copyNode = copyNode;
        std::uint32_t previous = UINT32_MAX;
        for (std::uint32_t e = m_consumers.offsets[copyNode.index];
             e < m_consumers.offsets[copyNode.index + 1]; ++e) {
            if (m_consumers.consumer[e] != previous)
                plan.consumers.push_back(NodeId(m_consumers.consumer[e]));
            previous = m_consumers.consumer[e];
        }
        plan.toOutput = std::any_of(m_graph.outputs().begin(), m_graph.outputs().end(),
                                    [&](const GraphOutput& o) { return o.value.node == copyNode; });
        m_plan.copies.push_back(std::move(plan));
    }

    // ---- phase 5: capacity -----------------------------------------------------------------

    void checkCapacities() {
        for (const DeviceMemory& memory : m_plan.memory.devices) {
            const VirtualDevice& device = m_devices[memory.device];
            if (!device.memoryCapacity || memory.peakBytes <= *device.memoryCapacity)
                continue;
            m_plan.conflicts.push_back(
                Conflict{ConflictKind::MemoryCapacity,
                         {},
                         {"memory plan", "device '" + device.name + "' capacity"},
                         "device '" + device.name + "' needs " + formatBytes(memory.peakBytes) +
                             " but has " + formatBytes(*device.memoryCapacity),
                         "move work off '" + device.name + "' or raise its mem= capacity"});
        }
    }

    const Graph& m_graph;
    const DeviceSet& m_devices;
    const PlanOptions& m_options;
    ConsumerIndex m_consumers;
    Plan m_plan;

    std::vector<DeviceId> m_fixed;
    std::vector<FixedSource> m_fixedSource;
    std::vector<DeviceId> m_ruleDevices;
    DeviceId m_fallback;
    std::multimap<std::uint32_t, DeviceId> m_outputDemands;

    std::vector<std::int32_t> m_voteCounts;
    std::vector<NodeId> m_firstVoter;

    std::vector<std::uint32_t> m_classOf;
    std::vector<std::uint32_t> m_classSize;
    std::vector<ClassConstraint> m_classConstraints;
};

} // namespace

Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options) {
    return Planner(graph, devices, options).run();
}

} // namespace placer
