// The project's own JSON graph format (schema in the README), read and written.
#pragma once

#include "io/Json.h"
#include "ir/Result.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"

#include <optional>
#include <string>

namespace placer {

/// The device set a JSON graph document declares ("devices", "default", "host"), if any.
Result<std::optional<DeviceSet>> readJsonGraphDevices(const Json& document,
                                                      const std::string& fileName);

/// Builds a graph from a parsed JSON graph document. Device names in pins and copies are
/// resolved against `devices`. Errors point at the offending JSON value (line:column) and name
/// the node.
Result<Graph> readJsonGraph(const Json& document, const DeviceSet& devices,
                            const std::string& fileName);

/// Writes `graph` as a JSON graph document, with the device set; planned devices, pins and
/// copies included. readJsonGraph(writeJsonGraph(g)) reproduces g.
Json writeJsonGraph(const Graph& graph, const DeviceSet& devices);

} // namespace placer
