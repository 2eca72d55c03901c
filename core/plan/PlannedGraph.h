// Applying a plan to a graph (devices filled in, copies inserted) and erasing it again.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

namespace placer {

/// The graph with every node's device set from `plan` and the plan's inserted copies as
/// device_copy nodes (insertedCopy = true) placed right after their producers, each consumer
/// on the destination reading the copy. An explicit copy whose source the planner adjusted
/// reads from its producer's device. Replicated constants stay one node (the plan says where
/// their instances are). Node names are kept; a copy is called "<value>@<device>".
Graph applyPlan(const Graph& graph, const DeviceSet& devices, const Plan& plan);

/// The graph with inferred devices dropped; pins and device_copy nodes (inserted or not) stay.
Graph erasePlan(const Graph& graph);

} // namespace placer
