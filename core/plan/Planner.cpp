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

#include "plan/DevicePlanner.h"
#include "plan/Glob.h"
#include "plan/MemoryPlanner.h"
#include "plan/Precision.h"
#include "plan/TensorShard.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_map>

namespace placer {

namespace {

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

/// "a", "a and b", "a, b and c".
std::string joinWithAnd(const std::vector<std::string>& names) {
    std::string out;
    for (std::size_t i = 0; i < names.size(); ++i)
        out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return out;
}

/// At most this many values used on several devices get a note of their own.
constexpr std::size_t kMaxValueNotes = 1000;

} // namespace

Plan DevicePlanner::run() {
    m_index.rebuild(m_graph);
    if (m_options.costs && !m_options.costAt.empty() && !m_graph.symbolValues.empty() &&
        m_options.costAt != m_graph.symbolValues)
        m_sized = graphAtSizes(m_graph, m_options.costAt);
    const std::size_t n = m_index.size();
    // The arrays of a plan handed back to the workspace, already in memory.
    m_plan.devices = std::move(m_workspace.spare.devices);
    m_plan.reasons = std::move(m_workspace.spare.reasons);
    if (m_devices.empty()) {
        m_plan.devices.assign(n, DeviceId());
        m_plan.reasons.assign(n, Reason{});
        return std::move(m_plan);
    }
    resolveFixedDevices();
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
    resolveMicroBatches();
    if (!m_splitting && !m_stagesNote.empty()) {
        // Stages chosen for micro-batches that could not be cut (a batch smaller than M, say):
        // the note says where the ops went, and that nothing overlaps.
        for (std::string& note : m_plan.notes) {
            if (note == m_stagesNote)
                note += "; but the plan is not pipelined (see its conflicts): the stages run "
                        "one after another";
        }
    }
    if (m_splitting)
        planShards();
    planCasts(m_graph, m_devices, &m_plan);
    if (m_options.costs || m_options.mode == PlanMode::Auto)
        predict(m_options.mode == PlanMode::Auto);
    if (m_splitting)
        foldShardPrediction();
    return std::move(m_plan);
}

Plan DevicePlanner::resized(Plan plan) {
    m_index.rebuild(m_graph);
    const std::size_t n = m_index.size();
    if (m_devices.empty() || plan.devices.size() != n)
        return plan;
    // What the prediction's problem reads (which nodes are fixed where), found as run() finds
    // it; the conflicts and reasons this says are the plan's already.
    resolveFixedDevices();
    m_plan = std::move(plan);
    for (CopyPlan& copy : m_plan.copies)
        copy.bytes = m_index.valueBytes[m_index.valueSlot(copy.value)];
    planCasts(m_graph, m_devices, &m_plan);
    std::erase_if(m_plan.conflicts, [](const Conflict& conflict) {
        return conflict.kind == ConflictKind::MemoryCapacity;
    });
    if (m_options.planMemory) {
        m_plan.memory = planMemory(m_graph, m_workspace, m_devices, m_plan);
        checkCapacities();
    }
    m_plan.prediction.reset();
    m_plan.simulation.reset();
    if (m_options.costs)
        predict(false);
    return std::move(m_plan);
}

void DevicePlanner::resolveFixedDevices() {
    const std::size_t n = m_index.size();
    m_plan.devices.assign(n, DeviceId());
    m_plan.reasons.assign(n, Reason{});
    m_fixed.assign(n, DeviceId());
    m_fixedSource.assign(n, FixedSource::None);
    m_voteCounts.assign(m_devices.size(), 0);
    m_firstVoter.assign(m_devices.size(), NodeId());
    resolveOptions();
    resolveCopiedConstants();
    resolveSplits();
    collectOutputDemands();
    computeFixedDevices();
}

void DevicePlanner::resolveCopiedConstants() {
    m_copiedConstants.clear();
    for (const auto& [name, deviceName] : m_options.copiedConstants) {
        const auto id = m_graph.find(name);
        const auto device = m_devices.find(deviceName);
        if (id && device && m_index.isConstant(id->index))
            m_copiedConstants.insert({id->index, device->index});
    }
    m_streamed = m_copiedConstants;
}

void DevicePlanner::resolveOptions() {
    m_outOfService.assign(static_cast<std::size_t>(m_devices.size()), 0);
    for (const auto& [name, why] : m_options.outOfService) {
        if (const auto device = m_devices.find(name))
            m_outOfService[device->index] = 1;
    }
    m_ruleDevices.assign(m_options.rules.size(), DeviceId());
    for (std::size_t i = 0; i < m_options.rules.size(); ++i) {
        const OpRule& rule = m_options.rules[i];
        if (const auto device = m_devices.find(rule.device)) {
            m_ruleDevices[i] = *device;
            continue;
        }
        m_plan.conflicts.push_back(
            Conflict{ConflictKind::UnknownDevice,
                     {},
                     {"rule '" + rule.opPattern + "=" + rule.device + "'"},
                     "rule '" + rule.opPattern + "=" + rule.device + "' names unknown device '" +
                         rule.device + "' (devices: " + m_devices.namesList() + ")",
                     "use one of the devices " + m_devices.namesList() + ", or add '" +
                         rule.device + "' to the device set"});
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

void DevicePlanner::resolveSplits() {
    m_split = analyzeSplits(m_graph, m_devices, m_options.splits);
    m_plan.splits = std::move(m_split.regions);
    for (Conflict& conflict : m_split.conflicts)
        m_plan.conflicts.push_back(std::move(conflict));
    m_splitting = std::any_of(m_split.regionOf.begin(), m_split.regionOf.end(),
                              [](std::int32_t r) { return r >= 0; });
}

SplitRequest DevicePlanner::microBatchRequest() const {
    // The whole graph, cut on the batch; ops that mix the rows of the batch run once, unsplit.
    SplitRequest request;
    request.nodePattern = "*";
    request.microBatches = true;
    request.batches = std::max(m_options.streamBatches, 1);
    request.shards.assign(static_cast<std::size_t>(std::max(m_options.microBatches, 1)),
                          SplitShare{});
    return request;
}

void DevicePlanner::resolveMicroBatches() {
    const std::int32_t count = std::max(m_options.microBatches, 1);
    const std::int32_t batches = std::max(m_options.streamBatches, 1);
    if (count <= 1 && batches <= 1)
        return;
    const std::string spelled = batches > 1 ? "--stream " + std::to_string(batches)
                                            : "--micro-batches " + std::to_string(count);
    if (m_splitting) {
        m_plan.conflicts.push_back(
            Conflict{ConflictKind::Split,
                     {},
                     {spelled},
                     spelled + " together with --split is not supported: the plan is not pipelined",
                     "pipeline the plan, or split regions of it across devices, not both"});
        return;
    }
    SplitAnalysis analysis = analyzeSplits(m_graph, m_devices, {microBatchRequest()});
    for (Conflict& conflict : analysis.conflicts)
        m_plan.conflicts.push_back(std::move(conflict));
    if (analysis.regions.empty() || analysis.regions.front().nodes.empty() ||
        analysis.regions.front().shards.empty())
        return;
    m_plan.splits = std::move(analysis.regions);
    m_splitting = true;
}

void DevicePlanner::planShards() {
    auto sharded = std::make_shared<ShardedGraph>(shardGraph(m_graph, m_plan));
    PlanOptions inner;
    inner.constants = m_options.constants;
    inner.planMemory = m_options.planMemory;
    inner.costs = m_options.costs;
    if (!inner.costs && m_options.mode == PlanMode::Auto) // predict the graph that runs
        inner.costs = std::make_shared<const CostModel>(costs());
    inner.simulate = m_options.simulate;
    auto plan = std::make_shared<const Plan>(planDevices(sharded->graph, m_devices, inner));
    for (const Conflict& conflict : plan->conflicts) {
        // The user's own conflicts (a pin on a copy, say) recur in the sharded graph.
        const bool known =
            std::any_of(m_plan.conflicts.begin(), m_plan.conflicts.end(), [&](const Conflict& c) {
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

void DevicePlanner::foldShardPrediction() {
    // The simulation stays the sharded graph's: its transfers are between shards.
    if (const auto& simulated = m_plan.sharded->plan->simulation) {
        auto out = std::make_shared<Simulation>(*simulated);
        out->ofShardedGraph = true;
        m_plan.simulation = std::move(out);
    }
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
        if (j < inner->fusedInto.size() && inner->fusedInto[j].valid() && i < p.fusedInto.size())
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
        p.micros[i] += inner->micros[j]; // its work, as a run sums its shards' times
        p.copyInMicros[i] = std::max(p.copyInMicros[i], inner->copyInMicros[j]);
    }
}

void DevicePlanner::collectOutputDemands() {
    for (const GraphOutput& output : m_graph.outputs()) {
        if (output.device.valid())
            m_outputDemands.emplace(output.value.node.index, output.device);
    }
}

bool DevicePlanner::canRun(std::uint32_t i, DeviceId device) const {
    if (device.valid() && static_cast<std::size_t>(device.index) < m_outOfService.size() &&
        m_outOfService[device.index])
        return false; // nothing at all, parameters and constants included
    if (m_index.role[i] != OpRole::Compute)
        return true;
    if (m_index.hostOnly[i] && device != m_devices.hostDevice())
        return false;
    const DeviceKind kind = m_devices[device].kind;
    if (!m_index.op[i]->hasBodies)
        return m_index.op[i]->hasKernel(kind, m_index.kernelDType[i]);
    return nodeRunsOn(node(i), kind, m_index.kernelDType[i]);
}

DeviceId DevicePlanner::fallbackTarget(std::uint32_t i) const {
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

bool DevicePlanner::isPinned(std::uint32_t i) const {
    return m_fixedSource[i] == FixedSource::Pin || m_fixedSource[i] == FixedSource::FixedPin;
}

void DevicePlanner::computeFixedDevices() {
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
            if (role == OpRole::DeviceCopy && m_index.pinDevice[i] != m_index.copyDestination[i])
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

std::int32_t DevicePlanner::ruleFor(const OpDef* op) {
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

void DevicePlanner::applyRules(std::uint32_t i) {
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

void DevicePlanner::replaceUnrunnableFixedDevice(std::uint32_t i) {
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
    if (const std::string* why = m_options.outOfServiceWhy(wantedName)) {
        conflict.kind = ConflictKind::OutOfService;
        conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName +
                           "', which is out of service (" + *why + "); it runs on '" + targetName +
                           "' instead";
        conflict.suggestion = "pin it to a device in service, such as '" + targetName + "'";
    } else if (pinned.op->hostOnly) {
        conflict.kind = ConflictKind::HostOnly;
        conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName + "', but '" +
                           opName + "' is host-only and runs on the host '" + targetName + "'";
        conflict.suggestion = "remove the pin or pin it to '" + targetName + "'";
    } else if (pinned.op->hasKernel(m_devices[wanted].kind) && pinned.subgraphs.empty()) {
        conflict.kind = ConflictKind::DType;
        conflict.message = "node '" + pinned.name + "' pinned to '" + wantedName + "', whose " +
                           std::string(deviceKindName(m_devices[wanted].kind)) + " kernel for '" +
                           opName + "' cannot take " +
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
                           "', which has no kernel for " + what + "; it runs on '" + targetName +
                           "' instead";
        conflict.suggestion =
            "pin it to a device with a kernel for '" + opName + "', such as '" + targetName + "'";
    }
    m_plan.conflicts.push_back(std::move(conflict));
}

void DevicePlanner::reportRejectedPins(std::uint32_t i) {
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

void DevicePlanner::reportPinOnCopy(std::uint32_t i) {
    const Node& copy = node(i);
    m_plan.conflicts.push_back(Conflict{
        ConflictKind::PinsDisagree,
        {NodeId(i)},
        {copy.pin.origin, "device_copy destination"},
        "device_copy '" + copy.name + "' copies to '" + m_devices[copy.copyDestination].name +
            "' but is pinned to '" + m_devices[copy.pin.device].name + "'; the pin wins",
        "remove the pin or change the copy's dst_virtual_device"});
}

bool DevicePlanner::isReplicatedConstant(std::uint32_t i) const {
    return m_index.isConstant(i) && m_options.constants == ConstantPolicy::Replicate;
}

bool DevicePlanner::isHardEdge(std::uint32_t producer, std::uint32_t consumer) const {
    if (m_index.isDeviceCopy(consumer) || m_index.isDeviceCopy(producer) ||
        isReplicatedConstant(producer))
        return false;
    const FixedSource source = m_fixedSource[producer];
    return source == FixedSource::None || source == FixedSource::FixedPin;
}

void DevicePlanner::buildClasses() {
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

void DevicePlanner::assignDevices() {
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

DeviceId DevicePlanner::voteByConsumers(std::uint32_t i, Reason* reason) {
    std::int32_t* counts = m_voteCounts.data();
    NodeId* firstVoter = m_firstVoter.data();
    std::int32_t voters = 0;
    std::uint32_t previous = UINT32_MAX;
    for (std::uint32_t e = m_index.consumerOffsets[i]; e < m_index.consumerOffsets[i + 1]; ++e) {
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

void DevicePlanner::reportUnsupportedOps() {
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
        m_plan.conflicts.push_back(
            Conflict{ConflictKind::Unsupported,
                     nodes,
                     {"op registry"},
                     "no device has a kernel for '" + op + "' (" +
                         std::string(dtypeName(m_index.kernelDType[first])) + "), used by " + count,
                     "replace '" + op + "' with supported ops, or add a device that can run it"});
    }
}

void DevicePlanner::insertCopies() {
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
            for (std::uint32_t e = m_index.consumerOffsets[p]; e < m_index.consumerOffsets[p + 1];
                 ++e) {
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
                    if (it->second != home && isOutputValue(ValueRef{NodeId(p), k}, it->second)) {
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

bool DevicePlanner::isOutputValue(ValueRef value, DeviceId device) const {
    for (const GraphOutput& output : m_graph.outputs()) {
        if (output.value == value && output.device == device)
            return true;
    }
    return false;
}

void DevicePlanner::emitTransfers(ValueRef value, DeviceId home,
                                  std::vector<std::vector<NodeId>>& consumersOn,
                                  std::vector<char>& outputOn) {
    const std::int64_t bytes = m_index.valueBytes[m_index.valueSlot(value)];
    const bool replicate = isReplicatedConstant(value.node.index);
    const bool sizeAtRun = shapeFoundAtRun(m_graph, value);
    const SymbolicShape* symbolic = symbolicShapeOf(m_graph, value);
    const std::string symbolicSize =
        symbolic ? symbolicBytesText(*symbolic, m_graph.type(value).dtype).value_or("") : "";
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
            copy.sizeAtRun = sizeAtRun;
            copy.symbolicSize = symbolicSize;
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
        m_plan.notes.push_back(
            name + " is used on " + joinWithAnd(usedOn) + ": placed on " + homeName +
            ", copied to " + joinWithAnd(elsewhereNames) +
            (replicate ? " on every run (" + joinWithAnd(elsewhereNames) + " cannot also keep it)"
                       : "") +
            (!symbolicSize.empty()
                 ? ", " + symbolicSize + " each" +
                       (sizeAtRun ? std::string() : " (" + formatBytes(bytes) + " as planned)")
             : sizeAtRun ? ", each of a size known at run time"
                         : ", " + formatBytes(bytes) + " each"));
    }
}

void DevicePlanner::recordExplicitCopy(std::uint32_t copyNode, ValueRef input) {
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
                         "device_copy '" + copy.name + "' copies from '" + m_devices[written].name +
                             "', but its input '" + producer.name + "' is pinned to '" +
                             m_devices[actual].name + "'; the copy reads from '" +
                             m_devices[actual].name + "'",
                         "set src_virtual_device to '" + m_devices[actual].name + "'"});
        } else {
            m_plan.notes.push_back("device_copy " + copy.name + " reads " + producer.name + " on " +
                                   m_devices[actual].name + ", not " + m_devices[written].name +
                                   " as written: source adjusted");
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

void DevicePlanner::checkCapacities() {
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

Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options) {
    PlanWorkspace workspace;
    return planDevices(graph, devices, options, workspace);
}

Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                 PlanWorkspace& workspace) {
    return weighSharding(graph, devices, options,
                         DevicePlanner(graph, devices, options, workspace).run());
}

Result<Plan> planAtSizes(const Graph& sized, const DeviceSet& devices, const PlanOptions& options,
                         Plan plan) {
    if (plan.sharded || !plan.splits.empty())
        return SourceError::sentence("the plan splits regions across devices, whose shards are "
                                     "cut at the planned sizes");
    if (options.microBatches > 1 || options.streamBatches > 1)
        return SourceError::sentence("the plan is pipelined, its micro-batches cut at the "
                                     "planned sizes");
    if (plan.devices.size() != sized.size())
        return SourceError::sentence("the graph has other nodes than the plan");
    PlanOptions at = options;
    at.costAt.clear();
    PlanWorkspace workspace;
    return DevicePlanner(sized, devices, at, workspace).resized(std::move(plan));
}

} // namespace placer
