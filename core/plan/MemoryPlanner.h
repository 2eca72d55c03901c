// Memory planning: storage per device for every tensor instance, reused by lifetime.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

namespace placer {

/// Assigns each tensor instance of a planned graph (node outputs on their node's device, copy
/// destinations, replicas) a storage on its device. Execution follows the graph's topological
/// order; a copy happens right after its producer. Parameters, constants and replicas get
/// storages of their own for the whole run; other tensors share storages whose previous tenant
/// is dead, best fit first, growing the largest free storage when none fits. Deterministic.
MemoryPlan planMemory(const Graph& graph, const DeviceSet& devices, const Plan& plan);

struct PlanWorkspace;
/// The same, in `workspace`, whose index must already describe `graph`.
MemoryPlan planMemory(const Graph& graph, PlanWorkspace& workspace, const DeviceSet& devices,
                      const Plan& plan);

} // namespace placer
