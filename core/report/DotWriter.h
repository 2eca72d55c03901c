// Writes a planned graph as Graphviz DOT, nodes filled with their device's colour.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>

namespace placer {

/// The colour of the i-th device wherever devices are drawn (the canvas and its palette, DOT,
/// Model Explorer's overlay): a fixed palette, repeated beyond its length: "#9ec5e8".
std::string deviceColor(DeviceId device);

/// `graph` is usually applyPlan()'s result, so copies appear as their own (cds-shaped) nodes.
/// Nodes whose names are in `conflicted` are outlined in red; pinned nodes have a bold border.
std::string writeDot(const Graph& graph, const DeviceSet& devices,
                     const std::vector<std::string>& conflicted);

/// The names of the nodes a plan's conflicts involve.
std::vector<std::string> conflictedNodeNames(const Graph& graph, const Plan& plan);

} // namespace placer
