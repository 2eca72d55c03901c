// Reads Relay text (the #[version = "0.0.5"] subset) into a Graph.
#pragma once

#include "ir/Result.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"

#include <string>
#include <string_view>

namespace placer {

/// Parses `def @main(...) { ... }`: typed parameters (with {virtual_device=...}), bindings,
/// `let`, tuples and projections, scalar constants, `on_device` (turned into pins on the
/// annotated node, never a node of its own), `device_copy`, and comments.
///
/// `meta[VirtualDevice][i]` (and the older `meta[SEScope][i]`) name the i-th device of `devices`;
/// `virtual_device="gpu"` names a device directly. Every error carries file:line:col and a
/// sentence; the reader never crashes on malformed input.
Result<Graph> readRelay(std::string_view text, const DeviceSet& devices,
                        const std::string& fileName);

} // namespace placer
