// Channels-last, on CPU devices: 2-D convolutions, pooling and batch normalisation work on NHWC
// data (the layout oneDNN's convolutions prefer), and the element-wise ops, channel
// concatenations, Slices along constant axes and ShuffleNet's channel shuffle between them
// follow; the layout changes only where a consumer needs the model's NCHW (a Transpose node,
// named "VALUE/to_nchw", visible in the run report and the trace), or where a chain starts
// ("VALUE/to_nhwc"). A layout change never crosses a device boundary: a value copied to another
// device leaves in the model's layout. A constant read in NHWC is permuted once, at load.
//
// Counters, per device: "convolutions" seen, those "converted", the "layout changes" inserted,
// and the "channel shuffles" done in NHWC.
#pragma once

#include "passes/GraphPass.h"

namespace placer {

class ChannelsLast final : public GraphPass {
public:
    std::string_view name() const override { return "channels-last"; }
    bool run(PassState& state, const PassContext& context,
             PassStatistics& statistics) const override;
    std::vector<std::string> describe(const PassStatistics& statistics,
                                      const DeviceSet& devices) const override;
};

} // namespace placer
