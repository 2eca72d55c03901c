// The device planner: decides the device of every node from pins, rules and the graph's shape.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"
#include "plan/PlanWorkspace.h"

namespace placer {

/// Plans `graph` for `devices`. Never throws on a user mistake and never aborts: contradictions
/// become Conflicts in the returned plan and planning carries on. Deterministic: the same input
/// gives the same plan. Linear in the size of the graph, with no recursion over its depth.
Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options);

/// The same, working in `workspace` (reused from earlier calls) instead of fresh memory.
Plan planDevices(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                 PlanWorkspace& workspace);

} // namespace placer
