// Transpose elimination, on CPU devices: a Transpose of a Transpose reads the first one's input
// with the permutations composed, and where that is the identity both go, so the layout changes
// the channels-last pass makes cancel the model's own transposes around them (ConvNeXt's
// LayerNorms). A MatMul reads a transposed operand, and writes into the layout of the one
// transpose after it, as strided views (a transformer's head moves and K^T) where the physical
// device keeps its speed so (Device::takesViews). The user's transposes that no longer run have
// no time. Never a node the user pinned; a graph output stays.
//
// Counters, per device: transposes that "cancelled" the one before them, that were "unread"
// afterwards, and that matrix products read or write as strided views ("viewed").
#pragma once

#include "passes/GraphPass.h"

namespace placer {

class TransposeElimination final : public GraphPass {
public:
    std::string_view name() const override { return "transpose elimination"; }
    bool run(PassState& state, const PassContext& context,
             PassStatistics& statistics) const override;
    std::vector<std::string> describe(const PassStatistics& statistics,
                                      const DeviceSet& devices) const override;
};

} // namespace placer
