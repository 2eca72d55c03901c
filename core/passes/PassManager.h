// Running the optimisations after placement. The plan is made on the user's graph: placement,
// pins, conflicts and copies are about the nodes the user sees. Then each device's part of the
// graph is rewritten for the physical device that runs it by the passes of a list, in order
// (passes/GraphPass.h says what every pass keeps to), the rewritten graph is planned again with
// every compute node held where the first plan put it (so no copy moves), and that is what is
// lowered and run: an OptimizedGraph.
//
// The default list, each pass in a file of its own: PrecisionCasts (which is no optimisation
// and runs whenever a device has a precision policy), ChannelsLast, TransposeElimination,
// PostOpFusion, WeightPacking.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "passes/GraphPass.h"
#include "passes/PassStatistics.h"
#include "plan/Plan.h"

#include <memory>
#include <string>
#include <vector>

namespace placer {

class Device;

/// Which passes of the default list run.
struct OptimizeOptions {
    bool channelsLast = true;
    bool fusion = true;
    bool transposes = true;
    bool packWeights = true;
    /// The devices' precision policies (passes/PrecisionCasts.h): on unless a caller wants the
    /// graph exactly as planned; none() keeps it, since it changes what is computed.
    bool precision = true;

    /// Every optimisation off: the user's graph as planned, in the types its devices compute in.
    static OptimizeOptions none() { return {false, false, false, false, true}; }
};

/// The graph that runs: the user's, sharded where the plan splits, rewritten by the passes.
struct OptimizedGraph {
    Graph graph;
    Plan plan;
    /// Per node of `graph`: the user's node it computes, or an invalid id for a node a pass
    /// inserted (a layout Transpose).
    std::vector<NodeId> origin;
    /// Per node of `graph`, when the plan splits: the split region (index into Plan::splits)
    /// and the shard it computes, or -1 (ShardedGraph); empty when the plan does not split.
    std::vector<std::int32_t> region, shard;
    /// What the passes did: their counters per device, and one sentence per pass and device
    /// made from them ("channels-last (NHWC) on v1: 53 of 53 convolutions, 12 layout changes").
    PassStatistics statistics;
    std::vector<std::string> notes;
    /// Layout changes the passes inserted (nodes with no origin).
    int insertedNodes = 0;
    /// Per node of the user's graph: the user's node whose fused kernel computes it (its time is
    /// that group's), or an invalid id.
    std::vector<NodeId> fusedInto;
};

/// The user's graph and plan as they are, every node its own origin: what runs when the
/// optimisations are off, change nothing, or fail.
OptimizedGraph unoptimized(const Graph& graph, const Plan& plan);

/// The passes `options` turns on, in the order they run.
std::vector<std::unique_ptr<GraphPass>> defaultPasses(const OptimizeOptions& options);

class PassManager {
public:
    explicit PassManager(std::vector<std::unique_ptr<GraphPass>> passes);

    /// Rewrites `graph` (planned by `plan` with `options`) with every pass in turn. The passes
    /// apply on the devices `cpuDevices` marks (true per DeviceId), and ask `physical` (per
    /// DeviceId; may be empty) what its kernels prefer. When no pass changes anything, the
    /// result is unoptimized(graph, plan). Fails only when the rewritten graph cannot be planned
    /// as the original was, which would be a bug in a pass: the caller may then run the user's
    /// graph as it is.
    Result<OptimizedGraph> run(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                               const PlanOptions& options, const std::vector<bool>& cpuDevices,
                               const std::vector<Device*>& physical = {}) const;

private:
    std::vector<std::unique_ptr<GraphPass>> m_passes;
};

/// PassManager(defaultPasses(passes)).run(...): what tests use, and optimizeForDevices() after
/// looking at the physical devices.
Result<OptimizedGraph> optimizeGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                     const PlanOptions& options,
                                     const std::vector<bool>& cpuDevices,
                                     const OptimizeOptions& passes = {},
                                     const std::vector<Device*>& physical = {});

/// The default passes for the physical devices in `mapping` (one per virtual device): they
/// apply on the CPU and virtual CPU devices.
Result<OptimizedGraph> optimizeForDevices(const Graph& graph, const DeviceSet& devices,
                                          const Plan& plan, const PlanOptions& options,
                                          const std::vector<Device*>& mapping,
                                          const OptimizeOptions& optimize = {});

} // namespace placer
