// Graph optimisations inside a device, after placement. The plan is made on the user's graph:
// placement, pins, conflicts and copies are about the nodes the user sees. Then each device's
// part of the graph is rewritten for the physical device that runs it, the rewritten graph is
// planned again with every compute node held where the first plan put it (so no copy moves), and
// that is what is lowered and run.
//
// Passes, each separate and tested (tests/core/tst_optimize.cpp):
//  - channels-last: on a CPU device, 2-D convolutions, pooling and batch normalisation work on
//    NHWC data (the layout oneDNN's convolutions prefer), and the element-wise ops and channel
//    concatenations between them follow; the layout changes only where a consumer needs the
//    model's NCHW (a Transpose node, named "VALUE/to_nchw", visible in the run report and the
//    trace), or where a chain starts ("VALUE/to_nhwc"). A layout change never crosses a device
//    boundary: a value copied to another device leaves in the model's layout.
//  - transpose elimination: on a CPU device, a Transpose of a Transpose reads the first one's
//    input with the permutations composed, and where that is the identity both go: the layout
//    changes the channels-last pass makes cancel the model's own transposes around them
//    (ConvNeXt's LayerNorms). A MatMul reads a transposed operand, and writes into the layout
//    of the one transpose after it, as strided views (a transformer's head moves and K^T). The
//    user's transposes that no longer run have no time.
//  - post-op fusion: on a CPU device, a convolution takes the element-wise ops that follow it
//    (an activation, SiLU, a residual Add, in a chain) as oneDNN post-ops, one kernel for the
//    group; the fused node is named after every node it computes ("conv+relu"), its time is
//    the group's, and the user's nodes it absorbed say so (OptimizedGraph::fusedInto). Only
//    values nothing else reads are fused; never across a device, never a node the user pinned.
//    The same pass makes a layer normalisation over the last axis that an exporter wrote out as
//    nine ops (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) one
//    LayerNormalization node (oneDNN's kernel), and the exact GELU written out as five (Div by
//    sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5) one Gelu node (oneDNN's gelu_erf), under the same
//    rules. Matrix products (MatMul, Gemm) take a bias row, then the same chains, a GELU
//    included: a transformer's MatMul, Add bias, GELU is one oneDNN matmul. A batch
//    normalisation takes the Relu after it (DenseNet's pre-activation), and nothing else. A
//    convolution folds the batch normalisation right after it into its weights and bias (once,
//    when they are constants; on every run, when that costs less than normalising).
//  - weight packing: on a CPU device, a matrix product's constant weights that nothing else
//    reads are written at load in the blocked layout its oneDNN kernel prefers (the same bytes,
//    reordered), instead of the kernel reordering them on every run. The constant and its
//    reader carry the layout (packedLayoutOf); memory is unchanged.
#pragma once

#include "ir/Result.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>
#include <vector>

namespace placer {

class Device;

struct OptimizeOptions {
    bool channelsLast = true;
    bool fusion = true;
    bool transposes = true;
    bool packWeights = true;
};

struct OptimizedGraph {
    Graph graph;
    Plan plan;
    /// Per node of `graph`: the user's node it computes, or an invalid id for a node a pass
    /// inserted (a layout Transpose).
    std::vector<NodeId> origin;
    /// Per node of `graph`, when the plan splits: the split region (index into Plan::splits)
    /// and the shard it computes, or -1 (ShardedGraph); empty when the plan does not split.
    std::vector<std::int32_t> region, shard;
    /// What the passes did, one sentence each ("channels-last on v1: 53 of 53 convolutions, 12
    /// layout changes inserted").
    std::vector<std::string> notes;
    int insertedNodes = 0;
    /// Per node of the user's graph: the user's node whose fused kernel computes it (its time is
    /// that group's), or an invalid id.
    std::vector<NodeId> fusedInto;
};

/// The user's graph and plan as they are, every node its own origin: what runs when the
/// optimisations are off, change nothing, or fail.
OptimizedGraph unoptimized(const Graph& graph, const Plan& plan);

/// Rewrites `graph` (planned by `plan` with `options`) for the physical devices in `mapping`
/// (one per virtual device). When no pass changes anything, the result is the graph and plan
/// given. Fails only when the rewritten graph cannot be planned as the original was, which
/// would be a bug in a pass: the caller may then run the user's graph as it is.
Result<OptimizedGraph> optimizeForDevices(const Graph& graph, const DeviceSet& devices,
                                          const Plan& plan, const PlanOptions& options,
                                          const std::vector<Device*>& mapping,
                                          const OptimizeOptions& optimize = {});

/// The same, with the devices the passes apply to (CPU devices, true per DeviceId) chosen
/// directly: what tests use, and optimizeForDevices() after looking at the physical devices.
/// Weight packing asks the physical devices (`physical`, per DeviceId) for their layouts: with
/// none given, it does nothing.
Result<OptimizedGraph> optimizeGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                     const PlanOptions& options,
                                     const std::vector<bool>& cpuDevices,
                                     const OptimizeOptions& passes = {},
                                     const std::vector<Device*>& physical = {});

/// Which of `graph`'s nodes post-op fusion would fold into another when each runs on
/// `devices[i]` (the passes apply on the devices `cpuDevices` marks): per node, the node whose
/// fused kernel computes it, or an invalid id; OptimizedGraph::fusedInto's meaning, without
/// rewriting or planning anything. What the cost model predicts fused groups with.
std::vector<NodeId> fusedGroups(const Graph& graph, const std::vector<DeviceId>& devices,
                                const std::vector<bool>& cpuDevices);

/// The post-ops a fused node applies after its own op, ";"-separated, each "name[:a[:b]]"
/// ("relu:0", "clip:0:6", "swish:1", "gelu_erf", "add", "bias", "bn:EPSILON:FLAGS"); empty for
/// other nodes. Each "add" and "bias" reads one of the node's extra inputs, which follow its
/// own, in order, and "bn" (a folded batch normalisation; FLAGS 1: scaled, 2: shifted) four:
/// scale, shift, mean and variance.
std::string postOpsOf(const Node& node);

/// A matrix product's strided view (transpose elimination): `which` 0 for A, 1 for B, 2 for its
/// output. For an operand, the permutation that makes the operand from the value the product
/// reads (the transpose it absorbed); for the output, the permutation from the product's result
/// to the layout it writes (the transpose after it). Nothing where there is none.
std::optional<std::vector<std::int64_t>> matmulViewOf(const Node& node, int which);

/// The layout weight packing loads a constant in, set on the constant and on the one node that
/// reads it (text its device reads back, Device::packedLayout); empty for the constant's own.
std::string packedLayoutOf(const Node& node);

/// Whether a node computes in channels-last (NHWC) order: the "placer.layout" attribute the
/// pass sets on convolutions, pooling and batch normalisation, whose inputs and outputs 0 then
/// have NHWC shapes.
bool isChannelsLast(const Node& node);

} // namespace placer
