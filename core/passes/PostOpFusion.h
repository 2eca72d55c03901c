// Post-op fusion, on CPU devices: a convolution or a matrix product takes the element-wise ops
// that follow it (an activation, SiLU, a residual Add, in a chain) as oneDNN post-ops, one
// kernel for the group; the fused node is named after every node it computes ("conv+relu"), its
// time is the group's, and the user's nodes it absorbed say so (PassState::fusedInto). Only
// values nothing else reads are fused; never across a device, never a node the user pinned.
//
// The same pass makes a layer normalisation over the last axis that an exporter wrote out as
// nine ops (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div, Mul, Add) one LayerNormalization
// node, and the exact GELU written out as five (Div by sqrt 2, Erf, Add 1, Mul by x, Mul by 0.5)
// one Gelu node, under the same rules. Matrix products (MatMul, Gemm) take a bias row, then the
// same chains, a GELU included. A batch normalisation takes the Relu after it (DenseNet's
// pre-activation), and nothing else. A convolution folds the batch normalisation right after
// it into its weights and bias (once, when they are constants; on every run, when that costs
// less than normalising).
//
// Counters, per device: "convolutions", "matrix products" and "batch normalisations" that took
// post-ops, the "element-wise ops" they took, "gelus" and "layer norms" made one kernel each.
#pragma once

#include "passes/GraphPass.h"

namespace placer {

class PostOpFusion final : public GraphPass {
public:
    std::string_view name() const override { return "post-op fusion"; }
    bool run(PassState& state, const PassContext& context,
             PassStatistics& statistics) const override;
    std::vector<std::string> describe(const PassStatistics& statistics,
                                      const DeviceSet& devices) const override;
};

/// Which of `graph`'s nodes post-op fusion would fold into another when each runs on
/// `devices[i]` (the pass applies on the devices `cpuDevices` marks): per node, the node whose
/// fused kernel computes it, or an invalid id; PassState::fusedInto's meaning, without rewriting
/// or planning anything. What the cost model predicts fused groups with.
std::vector<NodeId> fusedGroups(const Graph& graph, const std::vector<DeviceId>& devices,
                                const std::vector<bool>& cpuDevices);

} // namespace placer
