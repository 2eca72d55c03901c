// Which inputs and outputs of If, Loop and Scan play which part (ir/ControlFlow.h).
#include "ir/ControlFlow.h"

#include <algorithm>
#include <cstring>

namespace placer {

LoopLayout loopLayout(const Node& loop, std::size_t inputs) {
    LoopLayout layout;
    const std::size_t own = inputs - std::min<std::size_t>(loop.captures, inputs);
    // ONNX positions of the inputs the node has (an absent M or cond leaves a gap).
    std::vector<std::int64_t> positions;
    if (const auto given = loop.attrs.getInts(kInputPositionsAttr, {}); given && !given->empty())
        positions = *given;
    for (std::size_t k = positions.size(); k < own; ++k)
        positions.push_back(static_cast<std::int64_t>(k));
    std::size_t k = 0;
    for (; k < own && positions[k] < 2; ++k) {
        if (positions[k] == 0)
            layout.tripCount = static_cast<int>(k);
        else
            layout.condition = static_cast<int>(k);
    }
    layout.firstCarried = k;
    layout.carried = own - k;
    layout.scanOutputs =
        loop.outputs.size() > layout.carried ? loop.outputs.size() - layout.carried : 0;
    return layout;
}

namespace {

bool constantTrue(const Node& node) {
    return node.isConstant() && node.data && !node.data->empty() &&
           std::any_of(node.data->begin(), node.data->end(), [](char c) { return c != 0; });
}

} // namespace

bool loopConditionStaysTrue(const Graph& body) {
    if (body.outputs().empty())
        return false;
    ValueRef value = body.outputs()[0].value;
    for (;;) {
        const Node& node = body.node(value.node);
        if (node.isParameter())
            return value.node.index == 1; // the body's second input: the condition
        if (constantTrue(node))
            return true;
        if (node.op->name != "Identity" || node.inputs.size() != 1)
            return false;
        value = node.inputs[0];
    }
}

std::optional<std::int64_t>
exactTripCount(const Node& loop, std::size_t inputs,
               const std::function<const TensorData*(std::size_t)>& constant) {
    const LoopLayout layout = loopLayout(loop, inputs);
    if (layout.tripCount < 0 || loop.subgraphs.empty() ||
        !loopConditionStaysTrue(*loop.subgraphs[0].graph))
        return std::nullopt;
    const TensorData* count = constant(static_cast<std::size_t>(layout.tripCount));
    if (!count || count->size() != sizeof(std::int64_t))
        return std::nullopt;
    if (layout.condition >= 0) {
        const TensorData* condition = constant(static_cast<std::size_t>(layout.condition));
        if (!condition || condition->size() != 1 || (*condition)[0] == 0)
            return std::nullopt;
    }
    std::int64_t trips = 0;
    std::memcpy(&trips, count->data(), sizeof trips);
    return std::max<std::int64_t>(trips, 0);
}

ScanLayout scanLayout(const Node& scan, std::size_t inputs) {
    ScanLayout layout;
    const std::size_t own = inputs - std::min<std::size_t>(scan.captures, inputs);
    const auto scanInputs = scan.attrs.getInt("num_scan_inputs", 0).value_or(0);
    layout.scanInputs =
        std::min<std::size_t>(static_cast<std::size_t>(std::max<std::int64_t>(scanInputs, 0)), own);
    layout.states = own - layout.scanInputs;
    layout.scanOutputs =
        scan.outputs.size() > layout.states ? scan.outputs.size() - layout.states : 0;
    auto list = [&](const char* name, std::size_t count) {
        auto values = scan.attrs.getInts(name, {}).value_or(std::vector<std::int64_t>{});
        values.resize(count, 0);
        return values;
    };
    layout.inputAxes = list("scan_input_axes", layout.scanInputs);
    layout.inputDirections = list("scan_input_directions", layout.scanInputs);
    layout.outputAxes = list("scan_output_axes", layout.scanOutputs);
    layout.outputDirections = list("scan_output_directions", layout.scanOutputs);
    return layout;
}

} // namespace placer
