// Overlays for Google's Model Explorer: "node data" JSON (its GraphNodeData format: results by
// node key, optional gradient) with each node's device as a categorical value, or each node's
// run time as a number on a gradient.
#pragma once

#include "io/Json.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>
#include <vector>

namespace placer {

/// {"results": {NODE: {"value": DEVICE, "bgColor": COLOUR}}}; `colours` are CSS colours per
/// device ("#9ec5e8"). Nodes are keyed by name (ONNX node names, Relay bindings).
Json modelExplorerDeviceData(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                             const std::vector<std::string>& colours);

/// {"results": {NODE: {"value": MILLISECONDS}}, "gradient": [green .. yellow .. red]} for the
/// nodes with a time (negative entries are left out).
Json modelExplorerTimeData(const Graph& graph, const std::vector<double>& millisPerNode);

} // namespace placer
