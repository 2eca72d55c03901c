// Reports of a plan: the machine-readable JSON report and the readable summary.
#pragma once

#include "io/Json.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>

namespace placer {

/// The JSON report: devices, default, host; nodes in topological order (name, aliases, op,
/// device, pinned, reason); copies; replicas; conflicts; notes; memory per device.
Json planReportJson(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                    const Plan& plan);

/// A readable table of nodes with devices and reasons, then copies, notes, memory, conflicts.
std::string planSummary(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                        const Plan& plan);

} // namespace placer
