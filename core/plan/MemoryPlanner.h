// Memory planning: storage per device for every tensor instance, reused by lifetime.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace placer {

/// Where an inserted copy happens in the execution order (`position`: per node, its place):
/// right after its value's producer; or, for a constant (which exists from the start), right
/// before the first of its readers, so that it holds the destination's memory no longer than
/// it must. The memory plan and the lowering both follow it.
struct CopySlot {
    NodeId node;
    bool before = false; ///< before `node` runs, rather than after
};
CopySlot copySlot(const Graph& graph, const CopyPlan& copy,
                  const std::vector<std::int64_t>& position);

/// Assigns each tensor instance of a planned graph (node outputs on their node's device, copy
/// destinations, replicas) a storage on its device. Execution follows the graph's topological
/// order; a copy happens where copySlot() says. Parameters, constants and replicas get
/// storages of their own for the whole run; other tensors share storages whose previous tenant
/// is dead, best fit first, growing the largest free storage when none fits. In a pipeline, a
/// value copied to another device keeps its storage until its device has written the next
/// micro-batch's (double-buffered). Deterministic.
MemoryPlan planMemory(const Graph& graph, const DeviceSet& devices, const Plan& plan);

struct PlanWorkspace;
/// The same, in `workspace`, whose index must already describe `graph`.
MemoryPlan planMemory(const Graph& graph, PlanWorkspace& workspace, const DeviceSet& devices,
                      const Plan& plan);

} // namespace placer
