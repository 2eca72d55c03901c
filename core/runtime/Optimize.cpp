#include "runtime/Optimize.h"

#include "ir/OpRegistry.h"
#include "plan/Planner.h"
#include "runtime/Device.h"

#include <array>
#include <cstring>
#include <map>

namespace placer {

namespace {

using Dims = std::vector<std::int64_t>;
using Perm = std::array<std::int64_t, 4>;

constexpr Perm kToNhwc{0, 2, 3, 1}; ///< nhwc[k] = nchw[kToNhwc[k]]
constexpr Perm kToNchw{0, 3, 1, 2}; ///< nchw[k] = nhwc[kToNchw[k]]
constexpr const char* kLayoutAttr = "placer.layout";

Dims permuted(const Dims& dims, const Perm& perm) {
    Dims out(4);
    for (std::size_t k = 0; k < 4; ++k)
        out[k] = dims[static_cast<std::size_t>(perm[k])];
    return out;
}

/// Where NCHW axis `axis` lies in NHWC.
std::int64_t nhwcAxis(std::int64_t axis) {
    static constexpr std::array<std::int64_t, 4> kAxis{0, 3, 1, 2};
    return kAxis[static_cast<std::size_t>(axis)];
}

bool isRank4Float(const TensorType& t) {
    return t.rank() == 4 && t.dtype == DType::Float32;
}

/// How a node takes part in channels-last.
enum class LayoutRole {
    None,    ///< needs the model's layout
    Prefers, ///< runs faster in NHWC: converted even when its input has to be transposed
    Follows, ///< indifferent: converted when one of its data inputs already is NHWC
};

struct NodeLayout {
    LayoutRole role = LayoutRole::None;
    std::vector<bool> data; ///< per input: whether it takes the NHWC form
    bool setsAttr = false;  ///< a kernel that reads placer.layout (convolution, pooling, norm)
};

NodeLayout layoutOf(const Graph& graph, const Node& node) {
    NodeLayout layout;
    if (node.outputs.size() != 1 || !node.subgraphs.empty() || node.inputs.empty() ||
        node.role() != OpRole::Compute || node.op->dialect != OpDialect::Onnx)
        return layout;
    const TensorType& out = node.outputs[0];
    if (out.rank() != 4)
        return layout;
    const std::string& op = node.op->name;
    const TensorType& first = graph.type(node.inputs[0]);
    layout.data.assign(node.inputs.size(), false);
    if (op == "Conv" || op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool" ||
        op == "GlobalMaxPool" || op == "BatchNormalization") {
        if (!isRank4Float(first) || !isRank4Float(out))
            return layout;
        if (op == "Conv" && (node.inputs.size() < 2 || graph.type(node.inputs[1]).rank() != 4))
            return layout;
        if (op == "BatchNormalization" && node.attrs.getInt("training_mode", 0).value_or(0) != 0)
            return layout;
        layout.role = op == "Conv" ? LayoutRole::Prefers : LayoutRole::Follows;
        layout.data[0] = true;
        layout.setsAttr = true;
        return layout;
    }
    const KernelFamily family = node.op->kernel.family;
    if (family == KernelFamily::Unary) {
        for (std::size_t i = 1; i < node.inputs.size(); ++i) {
            if (graph.type(node.inputs[i]).elementCount() != 1)
                return layout; // a parameter with a shape of its own
        }
        if (first.rank() != 4)
            return layout;
        layout.role = LayoutRole::Follows;
        layout.data[0] = true;
        return layout;
    }
    if (family == KernelFamily::Binary || op == "Concat") {
        if (op == "Concat") {
            const std::int64_t axis = node.attrs.getInt("axis", 0).value_or(0);
            if (axis < -4 || axis > 3)
                return layout;
        }
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            const TensorType& t = graph.type(node.inputs[i]);
            if (t.rank() == 4 && (op == "Concat" || t.elementCount() != 1))
                layout.data[i] = true;
            else if (op == "Concat" || t.elementCount() != 1)
                return layout; // broadcast from a lower rank: it would align differently
        }
        layout.role = LayoutRole::Follows;
        return layout;
    }
    return layout;
}

class ChannelsLast {
public:
    ChannelsLast(const Graph& graph, const Plan& plan, const std::vector<bool>& enabled)
        : m_in(graph), m_plan(plan), m_enabled(enabled),
          m_transpose(OpRegistry::global().find("Transpose")) {
        m_plain.resize(graph.size());
        m_last.resize(graph.size());
        for (std::size_t i = 0; i < graph.size(); ++i) {
            m_plain[i].resize(graph.nodes()[i].outputs.size());
            m_last[i].resize(graph.nodes()[i].outputs.size());
        }
        m_out.name = graph.name;
        m_out.sourceFormat = graph.sourceFormat;
        m_out.properties = graph.properties;
    }

    void run() {
        for (std::uint32_t i = 0; i < m_in.size(); ++i)
            rewrite(NodeId(i));
        for (const GraphOutput& output : m_in.outputs())
            m_out.addOutput(GraphOutput{plain(output.value), output.device, output.name});
    }

    Graph takeGraph() { return std::move(m_out); }
    std::vector<NodeId> takeOrigin() { return std::move(m_origin); }
    int inserted() const { return m_inserted; }
    bool changed() const { return m_inserted > 0 || m_anyConverted; }
    const std::map<std::int32_t, std::pair<int, int>>& converted() const { return m_converted; }
    const std::map<std::int32_t, int>& changes() const { return m_changes; }

private:
    DeviceId deviceOf(NodeId user) const { return m_plan.devices[user.index]; }

    NodeId add(Node node, NodeId origin) {
        const NodeId id = m_out.addNode(std::move(node));
        m_origin.push_back(origin);
        return id;
    }

    /// A new node's pin: every compute node stays where the user's plan put it.
    static void hold(Node& node, DeviceId device) {
        if (node.role() == OpRole::Compute && device.valid() && node.pin.kind != PinKind::Fixed)
            node.pin = Pin{PinKind::Plain, device, "optimizer"};
        node.rejectedPins.clear();
    }

    ValueRef transpose(ValueRef src, const TensorType& type, const Perm& perm, DeviceId device,
                       const std::string& name) {
        Node node;
        node.name = m_out.uniqueName(name);
        node.op = m_transpose;
        node.inputs = {src};
        node.attrs.set("perm", Dims(perm.begin(), perm.end()));
        node.outputs = {TensorType{permuted(type.shape, perm), type.dtype}};
        hold(node, device);
        ++m_inserted;
        ++m_changes[device.index];
        return ValueRef{add(std::move(node), NodeId()), 0};
    }

    /// A constant's data in NHWC order: a new constant, not a transpose at run time.
    ValueRef permutedConstant(ValueRef user) {
        const Node& source = m_in.node(user.node);
        const TensorType& type = source.outputs[0];
        const Dims nhwc = permuted(type.shape, kToNhwc);
        const std::size_t element = static_cast<std::size_t>(dtypeSize(type.dtype));
        auto data = std::make_shared<TensorData>(source.data->size(), '\0');
        const Dims& s = type.shape;
        for (std::int64_t n = 0; n < s[0]; ++n)
            for (std::int64_t c = 0; c < s[1]; ++c)
                for (std::int64_t h = 0; h < s[2]; ++h)
                    for (std::int64_t w = 0; w < s[3]; ++w) {
                        const std::int64_t from = ((n * s[1] + c) * s[2] + h) * s[3] + w;
                        const std::int64_t to = ((n * s[2] + h) * s[3] + w) * s[1] + c;
                        std::memcpy(data->data() + static_cast<std::size_t>(to) * element,
                                    source.data->data() + static_cast<std::size_t>(from) * element,
                                    element);
                    }
        Node node;
        node.name = m_out.uniqueName(source.name + "/nhwc");
        node.op = source.op;
        node.outputs = {TensorType{nhwc, type.dtype}};
        node.data = std::move(data);
        return ValueRef{add(std::move(node), user.node), 0};
    }

    /// The user's value in the model's layout, transposed back (on its producer's device) where
    /// only NHWC exists.
    ValueRef plain(ValueRef user) {
        ValueRef& p = m_plain[user.node.index][user.output];
        if (!p.node.valid()) {
            const DeviceId device = deviceOf(user.node);
            const ValueRef last = m_last[user.node.index][user.output].at(device.index);
            p = transpose(last, m_out.type(last), kToNchw, device,
                          m_in.valueName(user) + "/to_nchw");
        }
        return p;
    }

    /// The user's value in NHWC on `device`: its producer's own, a layout change made once per
    /// device, or for a constant, a permuted constant every device shares.
    ValueRef last(ValueRef user, DeviceId device) {
        auto& versions = m_last[user.node.index][user.output];
        const Node& source = m_in.node(user.node);
        if (source.isConstant() && source.data &&
            source.data->size() == static_cast<std::size_t>(source.outputs[0].bytes())) {
            auto [it, added] = versions.try_emplace(kAnyDevice);
            if (added)
                it->second = permutedConstant(user);
            return it->second;
        }
        if (const auto it = versions.find(device.index); it != versions.end())
            return it->second;
        return versions[device.index] = transpose(plain(user), m_in.type(user), kToNhwc, device,
                                                  m_in.valueName(user) + "/to_nhwc");
    }

    /// Whether an NHWC form of the user's value is already on `device` (a constant's does not
    /// count: it alone is no reason to convert a node).
    bool hasLast(ValueRef user, DeviceId device) const {
        return m_last[user.node.index][user.output].contains(device.index);
    }

    void rewrite(NodeId id) {
        const Node& node = m_in.node(id);
        const DeviceId device = deviceOf(id);
        const bool enabled = device.valid() &&
                             static_cast<std::size_t>(device.index) < m_enabled.size() &&
                             m_enabled[static_cast<std::size_t>(device.index)];
        NodeLayout layout = enabled ? layoutOf(m_in, node) : NodeLayout{};
        if (enabled && node.op->name == "Conv")
            ++m_converted[device.index].second;
        bool convert = layout.role == LayoutRole::Prefers;
        if (layout.role == LayoutRole::Follows) {
            for (std::size_t i = 0; i < node.inputs.size(); ++i)
                convert = convert || (layout.data[i] && hasLast(node.inputs[i], device));
        }
        Node copy = node;
        hold(copy, device);
        if (!convert) {
            for (ValueRef& input : copy.inputs)
                input = plain(input);
            const NodeId made = add(std::move(copy), id);
            for (std::uint32_t k = 0; k < node.outputs.size(); ++k)
                m_plain[id.index][k] = ValueRef{made, k};
            return;
        }
        for (std::size_t i = 0; i < copy.inputs.size(); ++i)
            copy.inputs[i] = layout.data[i] ? last(node.inputs[i], device) : plain(node.inputs[i]);
        copy.outputs[0].shape = permuted(node.outputs[0].shape, kToNhwc);
        if (layout.setsAttr)
            copy.attrs.set(kLayoutAttr, std::string("NHWC"));
        if (node.op->name == "Concat") {
            std::int64_t axis = node.attrs.getInt("axis", 0).value_or(0);
            if (axis < 0)
                axis += 4;
            copy.attrs.set("axis", nhwcAxis(axis));
        }
        if (node.op->name == "Conv")
            ++m_converted[device.index].first;
        m_anyConverted = true;
        m_last[id.index][0][device.index] = ValueRef{add(std::move(copy), id), 0};
    }

    const Graph& m_in;
    const Plan& m_plan;
    const std::vector<bool>& m_enabled;
    const OpDef* m_transpose;
    Graph m_out;
    std::vector<NodeId> m_origin;
    static constexpr std::int32_t kAnyDevice = -1; ///< a permuted constant
    std::vector<std::vector<ValueRef>> m_plain;
    /// Per user value: its NHWC forms by device index (kAnyDevice for a constant's).
    std::vector<std::vector<std::map<std::int32_t, ValueRef>>> m_last;
    int m_inserted = 0;
    bool m_anyConverted = false;
    std::map<std::int32_t, std::pair<int, int>> m_converted; ///< device: (converted, convolutions)
    std::map<std::int32_t, int> m_changes;                   ///< device: layout transposes
};

} // namespace

bool isChannelsLast(const Node& node) {
    return node.attrs.getString(kLayoutAttr, "").value_or("") == "NHWC";
}

OptimizedGraph unoptimized(const Graph& graph, const Plan& plan) {
    OptimizedGraph result;
    result.graph = graph;
    result.plan = plan;
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        result.origin.push_back(NodeId(i));
    return result;
}

Result<OptimizedGraph> optimizeGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                     const PlanOptions& options,
                                     const std::vector<bool>& channelsLastDevices) {
    OptimizedGraph result;
    ChannelsLast pass(graph, plan, channelsLastDevices);
    if (plan.devices.size() == graph.size() && OpRegistry::global().find("Transpose"))
        pass.run();
    if (!pass.changed())
        return unoptimized(graph, plan);
    result.graph = pass.takeGraph();
    result.origin = pass.takeOrigin();
    result.insertedNodes = pass.inserted();
    for (const auto& [device, counts] : pass.converted()) {
        const auto changes = pass.changes().find(device);
        result.notes.push_back(
            "channels-last (NHWC) on " + devices[DeviceId(device)].name + ": " +
            std::to_string(counts.first) + " of " + std::to_string(counts.second) +
            " convolutions, " +
            std::to_string(changes == pass.changes().end() ? 0 : changes->second) +
            " layout changes");
    }
    // Plan the rewritten graph with every compute node held where the first plan put it.
    PlanOptions again = options;
    again.mode = PlanMode::Demand;
    again.rules.clear();
    again.fallbackDevice.clear();
    result.plan = planDevices(result.graph, devices, again);
    for (const Conflict& conflict : result.plan.conflicts) {
        if (conflict.kind != ConflictKind::MemoryCapacity)
            return SourceError{"", 0, 0,
                               "the optimised graph cannot be planned as the original was: " +
                                   conflict.message};
    }
    for (std::uint32_t i = 0; i < result.graph.size(); ++i) {
        const NodeId origin = result.origin[i];
        if (!origin.valid() || result.graph.nodes()[i].role() != OpRole::Compute)
            continue;
        if (result.plan.devices[i] != plan.devices[origin.index])
            return SourceError{"", 0, 0,
                               "the optimised graph moved node '" + result.graph.nodes()[i].name +
                                   "' to another device"};
    }
    return result;
}

Result<OptimizedGraph> optimizeForDevices(const Graph& graph, const DeviceSet& devices,
                                          const Plan& plan, const PlanOptions& options,
                                          const std::vector<Device*>& mapping,
                                          const OptimizeOptions& optimize) {
    std::vector<bool> channelsLast(static_cast<std::size_t>(devices.size()), false);
    for (std::size_t d = 0; d < channelsLast.size() && d < mapping.size(); ++d) {
        channelsLast[d] =
            optimize.channelsLast && mapping[d] &&
            (mapping[d]->kind() == PhysicalKind::Cpu || mapping[d]->kind() == PhysicalKind::VCpu);
    }
    return optimizeGraph(graph, devices, plan, options, channelsLast);
}

} // namespace placer
