// Weight packing (passes/WeightPacking.h): asking each CPU device which layout its matrix
// products want their constant weights in, and loading them so.
#include "passes/WeightPacking.h"

#include "device/Device.h"
#include "passes/PassSupport.h"

namespace placer {

namespace {

constexpr const char* kWeightPacking = "weight packing";

} // namespace

bool WeightPacking::run(PassState& state, const PassContext& context,
                        PassStatistics& statistics) const {
    Graph& graph = state.graph;
    std::vector<int> readers(graph.size(), 0);
    for (const Node& node : graph.nodes()) {
        for (const ValueRef input : node.inputs)
            ++readers[input.node.index];
    }
    for (const GraphOutput& output : graph.outputs())
        ++readers[output.value.node.index];
    const auto copied = [&](NodeId node) {
        const NodeId from = state.carried[node.index];
        return from.valid() && from.index < context.copiedConstants.size() &&
               context.copiedConstants[from.index];
    };
    bool changed = false;
    for (std::uint32_t j = 0; j < graph.size(); ++j) {
        const Node& node = graph.nodes()[j];
        const DeviceId device = node.pin.device;
        Device* physical = context.physicalOf(device);
        if (node.op->kernel.family != KernelFamily::Matmul || node.inputs.size() < 2 ||
            node.hints.hasViews() || !context.enabledOn(device) || !physical ||
            passes::shapesFoundAtRun(graph, node))
            continue;
        const ValueRef weights = node.inputs[1];
        const Node& constant = graph.node(weights.node);
        if (!constant.isConstant() || !constant.data || constant.pin.kind != PinKind::None ||
            readers[weights.node.index] != 1 || copied(weights.node) || node.inputs[0] == weights)
            continue;
        const std::string layout = physical->packedLayout(passes::specOf(graph, node), 1);
        if (layout.empty())
            continue;
        graph.node(NodeId(j)).hints.packedLayout = layout;
        Node& held = graph.node(weights.node);
        held.hints.packedLayout = layout;
        held.pin = Pin{PinKind::Plain, device, "optimizer", true}; // loaded where its reader runs
        statistics.add(kWeightPacking, device, "matrix products");
        changed = true;
    }
    return changed;
}

std::vector<std::string> WeightPacking::describe(const PassStatistics& statistics,
                                                 const DeviceSet& devices) const {
    std::vector<std::string> sentences;
    for (const DeviceId device : statistics.devicesOf(kWeightPacking))
        sentences.push_back(
            "weight packing on " + devices[device].name + ": " +
            std::to_string(statistics.get(kWeightPacking, device, "matrix products")) +
            " matrix products read their weights in oneDNN's blocked layout, "
            "written so at load");
    return sentences;
}

} // namespace placer
