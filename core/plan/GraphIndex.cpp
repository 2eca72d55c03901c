// Building the compact graph view in one pass over the nodes.
#include "plan/GraphIndex.h"

#include <numeric>

namespace placer {

void GraphIndex::readPins(const Graph& graph) {
    const std::vector<Node>& nodes = graph.nodes();
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        pinKind[i] = nodes[i].pin.kind;
        pinDevice[i] = nodes[i].pin.device;
        hasRejectedPins[i] = nodes[i].rejectedPins.empty() ? 0 : 1;
    }
}

void GraphIndex::rebuild(const Graph& graph) {
    const std::size_t n = graph.size();
    if (m_revision == graph.revision() && role.size() == n) {
        readPins(graph);
        return;
    }
    m_revision = graph.revision();
    role.resize(n);
    op.resize(n);
    kernelDType.resize(n);
    pinKind.resize(n);
    pinDevice.resize(n);
    copySource.resize(n);
    copyDestination.resize(n);
    hasRejectedPins.resize(n);
    hostOnly.resize(n);
    inputOffsets.resize(n + 1);
    outputBase.resize(n + 1);
    consumerOffsets.assign(n + 1, 0);
    inputNode.clear();
    inputOutput.clear();
    valueBytes.clear();
    valueRank.clear();

    std::size_t edges = 0, values = 0;
    for (const Node& node : graph.nodes()) {
        edges += node.inputs.size();
        values += node.outputs.size();
    }
    inputNode.reserve(edges);
    inputOutput.reserve(edges);
    valueBytes.reserve(values);
    valueRank.reserve(values);

    for (std::uint32_t i = 0; i < n; ++i) {
        const Node& node = graph.nodes()[i];
        role[i] = node.op->role;
        op[i] = node.op;
        pinKind[i] = node.pin.kind;
        pinDevice[i] = node.pin.device;
        copySource[i] = node.copySource;
        copyDestination[i] = node.copyDestination;
        hasRejectedPins[i] = node.rejectedPins.empty() ? 0 : 1;
        inputOffsets[i] = static_cast<std::uint32_t>(inputNode.size());
        for (const ValueRef& input : node.inputs) {
            inputNode.push_back(input.node.index);
            inputOutput.push_back(input.output);
            ++consumerOffsets[input.node.index + 1];
        }
        outputBase[i] = static_cast<std::uint32_t>(valueBytes.size());
        for (const TensorType& type : node.outputs) {
            valueBytes.push_back(type.bytes());
            valueRank.push_back(static_cast<std::uint8_t>(std::min(type.rank(), 255)));
        }
        kernelDType[i] = placer::kernelDType(graph, node);
        hostOnly[i] = node.subgraphs.empty() ? node.op->hostOnly : nodeHostOnly(node);
    }
    inputOffsets[n] = static_cast<std::uint32_t>(inputNode.size());
    outputBase[n] = static_cast<std::uint32_t>(valueBytes.size());

    std::partial_sum(consumerOffsets.begin(), consumerOffsets.end(), consumerOffsets.begin());
    consumer.resize(edges);
    consumedOutput.resize(edges);
    std::vector<std::uint32_t>& fill = m_fill;
    fill.assign(consumerOffsets.begin(), consumerOffsets.end() - 1);
    for (std::uint32_t c = 0; c < n; ++c) {
        for (std::uint32_t e = inputOffsets[c]; e < inputOffsets[c + 1]; ++e) {
            const std::uint32_t slot = fill[inputNode[e]]++;
            consumer[slot] = c;
            consumedOutput[slot] = inputOutput[e];
        }
    }
}

} // namespace placer
