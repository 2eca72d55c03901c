// Writes a graph as Relay text, with on_device and device_copy where TVM would write them.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"

#include <string>

namespace placer {

/// Writes `graph` (usually a planned graph from applyPlan()) as Relay text that readRelay()
/// reads back with the same `devices`: parameters and the result carry virtual_device, nodes
/// pinned or placed off the result's device are wrapped in on_device, copies are device_copy.
/// Names are kept where they are valid Relay names and made valid otherwise.
std::string writeRelay(const Graph& graph, const DeviceSet& devices);

} // namespace placer
