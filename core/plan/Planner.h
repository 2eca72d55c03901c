// The device planner: decides the device of every node from pins, rules and the graph's shape.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
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

/// `plan`, made for a graph read at some sizes of the dimensions its inputs name, for `sized`:
/// that graph at other sizes (ir/Graph.h instantiateAtSizes), with the same nodes. The devices,
/// reasons and copies stay the plan's; the copies' bytes, the memory plan, the capacity
/// conflicts and the prediction (where `options` carry costs) are made at `sized`'s sizes: what
/// ONNX Runtime's memory patterns are per input shape. An error where the plan depends on its
/// sizes otherwise (split regions, micro-batches).
Result<Plan> planAtSizes(const Graph& sized, const DeviceSet& devices, const PlanOptions& options,
                         Plan plan);

} // namespace placer
