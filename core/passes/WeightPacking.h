// Weight packing, on CPU devices: a matrix product's constant weights that nothing else reads
// are written at load in the blocked layout its oneDNN kernel prefers (the same bytes,
// reordered), instead of the kernel reordering them on every run. The constant and its reader
// carry the layout (KernelHints::packedLayout), named by the physical device that runs them
// (Device::packedLayout); memory is unchanged. Constants a user pinned, graph outputs and
// constants the plan copies between devices keep their own layout.
//
// Counters, per device: "matrix products" that read packed weights.
#pragma once

#include "passes/GraphPass.h"

namespace placer {

class WeightPacking final : public GraphPass {
public:
    std::string_view name() const override { return "weight packing"; }
    bool run(PassState& state, const PassContext& context,
             PassStatistics& statistics) const override;
    std::vector<std::string> describe(const PassStatistics& statistics,
                                      const DeviceSet& devices) const override;
};

} // namespace placer
