// Helpers the passes share (passes/PassSupport.h).
#include "passes/PassSupport.h"

namespace placer::passes {

Graph emptyLike(const Graph& graph) {
    Graph out;
    out.name = graph.name;
    out.sourceFormat = graph.sourceFormat;
    out.properties = graph.properties;
    return out;
}

KernelSpec specOf(const Graph& graph, const Node& node) {
    KernelSpec spec;
    spec.node = &node;
    spec.onnxOpset = graph.onnxOpset();
    for (const ValueRef input : node.inputs) {
        const Node& producer = graph.node(input.node);
        spec.inputs.push_back(graph.type(input));
        const bool constant = producer.isConstant() && producer.data;
        spec.constantInputs.push_back(constant);
        spec.constantData.push_back(constant ? producer.data.get() : nullptr);
    }
    spec.outputs = node.outputs;
    return spec;
}

void hold(Node& node, DeviceId device) {
    if (node.role() == OpRole::Compute && device.valid() && node.pin.kind != PinKind::Fixed)
        node.pin = Pin{PinKind::Plain, device, "optimizer"};
    node.rejectedPins.clear();
}

std::vector<std::vector<std::vector<NodeId>>> readersOf(const Graph& graph) {
    std::vector<std::vector<std::vector<NodeId>>> readers(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        readers[i].resize(node.outputs.size());
        for (const ValueRef input : node.inputs)
            readers[input.node.index][input.output].push_back(NodeId(i));
    }
    return readers;
}

std::vector<std::vector<bool>> graphOutputs(const Graph& graph) {
    std::vector<std::vector<bool>> outputs(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        outputs[i].assign(graph.nodes()[i].outputs.size(), false);
    for (const GraphOutput& output : graph.outputs())
        outputs[output.value.node.index][output.value.output] = true;
    return outputs;
}

bool shapesFoundAtRun(const Graph& graph, const Node& node) {
    if (node.anyRunTimeShape())
        return true;
    for (const ValueRef& input : node.inputs) {
        if (placer::shapeFoundAtRun(graph, input))
            return true;
    }
    return false;
}

bool isBinary(const Node& node, BinaryFn fn) {
    return node.op->kernel.family == KernelFamily::Binary && node.inputs.size() == 2 &&
           node.op->kernel.binary() == fn && node.outputs.size() == 1;
}

} // namespace placer::passes
