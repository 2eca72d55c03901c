// Precision policies (plan/Precision.h): which nodes compute in 16 bits, and the casts and
// narrower copies that follow.
#include "plan/Precision.h"

#include "ir/OpRegistry.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace placer {

bool hasPrecisionPolicy(const DeviceSet& devices) {
    return std::any_of(devices.devices().begin(), devices.devices().end(),
                       [](const VirtualDevice& d) { return d.computeType != DType::Float32; });
}

bool followsComputeType(const Node& node, std::size_t k) {
    const std::string& op = node.op->name;
    if (op == "Resize" || op == "Upsample")
        return k == 0;
    return true;
}

std::vector<DType> computeTypes(const Graph& graph, const DeviceSet& devices,
                                const std::vector<DeviceId>& placed) {
    std::vector<DType> types(graph.size(), DType::Float32);
    if (!hasPrecisionPolicy(devices))
        return types;
    for (std::uint32_t i = 0; i < graph.size() && i < placed.size(); ++i) {
        const Node& node = graph.nodes()[i];
        const DeviceId device = placed[i];
        if (!device.valid() || device.index >= devices.size() || node.role() != OpRole::Compute ||
            !node.subgraphs.empty() || node.op->hostOnly ||
            node.op->kernel.family == KernelFamily::None ||
            node.op->kernel.family == KernelFamily::Cast)
            continue;
        const VirtualDevice& where = devices[device];
        if (where.computeType == DType::Float32 || kernelDType(graph, node) != DType::Float32 ||
            !node.op->hasKernel(where.kind, where.computeType))
            continue;
        const bool floatResult =
            std::any_of(node.outputs.begin(), node.outputs.end(),
                        [](const TensorType& t) { return t.dtype == DType::Float32; });
        bool floatOperand = false;
        for (std::size_t k = 0; k < node.inputs.size(); ++k)
            floatOperand = floatOperand || (followsComputeType(node, k) &&
                                            graph.type(node.inputs[k]).dtype == DType::Float32);
        if (floatResult && floatOperand)
            types[i] = where.computeType;
    }
    return types;
}

std::int64_t narrowedOn(const std::vector<DType>& types, const Plan& plan, DeviceId device) {
    std::int64_t count = 0;
    for (std::size_t i = 0; i < types.size() && i < plan.devices.size(); ++i)
        count += types[i] != DType::Float32 && plan.devices[i] == device ? 1 : 0;
    return count;
}

DType producedType(const Graph& graph, const std::vector<DType>& types, ValueRef value) {
    const DType own = graph.type(value).dtype;
    return own == DType::Float32 && value.node.index < types.size() ? types[value.node.index] : own;
}

void planCasts(const Graph& graph, const DeviceSet& devices, Plan* plan) {
    plan->casts.clear();
    if (!hasPrecisionPolicy(devices) || plan->devices.size() != graph.size())
        return;
    const std::vector<DType> types = computeTypes(graph, devices, plan->devices);
    // One cast per value, device and type, however many nodes there read it.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int32_t, int>, std::size_t> made;
    const auto castOf = [&](ValueRef value, DeviceId device, DType to) -> CastPlan& {
        const auto key =
            std::make_tuple(value.node.index, value.output, device.index, static_cast<int>(to));
        auto [it, added] = made.try_emplace(key, plan->casts.size());
        if (added) {
            CastPlan cast;
            cast.value = value;
            cast.device = device;
            cast.from = producedType(graph, types, value);
            cast.to = to;
            cast.bytes = graph.type(value).elementCount() * dtypeSize(to);
            cast.atLoad = graph.node(value.node).isConstant();
            plan->casts.push_back(std::move(cast));
        }
        return plan->casts[it->second];
    };
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        const bool compute = node.role() == OpRole::Compute;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const ValueRef value = node.inputs[k];
            if (graph.type(value).dtype != DType::Float32)
                continue;
            const DType want = compute && followsComputeType(node, k) ? types[i] : DType::Float32;
            if (producedType(graph, types, value) == want)
                continue;
            // An explicit device_copy moves float32: its value is given back on its producer.
            CastPlan& cast =
                castOf(value, compute ? plan->devices[i] : plan->devices[value.node.index], want);
            if (cast.consumers.empty() || cast.consumers.back() != NodeId(i))
                cast.consumers.push_back(NodeId(i));
        }
    }
    for (const GraphOutput& output : graph.outputs()) {
        if (graph.type(output.value).dtype == DType::Float32 &&
            producedType(graph, types, output.value) != DType::Float32)
            castOf(output.value, plan->devices[output.value.node.index], DType::Float32).toOutput =
                true;
    }
    std::sort(plan->casts.begin(), plan->casts.end(), [](const CastPlan& a, const CastPlan& b) {
        return std::tie(a.value.node.index, a.value.output, a.device.index) <
               std::tie(b.value.node.index, b.value.output, b.device.index);
    });
    // A copy of a value made in 16 bits moves 16 bits.
    for (CopyPlan& copy : plan->copies) {
        if (copy.isExplicit)
            continue;
        const DType made = producedType(graph, types, copy.value);
        if (made != graph.type(copy.value).dtype)
            copy.bytes = graph.type(copy.value).elementCount() * dtypeSize(made);
    }
}

std::string castText(const Graph& graph, const DeviceSet& devices, const CastPlan& cast) {
    std::string text = graph.valueName(cast.value) + " to " + std::string(dtypeName(cast.to));
    if (cast.device.valid() && cast.device.index < devices.size())
        text += " on " + devices[cast.device].name;
    if (cast.atLoad)
        text += " once, as it is loaded";
    else if (cast.toOutput && cast.consumers.empty())
        text += " for the graph's result";
    else
        text += " for " + std::to_string(cast.consumers.size()) +
                (cast.consumers.size() == 1 ? " reader" : " readers") +
                (cast.toOutput ? " and the graph's result" : "");
    return text + " (" + formatBytes(cast.bytes) + ")";
}

std::int64_t castBytesPerRun(const Plan& plan) {
    std::int64_t total = 0;
    for (const CastPlan& cast : plan.casts)
        total += cast.atLoad ? 0 : cast.bytes;
    return total;
}

} // namespace placer
