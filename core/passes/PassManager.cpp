// The pass manager (passes/PassManager.h): holding the planned graph on its devices, running
// the passes in order, and planning the result again.
#include "passes/PassManager.h"

#include "device/Device.h"
#include "ir/OpRegistry.h"
#include "passes/ChannelsLast.h"
#include "passes/PassSupport.h"
#include "passes/PostOpFusion.h"
#include "passes/PrecisionCasts.h"
#include "passes/TransposeElimination.h"
#include "passes/WeightPacking.h"
#include "plan/Planner.h"

#include <map>

namespace placer {

OptimizedGraph unoptimized(const Graph& graph, const Plan& plan) {
    OptimizedGraph result;
    if (plan.sharded) {
        // A split plan runs its sharded graph, whose nodes name the user's.
        result.graph = plan.sharded->graph;
        result.plan = *plan.sharded->plan;
        result.origin = plan.sharded->origin;
        result.region = plan.sharded->region;
        result.shard = plan.sharded->shard;
    } else {
        result.graph = graph;
        result.plan = plan;
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            result.origin.push_back(NodeId(i));
    }
    result.fusedInto.assign(graph.size(), NodeId());
    return result;
}

std::vector<std::unique_ptr<GraphPass>> defaultPasses(const OptimizeOptions& options) {
    std::vector<std::unique_ptr<GraphPass>> passes;
    // A precision policy changes what is computed, not how fast: it applies whatever the
    // optimisations, first, so that they see the types that run.
    if (options.precision)
        passes.push_back(std::make_unique<PrecisionCasts>());
    if (options.channelsLast)
        passes.push_back(std::make_unique<ChannelsLast>());
    if (options.transposes)
        passes.push_back(std::make_unique<TransposeElimination>());
    if (options.fusion)
        passes.push_back(std::make_unique<PostOpFusion>());
    if (options.packWeights)
        passes.push_back(std::make_unique<WeightPacking>());
    return passes;
}

PassManager::PassManager(std::vector<std::unique_ptr<GraphPass>> passes)
    : m_passes(std::move(passes)) {}

Result<OptimizedGraph> PassManager::run(const Graph& graph, const DeviceSet& devices,
                                        const Plan& plan, const PlanOptions& options,
                                        const std::vector<bool>& cpuDevices,
                                        const std::vector<Device*>& physical) const {
    // The passes rewrite the graph that runs: the sharded one when the plan splits.
    const OptimizedGraph start = unoptimized(graph, plan);
    const Graph& base = start.graph;
    const Plan& basePlan = start.plan;
    if (m_passes.empty() || basePlan.devices.size() != base.size() ||
        !OpRegistry::global().find("Transpose"))
        return start;

    // A constant the first plan copies on every run (auto mode streams those a device's memory
    // cannot keep) stays where it was, copied the same way.
    std::map<std::uint32_t, std::vector<DeviceId>> copiedTo;
    for (const CopyPlan& copy : basePlan.copies) {
        if (!copy.isExplicit && base.node(copy.value.node).isConstant())
            copiedTo[copy.value.node.index].push_back(copy.to);
    }
    PassContext context;
    context.user = &graph;
    context.devices = &devices;
    context.enabled = cpuDevices;
    context.physical = physical;
    context.copiedConstants.assign(base.size(), false);
    for (const auto& [node, to] : copiedTo)
        context.copiedConstants[node] = true;

    // Every compute node held where the plan put it (the pass protocol).
    PassState state;
    state.graph = base;
    for (std::uint32_t i = 0; i < base.size(); ++i) {
        passes::hold(state.graph.node(NodeId(i)), basePlan.devices[i]);
        state.carried.push_back(NodeId(i));
    }
    state.origin = start.origin;
    state.fusedInto.assign(graph.size(), NodeId());

    OptimizedGraph result;
    bool changed = false;
    for (const std::unique_ptr<GraphPass>& pass : m_passes) {
        PassStatistics counted;
        if (!pass->run(state, context, counted))
            continue;
        changed = true;
        for (const PassCounter& counter : counted.counters())
            result.statistics.add(counter.pass, counter.device, counter.counter, counter.value);
        for (std::string& sentence : pass->describe(counted, devices))
            result.notes.push_back(std::move(sentence));
    }
    if (!changed)
        return start;
    result.graph = std::move(state.graph);
    result.origin = std::move(state.origin);
    result.fusedInto = std::move(state.fusedInto);
    for (const NodeId from : result.origin)
        result.insertedNodes += from.valid() ? 0 : 1;
    if (!start.region.empty()) {
        for (const NodeId from : state.carried) {
            result.region.push_back(from.valid() ? start.region[from.index] : -1);
            result.shard.push_back(from.valid() ? start.shard[from.index] : -1);
        }
    }
    // Plan the rewritten graph with every compute node held where the first plan put it.
    PlanOptions again = options;
    again.mode = PlanMode::Demand;
    again.rules.clear();
    again.fallbackDevice.clear();
    again.splits.clear(); // already sharded
    again.microBatches = 1;
    again.streamBatches = 1;
    for (std::uint32_t j = 0; j < result.graph.size() && !copiedTo.empty(); ++j) {
        Node& node = result.graph.node(NodeId(j));
        const NodeId from = state.carried[j];
        const auto copied = from.valid() ? copiedTo.find(from.index) : copiedTo.end();
        if (!node.isConstant() || copied == copiedTo.end())
            continue;
        if (node.pin.kind == PinKind::None)
            node.pin = Pin{PinKind::Plain, basePlan.devices[from.index], "optimizer", true};
        for (const DeviceId to : copied->second)
            again.copiedConstants.emplace_back(node.name, devices[to].name);
    }
    result.plan = planDevices(result.graph, devices, again);
    for (const Conflict& conflict : result.plan.conflicts) {
        if (conflict.kind != ConflictKind::MemoryCapacity)
            return SourceError::sentence("the optimised graph cannot be planned as the original "
                                         "was: " +
                                         conflict.message);
    }
    for (std::uint32_t i = 0; i < result.graph.size(); ++i) {
        const NodeId from = state.carried[i];
        if (!from.valid() || result.graph.nodes()[i].role() != OpRole::Compute)
            continue;
        if (result.plan.devices[i] != basePlan.devices[from.index])
            return SourceError::sentence("the optimised graph moved node '" +
                                         result.graph.nodes()[i].name + "' to another device");
    }
    return result;
}

Result<OptimizedGraph> optimizeGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                     const PlanOptions& options,
                                     const std::vector<bool>& cpuDevices,
                                     const OptimizeOptions& passes,
                                     const std::vector<Device*>& physical) {
    return PassManager(defaultPasses(passes))
        .run(graph, devices, plan, options, cpuDevices, physical);
}

Result<OptimizedGraph> optimizeForDevices(const Graph& graph, const DeviceSet& devices,
                                          const Plan& plan, const PlanOptions& options,
                                          const std::vector<Device*>& mapping,
                                          const OptimizeOptions& optimize) {
    std::vector<bool> cpuDevices(static_cast<std::size_t>(devices.size()), false);
    for (std::size_t d = 0; d < cpuDevices.size() && d < mapping.size(); ++d)
        cpuDevices[d] = mapping[d] && (mapping[d]->kind() == DeviceKind::Cpu ||
                                       mapping[d]->kind() == DeviceKind::VCpu);
    return optimizeGraph(graph, devices, plan, options, cpuDevices, optimize, mapping);
}

} // namespace placer
