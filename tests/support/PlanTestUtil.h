// Helpers shared by the planner tests: load Relay text, plan, and describe results compactly.
#pragma once

#include "io/ModelLoader.h"
#include "plan/Plan.h"

#include <QString>
#include <string>

namespace placer::test {

/// The default test devices: cpu (host) and gpu (default).
DeviceSet devices(const char* spec = "cpu:cpu,gpu:cuda", const char* defaultDevice = nullptr);

/// Reads Relay text (wrapping the version header); fails the test on a read error.
Graph relay(const std::string& text, const DeviceSet& set);

/// "%a=cpu %b=gpu ..." for every node except inserted copies, in order.
QString describeDevices(const Graph& graph, const DeviceSet& set, const Plan& plan);
/// "%b gpu>cpu 140; %0 cpu>gpu 140" in plan order; "-" when there are none.
QString describeCopies(const Graph& graph, const DeviceSet& set, const Plan& plan);
/// "no-kernel pins-disagree" in plan order; "-" when there are none.
QString describeConflicts(const Plan& plan);
/// "%c:cpu" per replicated value and extra device; "-" when there are none.
QString describeReplicas(const Graph& graph, const DeviceSet& set, const Plan& plan);

/// The planned graph written as JSON text: a byte-exact snapshot for comparisons.
std::string snapshot(const Graph& graph, const DeviceSet& set);

} // namespace placer::test
