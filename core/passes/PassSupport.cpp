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

void adoptRewrite(PassState& state, Graph graph, const std::vector<NodeId>& from,
                  const PassStatistics& counted, PassStatistics& statistics) {
    std::vector<NodeId> origin(from.size()), carried(from.size());
    for (std::size_t i = 0; i < from.size(); ++i) {
        origin[i] = from[i].valid() ? state.origin[from[i].index] : NodeId();
        carried[i] = from[i].valid() ? state.carried[from[i].index] : NodeId();
    }
    state.graph = std::move(graph);
    state.origin = std::move(origin);
    state.carried = std::move(carried);
    for (const PassCounter& counter : counted.counters())
        statistics.add(counter.pass, counter.device, counter.counter, counter.value);
}

void hold(Node& node, DeviceId device) {
    if (node.role() == OpRole::Compute && device.valid() && node.pin.kind != PinKind::Fixed)
        node.pin = Pin{PinKind::Plain, device, "optimizer", true};
    node.rejectedPins.clear();
}

ValueReaders::ValueReaders(const Graph& graph) {
    const std::size_t n = graph.size();
    m_base.resize(n + 1);
    std::uint32_t slots = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        m_base[i] = slots;
        slots += static_cast<std::uint32_t>(graph.nodes()[i].outputs.size());
    }
    m_base[n] = slots;
    m_offsets.assign(slots + 1, 0);
    for (const Node& node : graph.nodes())
        for (const ValueRef input : node.inputs)
            ++m_offsets[m_base[input.node.index] + input.output + 1];
    for (std::uint32_t k = 0; k < slots; ++k)
        m_offsets[k + 1] += m_offsets[k];
    m_readers.resize(m_offsets[slots]);
    std::vector<std::uint32_t> fill(m_offsets.begin(), m_offsets.end() - 1);
    for (std::uint32_t i = 0; i < n; ++i)
        for (const ValueRef input : graph.nodes()[i].inputs)
            m_readers[fill[m_base[input.node.index] + input.output]++] = NodeId(i);
    m_output.assign(slots, 0);
    for (const GraphOutput& output : graph.outputs())
        m_output[m_base[output.value.node.index] + output.value.output] = 1;
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
