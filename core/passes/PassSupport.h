// What several passes share: an empty graph to rewrite into, the kernel spec a node would be
// prepared with, holding a node on its device, and reading who reads a value.
#pragma once

#include "ir/Graph.h"
#include "runtime/Kernel.h"

#include <vector>

namespace placer::passes {

/// A graph with `graph`'s name, format and properties, and no nodes: what a pass rewrites into.
Graph emptyLike(const Graph& graph);

/// The spec a kernel for `node` would be prepared with, as the executor makes it.
KernelSpec specOf(const Graph& graph, const Node& node);

/// A node made or copied by a pass: a compute node stays on `device` (the pass protocol's
/// hold), and pins that lost (Node::rejectedPins) are the user's graph's business, not its.
void hold(Node& node, DeviceId device);

/// Per node and output: the nodes that read it, in graph order.
std::vector<std::vector<std::vector<NodeId>>> readersOf(const Graph& graph);

/// Per node and output: whether it is a graph output.
std::vector<std::vector<bool>> graphOutputs(const Graph& graph);

/// Whether a kernel for `node` is prepared at run time, for shapes found then: it reads a value
/// whose extent a kernel finds (NonZero's) or whose shape the model computes, or writes one. Its
/// planned types are stand-ins, so no pass rewrites it for them (a layout, a view, packed
/// weights or a fused operand would be chosen for sizes it never runs at).
bool shapesFoundAtRun(const Graph& graph, const Node& node);

/// Whether `node` is the binary `fn` of two inputs, with one output.
bool isBinary(const Node& node, BinaryFn fn);

} // namespace placer::passes
