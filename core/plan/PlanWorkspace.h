// Scratch space the planner reuses from one call to the next.
#pragma once

#include "plan/ExecutionOrder.h"
#include "plan/GraphIndex.h"
#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace placer {

/// The planner's working arrays. Keep one alongside a graph that is planned again and again (the
/// GUI re-plans on every edit): each call then works in memory it already has instead of
/// allocating (and, on a fresh page, faulting in) hundreds of bytes per node. The contents are
/// meaningless between calls.
struct PlanWorkspace {
    GraphIndex index;

    /// Hands back a plan the caller no longer needs (the one the next plan replaces): the next
    /// call fills its per-node arrays instead of allocating new ones.
    void recycle(Plan&& old) { spare = std::move(old); }
    /// What recycle() handed back; the planner takes its arrays, emptied.
    Plan spare;

    // Planner.cpp
    /// Where a node's own fixed device came from.
    enum class FixedSource : std::uint8_t {
        None,
        Pin,
        FixedPin,
        Copy,
        Rule,
        RuleFallback,
        HostOnly,
        Split ///< a node of a split region: its first shard's device
    };
    std::vector<DeviceId> fixed;
    std::vector<FixedSource> fixedSource;
    std::vector<std::uint32_t> classParent;
    std::vector<std::uint32_t> classSize;
    std::vector<std::uint32_t> classOf;
    /// Per class root: the one fixed device collected, or several.
    struct ClassConstraint {
        DeviceId device;
        NodeId via;
        bool viaResult = false;
        bool several = false;

        void add(DeviceId d, NodeId from, bool isResult = false) {
            if (!device.valid()) {
                device = d;
                via = from;
                viaResult = isResult;
            } else if (device != d) {
                several = true;
            }
        }
    };
    std::vector<ClassConstraint> classConstraints;

    // AutoMode.cpp
    /// Per node and device, the cost model's time of the node there (NaN until asked), kept
    /// from one call to the next while the graph's structure (Graph::revision), the cost model
    /// and the device count are the same: a drop in the GUI re-plans a graph of 50,000 nodes,
    /// and what each node costs on each device is the same before and after it.
    struct NodeCosts {
        std::uint64_t revision = 0;
        std::uint64_t model = 0; ///< CostModel::stamp
        int devices = 0;
        std::vector<double> micros;
        std::vector<std::uint8_t> measured;
    };
    NodeCosts nodeCosts;

    // MemoryPlanner.cpp
    OrderScratch order;
    std::vector<std::int64_t> lastUse;
    std::vector<std::int64_t> position;
    std::vector<std::uint32_t> copyOffsets;
    std::vector<std::uint32_t> copyList;
    std::vector<std::int32_t> releaseHead;
    std::vector<std::int32_t> releaseNext;
    std::vector<std::int32_t> releaseStorage;
    std::vector<std::int64_t> releaseBytes;
};

} // namespace placer
