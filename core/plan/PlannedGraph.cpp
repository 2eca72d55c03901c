// Materialising and erasing plans.
#include "plan/PlannedGraph.h"

namespace placer {

Graph applyPlan(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    // Copies grouped by producer node, in the plan's order.
    std::vector<std::vector<const CopyPlan*>> copiesOf(graph.size());
    for (const CopyPlan& copy : plan.copies) {
        if (!copy.isExplicit)
            copiesOf[copy.value.node.index].push_back(&copy);
    }
    // For each consumer, which inputs now read a copy: (original value, copy node).
    std::vector<std::vector<std::pair<ValueRef, NodeId>>> redirects(graph.size());
    std::vector<NodeId> newId(graph.size());

    Graph result;
    result.name = graph.name;
    result.sourceFormat = graph.sourceFormat;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        Node node = graph.nodes()[i];
        node.device = plan.devices[i];
        for (ValueRef& input : node.inputs) {
            const ValueRef original = input;
            input = ValueRef{newId[original.node.index], original.output};
            for (const auto& [value, copy] : redirects[i]) {
                if (value == original)
                    input = ValueRef{copy, 0};
            }
        }
        if (node.isDeviceCopy())
            node.copySource = plan.devices[graph.nodes()[i].inputs[0].node.index];
        newId[i] = result.addNode(std::move(node));
        redirects[i].clear();
        redirects[i].shrink_to_fit();
        for (const CopyPlan* copy : copiesOf[i]) {
            Node copyNode;
            copyNode.op = &OpRegistry::global().deviceCopy();
            copyNode.name =
                result.uniqueName(graph.valueName(copy->value) + "@" + devices[copy->to].name);
            copyNode.inputs = {ValueRef{newId[i], copy->value.output}};
            copyNode.outputs = {graph.type(copy->value)};
            copyNode.copySource = copy->from;
            copyNode.copyDestination = copy->to;
            copyNode.insertedCopy = true;
            copyNode.device = copy->to;
            const NodeId copyId = result.addNode(std::move(copyNode));
            for (NodeId consumer : copy->consumers)
                redirects[consumer.index].emplace_back(copy->value, copyId);
        }
    }
    for (const GraphOutput& output : graph.outputs()) {
        GraphOutput mapped{ValueRef{newId[output.value.node.index], output.value.output},
                           output.device};
        if (output.device.valid() && plan.devices[output.value.node.index] != output.device) {
            // The result is delivered by the copy to its required device.
            for (std::uint32_t j = mapped.value.node.index + 1; j < result.size(); ++j) {
                const Node& candidate = result.nodes()[j];
                if (!candidate.insertedCopy || candidate.inputs[0] != mapped.value)
                    break;
                if (candidate.copyDestination == output.device) {
                    mapped.value = ValueRef{NodeId(j), 0};
                    break;
                }
            }
        }
        result.addOutput(mapped);
    }
    return result;
}

Graph erasePlan(const Graph& graph) {
    Graph result = graph;
    for (std::uint32_t i = 0; i < result.size(); ++i)
        result.node(NodeId(i)).device = DeviceId();
    return result;
}

} // namespace placer
