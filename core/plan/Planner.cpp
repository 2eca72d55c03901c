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
//     consumers are), except on devices PlanOptions::copiedConstants names, and in auto mode
//     on a device whose memory cannot keep them (placeByCost: streamed, copied in on every
//     run, when the prediction says that beats moving work off the device). An explicit device_copy
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
// Split regions (plan/Split.h) are decided first: their nodes take their first shard's device as
// a fixed device (ReasonKind::Split), and once the plan is made the graph that runs them once
// per shard is planned too (Plan::sharded), giving the memory plan.
//
// Limits: one device per value instance of the user's graph (sharding is the split regions');
// tuples are flattened by the readers, so fields plan independently.
#include "plan/Planner.h"

#include "plan/AutoPlacer.h"
#include "plan/CostModel.h"
#include "plan/Glob.h"
#include "plan/GraphIndex.h"
#include "plan/MemoryPlanner.h"
#include "plan/Split.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

namespace placer {

namespace {

using FixedSource = PlanWorkspace::FixedSource;

/// Union-find with path halving and union by size over arrays the workspace keeps; iterative,
/// so deep graphs are fine.
class DisjointSets {
public:
    DisjointSets(std::vector<std::uint32_t>& parent, std::vector<std::uint32_t>& size,
                 std::size_t n)
        : m_parent(parent), m_size(size) {
        m_parent.resize(n);
        std::iota(m_parent.begin(), m_parent.end(), 0u);
        m_size.assign(n, 1);
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
    std::vector<std::uint32_t>& m_parent;
    std::vector<std::uint32_t>& m_size;
};

using ClassConstraint = PlanWorkspace::ClassConstraint;

/// "a", "a and b", "a, b and c".
std::string joinWithAnd(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

/// At most this many values used on several devices get a note of their own.
constexpr std::size_t kMaxValueNotes = 1000;

/// How much faster than the best single device a split must be predicted before auto mode
/// takes it.
constexpr double kSplitMargin = 0.2;

class Planner {
public:
    Planner(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
            PlanWorkspace& workspace)
        : m_graph(graph), m_devices(devices), m_options(options), m_workspace(workspace),
          m_index(workspace.index), m_fixed(workspace.fixed), m_fixedSource(workspace.fixedSource),
          m_classOf(workspace.classOf), m_classConstraints(workspace.classConstraints) {}

    Plan run() {
        m_index.rebuild(m_graph);
        const std::size_t n = m_index.size();
        // The arrays of a plan handed back to the workspace, already in memory.
        m_plan.devices = std::move(m_workspace.spare.devices);
        m_plan.reasons = std::move(m_workspace.spare.reasons);
        m_plan.devices.assign(n, DeviceId());
        m_plan.reasons.assign(n, Reason{});
        m_fixed.assign(n, DeviceId());
        m_fixedSource.assign(n, FixedSource::None);
        if (m_devices.empty())
            return std::move(m_plan);
        m_voteCounts.assign(m_devices.size(), 0);
        m_firstVoter.assign(m_devices.size(), NodeId());
        resolveOptions();
        resolveCopiedConstants();
        resolveSplits();
        collectOutputDemands();
        computeFixedDevices();
        if (m_options.mode == PlanMode::Unify)
            buildClasses();
        assignDevices();
        if (m_options.mode == PlanMode::Auto) {
            placeByCost();
        } else {
            reportUnsupportedOps();
            insertCopies();
            if (m_options.planMemory) {
                m_plan.memory = planMemory(m_graph, m_workspace, m_devices, m_plan);
                checkCapacities();
            }
        }
        if (m_splitting)
            planShards();
        if (m_options.costs || m_options.mode == PlanMode::Auto)
            predict();
        if (m_splitting)
            foldShardPrediction();
        return std::move(m_plan);
    }

private:
    const Node& node(std::uint32_t i) const { return m_graph.nodes()[i]; }

    // ---- options ---------------------------------------------------------------------------

    /// PlanOptions::copiedConstants as (node, device); names that match no constant or device
    /// are ignored (they come from a plan of the same graph).
    void resolveCopiedConstants() {
        m_copiedConstants.clear();
        for (const auto& [name, deviceName] : m_options.copiedConstants) {
            const auto id = m_graph.find(name);
            const auto device = m_devices.find(deviceName);
            if (id && device && m_index.isConstant(id->index))
                m_copiedConstants.insert({id->index, device->index});
        }
        m_streamed = m_copiedConstants;
    }

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

    // ---- split regions (plan/Split.h) ------------------------------------------------------

    void resolveSplits() {
        m_split = analyzeSplits(m_graph, m_devices, m_options.splits);
        m_plan.splits = std::move(m_split.regions);
        for (Conflict& conflict : m_split.conflicts)
            m_plan.conflicts.push_back(std::move(conflict));
        m_splitting = std::any_of(m_split.regionOf.begin(), m_split.regionOf.end(),
                                  [](std::int32_t r) { return r >= 0; });
    }

    /// Plans the graph that runs: each region once per shard, every other node held where
    /// this plan put it. Its memory plan, each shard on its own device, is the plan's.
    void planShards() {
        auto sharded = std::make_shared<ShardedGraph>(shardGraph(m_graph, m_plan));
        PlanOptions inner;
        inner.constants = m_options.constants;
        inner.planMemory = m_options.planMemory;
        inner.costs = m_options.costs;
        auto plan = std::make_shared<const Plan>(planDevices(sharded->graph, m_devices, inner));
        for (const Conflict& conflict : plan->conflicts) {
            // The user's own conflicts (a pin on a copy, say) recur in the sharded graph.
            const bool known = std::any_of(
                m_plan.conflicts.begin(), m_plan.conflicts.end(), [&](const Conflict& c) {
                    return c.kind == conflict.kind && c.message == conflict.message;
                });
            if (conflict.kind == ConflictKind::MemoryCapacity || known)
                continue;
            // The sharded graph holds every compute node where it runs; anything else it
            // finds is reported, not hidden.
            Conflict copy = conflict;
            copy.message = "the sharded graph: " + conflict.message;
            // Its nodes are the sharded graph's: name the user's nodes they compute.
            copy.nodes.clear();
            for (NodeId node : conflict.nodes) {
                const NodeId user =
                    node.index < sharded->origin.size() ? sharded->origin[node.index] : NodeId();
                if (user.valid() &&
                    std::find(copy.nodes.begin(), copy.nodes.end(), user) == copy.nodes.end())
                    copy.nodes.push_back(user);
            }
            m_plan.conflicts.push_back(std::move(copy));
        }
        if (m_options.planMemory) {
            std::erase_if(m_plan.conflicts,
                          [](const Conflict& c) { return c.kind == ConflictKind::MemoryCapacity; });
            m_plan.memory = plan->memory;
            checkCapacities();
        }
        sharded->plan = std::move(plan);
        m_plan.sharded = std::move(sharded);
    }

    /// The prediction of a split plan is the sharded graph's: a split node starts with its
    /// first shard and ends with its last, and takes its slowest shard's time.
    void foldShardPrediction() {
        const auto& inner = m_plan.sharded->plan->prediction;
        if (!inner || !m_plan.prediction)
            return;
        Prediction& p = *m_plan.prediction;
        p.makespanMicros = inner->makespanMicros;
        p.deviceBusyMicros = inner->deviceBusyMicros;
        const ShardedGraph& sharded = *m_plan.sharded;
        std::vector<std::uint8_t> seen(m_index.size(), 0);
        for (std::size_t j = 0; j < sharded.origin.size(); ++j) {
            const NodeId user = sharded.origin[j];
            if (!user.valid() || j >= inner->start.size())
                continue;
            const std::size_t i = user.index;
            if (j < inner->fusedInto.size() && inner->fusedInto[j].valid() &&
                i < p.fusedInto.size())
                p.fusedInto[i] = sharded.origin[inner->fusedInto[j].index];
            if (!seen[i]) {
                p.start[i] = inner->start[j];
                p.end[i] = inner->end[j];
                p.micros[i] = inner->micros[j];
                p.copyInMicros[i] = inner->copyInMicros[j];
                seen[i] = 1;
                continue;
            }
            p.start[i] = std::min(p.start[i], inner->start[j]);
            p.end[i] = std::max(p.end[i], inner->end[j]);
            p.micros[i] = std::max(p.micros[i], inner->micros[j]);
            p.copyInMicros[i] = std::max(p.copyInMicros[i], inner->copyInMicros[j]);
        }
    }

    void collectOutputDemands() {
        for (const GraphOutput& output : m_graph.outputs()) {
            if (output.device.valid())
                m_outputDemands.emplace(output.value.node.index, output.device);
        }
    }

    // ---- kernels ---------------------------------------------------------------------------

    bool canRun(std::uint32_t i, DeviceId device) const {
        if (m_index.role[i] != OpRole::Compute)
            return true;
        if (m_index.hostOnly[i] && device != m_devices.hostDevice())
            return false;
        const DeviceKind kind = m_devices[device].kind;
        if (!m_index.op[i]->hasBodies)
            return m_index.op[i]->hasKernel(kind, m_index.kernelDType[i]);
        return nodeRunsOn(node(i), kind, m_index.kernelDType[i]);
    }

    /// Where a node goes when the device it would get cannot run it; invalid if no device can.
    DeviceId fallbackTarget(std::uint32_t i) const {
        if (m_index.op[i]->hostOnly)
            return canRun(i, m_devices.hostDevice()) ? m_devices.hostDevice() : DeviceId();
        for (DeviceId candidate : {m_fallback, m_devices.hostDevice(), m_devices.defaultDevice()}) {
            if (candidate.valid() && canRun(i, candidate))
                return candidate;
        }
        for (int d = 0; d < m_devices.size(); ++d) {
            if (canRun(i, DeviceId(d)))
                return DeviceId(d);
        }
        return DeviceId();
    }

    bool isPinned(std::uint32_t i) const {
        return m_fixedSource[i] == FixedSource::Pin || m_fixedSource[i] == FixedSource::FixedPin;
    }

    // ---- phase 1: fixed devices ------------------------------------------------------------

    void computeFixedDevices() {
        for (std::uint32_t i = 0; i < m_index.size(); ++i) {
            if (m_index.hasRejectedPins[i])
                reportRejectedPins(i);
            if (const std::int32_t region = m_split.regionOf[i]; region >= 0) {
                m_fixed[i] = m_plan.splits[static_cast<std::size_t>(region)].shards[0].device;
                m_fixedSource[i] = FixedSource::Split;
                m_plan.reasons[i].kind = ReasonKind::Split;
                m_plan.reasons[i].region = region;
                continue;
            }
            const OpRole role = m_index.role[i];
            if (m_index.pinKind[i] != PinKind::None) {
                const bool fixed = m_index.pinKind[i] == PinKind::Fixed;
                m_fixed[i] = m_index.pinDevice[i];
                m_fixedSource[i] = fixed ? FixedSource::FixedPin : FixedSource::Pin;
                m_plan.reasons[i].kind = fixed ? ReasonKind::FixedPin : ReasonKind::Pin;
                if (role == OpRole::DeviceCopy &&
                    m_index.pinDevice[i] != m_index.copyDestination[i])
                    reportPinOnCopy(i);
            } else if (role == OpRole::DeviceCopy) {
                m_fixed[i] = m_index.copyDestination[i];
                m_fixedSource[i] = FixedSource::Copy;
                m_plan.reasons[i].kind = ReasonKind::CopyDestination;
            } else if (role == OpRole::Compute && !m_options.rules.empty()) {
                applyRules(i);
            } else if (role == OpRole::Compute && m_index.op[i]->hostOnly &&
                       m_devices.hostDevice().valid()) {
                m_fixed[i] = m_devices.hostDevice();
                m_fixedSource[i] = FixedSource::HostOnly;
                m_plan.reasons[i].kind = ReasonKind::HostOnly;
            }
            if (m_fixed[i].valid() && !canRun(i, m_fixed[i]))
                replaceUnrunnableFixedDevice(i);
        }
    }

    /// The first rule whose glob matches the op, or -1; matched once per distinct op.
    std::int32_t ruleFor(const OpDef* op) {
        const auto cached = m_ruleOfOp.find(op);
        if (cached != m_ruleOfOp.end())
            return cached->second;
        std::int32_t found = -1;
        for (std::size_t r = 0; r < m_options.rules.size() && found < 0; ++r) {
            if (m_ruleDevices[r].valid() && globMatch(m_options.rules[r].opPattern, op->name))
                found = static_cast<std::int32_t>(r);
        }
        m_ruleOfOp.emplace(op, found);
        return found;
    }

    void applyRules(std::uint32_t i) {
        const std::int32_t rule = ruleFor(m_index.op[i]);
        if (rule >= 0) {
            m_fixed[i] = m_ruleDevices[rule];
            m_fixedSource[i] = FixedSource::Rule;
            m_plan.reasons[i].kind = ReasonKind::Rule;
            m_plan.reasons[i].rule = rule;
        } else if (m_fallback.valid()) {
            m_fixed[i] = m_fallback;
            m_fixedSource[i] = FixedSource::RuleFallback;
            m_plan.reasons[i].kind = ReasonKind::RuleFallback;
        } else if (m_index.op[i]->hostOnly && m_devices.hostDevice().valid()) {
            m_fixed[i] = m_devices.hostDevice();
            m_fixedSource[i] = FixedSource::HostOnly;
            m_plan.reasons[i].kind = ReasonKind::HostOnly;
        }
    }

    void replaceUnrunnableFixedDevice(std::uint32_t i) {
        const DeviceId wanted = m_fixed[i];
        const DeviceId target = fallbackTarget(i);
        if (!target.valid())
            return; // no device can run it: reported once per op by reportUnsupportedOps()
        Reason& reason = m_plan.reasons[i];
        m_fixed[i] = target;
        reason.wanted = wanted;
        if (!isPinned(i)) {
            reason.kind = ReasonKind::KernelFallback;
            return;
        }
        reason.kind = ReasonKind::RejectedPin;
        const Node& pinned = node(i);
        const std::string& wantedName = m_devices[wanted].name;
        const std::string& targetName = m_devices[target].name;
        const std::string& opName = pinned.op->name;
        Conflict conflict;
        conflict.nodes = {NodeId(i)};
        conflict.sources = {pinned.pin.origin};
        if (pinned.op->hostOnly) {
            conflict.kind = ConflictKind::HostOnly;
            conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName + "', but '" +
                               opName + "' is host-only and runs on the host '" + targetName + "'";
            conflict.suggestion = "remove the pin or pin it to '" + targetName + "'";
        } else if (pinned.op->hasKernel(m_devices[wanted].kind) && pinned.subgraphs.empty()) {
            conflict.kind = ConflictKind::DType;
            conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName + "', whose " +
                               std::string(deviceKindName(m_devices[wanted].kind)) +
                               " kernel for '" + opName + "' cannot take " +
                               std::string(dtypeName(m_index.kernelDType[i])) + "; it runs on '" +
                               targetName + "' instead";
            conflict.suggestion =
                "cast the inputs to a supported type or pin it to '" + targetName + "'";
        } else {
            conflict.kind = ConflictKind::NoKernel;
            const std::string what = pinned.subgraphs.empty()
                                         ? "'" + opName + "'"
                                         : "every operator in the body of this " + opName;
            conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName +
                               "', which has no kernel for " + what + "; it runs on '" +
                               targetName + "' instead";
            conflict.suggestion = "pin it to a device with a kernel for '" + opName +
                                  "', such as '" + targetName + "'";
        }
        m_plan.conflicts.push_back(std::move(conflict));
    }

    void reportRejectedPins(std::uint32_t i) {
        const Node& pinned = node(i);
        for (const Pin& rejected : pinned.rejectedPins) {
            m_plan.conflicts.push_back(Conflict{
                ConflictKind::PinsDisagree,
                {NodeId(i)},
                {pinned.pin.origin, rejected.origin},
                "node '" + pinned.name + "' is pinned to '" + m_devices[pinned.pin.device].name +
                    "' and to '" + m_devices[rejected.device].name + "'; the first pin wins",
                "remove one of the two annotations"});
        }
    }

    void reportPinOnCopy(std::uint32_t i) {
        const Node& copy = node(i);
        m_plan.conflicts.push_back(Conflict{
            ConflictKind::PinsDisagree,
            {NodeId(i)},
            {copy.pin.origin, "device_copy destination"},
            "device_copy '" + copy.name + "' copies to '" + m_devices[copy.copyDestination].name +
                "' but is pinned to '" + m_devices[copy.pin.device].name + "'; the pin wins",
            "remove the pin or change the copy's dst_virtual_device"});
    }

    // ---- phase 2: classes (unify) ----------------------------------------------------------

    /// A constant that will be replicated constrains nobody: it is on every device that needs
    /// it, so its out-edges are soft (a pin only says where its first instance lives).
    bool isReplicatedConstant(std::uint32_t i) const {
        return m_index.isConstant(i) && m_options.constants == ConstantPolicy::Replicate;
    }

    bool isHardEdge(std::uint32_t producer, std::uint32_t consumer) const {
        if (m_index.isDeviceCopy(consumer) || m_index.isDeviceCopy(producer) ||
            isReplicatedConstant(producer))
            return false;
        const FixedSource source = m_fixedSource[producer];
        return source == FixedSource::None || source == FixedSource::FixedPin;
    }

    void buildClasses() {
        const std::size_t n = m_index.size();
        DisjointSets sets(m_workspace.classParent, m_workspace.classSize, n);
        for (std::uint32_t c = 0; c < n; ++c) {
            for (std::uint32_t e = m_index.inputOffsets[c]; e < m_index.inputOffsets[c + 1]; ++e) {
                const std::uint32_t p = m_index.inputNode[e];
                if (isHardEdge(p, c))
                    sets.unite(p, c);
            }
        }
        m_classOf.resize(n);
        for (std::uint32_t i = 0; i < n; ++i)
            m_classOf[i] = sets.find(i);
        m_classConstraints.assign(n, ClassConstraint{});
        for (std::uint32_t i = 0; i < n; ++i) {
            if (m_index.isDeviceCopy(i)) {
                const std::uint32_t producer = m_index.inputNode[m_index.inputOffsets[i]];
                m_classConstraints[m_classOf[producer]].add(m_index.copySource[i], NodeId(i));
            } else if (m_fixed[i].valid()) {
                m_classConstraints[m_classOf[i]].add(m_fixed[i], NodeId(i));
            }
        }
        for (const auto& [output, device] : m_outputDemands)
            m_classConstraints[m_classOf[output]].add(device, NodeId(output), true);
    }

    // ---- phase 3: assignment ---------------------------------------------------------------

    void assignDevices() {
        for (std::uint32_t i = static_cast<std::uint32_t>(m_index.size()); i-- > 0;) {
            Reason& reason = m_plan.reasons[i];
            if (m_fixed[i].valid()) {
                m_plan.devices[i] = m_fixed[i];
                continue;
            }
            DeviceId device;
            if (m_options.mode == PlanMode::Unify && !isReplicatedConstant(i)) {
                const ClassConstraint& constraint = m_classConstraints[m_classOf[i]];
                reason.classSize = static_cast<std::int32_t>(m_workspace.classSize[m_classOf[i]]);
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
            if (!canRun(i, device)) {
                const DeviceId target = fallbackTarget(i);
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
        for (std::uint32_t e = m_index.consumerOffsets[i]; e < m_index.consumerOffsets[i + 1];
             ++e) {
            const std::uint32_t c = m_index.consumer[e];
            if (c == previous)
                continue; // one vote per consumer, however many inputs it reads this through
            previous = c;
            const DeviceId d = m_index.isDeviceCopy(c) ? m_index.copySource[c] : m_plan.devices[c];
            if (counts[d.index]++ == 0)
                firstVoter[d.index] = NodeId(c);
            ++voters;
        }
        if (!m_outputDemands.empty()) {
            const auto demands = m_outputDemands.equal_range(i);
            for (auto it = demands.first; it != demands.second; ++it) {
                const std::int32_t d = it->second.index;
                if (counts[d]++ == 0)
                    firstVoter[d] = NodeId(i); // the node itself stands for "the result"
                ++voters;
            }
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
        for (std::uint32_t i = 0; i < m_index.size(); ++i) {
            if (m_index.role[i] == OpRole::Compute && m_plan.devices[i].valid() &&
                !canRun(i, m_plan.devices[i]))
                byOp[m_index.op[i]->name].push_back(NodeId(i));
        }
        for (auto& [op, nodes] : byOp) {
            const std::uint32_t first = nodes.front().index;
            const std::string count = nodes.size() == 1 ? "node '" + node(first).name + "'"
                                                        : std::to_string(nodes.size()) + " nodes";
            m_plan.conflicts.push_back(Conflict{
                ConflictKind::Unsupported,
                nodes,
                {"op registry"},
                "no device has a kernel for '" + op + "' (" +
                    std::string(dtypeName(m_index.kernelDType[first])) + "), used by " + count,
                "replace '" + op + "' with supported ops, or add a device that can run it"});
        }
    }

    // ---- phase 3b: auto ---------------------------------------------------------------------

    /// The options' cost model when it was made for this device set, else assumed costs.
    const CostModel& costs() {
        if (m_options.costs && m_options.costs->deviceCount() == m_devices.size())
            return *m_options.costs;
        if (!m_assumedCosts)
            m_assumedCosts = CostModel::assumed(m_devices);
        return *m_assumedCosts;
    }

    /// The placement problem of the graph: a task per op, explicit copy and pinned input, with
    /// its time on every device that can run it. `budget`: per device, the bytes it may hold.
    PlacementProblem buildProblem(const std::vector<std::int64_t>& budget) {
        const CostModel& model = costs();
        const std::size_t n = m_index.size();
        const int deviceCount = m_devices.size();
        m_taskOf.assign(n, -1);
        m_nodeOfTask.clear();
        for (std::uint32_t i = 0; i < n; ++i) {
            const OpRole role = m_index.role[i];
            if (role == OpRole::Compute || role == OpRole::DeviceCopy ||
                (role == OpRole::Parameter && m_fixed[i].valid())) {
                m_taskOf[i] = static_cast<std::int32_t>(m_nodeOfTask.size());
                m_nodeOfTask.push_back(i);
            }
        }
        PlacementProblem problem;
        problem.devices = deviceCount;
        for (int d = 0; d < deviceCount; ++d) {
            problem.resourceOf.push_back(model.resourceOf(DeviceId(d)));
            problem.runMicros.push_back(model.physical(DeviceId(d)).runMicros);
        }
        problem.linkLatency.resize(static_cast<std::size_t>(deviceCount * deviceCount));
        problem.linkBytesPerMicro.resize(problem.linkLatency.size());
        for (int a = 0; a < deviceCount; ++a) {
            for (int b = 0; b < deviceCount; ++b) {
                const auto k = static_cast<std::size_t>(a * deviceCount + b);
                if (a == b || model.resourceOf(DeviceId(a)) == model.resourceOf(DeviceId(b))) {
                    problem.linkLatency[k] = 0;
                    problem.linkBytesPerMicro[k] = 1e300;
                    continue;
                }
                const LinkProfile link = model.link(DeviceId(a), DeviceId(b));
                problem.linkLatency[k] = link.latencyMicros;
                problem.linkBytesPerMicro[k] = link.bytesPerMicro;
            }
        }
        problem.capacity = budget;
        // A 4-D value that leaves a CPU device leaves its channels-last layout: the runtime
        // transposes it on the way out and again on the way in (passes/PassManager.h), two passes
        // over its bytes at about a third of the device's memory bandwidth each.
        double layoutMicrosPerByte = 0;
        int cpuDevices = 0;
        for (int d = 0; d < deviceCount; ++d) {
            const DeviceProfile& profile = model.physical(DeviceId(d));
            if (profile.gpu)
                continue;
            ++cpuDevices;
            layoutMicrosPerByte = std::max(layoutMicrosPerByte, 2 * 3 / profile.bytesPerMicro);
        }
        if (cpuDevices == 0)
            layoutMicrosPerByte = 0;
        std::unordered_map<std::uint32_t, std::uint32_t> weightOf;
        std::vector<double> cost(static_cast<std::size_t>(deviceCount));
        std::vector<std::pair<std::uint32_t, std::uint32_t>> consumed; // (task, output)
        for (std::uint32_t i : m_nodeOfTask) {
            const bool compute = m_index.role[i] == OpRole::Compute;
            int fixed = m_fixed[i].valid() ? m_fixed[i].index : -1;
            bool any = false;
            for (int d = 0; d < deviceCount; ++d) {
                const bool runs = !compute || canRun(i, DeviceId(d));
                cost[static_cast<std::size_t>(d)] =
                    !runs     ? kCannotRun
                    : compute ? model.nodeCost(m_graph, NodeId(i), DeviceId(d)).micros
                              : 0;
                any = any || (runs && (fixed < 0 || fixed == d));
            }
            if (!any) {
                // No device can run it (a conflict already says so): it stays where it is.
                std::fill(cost.begin(), cost.end(), 0.0);
                fixed = m_plan.devices[i].valid() ? m_plan.devices[i].index : 0;
            }
            problem.addTask(cost, fixed, !compute);
            consumed.clear();
            for (std::uint32_t e = m_index.consumerOffsets[i]; e < m_index.consumerOffsets[i + 1];
                 ++e) {
                const std::int32_t task = m_taskOf[m_index.consumer[e]];
                if (task >= 0)
                    consumed.emplace_back(static_cast<std::uint32_t>(task),
                                          m_index.consumedOutput[e]);
            }
            std::sort(consumed.begin(), consumed.end());
            consumed.erase(std::unique(consumed.begin(), consumed.end()), consumed.end());
            for (std::size_t k = 0; k < consumed.size(); ++k) {
                std::int64_t bytes = 0, layoutBytes = 0;
                const std::uint32_t target = consumed[k].first;
                for (; k < consumed.size() && consumed[k].first == target; ++k) {
                    const std::int64_t b =
                        m_index.valueBytes[m_index.outputBase[i] + consumed[k].second];
                    bytes += b;
                    if (m_graph.nodes()[i].outputs[consumed[k].second].rank() == 4)
                        layoutBytes += b;
                }
                --k;
                problem.addEdge(target, bytes,
                                static_cast<double>(layoutBytes) * layoutMicrosPerByte);
            }
            std::int64_t outputs = 0;
            for (std::uint32_t v = m_index.outputBase[i]; v < m_index.outputBase[i + 1]; ++v)
                outputs += m_index.valueBytes[v];
            problem.outputBytes.back() = outputs;
            for (std::uint32_t e = m_index.inputOffsets[i]; e < m_index.inputOffsets[i + 1]; ++e) {
                const std::uint32_t p = m_index.inputNode[e];
                if (!m_index.isConstant(p))
                    continue;
                const auto [it, added] =
                    weightOf.emplace(p, static_cast<std::uint32_t>(problem.weightBytes.size()));
                if (added)
                    problem.weightBytes.push_back(
                        m_index.valueBytes[m_index.valueSlot({NodeId(p), m_index.inputOutput[e]})]);
                problem.addWeight(it->second);
            }
        }
        return problem;
    }

    void placeByCost() {
        const int deviceCount = m_devices.size();
        std::vector<std::int64_t> capacities(static_cast<std::size_t>(deviceCount), -1);
        for (int d = 0; d < deviceCount; ++d) {
            if (const auto& capacity = m_devices[DeviceId(d)].memoryCapacity)
                capacities[static_cast<std::size_t>(d)] = *capacity;
        }
        const bool limited =
            m_options.planMemory && std::any_of(capacities.begin(), capacities.end(),
                                                [](std::int64_t c) { return c >= 0; });
        const std::vector<DeviceId> demand = m_plan.devices;
        const std::vector<Reason> demandReasons = m_plan.reasons;
        const std::size_t conflicts = m_plan.conflicts.size();
        // The plans that fit, the fastest kept.
        struct Fitting {
            Plan plan;
            AutoPlacement placement;
            PlacementProblem problem;
            std::set<std::pair<std::uint32_t, std::int32_t>> streamed;
            double makespan = 0;
        };
        std::optional<Fitting> best;
        const auto keep = [&] {
            const double makespan = predictedMakespan();
            if (!best || makespan < best->makespan)
                best = Fitting{m_plan, m_auto, m_problem, m_streamed, makespan};
        };
        const auto fits = [](const std::vector<std::int64_t>& excess) {
            return std::all_of(excess.begin(), excess.end(), [](std::int64_t e) { return e <= 0; });
        };
        // Where a device's memory is limited, two ways to fit it, and the prediction picks the
        // faster: first, place as if the constants needed not stay on it, then stream those it
        // cannot keep (copied in on every run); second, keep them, and place again with the
        // device's budget cut by the excess while the memory plan overflows (the search's
        // estimate of a device's memory is not the memory plan), streaming where that fits.
        bool finished = false;
        for (int variant = limited ? 0 : 1; variant < 2; ++variant) {
            const bool weightsMayLeave = variant == 0;
            std::vector<std::int64_t> budget = capacities;
            std::vector<int> previous;
            for (int attempt = 0;; ++attempt) {
                placeWithin(budget, demand, demandReasons, weightsMayLeave);
                if (m_auto.assignment == previous) {
                    // A smaller budget moved nothing: nothing new to try.
                    finishPlacement(conflicts);
                    finished = true;
                    break;
                }
                previous = m_auto.assignment;
                const std::vector<DeviceId> placed = m_plan.devices;
                const std::vector<Reason> placedReasons = m_plan.reasons;
                finishPlacement(conflicts);
                if (!m_options.planMemory)
                    return;
                const std::vector<std::int64_t> excess = overflow();
                if (fits(excess)) {
                    if (limited)
                        keep();
                    finished = true;
                    break;
                }
                std::vector<std::int64_t> still = excess;
                for (int round = 0; round < 3 && streamConstants(still); ++round) {
                    finishPlacement(conflicts);
                    still = overflow();
                    if (fits(still)) {
                        keep();
                        break;
                    }
                }
                m_streamed = m_copiedConstants;
                m_plan.devices = placed;
                m_plan.reasons = placedReasons;
                finished = false;
                if (weightsMayLeave)
                    break;
                bool cut = false;
                for (std::size_t k = 0; k < excess.size(); ++k) {
                    if (excess[k] > 0 && budget[k] > 0) {
                        budget[k] = std::max<std::int64_t>(0, budget[k] - excess[k]);
                        cut = true;
                    }
                }
                if (!cut || attempt == 4)
                    break;
            }
        }
        if (best) {
            m_plan = std::move(best->plan);
            m_auto = std::move(best->placement);
            m_problem = std::move(best->problem);
            m_streamed = std::move(best->streamed);
        } else if (!finished) {
            finishPlacement(conflicts); // nothing fits: the last placement, with its conflicts
        }
        checkCapacities();
    }

    /// One search within `budget` (per device, bytes; < 0: none), from the demand plan; with
    /// `weightsMayLeave`, the constants the ops read do not count against a limited device.
    void placeWithin(const std::vector<std::int64_t>& budget, const std::vector<DeviceId>& demand,
                     const std::vector<Reason>& demandReasons, bool weightsMayLeave) {
        const int deviceCount = m_devices.size();
        m_streamed = m_copiedConstants;
        m_plan.devices = demand;
        m_plan.reasons = demandReasons;
        PlacementProblem problem = buildProblem(budget);
        if (weightsMayLeave)
            std::fill(problem.weightBytes.begin(), problem.weightBytes.end(), 0);
        AutoPlaceOptions options;
        options.exact = m_options.exact;
        // Plans live in the GUI on every edit: under 10 ms of search on a graph of
        // ResNet-50's size, and bounded on any graph.
        options.searchWork = 6e5;
        // Measured on this project's models with two vcpus on two cores: splits the
        // model predicted 5-20 % faster ran slower (cores share memory bandwidth and
        // caches, layout changes at every crossing), those predicted over 20 % faster ran
        // faster. So a split over CPU devices alone must promise more than that.
        bool cpusOnly = true;
        for (int d = 0; d < deviceCount; ++d)
            cpusOnly = cpusOnly && !costs().physical(DeviceId(d)).gpu;
        options.splitMargin = cpusOnly ? kSplitMargin : 0.0;
        options.preferredDevice =
            m_devices.defaultDevice().valid() ? m_devices.defaultDevice().index : -1;
        std::vector<int> seed(m_nodeOfTask.size());
        for (std::size_t t = 0; t < seed.size(); ++t)
            seed[t] = demand[m_nodeOfTask[t]].index;
        options.seeds.push_back(std::move(seed));
        m_auto = autoPlace(problem, options);
        m_problem = std::move(problem);
        for (std::size_t t = 0; t < m_nodeOfTask.size(); ++t) {
            const std::uint32_t i = m_nodeOfTask[t];
            if (m_fixed[i].valid() || m_index.role[i] != OpRole::Compute)
                continue;
            m_plan.devices[i] = DeviceId(m_auto.assignment[t]);
            m_plan.reasons[i] = Reason{};
            m_plan.reasons[i].kind = ReasonKind::Auto;
        }
        // Inputs and constants follow their consumers, as in demand mode.
        for (std::uint32_t i = static_cast<std::uint32_t>(m_index.size()); i-- > 0;) {
            if (m_taskOf[i] >= 0 || m_fixed[i].valid())
                continue;
            m_plan.reasons[i] = Reason{};
            m_plan.devices[i] = voteByConsumers(i, &m_plan.reasons[i]);
        }
    }

    /// What follows the placement: unsupported ops, copies and replicas, the memory plan.
    void finishPlacement(std::size_t conflicts) {
        m_plan.copies.clear();
        m_plan.replicas.clear();
        m_plan.notes.clear();
        m_plan.conflicts.resize(conflicts);
        reportUnsupportedOps();
        insertCopies();
        if (m_options.planMemory)
            m_plan.memory = planMemory(m_graph, m_workspace, m_devices, m_plan);
    }

    /// Per device: how far its memory plan exceeds its capacity (0 when it fits or has none).
    std::vector<std::int64_t> overflow() const {
        std::vector<std::int64_t> excess(static_cast<std::size_t>(m_devices.size()), 0);
        for (const DeviceMemory& memory : m_plan.memory.devices) {
            const auto& capacity = m_devices[memory.device].memoryCapacity;
            if (capacity && memory.peakBytes > *capacity)
                excess[static_cast<std::size_t>(memory.device.index)] =
                    memory.peakBytes - *capacity;
        }
        return excess;
    }

    /// Frees each full device's `excess` by no longer keeping the constants it reads, largest
    /// first: each is copied to it on every run (PlanOptions::constants stays what it says for
    /// the others). A constant whose only instance is there moves to the device with the most
    /// room (ReasonKind::Offloaded). False when there was nothing more to stream.
    bool streamConstants(const std::vector<std::int64_t>& excess) {
        bool any = false;
        for (int d = 0; d < m_devices.size(); ++d) {
            if (excess[static_cast<std::size_t>(d)] <= 0)
                continue;
            std::vector<std::pair<std::int64_t, std::uint32_t>> kept; // (bytes, constant)
            for (std::uint32_t p = 0; p < m_index.size(); ++p) {
                if (!m_index.isConstant(p) || m_fixed[p].valid() || m_streamed.count({p, d}))
                    continue;
                bool readHere = false;
                for (std::uint32_t e = m_index.consumerOffsets[p];
                     e < m_index.consumerOffsets[p + 1] && !readHere; ++e) {
                    const std::uint32_t c = m_index.consumer[e];
                    readHere = !m_index.isDeviceCopy(c) && m_plan.devices[c] == DeviceId(d);
                }
                if (readHere)
                    kept.emplace_back(m_index.valueBytes[m_index.outputBase[p]], p);
            }
            std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
                return a.first != b.first ? a.first > b.first : a.second < b.second;
            });
            std::int64_t freed = 0;
            for (const auto& [bytes, p] : kept) {
                if (freed >= excess[static_cast<std::size_t>(d)])
                    break;
                if (m_plan.devices[p] == DeviceId(d)) {
                    const DeviceId home = roomFor(bytes, DeviceId(d));
                    if (!home.valid())
                        continue;
                    m_plan.devices[p] = home;
                    m_plan.reasons[p] = Reason{};
                    m_plan.reasons[p].kind = ReasonKind::Offloaded;
                    m_plan.reasons[p].wanted = DeviceId(d);
                }
                m_streamed.insert({p, d});
                freed += bytes;
                any = true;
            }
        }
        return any;
    }

    /// Another device than `full` with room for `bytes` more: one without a capacity, else the
    /// one with the most room left in the memory plan; invalid when none has.
    DeviceId roomFor(std::int64_t bytes, DeviceId full) const {
        DeviceId best;
        std::int64_t bestRoom = -1;
        for (int d = 0; d < m_devices.size(); ++d) {
            if (DeviceId(d) == full)
                continue;
            const auto& capacity = m_devices[DeviceId(d)].memoryCapacity;
            std::int64_t room = std::numeric_limits<std::int64_t>::max();
            if (capacity) {
                std::int64_t peak = 0;
                for (const DeviceMemory& memory : m_plan.memory.devices)
                    peak = memory.device == DeviceId(d) ? memory.peakBytes : peak;
                room = *capacity - peak;
            }
            if (room >= bytes && room > bestRoom) {
                best = DeviceId(d);
                bestRoom = room;
            }
        }
        return best;
    }

    /// The problem as the run will meet it under `assignment`: a group the run fuses (per node,
    /// `fusedInto`: its head) is one op, its members taking no time of their own and its head
    /// the group's (`members`: each head's); a constant copied to a device on every run arrives
    /// there after its copy.
    PlacementProblem predictionProblem(const std::vector<int>& assignment,
                                       const std::vector<NodeId>& fusedInto,
                                       std::map<std::uint32_t, std::vector<NodeId>>* members) {
        const CostModel& model = costs();
        const std::size_t n = m_index.size();
        PlacementProblem problem = m_problem;
        *members = CostModel::membersByHead(fusedInto);
        for (const auto& [head, group] : *members) {
            for (const NodeId member : group) {
                if (member.index < n && m_taskOf[member.index] >= 0)
                    problem.instant[static_cast<std::size_t>(m_taskOf[member.index])] = 1;
            }
            if (head >= n || m_taskOf[head] < 0)
                continue;
            const auto t = static_cast<std::size_t>(m_taskOf[head]);
            const DeviceId d(assignment[t]);
            problem.cost[t * static_cast<std::size_t>(problem.devices) +
                         static_cast<std::size_t>(d.index)] =
                model.groupCost(m_graph, NodeId(head), group, d).micros;
        }
        for (const CopyPlan& copy : m_plan.copies) {
            if (!m_index.isConstant(copy.value.node.index))
                continue;
            const double arrives = model.copyMicros(copy.bytes, copy.from, copy.to);
            for (const NodeId consumer : copy.consumers) {
                const std::int32_t t = m_taskOf[consumer.index];
                if (t < 0)
                    continue;
                problem.release.resize(problem.tasks(), 0.0);
                double& release = problem.release[static_cast<std::size_t>(t)];
                release = std::max(release, arrives);
            }
        }
        return problem;
    }

    /// Per task, the device the plan gives it.
    std::vector<int> currentAssignment() const {
        std::vector<int> assignment(m_nodeOfTask.size());
        for (std::size_t t = 0; t < assignment.size(); ++t) {
            const DeviceId d = m_plan.devices[m_nodeOfTask[t]];
            assignment[t] = d.valid() ? d.index : 0;
        }
        return assignment;
    }

    /// The makespan predicted for the plan as it stands (auto mode's placement).
    double predictedMakespan() {
        const std::vector<int> assignment = currentAssignment();
        std::map<std::uint32_t, std::vector<NodeId>> members;
        const PlacementProblem problem =
            predictionProblem(assignment, costs().fusedGroups(m_graph, m_plan.devices), &members);
        return simulate(problem, assignment).makespan;
    }

    /// The schedule the plan predicts: the executor's policy on the cost model's times.
    void predict() {
        if (m_options.mode != PlanMode::Auto)
            m_problem = buildProblem(
                std::vector<std::int64_t>(static_cast<std::size_t>(m_devices.size()), -1));
        const std::size_t n = m_index.size();
        const std::vector<int> assignment = currentAssignment();
        const CostModel& model = costs();
        const std::vector<NodeId> fusedInto = model.fusedGroups(m_graph, m_plan.devices);
        std::map<std::uint32_t, std::vector<NodeId>> members; // by head
        const PlacementProblem problem = predictionProblem(assignment, fusedInto, &members);
        const SimulatedSchedule schedule = simulate(problem, assignment);
        Prediction p;
        p.makespanMicros = schedule.makespan;
        p.start.assign(n, 0);
        p.end.assign(n, 0);
        p.micros.assign(n, 0);
        p.measured.assign(n, 0);
        p.copyInMicros.assign(n, 0);
        p.alternative.assign(n, DeviceId());
        p.alternativeMicros.assign(n, 0);
        p.deviceBusyMicros.assign(static_cast<std::size_t>(m_devices.size()), 0);
        const int deviceCount = m_devices.size();
        // Copies into each task, per device it could take: (source task, bytes).
        std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> into(assignment.size());
        for (std::uint32_t t = 0; t < assignment.size(); ++t) {
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e)
                into[problem.edgeTarget[e]].emplace_back(t, e);
        }
        const auto copyIn = [&](std::size_t t, int d) {
            double total = 0;
            for (const auto& [source, edge] : into[t])
                total += problem.edgeMicros(edge, assignment[source], d);
            return total;
        };
        p.fusedInto.assign(n, NodeId());
        for (std::size_t t = 0; t < assignment.size(); ++t) {
            const std::uint32_t i = m_nodeOfTask[t];
            const int d = assignment[t];
            p.start[i] = schedule.start[t];
            p.end[i] = schedule.end[t];
            if (m_problem.instant[t])
                continue;
            const bool isAbsorbed = problem.instant[t] != 0;
            const auto group = members.find(i);
            // What the node (with its group, for a head) takes on device `at`.
            const auto costOn = [&](int at) {
                return group == members.end()
                           ? model.nodeCost(m_graph, NodeId(i), DeviceId(at))
                           : model.groupCost(m_graph, NodeId(i), group->second, DeviceId(at));
            };
            if (isAbsorbed) {
                p.fusedInto[i] = fusedInto[i];
            } else {
                // The kernel's own time, as a run measures it: the executor's dispatch is in
                // the schedule, not in the node's time.
                const double own = problem.taskCost(t, d);
                p.micros[i] = own == kCannotRun
                                  ? 0
                                  : std::max(0.0, own - model.physical(DeviceId(d)).dispatchMicros);
                p.measured[i] = m_options.costs && !model.measured().empty() && costOn(d).measured;
                p.deviceBusyMicros[static_cast<std::size_t>(d)] += p.micros[i];
            }
            p.copyInMicros[i] = copyIn(t, d) + (problem.release.empty() ? 0.0 : problem.release[t]);
            if (m_plan.reasons[i].kind != ReasonKind::Auto)
                continue;
            double bestOther = kCannotRun;
            for (int other = 0; other < deviceCount; ++other) {
                if (other == d || !m_problem.allowed(t, other))
                    continue;
                const double there = costOn(other).micros + copyIn(t, other);
                if (there < bestOther) {
                    bestOther = there;
                    p.alternative[i] = DeviceId(other);
                }
            }
            p.alternativeMicros[i] = bestOther == kCannotRun ? 0 : bestOther;
        }
        if (m_options.mode == PlanMode::Auto) {
            p.heftMicros = m_auto.heftMakespan;
            p.singleDeviceMicros = m_auto.bestSingleDevice;
            p.evaluations = m_auto.evaluations;
            p.exactStatus = m_auto.exactStatus;
            p.exactOptimumMicros = m_auto.exactOptimum;
            p.keptSingleDevice = m_auto.keptSingleDevice;
        }
        m_plan.prediction = std::move(p);
    }

    // ---- phase 4: copies -------------------------------------------------------------------

    void insertCopies() {
        m_valueNotes = 0;
        m_unnotedValues = 0;
        const int deviceCount = m_devices.size();
        std::vector<std::vector<NodeId>> consumersOn(deviceCount);
        std::vector<char> outputOn(deviceCount);
        for (std::uint32_t p = 0; p < m_index.size(); ++p) {
            const DeviceId home = m_plan.devices[p];
            const std::uint32_t outputs = m_index.outputBase[p + 1] - m_index.outputBase[p];
            for (std::uint32_t k = 0; k < outputs; ++k) {
                bool crosses = false;
                for (std::uint32_t e = m_index.consumerOffsets[p];
                     e < m_index.consumerOffsets[p + 1]; ++e) {
                    if (m_index.consumedOutput[e] != k)
                        continue;
                    const std::uint32_t c = m_index.consumer[e];
                    if (m_index.isDeviceCopy(c)) {
                        recordExplicitCopy(c, ValueRef{NodeId(p), k});
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
                if (!m_outputDemands.empty()) {
                    const auto demands = m_outputDemands.equal_range(p);
                    for (auto it = demands.first; it != demands.second; ++it) {
                        if (it->second != home &&
                            isOutputValue(ValueRef{NodeId(p), k}, it->second)) {
                            outputOn[it->second.index] = 1;
                            crosses = true;
                        }
                    }
                }
                if (crosses)
                    emitTransfers(ValueRef{NodeId(p), k}, home, consumersOn, outputOn);
            }
        }
        if (m_unnotedValues > 0)
            m_plan.notes.push_back(
                "and " + std::to_string(m_unnotedValues) + " more value" +
                (m_unnotedValues == 1 ? " is" : "s are") +
                " used on several devices (the plan's copies and replicas list every one)");
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
        const std::int64_t bytes = m_index.valueBytes[m_index.valueSlot(value)];
        const bool replicate = isReplicatedConstant(value.node.index);
        Replica replica{value, home, {}};
        std::vector<std::string> elsewhereNames, replicaNames;
        for (int d = 0; d < m_devices.size(); ++d) {
            if (consumersOn[d].empty() && !outputOn[d])
                continue;
            if (replicate && !m_streamed.count({value.node.index, d})) {
                replicaNames.push_back(m_devices[DeviceId(d)].name);
                replica.devices.push_back(DeviceId(d));
            } else {
                elsewhereNames.push_back(m_devices[DeviceId(d)].name);
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
        if (!replica.devices.empty())
            m_plan.replicas.push_back(replica);
        // One sentence per value used on several devices, up to a limit: past it, a graph with
        // many crossings gets one summing sentence (the copies and replicas list every one).
        if (m_valueNotes >= kMaxValueNotes) {
            ++m_unnotedValues;
            return;
        }
        ++m_valueNotes;
        const std::string name = m_graph.valueName(value);
        const std::string& homeName = m_devices[home].name;
        // A value is used where it is made; a constant where it is read (an offloaded one is
        // read only elsewhere).
        bool readAtHome = !m_index.isConstant(value.node.index) || isOutputValue(value, home);
        for (std::uint32_t e = m_index.consumerOffsets[value.node.index];
             e < m_index.consumerOffsets[value.node.index + 1] && !readAtHome; ++e)
            readAtHome = m_index.consumedOutput[e] == value.output &&
                         m_plan.devices[m_index.consumer[e]] == home;
        std::vector<std::string> usedOn;
        if (readAtHome)
            usedOn.push_back(homeName);
        usedOn.insert(usedOn.end(), replicaNames.begin(), replicaNames.end());
        usedOn.insert(usedOn.end(), elsewhereNames.begin(), elsewhereNames.end());
        const bool mixed = !replica.devices.empty() && !elsewhereNames.empty();
        if (!replica.devices.empty()) {
            const auto extra = static_cast<std::int64_t>(replica.devices.size()) * bytes;
            m_plan.notes.push_back(name + " is used on " + joinWithAnd(usedOn) + ": replicated" +
                                   (mixed ? " on " + joinWithAnd(replicaNames) : "") +
                                   ", one instance per device, made at load time (" +
                                   formatBytes(extra) + " extra)");
        }
        if (!elsewhereNames.empty()) {
            // Under the replicate policy, a copy means the device's memory cannot keep it.
            m_plan.notes.push_back(name + " is used on " + joinWithAnd(usedOn) + ": placed on " +
                                   homeName + ", copied to " + joinWithAnd(elsewhereNames) +
                                   (replicate ? " on every run (" + joinWithAnd(elsewhereNames) +
                                                    " cannot also keep it)"
                                              : "") +
                                   ", " + formatBytes(bytes) + " each");
        }
    }

    void recordExplicitCopy(std::uint32_t copyNode, ValueRef input) {
        const std::uint32_t p = input.node.index;
        const DeviceId actual = m_plan.devices[p];
        const DeviceId destination = m_plan.devices[copyNode];
        const DeviceId written = m_index.copySource[copyNode];
        if (written != actual) {
            const Node& copy = node(copyNode);
            const Node& producer = node(p);
            if (isPinned(p)) {
                m_plan.conflicts.push_back(
                    Conflict{ConflictKind::CopySource,
                             {NodeId(copyNode), NodeId(p)},
                             {"device_copy '" + copy.name + "'", producer.pin.origin},
                             "device_copy '" + copy.name + "' copies from '" +
                                 m_devices[written].name + "', but its input '" + producer.name +
                                 "' is pinned to '" + m_devices[actual].name +
                                 "'; the copy reads from '" + m_devices[actual].name + "'",
                             "set src_virtual_device to '" + m_devices[actual].name + "'"});
            } else {
                m_plan.notes.push_back("device_copy " + copy.name + " reads " + producer.name +
                                       " on " + m_devices[actual].name + ", not " +
                                       m_devices[written].name + " as written: source adjusted");
            }
        }
        if (actual == destination) {
            m_plan.notes.push_back("device_copy " + node(copyNode).name + " copies from " +
                                   m_devices[actual].name + " to itself: nothing to move");
            return;
        }
        CopyPlan plan;
        plan.value = input;
        plan.from = actual;
        plan.to = destination;
        plan.bytes = m_index.valueBytes[m_index.valueSlot(input)];
        plan.isExplicit = true;
        plan.copyNode = NodeId(copyNode);
        std::uint32_t previous = UINT32_MAX;
        for (std::uint32_t e = m_index.consumerOffsets[copyNode];
             e < m_index.consumerOffsets[copyNode + 1]; ++e) {
            if (m_index.consumer[e] != previous)
                plan.consumers.push_back(NodeId(m_index.consumer[e]));
            previous = m_index.consumer[e];
        }
        plan.toOutput =
            std::any_of(m_graph.outputs().begin(), m_graph.outputs().end(),
                        [&](const GraphOutput& o) { return o.value.node == NodeId(copyNode); });
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
    PlanWorkspace& m_workspace;
    GraphIndex& m_index;
    Plan m_plan;

    std::vector<DeviceId>& m_fixed;
    std::vector<FixedSource>& m_fixedSource;
    std::vector<DeviceId> m_ruleDevices;
    std::unordered_map<const OpDef*, std::int32_t> m_ruleOfOp;
    DeviceId m_fallback;
    std::multimap<std::uint32_t, DeviceId> m_outputDemands;

    std::vector<std::int32_t> m_voteCounts;
    std::vector<NodeId> m_firstVoter;

    std::vector<std::uint32_t>& m_classOf;
    std::vector<ClassConstraint>& m_classConstraints;

    SplitAnalysis m_split;
    bool m_splitting = false;

    // Auto mode and the prediction.
    std::optional<CostModel> m_assumedCosts;
    std::vector<std::int32_t> m_taskOf;
    std::vector<std::uint32_t> m_nodeOfTask;
    PlacementProblem m_problem;
    AutoPlacement m_auto;
    /// (constant, device): read on the device but not kept there, copied in on every run (auto
    /// mode, when the device's memory cannot keep it; replicas elsewhere as the policy says).
    std::set<std::pair<std::uint32_t, std::int32_t>> m_streamed;
    /// Those PlanOptions::copiedConstants asks for.
    std::set<std::pair<std::uint32_t, std::int32_t>> m_copiedConstants;
    /// Values used on several devices described by a note, and those past the limit.
    std::size_t m_valueNotes = 0, m_unnotedValues = 0;
};

} // namespace

Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options) {
    PlanWorkspace workspace;
    return Planner(graph, devices, options, workspace).run();
}

Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                 PlanWorkspace& workspace) {
    return Planner(graph, devices, options, workspace).run();
}

} // namespace placer
