// The precision pass: the graph that runs on devices with a precision policy (dtype=bf16 or
// f16; plan/Precision.h). A node that computes in 16 bits there takes its float32 operands in
// that type and makes its float32 results in it; a Cast is inserted on the reading device
// wherever a value crosses between float32 and 16 bits, one per value, device and type; a
// float32 constant read in 16 bits is converted once, into a constant of its own; a graph
// result made in 16 bits is given back in float32 on the device that made it. The decisions are
// plan/Precision.h's, so the casts that run are those the plan lists.
//
// Unlike the optimisations it changes what is computed, so it runs on every device kind and
// whether or not the optimisations are on (optimizeForDevices puts it first).
//
// Counters, per device: "16-bit nodes", "casts" inserted, "constants" converted at load.
#pragma once

#include "passes/GraphPass.h"

namespace placer {

class PrecisionCasts final : public GraphPass {
public:
    std::string_view name() const override { return "precision"; }
    bool run(PassState& state, const PassContext& context,
             PassStatistics& statistics) const override;
    std::vector<std::string> describe(const PassStatistics& statistics,
                                      const DeviceSet& devices) const override;
};

} // namespace placer
