// A compact view of a graph for the planner's passes: what each pass needs from a node, in flat
// arrays, so passes stream through memory instead of chasing pointers through Node objects.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <vector>

namespace placer {

struct GraphIndex {
    GraphIndex() = default;
    explicit GraphIndex(const Graph& graph) { rebuild(graph); }
    /// Refills the view from `graph`, keeping the arrays' capacity from earlier graphs. When the
    /// view was made from this graph's structure (Graph::revision()), only the pins are read
    /// again: what changes from one edit to the next in the GUI.
    void rebuild(const Graph& graph);

    std::size_t size() const { return role.size(); }
    bool isDeviceCopy(std::uint32_t node) const { return role[node] == OpRole::DeviceCopy; }
    bool isConstant(std::uint32_t node) const { return role[node] == OpRole::Constant; }
    bool isParameter(std::uint32_t node) const { return role[node] == OpRole::Parameter; }
    std::uint32_t valueSlot(ValueRef v) const { return outputBase[v.node.index] + v.output; }

    // Per node.
    std::vector<OpRole> role;
    std::vector<const OpDef*> op;
    std::vector<DType> kernelDType; ///< the dtype its kernel works on: first input's, else output's
    std::vector<PinKind> pinKind;
    std::vector<DeviceId> pinDevice;
    std::vector<DeviceId> copySource;      ///< device_copy only
    std::vector<DeviceId> copyDestination; ///< device_copy only
    std::vector<std::uint8_t> hasRejectedPins;
    std::vector<std::uint8_t> hostOnly; ///< nodeHostOnly (ir/Graph.h)

    // Inputs: for node n, inputNode/inputOutput[inputOffsets[n] .. inputOffsets[n+1]).
    std::vector<std::uint32_t> inputOffsets, inputNode, inputOutput;

    // Consumers: for node n, the edges consumer/consumedOutput[consumerOffsets[n] .. [n+1]),
    // ordered by consumer.
    std::vector<std::uint32_t> consumerOffsets, consumer, consumedOutput;

    // Values: output k of node n is value slot outputBase[n] + k.
    std::vector<std::uint32_t> outputBase;
    std::vector<std::int64_t> valueBytes;
    std::vector<std::uint8_t> valueRank; ///< 255 for a rank of 255 or more

private:
    void readPins(const Graph& graph);

    std::vector<std::uint32_t> m_fill;
    std::uint64_t m_revision = 0; ///< the structure the view holds (0: none)
};

} // namespace placer
