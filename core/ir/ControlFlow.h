// The layout of ONNX's control-flow nodes (If, Loop, Scan): which of a node's inputs and outputs
// play which part, as the reader (to plan shapes) and the runtime (to run the bodies) both need.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace placer {

/// Where a Loop's own inputs are among its node's inputs: the trip count and the condition are
/// optional (-1 when left out); the loop-carried values follow. Its outputs are the carried
/// values' final values, then the scan outputs. `inputs` counts the node's inputs, the
/// captured outer values included (a kernel knows them from its spec, a reader from the node).
struct LoopLayout {
    int tripCount = -1;
    int condition = -1;
    std::size_t firstCarried = 0;
    std::size_t carried = 0;
    std::size_t scanOutputs = 0;
};
LoopLayout loopLayout(const Node& loop, std::size_t inputs);

/// Whether a Loop body hands its condition input straight back (through Identity nodes) or a
/// constant true: a loop that starts true then stops only at its trip count.
bool loopConditionStaysTrue(const Graph& body);

/// The iterations a Loop runs whatever its data: its trip count, when that is a constant, the
/// initial condition true or absent, and the body's condition stays true. `constant(k)` is the
/// bytes of input k when it is a constant, else null.
std::optional<std::int64_t>
exactTripCount(const Node& loop, std::size_t inputs,
               const std::function<const TensorData*(std::size_t)>& constant);

/// A Scan's counts and per-tensor axes and directions (axes not yet made non-negative).
struct ScanLayout {
    std::size_t states = 0;
    std::size_t scanInputs = 0;
    std::size_t scanOutputs = 0;
    std::vector<std::int64_t> inputAxes, inputDirections, outputAxes, outputDirections;
};
ScanLayout scanLayout(const Node& scan, std::size_t inputs);

} // namespace placer
