// The one interface of the optimisations after placement, as ONNX Runtime's graph transformers
// and LLVM's passes have one: a pass rewrites the graph that runs, inside each device's part of
// it, and counts what it did. The pass manager (passes/PassManager.h) runs them from a list.
//
// The protocol every pass keeps:
//  - It reads PassState::graph and replaces it with its rewrite (or leaves it as it is, and
//    says it changed nothing).
//  - Every compute node is *held*: pinned (PinKind::Plain, origin "optimizer") to the device the
//    user's plan gave it, before the first pass; a node a pass makes is held where it runs. The
//    graph is planned again after the last pass with those pins, so that no copy moves.
//  - origin and carried follow the rewrite: per node of the new graph, the user's node it
//    computes and the node of the planned graph it comes from (invalid for a node a pass
//    inserted, such as a layout change).
//  - It never crosses a device, and never rewrites a node the user pinned.
//  - What it tells a kernel goes in the node's typed KernelHints (ir/KernelHints.h).
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "passes/PassStatistics.h"

#include <string>
#include <string_view>
#include <vector>

namespace placer {

class Device;

/// The graph the passes rewrite, with what each keeps alongside it.
struct PassState {
    Graph graph;
    /// Per node of `graph`: the user's node it computes, or an invalid id.
    std::vector<NodeId> origin;
    /// Per node of `graph`: the node of the planned graph (the sharded one when the plan splits)
    /// it comes from, or an invalid id.
    std::vector<NodeId> carried;
    /// Per node of the user's graph: the user's node whose fused kernel computes it, or an
    /// invalid id.
    std::vector<NodeId> fusedInto;
};

/// What the passes read and never change.
struct PassContext {
    /// The user's graph: its pins say which nodes no pass may touch.
    const Graph* user = nullptr;
    const DeviceSet* devices = nullptr;
    /// Per virtual device: whether the passes apply there (the CPU devices).
    std::vector<bool> enabled;
    /// Per virtual device: the physical device that runs it, asked what its kernels prefer
    /// (strided views, packed weights); empty, or null entries, where none is known.
    std::vector<Device*> physical;
    /// Per node of the planned graph: a constant the plan copies between devices on every run,
    /// which must keep its own layout.
    std::vector<bool> copiedConstants;

    bool enabledOn(DeviceId device) const {
        return device.valid() && static_cast<std::size_t>(device.index) < enabled.size() &&
               enabled[static_cast<std::size_t>(device.index)];
    }
    Device* physicalOf(DeviceId device) const {
        return device.valid() && static_cast<std::size_t>(device.index) < physical.size()
                   ? physical[static_cast<std::size_t>(device.index)]
                   : nullptr;
    }
    /// Whether the user pinned the user's node `user` (an invalid id: no).
    bool userPinned(NodeId userNode) const {
        return userNode.valid() && userNode.index < user->size() &&
               user->node(userNode).pin.kind != PinKind::None;
    }
};

class GraphPass {
public:
    virtual ~GraphPass() = default;
    /// The pass's name in statistics and options: "channels-last", "post-op fusion".
    virtual std::string_view name() const = 0;
    /// Rewrites `state` (see the protocol above) and counts what it did in `statistics`, per
    /// device; returns whether anything changed.
    virtual bool run(PassState& state, const PassContext& context,
                     PassStatistics& statistics) const = 0;
    /// What it did, for people, one sentence per device: "channels-last (NHWC) on v1: 53 of 53
    /// convolutions, 12 layout changes", from its counters.
    virtual std::vector<std::string> describe(const PassStatistics& statistics,
                                              const DeviceSet& devices) const = 0;
};

} // namespace placer
