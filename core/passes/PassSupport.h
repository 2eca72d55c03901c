// What several passes share: an empty graph to rewrite into, the kernel spec a node would be
// prepared with, holding a node on its device, and reading who reads a value.
#pragma once

#include "ir/Graph.h"
#include "kernels/Kernel.h"
#include "passes/GraphPass.h"

#include <span>
#include <vector>

namespace placer::passes {

/// A graph with `graph`'s name, format and properties, and no nodes: what a pass rewrites into.
Graph emptyLike(const Graph& graph);

/// The spec a kernel for `node` would be prepared with, as the executor makes it.
KernelSpec specOf(const Graph& graph, const Node& node);

/// A node made or copied by a pass: a compute node stays on `device` (the pass protocol's
/// hold), and pins that lost (Node::rejectedPins) are the user's graph's business, not its.
void hold(Node& node, DeviceId device);

/// Who reads each value of a graph, and which values are graph outputs: flat arrays, made in
/// two passes over the inputs (a prediction finds fusion groups on every re-plan of a graph of
/// tens of thousands of nodes; a vector per value costs more than the search).
class ValueReaders {
public:
    explicit ValueReaders(const Graph& graph);
    /// The nodes that read `value`, in graph order (once per input that reads it).
    std::span<const NodeId> of(ValueRef value) const {
        const std::uint32_t slot = m_base[value.node.index] + value.output;
        return {m_readers.data() + m_offsets[slot], m_offsets[slot + 1] - m_offsets[slot]};
    }
    bool isOutput(ValueRef value) const {
        return m_output[m_base[value.node.index] + value.output] != 0;
    }

private:
    std::vector<std::uint32_t> m_base;    ///< per node: its first output's slot
    std::vector<std::uint32_t> m_offsets; ///< per slot, and one past: into m_readers
    std::vector<NodeId> m_readers;
    std::vector<std::uint8_t> m_output; ///< per slot: a graph output
};

/// Whether a kernel for `node` is prepared at run time, for shapes found then: it reads a value
/// whose extent a kernel finds (NonZero's) or whose shape the model computes, or writes one. Its
/// planned types are stand-ins, so no pass rewrites it for them (a layout, a view, packed
/// weights or a fused operand would be chosen for sizes it never runs at).
bool shapesFoundAtRun(const Graph& graph, const Node& node);

/// Puts a pass's rewrite in `state`: `graph`, whose node i comes from node `from[i]` of the graph
/// before it (invalid for one the pass inserted), so that origin and carried follow; and the
/// pass's counters `counted` into `statistics`.
void adoptRewrite(PassState& state, Graph graph, const std::vector<NodeId>& from,
                  const PassStatistics& counted, PassStatistics& statistics);

/// Whether `node` is the binary `fn` of two inputs, with one output.
bool isBinary(const Node& node, BinaryFn fn);

} // namespace placer::passes
