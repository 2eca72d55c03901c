#include "runtime/Optimize.h"

#include "ir/OpRegistry.h"
#include "plan/Planner.h"
#include "runtime/Device.h"
#include "runtime/Kernel.h"
#include "runtime/OpGeometry.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
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

/// A graph with `graph`'s name, format and properties, and no nodes: what a pass rewrites into.
Graph emptyLike(const Graph& graph) {
    Graph out;
    out.name = graph.name;
    out.sourceFormat = graph.sourceFormat;
    out.properties = graph.properties;
    return out;
}

/// The spec a kernel for `node` would be prepared with, as the executor makes it.
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
    if (op == "Slice") {
        // Slices along axes a constant names: the same slice of the NHWC form, axes remapped.
        if (first.rank() != 4 || node.inputs.size() < 4 ||
            graph.type(node.inputs[3]).dtype != DType::Int64 ||
            !geometry::constantInts(specOf(graph, node), 3))
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
        m_out = emptyLike(graph);
        m_readers.resize(graph.size());
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            for (const ValueRef input : graph.nodes()[i].inputs)
                m_readers[input.node.index].push_back(NodeId(i));
        }
        for (const GraphOutput& output : graph.outputs())
            m_readers[output.value.node.index].push_back(NodeId()); // read outside the graph
        m_done.assign(graph.size(), false);
    }

    void run() {
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            if (!m_done[i] && !channelShuffle(NodeId(i)))
                rewrite(NodeId(i));
        }
        for (const GraphOutput& output : m_in.outputs())
            m_out.addOutput(GraphOutput{plain(output.value), output.device, output.name});
    }

    Graph takeGraph() { return std::move(m_out); }
    std::vector<NodeId> takeOrigin() { return std::move(m_origin); }
    int inserted() const { return m_inserted; }
    bool changed() const { return m_inserted > 0 || m_anyConverted; }
    const std::map<std::int32_t, std::pair<int, int>>& converted() const { return m_converted; }
    const std::map<std::int32_t, int>& changes() const { return m_changes; }
    const std::map<std::int32_t, int>& shuffles() const { return m_shuffles; }

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
        if (node.op->name == "Slice") {
            Dims axes = *geometry::constantInts(specOf(m_in, node), 3);
            for (std::int64_t& axis : axes)
                axis = nhwcAxis(axis < 0 ? axis + 4 : axis);
            copy.inputs[3] = intsConstant(node.inputs[3], axes, "/nhwc");
        }
        if (node.op->name == "Conv")
            ++m_converted[device.index].first;
        m_anyConverted = true;
        m_last[id.index][0][device.index] = ValueRef{add(std::move(copy), id), 0};
    }

    /// A new int64 constant of `values`, made like the user's constant `like`.
    ValueRef intsConstant(ValueRef like, const std::vector<std::int64_t>& values,
                          const std::string& suffix) {
        const Node& source = m_in.node(like.node);
        Node node;
        node.name = m_out.uniqueName(source.name + suffix);
        node.op = source.op;
        node.outputs = {TensorType{{static_cast<std::int64_t>(values.size())}, DType::Int64}};
        node.data = std::make_shared<TensorData>(reinterpret_cast<const char*>(values.data()),
                                                 values.size() * sizeof(std::int64_t));
        return ValueRef{add(std::move(node), like.node), 0};
    }

    /// The one node that reads `value`, when nothing else does (nor the graph's outputs).
    NodeId onlyReader(ValueRef value) const {
        const auto& readers = m_readers[value.node.index];
        if (readers.size() != 1 || !readers[0].valid() || m_in.node(value.node).outputs.size() != 1)
            return NodeId();
        return readers[0];
    }

    /// ShuffleNet's channel shuffle, Reshape [N,C,H,W] -> [N,g,C/g,H,W], Transpose (0,2,1,3,4),
    /// Reshape back to [N,C,H,W], from `id` (the first Reshape), of a value already NHWC: done
    /// in NHWC, as Reshape [N,H,W,g,C/g], Transpose (0,1,2,4,3), Reshape [N,H,W,C]. Whether it
    /// was.
    bool channelShuffle(NodeId id) {
        const Node& first = m_in.node(id);
        const DeviceId device = deviceOf(id);
        if (first.op->name != "Reshape" || first.inputs.size() != 2 || !device.valid() ||
            static_cast<std::size_t>(device.index) >= m_enabled.size() ||
            !m_enabled[static_cast<std::size_t>(device.index)] ||
            !hasLast(first.inputs[0], device) || !m_in.node(first.inputs[1].node).isConstant())
            return false;
        const TensorType& in = m_in.type(first.inputs[0]);
        const Dims& split = first.outputs[0].shape;
        if (!isRank4Float(in) || split.size() != 5 || split[0] != in.shape[0] ||
            split[1] * split[2] != in.shape[1] || split[3] != in.shape[2] ||
            split[4] != in.shape[3])
            return false;
        const NodeId swap = onlyReader(ValueRef{id, 0});
        if (!swap.valid() || deviceOf(swap) != device)
            return false;
        const Node& transpose = m_in.node(swap);
        if (transpose.op->kernel.family != KernelFamily::Transpose ||
            transpose.attrs.getInts("perm", {}).value_or(Dims{}) != Dims{0, 2, 1, 3, 4})
            return false;
        const NodeId back = onlyReader(ValueRef{swap, 0});
        if (!back.valid() || deviceOf(back) != device)
            return false;
        const Node& merge = m_in.node(back);
        if (merge.op->name != "Reshape" || merge.inputs.size() != 2 || merge.outputs[0] != in ||
            !m_in.node(merge.inputs[1].node).isConstant())
            return false;
        const std::int64_t n = in.shape[0], h = in.shape[2], w = in.shape[3];
        const std::int64_t groups = split[1], each = split[2];
        Node r1 = first;
        hold(r1, device);
        r1.inputs = {last(first.inputs[0], device),
                     intsConstant(first.inputs[1], {n, h, w, groups, each}, "/nhwc")};
        r1.outputs = {TensorType{{n, h, w, groups, each}, in.dtype}};
        const ValueRef a{add(std::move(r1), id), 0};
        Node t1 = transpose;
        hold(t1, device);
        t1.inputs = {a};
        t1.attrs.set("perm", Dims{0, 1, 2, 4, 3});
        t1.outputs = {TensorType{{n, h, w, each, groups}, in.dtype}};
        const ValueRef b{add(std::move(t1), swap), 0};
        Node r2 = merge;
        hold(r2, device);
        r2.inputs = {b, intsConstant(merge.inputs[1], {n, h, w, groups * each}, "/nhwc")};
        r2.outputs = {TensorType{permuted(in.shape, kToNhwc), in.dtype}};
        m_last[back.index][0][device.index] = ValueRef{add(std::move(r2), back), 0};
        m_done[swap.index] = m_done[back.index] = true;
        m_anyConverted = true;
        ++m_shuffles[device.index];
        return true;
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
    std::map<std::int32_t, int> m_shuffles;                  ///< device: channel shuffles
    std::vector<std::vector<NodeId>> m_readers; ///< per node; an invalid id: a graph output
    std::vector<bool> m_done;                   ///< rewritten with an earlier node
};

// ---- post-op fusion -----------------------------------------------------------------------------

constexpr const char* kPostOpsAttr = "placer.post_ops";
/// A matrix product's strided views (runtime/Optimize.h matmulViewOf): of A, of B, of its output.
constexpr std::array<const char*, 3> kViewAttrs{"placer.view_a", "placer.view_b",
                                                "placer.view_out"};

bool hasViews(const Node& node) {
    return std::any_of(kViewAttrs.begin(), kViewAttrs.end(),
                       [&](const char* name) { return node.attrs.has(name); });
}

/// The post-op a unary node is, as "name[:alpha[:beta]]" (oneDNN's eltwise algorithms), or
/// empty when it is none.
std::string unaryPostOp(const Graph& graph, const Node& node) {
    if (node.op->kernel.family != KernelFamily::Unary || node.outputs.size() != 1)
        return {};
    const KernelSpec spec = specOf(graph, node);
    for (std::size_t i = 1; i < spec.constantInputs.size(); ++i) {
        if (!spec.constantInputs[i])
            return {}; // Clip's bounds known only at run time
    }
    double a = 0, b = 0;
    if (geometry::readUnaryParameters(spec, &a, &b))
        return {};
    char text[64];
    switch (node.op->kernel.unary()) {
    case UnaryFn::Relu:
        return "relu:0";
    case UnaryFn::LeakyRelu:
        std::snprintf(text, sizeof text, "relu:%.9g", a);
        return text;
    case UnaryFn::Clip:
        if (!(a <= b))
            return {}; // an empty range: the Clip kernel's own business
        std::snprintf(text, sizeof text, "clip:%.9g:%.9g", std::max(a, -3.0e38),
                      std::min(b, 3.0e38));
        return text;
    case UnaryFn::Sigmoid:
        return "logistic";
    case UnaryFn::Tanh:
        return "tanh";
    case UnaryFn::HardSwish:
        return "hardswish";
    case UnaryFn::Elu:
        std::snprintf(text, sizeof text, "elu:%.9g", a);
        return text;
    case UnaryFn::Gelu:
        if (node.attrs.getString("approximate", "none").value_or("none") != "none")
            return {};
        return "gelu_erf";
    default:
        return {};
    }
}

bool isBinary(const Node& node, BinaryFn fn) {
    return node.op->kernel.family == KernelFamily::Binary && node.inputs.size() == 2 &&
           node.op->kernel.binary() == fn && node.outputs.size() == 1;
}

/// Convolutions and matrix products on CPU devices take the element-wise ops after them as
/// oneDNN post-ops: an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSwish, Elu, GELU,
/// the written-out GELU included), SiLU (x * Sigmoid(x)), and a residual Add of a tensor of the
/// output's shape, in a chain (Conv, Add, Relu); a matrix product also takes the Add of a bias
/// row first (MatMul, Add bias, GELU). A fused node is the head with the chain in its
/// "placer.post_ops" attribute and the Adds' other operands as extra inputs at the end; it is
/// named after every node it computes ("conv+relu").
/// Only values no other node reads are fused, never across a device, never a node the user
/// pinned, never a graph output but the chain's last value.
class PostOpFusion {
public:
    /// `origin`: per node of `graph`, the user's node; `carried`: a further per-node id the
    /// rewritten graph keeps alongside (the node of the sharded graph it comes from);
    /// `device`: per node of `graph`, the device that runs it.
    PostOpFusion(const Graph& graph, const Graph& user, const std::vector<NodeId>& origin,
                 const std::vector<NodeId>& carried, const std::vector<DeviceId>& device,
                 const std::vector<bool>& enabled)
        : m_in(graph), m_user(user), m_origin(origin), m_device(device), m_enabled(enabled),
          m_carried(carried) {
        m_consumers.resize(graph.size());
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            const Node& node = graph.nodes()[i];
            m_consumers[i].resize(node.outputs.size());
            for (const ValueRef input : node.inputs)
                m_consumers[input.node.index][input.output].push_back(NodeId(i));
        }
        m_isOutput.resize(graph.size());
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            m_isOutput[i].assign(graph.nodes()[i].outputs.size(), false);
        for (const GraphOutput& output : graph.outputs())
            m_isOutput[output.value.node.index][output.value.output] = true;
    }

    /// Finds the groups; false when there are none.
    bool find() {
        m_groupOf.assign(m_in.size(), -1);
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            if (m_groupOf[i] >= 0)
                continue;
            Group pattern{NodeId(i), {}, {}, {}};
            if (matchLayerNorm(NodeId(i), pattern) || matchGelu(NodeId(i), pattern)) {
                const int index = static_cast<int>(m_groups.size());
                m_groupOf[i] = index;
                for (const NodeId member : pattern.members)
                    m_groupOf[member.index] = index;
                m_groups.push_back(std::move(pattern));
            }
        }
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            if (m_groupOf[i] >= 0 || !isHead(NodeId(i)))
                continue;
            Group group{NodeId(i), {}, {}, {}};
            ValueRef value{NodeId(i), 0};
            while (extend(group, value)) {
            }
            if (group.members.empty())
                continue;
            const int index = static_cast<int>(m_groups.size());
            m_groupOf[i] = index;
            for (const NodeId member : group.members)
                m_groupOf[member.index] = index;
            m_groups.push_back(std::move(group));
        }
        return !m_groups.empty();
    }

    /// The graph with each group one node, emitted where its last member was.
    void rewrite() {
        m_out = emptyLike(m_in);
        m_map.resize(m_in.size());
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            const Node& node = m_in.nodes()[i];
            m_map[i].resize(node.outputs.size());
            const int g = m_groupOf[i];
            if (g < 0) {
                Node copy = node;
                for (ValueRef& input : copy.inputs)
                    input = mapped(input);
                emit(std::move(copy), NodeId(i), ValueRef{NodeId(i), 0});
                continue;
            }
            const Group& group = m_groups[static_cast<std::size_t>(g)];
            if (group.members.back() != NodeId(i))
                continue; // emitted with the group's last member
            const Node& head = m_in.node(group.head);
            Node fused = head;
            std::string name = head.name;
            for (const NodeId member : group.members)
                name += "+" + m_in.node(member).name;
            fused.name = m_out.uniqueName(name);
            if (group.gelu) {
                fused.op = OpRegistry::global().find("Gelu");
                fused.inputs = {mapped(head.inputs[0])};
                fused.attrs = Attrs();
                fused.outputs = {node.outputs[0]};
                emit(std::move(fused), group.head, ValueRef{NodeId(i), 0});
                ++m_gelusByDevice[m_device[i].index];
            } else if (group.layerNorm) {
                // x, gamma, beta: the operands of the final Mul and Add.
                fused.op = OpRegistry::global().find("LayerNormalization");
                fused.inputs = {mapped(head.inputs[0]), mapped(group.operands[0]),
                                mapped(group.operands[1])};
                fused.attrs = Attrs();
                fused.attrs.set("axis", std::int64_t{-1});
                fused.attrs.set("epsilon", group.epsilon);
                fused.outputs = {node.outputs[0]};
                emit(std::move(fused), group.head, ValueRef{NodeId(i), 0});
                ++m_normsByDevice[m_device[i].index];
            } else {
                for (ValueRef& input : fused.inputs)
                    input = mapped(input);
                for (const ValueRef operand : group.operands)
                    fused.inputs.push_back(mapped(operand));
                std::string ops;
                for (const std::string& op : group.postOps)
                    ops += (ops.empty() ? "" : ";") + op;
                fused.attrs.set(kPostOpsAttr, ops);
                fused.outputs = {node.outputs[0]};
                FusedCounts& counts = m_fusedByDevice[m_device[i].index];
                ++(isConv(head)     ? counts.convolutions
                   : isMatmul(head) ? counts.products
                                    : counts.normalisations);
                counts.ops += static_cast<int>(group.members.size());
                emit(std::move(fused), group.head, ValueRef{NodeId(i), 0});
            }
        }
        for (const GraphOutput& output : m_in.outputs())
            m_out.addOutput(GraphOutput{mapped(output.value), output.device, output.name});
    }

    Graph takeGraph() { return std::move(m_out); }
    std::vector<NodeId> takeOrigin() { return std::move(m_newOrigin); }
    std::vector<NodeId> takeCarried() { return std::move(m_newCarried); }
    /// (member, head) of every group found, as the user's nodes.
    std::vector<std::pair<NodeId, NodeId>> fusedInto() const {
        std::vector<std::pair<NodeId, NodeId>> pairs;
        for (const Group& group : m_groups) {
            if (group.absorbed)
                continue;
            for (const NodeId member : group.members) {
                if (m_origin[member.index].valid())
                    pairs.emplace_back(m_origin[member.index], m_origin[group.head.index]);
            }
        }
        return pairs;
    }
    struct FusedCounts {
        int convolutions = 0, products = 0, normalisations = 0; ///< heads
        int ops = 0;                                            ///< the ops they took
    };
    const std::map<std::int32_t, FusedCounts>& fusedByDevice() const { return m_fusedByDevice; }
    /// Per device: how many layer normalisations written out as nine ops became one.
    const std::map<std::int32_t, int>& normsByDevice() const { return m_normsByDevice; }
    /// Per device: how many GELUs written out as five ops became one.
    const std::map<std::int32_t, int>& gelusByDevice() const { return m_gelusByDevice; }

private:
    struct Group {
        NodeId head;
        std::vector<NodeId> members;      ///< in graph order, the chain after the head
        std::vector<std::string> postOps; ///< what each step applies
        std::vector<ValueRef> operands;   ///< the residual Adds' other operands
        bool layerNorm = false;           ///< a layer normalisation: operands are gamma, beta
        bool gelu = false;                ///< a GELU written out: one op on the head's input
        bool absorbed = false; ///< a GELU a matrix product took as a post-op: not a group now
        double epsilon = 0;
    };

    /// The one node that reads `value`, when it is not a graph output and may join a group on
    /// `device`; else an invalid id.
    NodeId onlyReader(ValueRef value, DeviceId device) const {
        const auto& readers = m_consumers[value.node.index][value.output];
        if (readers.size() != 1 || m_isOutput[value.node.index][value.output] ||
            !joinable(readers[0], device))
            return NodeId();
        return readers[0];
    }

    /// A float32 scalar constant's value (shape [] or [1]).
    std::optional<double> scalarConstant(ValueRef value) const {
        const Node& producer = m_in.node(value.node);
        const TensorType& type = m_in.type(value);
        if (!producer.isConstant() || !producer.data || type.dtype != DType::Float32 ||
            type.elementCount() != 1 || producer.data->size() != 4)
            return std::nullopt;
        float v = 0;
        std::memcpy(&v, producer.data->data(), 4);
        return v;
    }

    /// When `op` is the binary `fn` of `from` and a scalar constant, either way round: that
    /// constant's value.
    std::optional<double> scalarWith(NodeId op, BinaryFn fn, ValueRef from) const {
        if (!op.valid() || !isBinary(m_in.node(op), fn))
            return std::nullopt;
        const Node& node = m_in.node(op);
        if (node.inputs[0] != from && node.inputs[1] != from)
            return std::nullopt;
        return scalarConstant(node.inputs[0] == from ? node.inputs[1] : node.inputs[0]);
    }

    /// Whether `node` is a ReduceMean over the last axis of `input`, keeping it.
    bool meanOverLastAxis(const Node& node, ValueRef input) const {
        if (node.op->name != "ReduceMean" || node.inputs.size() != 1 || node.inputs[0] != input ||
            node.outputs.size() != 1 || node.attrs.getInt("keepdims", 1).value_or(1) != 1)
            return false;
        const auto rank = static_cast<std::int64_t>(m_in.type(input).shape.size());
        const auto axes = node.attrs.getInts("axes", {});
        return rank >= 1 && axes && axes->size() == 1 &&
               ((*axes)[0] == -1 || (*axes)[0] == rank - 1);
    }

    /// A layer normalisation as exporters write it out over the last axis, from its first
    /// ReduceMean: mean = ReduceMean(x); d = x - mean; var = ReduceMean(Pow(d, 2));
    /// y = d / Sqrt(var + eps) * gamma + beta, gamma and beta constants of the axis' length.
    /// Every intermediate value read only inside the pattern, all on one CPU device, unpinned.
    bool matchLayerNorm(NodeId first, Group& group) const {
        const Node& mean = m_in.node(first);
        if (mean.op->name != "ReduceMean" || mean.inputs.size() != 1 || !enabledOn(first) ||
            userPinned(first))
            return false;
        const ValueRef x = mean.inputs[0];
        const TensorType& type = m_in.type(x);
        if (type.dtype != DType::Float32 || type.shape.empty() || !meanOverLastAxis(mean, x) ||
            !OpRegistry::global().find("LayerNormalization"))
            return false;
        const DeviceId device = m_device[first.index];
        const std::int64_t width = type.shape.back();
        std::vector<NodeId> members;
        auto next = [&](NodeId at) { return onlyReader(ValueRef{at, 0}, device); };
        const NodeId sub = next(first);
        if (!sub.valid() || !isBinary(m_in.node(sub), BinaryFn::Sub) ||
            m_in.node(sub).inputs[0] != x || m_in.node(sub).inputs[1] != ValueRef{first, 0} ||
            m_in.type(ValueRef{sub, 0}) != type)
            return false;
        // The difference is read twice: squared, and divided.
        const auto& readers = m_consumers[sub.index][0];
        if (readers.size() != 2 || m_isOutput[sub.index][0])
            return false;
        const ValueRef d{sub, 0};
        for (int k = 0; k < 2; ++k) {
            const NodeId pow = readers[static_cast<std::size_t>(k)];
            const NodeId div = readers[static_cast<std::size_t>(1 - k)];
            if (!joinable(pow, device) || !joinable(div, device))
                continue;
            const Node& p = m_in.node(pow);
            if (!isBinary(p, BinaryFn::Pow) || p.inputs[0] != d ||
                scalarConstant(p.inputs[1]) != 2.0)
                continue;
            const NodeId variance = next(pow);
            if (!variance.valid() || !meanOverLastAxis(m_in.node(variance), ValueRef{pow, 0}))
                continue;
            const NodeId addEps = next(variance);
            if (!addEps.valid() || !isBinary(m_in.node(addEps), BinaryFn::Add))
                continue;
            const Node& a = m_in.node(addEps);
            const ValueRef varianceValue{variance, 0};
            const auto epsilon =
                scalarConstant(a.inputs[0] == varianceValue ? a.inputs[1] : a.inputs[0]);
            if (!epsilon || (a.inputs[0] != varianceValue && a.inputs[1] != varianceValue))
                continue;
            const NodeId sqrt = next(addEps);
            if (!sqrt.valid() || m_in.node(sqrt).op->kernel.family != KernelFamily::Unary ||
                m_in.node(sqrt).op->kernel.unary() != UnaryFn::Sqrt)
                continue;
            const Node& q = m_in.node(div);
            if (!isBinary(q, BinaryFn::Div) || q.inputs[0] != d ||
                q.inputs[1] != ValueRef{sqrt, 0} || next(sqrt) != div)
                continue;
            const NodeId mul = next(div);
            const NodeId add = mul.valid() ? next(mul) : NodeId();
            if (!add.valid() || !isBinary(m_in.node(mul), BinaryFn::Mul) ||
                !isBinary(m_in.node(add), BinaryFn::Add))
                continue;
            auto affine = [&](NodeId op, ValueRef from) -> std::optional<ValueRef> {
                const Node& n = m_in.node(op);
                const ValueRef other = n.inputs[0] == from ? n.inputs[1] : n.inputs[0];
                const Node& producer = m_in.node(other.node);
                const TensorType& t = m_in.type(other);
                if ((n.inputs[0] != from && n.inputs[1] != from) || !producer.isConstant() ||
                    t.dtype != DType::Float32 || t.shape != std::vector<std::int64_t>{width} ||
                    n.outputs[0] != type)
                    return std::nullopt;
                return other;
            };
            const auto gamma = affine(mul, ValueRef{div, 0});
            const auto beta = affine(add, ValueRef{mul, 0});
            if (!gamma || !beta)
                continue;
            group.members = {sub, pow, variance, addEps, sqrt, div, mul, add};
            std::sort(group.members.begin(), group.members.end());
            if (group.members.front() < first)
                return false; // the head must come first in graph order
            group.operands = {*gamma, *beta};
            group.layerNorm = true;
            group.epsilon = *epsilon;
            return true;
        }
        return false;
    }

    /// The exact GELU as exporters write it out (PyTorch's nn.GELU below opset 20), from its
    /// Div: y = x * (Erf(x / sqrt(2)) + 1) * 0.5, the division possibly a product by 1/sqrt(2),
    /// every intermediate value read only inside the pattern, all on one CPU device, unpinned.
    bool matchGelu(NodeId first, Group& group) const {
        const Node& scale = m_in.node(first);
        if (!enabledOn(first) || userPinned(first) || !OpRegistry::global().find("Gelu"))
            return false;
        const bool divides = isBinary(scale, BinaryFn::Div);
        if (!divides && !isBinary(scale, BinaryFn::Mul))
            return false;
        const ValueRef x = scale.inputs[0];
        const TensorType& type = m_in.type(x);
        const auto factor = scalarConstant(scale.inputs[1]);
        constexpr double kSqrt2 = 1.41421356237309504880;
        if (type.dtype != DType::Float32 || !factor || m_in.type(ValueRef{first, 0}) != type ||
            std::abs(divides ? *factor / kSqrt2 - 1 : *factor * kSqrt2 - 1) > 1e-6)
            return false;
        const DeviceId device = m_device[first.index];
        auto next = [&](NodeId at) { return onlyReader(ValueRef{at, 0}, device); };
        const NodeId erf = next(first);
        if (!erf.valid() || m_in.node(erf).op->kernel.family != KernelFamily::Unary ||
            m_in.node(erf).op->kernel.unary() != UnaryFn::Erf)
            return false;
        const NodeId plusOne = next(erf);
        if (scalarWith(plusOne, BinaryFn::Add, ValueRef{erf, 0}) != 1.0)
            return false;
        const NodeId times = next(plusOne);
        if (!times.valid() || !isBinary(m_in.node(times), BinaryFn::Mul))
            return false;
        const Node& product = m_in.node(times);
        const ValueRef gate{plusOne, 0};
        if (!((product.inputs[0] == x && product.inputs[1] == gate) ||
              (product.inputs[1] == x && product.inputs[0] == gate)))
            return false;
        const NodeId half = next(times);
        if (scalarWith(half, BinaryFn::Mul, ValueRef{times, 0}) != 0.5 ||
            m_in.type(ValueRef{half, 0}) != type)
            return false;
        group.members = {erf, plusOne, times, half};
        std::sort(group.members.begin(), group.members.end());
        if (group.members.front() < first)
            return false; // the head must come first in graph order
        group.gelu = true;
        return true;
    }

    bool enabledOn(NodeId id) const {
        const DeviceId device = m_device[id.index];
        return device.valid() && static_cast<std::size_t>(device.index) < m_enabled.size() &&
               m_enabled[static_cast<std::size_t>(device.index)];
    }

    /// Whether the user pinned the node this one computes.
    bool userPinned(NodeId id) const {
        const NodeId user = m_origin[id.index];
        return user.valid() && user.index < m_user.size() &&
               m_user.node(user).pin.kind != PinKind::None;
    }

    static bool isConv(const Node& node) {
        return node.op->name == "Conv" || node.op->name == "nn.conv2d";
    }

    static bool isMatmul(const Node& node) {
        return node.op->kernel.family == KernelFamily::Matmul && node.inputs.size() <= 3;
    }

    static bool isBatchNorm(const Node& node) {
        return node.op->kernel.family == KernelFamily::BatchNorm;
    }

    bool isHead(NodeId id) const {
        const Node& node = m_in.node(id);
        return (isConv(node) || isMatmul(node) || isBatchNorm(node)) && node.outputs.size() == 1 &&
               node.outputs[0].dtype == DType::Float32 && node.inputs.size() >= 2 &&
               node.subgraphs.empty() && enabledOn(id) && !node.attrs.has(kPostOpsAttr) &&
               !hasViews(node);
    }

    /// When `norm` is a batch normalisation (inference) of convolution `conv`'s output over its
    /// channels, that the convolution can take folded into its weights: its post-op text. Only
    /// where refolding costs less than normalising: everything constant (folded once), or
    /// weights no larger than the output (folded every run).
    std::optional<std::string> foldableBatchNorm(NodeId conv, NodeId norm) const {
        const Node& c = m_in.node(conv);
        const Node& n = m_in.node(norm);
        if (!isBatchNorm(n) || n.inputs.size() != 5 || n.inputs[0] != ValueRef{conv, 0} ||
            n.outputs[0] != c.outputs[0] || c.inputs.size() < 2)
            return std::nullopt;
        for (std::uint32_t k = 1; k < n.outputs.size(); ++k) {
            if (!m_consumers[norm.index][k].empty() || m_isOutput[norm.index][k])
                return std::nullopt; // Relay's running mean and variance, read
        }
        // Over the channels, in inference (the attributes read as its kernel reads them).
        geometry::Normalization attrs;
        if (geometry::readBatchNorm(specOf(m_in, n), &attrs) || attrs.axis != 1)
            return std::nullopt;
        const TensorType& weights = m_in.type(c.inputs[1]);
        if (weights.dtype != DType::Float32 || weights.shape.empty())
            return std::nullopt;
        bool constant = m_in.node(c.inputs[1].node).isConstant() &&
                        (c.inputs.size() < 3 || m_in.node(c.inputs[2].node).isConstant());
        for (std::size_t k = 1; k <= 4; ++k) {
            const TensorType& operand = m_in.type(n.inputs[k]);
            if (operand.dtype != DType::Float32 || operand.elementCount() != weights.shape[0])
                return std::nullopt;
            constant = constant && m_in.node(n.inputs[k].node).isConstant();
        }
        if (!constant && weights.elementCount() > c.outputs[0].elementCount())
            return std::nullopt;
        char text[64];
        std::snprintf(text, sizeof text, "bn:%.9g:%d", static_cast<double>(attrs.epsilon),
                      (attrs.scale ? 1 : 0) + (attrs.center ? 2 : 0));
        return text;
    }

    /// Whether `other`, added by `add` to a matrix product's output `type`, is a bias: a float32
    /// row of the output's last extent, broadcast over the rest.
    bool isBiasRow(const Node& add, ValueRef other, const TensorType& type) const {
        const TensorType& row = m_in.type(other);
        const auto rank = static_cast<std::int64_t>(type.shape.size());
        if (add.op->name == "nn.bias_add") {
            // Relay's bias_add adds along its axis, not by broadcasting from the right.
            const std::int64_t axis = add.attrs.getInt("axis", 1).value_or(1);
            if (axis != rank - 1 && axis != -1)
                return false;
        }
        return row.dtype == DType::Float32 && !row.shape.empty() && rank > 0 &&
               static_cast<std::int64_t>(row.shape.size()) <= rank &&
               row.shape.back() == type.shape.back() && row.elementCount() == type.shape.back();
    }

    /// A GELU written out whose input is `value`, all on `device`: its group's index.
    std::optional<int> geluOf(ValueRef value, DeviceId device) const {
        const auto& readers = m_consumers[value.node.index][value.output];
        if (readers.size() != 2)
            return std::nullopt;
        const int g = m_groupOf[readers[0].index];
        if (g < 0 || m_groupOf[readers[1].index] != g)
            return std::nullopt;
        const Group& gelu = m_groups[static_cast<std::size_t>(g)];
        if (!gelu.gelu || gelu.absorbed || m_in.node(gelu.head).inputs[0] != value ||
            m_device[gelu.head.index] != device)
            return std::nullopt;
        return g;
    }

    /// Whether `member` may join a group on `device`.
    bool joinable(NodeId member, DeviceId device) const {
        const Node& node = m_in.node(member);
        return m_groupOf[member.index] < 0 && m_device[member.index] == device &&
               !userPinned(member) && node.subgraphs.empty();
    }

    /// Adds the next step after `value` (the group's output so far) to the group.
    bool extend(Group& group, ValueRef& value) {
        if (m_isOutput[value.node.index][value.output])
            return false;
        const auto& readers = m_consumers[value.node.index][value.output];
        const DeviceId device = m_device[group.head.index];
        const TensorType& type = m_in.type(value);
        if (userPinned(group.head))
            return false;
        if (isBatchNorm(m_in.node(group.head))) {
            // oneDNN's batch normalisation applies a Relu after it, and nothing else.
            if (!group.members.empty() || readers.size() != 1 || !joinable(readers[0], device))
                return false;
            const Node& next = m_in.node(readers[0]);
            if (next.inputs[0] != value || next.outputs[0] != type ||
                unaryPostOp(m_in, next) != "relu:0")
                return false;
            group.members.push_back(readers[0]);
            group.postOps.push_back("relu:0");
            value = ValueRef{readers[0], 0};
            return true;
        }
        if (isConv(m_in.node(group.head)) && group.members.empty() && readers.size() == 1 &&
            joinable(readers[0], device)) {
            if (auto folded = foldableBatchNorm(group.head, readers[0])) {
                group.members.push_back(readers[0]);
                group.postOps.push_back(std::move(*folded));
                const Node& norm = m_in.node(readers[0]);
                for (std::size_t k = 1; k <= 4; ++k)
                    group.operands.push_back(norm.inputs[k]);
                value = ValueRef{readers[0], 0};
                return true;
            }
        }
        const bool matmul = isMatmul(m_in.node(group.head));
        if (matmul) {
            if (const auto g = geluOf(value, device)) {
                Group& gelu = m_groups[static_cast<std::size_t>(*g)];
                gelu.absorbed = true;
                group.members.push_back(gelu.head);
                for (const NodeId member : gelu.members)
                    group.members.push_back(member);
                group.postOps.push_back("gelu_erf");
                value = ValueRef{group.members.back(), 0};
                return true;
            }
        }
        if (readers.size() == 1 && joinable(readers[0], device)) {
            const Node& next = m_in.node(readers[0]);
            // A matrix product's bias: the first step, where it has none of its own, and where
            // the output's last axis is the product's columns (not a vector B's squeezed one).
            const Node& head = m_in.node(group.head);
            if (matmul && group.members.empty() && head.inputs.size() == 2 &&
                m_in.type(head.inputs[1]).rank() >= 2 && isBinary(next, BinaryFn::Add) &&
                next.outputs[0] == type) {
                const ValueRef other = next.inputs[0] == value ? next.inputs[1] : next.inputs[0];
                if (other != value && isBiasRow(next, other, type) && m_in.type(other) != type) {
                    group.members.push_back(readers[0]);
                    group.postOps.push_back("bias");
                    group.operands.push_back(other);
                    value = ValueRef{readers[0], 0};
                    return true;
                }
            }
            if (next.inputs[0] == value && next.outputs[0] == type) {
                if (std::string op = unaryPostOp(m_in, next); !op.empty()) {
                    group.members.push_back(readers[0]);
                    group.postOps.push_back(std::move(op));
                    value = ValueRef{readers[0], 0};
                    return true;
                }
            }
            if (isBinary(next, BinaryFn::Add) && next.outputs[0] == type) {
                const ValueRef other = next.inputs[0] == value ? next.inputs[1] : next.inputs[0];
                if (other != value && m_in.type(other) == type) {
                    group.members.push_back(readers[0]);
                    group.postOps.push_back("add");
                    group.operands.push_back(other);
                    value = ValueRef{readers[0], 0};
                    return true;
                }
            }
            return false;
        }
        // SiLU: Sigmoid(x) and Mul(x, Sigmoid(x)), the sigmoid read by the product alone.
        if (readers.size() == 2) {
            for (int k = 0; k < 2; ++k) {
                const NodeId s = readers[static_cast<std::size_t>(k)];
                const NodeId m = readers[static_cast<std::size_t>(1 - k)];
                if (!joinable(s, device) || !joinable(m, device))
                    continue;
                const Node& sigmoid = m_in.node(s);
                const Node& mul = m_in.node(m);
                const ValueRef gate{s, 0};
                const bool isSigmoid = sigmoid.op->kernel.family == KernelFamily::Unary &&
                                       sigmoid.op->kernel.unary() == UnaryFn::Sigmoid &&
                                       sigmoid.outputs.size() == 1 && sigmoid.inputs[0] == value;
                if (!isSigmoid || !isBinary(mul, BinaryFn::Mul) || mul.outputs[0] != type ||
                    m_consumers[s.index][0].size() != 1 || m_isOutput[s.index][0])
                    continue;
                const bool reads = (mul.inputs[0] == value && mul.inputs[1] == gate) ||
                                   (mul.inputs[1] == value && mul.inputs[0] == gate);
                if (!reads)
                    continue;
                // Graph order: the product comes after the sigmoid.
                group.members.push_back(std::min(s, m));
                group.members.push_back(std::max(s, m));
                group.postOps.push_back("swish:1");
                value = ValueRef{m, 0};
                return true;
            }
        }
        return false;
    }

    ValueRef mapped(ValueRef value) const { return m_map[value.node.index][value.output]; }

    void emit(Node node, NodeId originIn, ValueRef replaces) {
        const std::size_t outputs = node.outputs.size();
        const NodeId made = m_out.addNode(std::move(node));
        m_newOrigin.push_back(m_origin[originIn.index]);
        m_newCarried.push_back(m_carried[originIn.index]);
        if (m_groupOf[replaces.node.index] >= 0) {
            m_map[replaces.node.index][0] = ValueRef{made, 0};
            return;
        }
        for (std::uint32_t k = 0; k < outputs; ++k)
            m_map[replaces.node.index][k] = ValueRef{made, k};
    }

    const Graph& m_in;
    const Graph& m_user;
    const std::vector<NodeId>& m_origin;
    const std::vector<DeviceId>& m_device;
    const std::vector<bool>& m_enabled;
    std::vector<std::vector<std::vector<NodeId>>> m_consumers;
    std::vector<std::vector<bool>> m_isOutput;
    std::vector<int> m_groupOf;
    std::vector<Group> m_groups;
    Graph m_out;
    std::vector<std::vector<ValueRef>> m_map;
    std::vector<NodeId> m_newOrigin;
    const std::vector<NodeId>& m_carried;
    std::vector<NodeId> m_newCarried;
    std::map<std::int32_t, FusedCounts> m_fusedByDevice;
    std::map<std::int32_t, int> m_normsByDevice;
    std::map<std::int32_t, int> m_gelusByDevice;
};

// ---- transpose elimination ----------------------------------------------------------------------

/// A Transpose that reads a Transpose on the same CPU device reads the first one's input with
/// the two permutations composed; where the composition is the identity, its readers read that
/// input and it is gone. A transpose nothing reads any more is gone too. That is where the
/// channels-last pass's layout changes meet the model's own transposes (ConvNeXt moves to
/// channels-last for each LayerNorm and back: with its convolutions NHWC, both cancel).
/// Never a node the user pinned; a graph output stays.
class TransposeElimination {
    struct MatmulViews {
        std::array<ValueRef, 2> inputs; ///< what the product reads
        std::array<Dims, 3> perms;      ///< per operand and the output: a view's permutation
        TensorType output;              ///< with an output view: the layout it writes
    };

public:
    /// `physical`: per device, the device that runs it, asked whether a matrix product keeps its
    /// speed with strided views (none: no views).
    TransposeElimination(const Graph& graph, const Graph& user, const std::vector<NodeId>& origin,
                         const std::vector<NodeId>& carried, const std::vector<bool>& enabled,
                         const std::vector<Device*>& physical)
        : m_in(graph), m_user(user), m_origin(origin), m_carried(carried), m_enabled(enabled),
          m_physical(physical) {}

    /// Finds what goes; false when nothing does.
    bool find() {
        const std::size_t n = m_in.size();
        m_alias.assign(n, std::nullopt);
        m_composed.assign(n, std::nullopt);
        m_isOutput.assign(n, false);
        for (const GraphOutput& output : m_in.outputs())
            m_isOutput[output.value.node.index] = true;
        for (std::uint32_t i = 0; i < n; ++i) {
            const NodeId id(i);
            const auto own = permOf(id);
            if (!own || userPinned(id))
                continue;
            const ValueRef source = resolved(m_in.node(id).inputs[0]);
            const NodeId first = source.node;
            const auto before = effective(first);
            if (!before || m_in.node(first).pin.device != m_in.node(id).pin.device)
                continue;
            // y = T2(T1(x)): y.shape[k] = x.shape[p1[p2[k]]].
            Dims composed(own->size());
            for (std::size_t k = 0; k < own->size(); ++k)
                composed[k] = before->second[static_cast<std::size_t>((*own)[k])];
            bool identity = true;
            for (std::size_t k = 0; k < composed.size(); ++k)
                identity = identity && composed[k] == static_cast<std::int64_t>(k);
            if (identity && !m_isOutput[i]) {
                m_alias[i] = before->first;
                ++m_cancelled[m_in.node(id).pin.device.index];
            } else {
                m_composed[i] = std::pair{before->first, composed};
            }
        }
        findMatmulViews();
        // What is left unread goes, from the end back.
        std::vector<int> readers(n, 0);
        for (std::uint32_t i = 0; i < n; ++i) {
            if (m_alias[i])
                continue;
            for (const ValueRef input : inputsOf(NodeId(i)))
                ++readers[input.node.index];
        }
        m_dead.assign(n, false);
        for (std::uint32_t i = static_cast<std::uint32_t>(n); i-- > 0;) {
            const NodeId id(i);
            if (m_alias[i] || readers[i] > 0 || m_isOutput[i] || !permOf(id) || userPinned(id))
                continue;
            m_dead[i] = true;
            ++m_removed[m_in.node(id).pin.device.index];
            for (const ValueRef input : inputsOf(id))
                --readers[input.node.index];
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            if (m_alias[i] || m_dead[i] || m_composed[i] || m_views[i])
                return true;
        }
        return false;
    }

    /// A matrix product (ONNX MatMul) reads a transposed operand as a strided view of the
    /// transpose's input, and writes its output as a strided view into the layout of the one
    /// transpose that reads it: oneDNN's matmul takes any strides at the same speed. That is
    /// where a transformer's attention moves heads around ([B,T,H,D] <-> [B,H,T,D], K^T).
    void findMatmulViews() {
        const std::size_t n = m_in.size();
        m_views.assign(n, std::nullopt);
        std::vector<std::vector<NodeId>> readers(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            for (const ValueRef input : m_in.nodes()[i].inputs)
                readers[input.node.index].push_back(NodeId(i));
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            const NodeId id(i);
            const Node& node = m_in.node(id);
            const DeviceId device = node.pin.device;
            if (node.op->name != "MatMul" || node.op->dialect != OpDialect::Onnx ||
                node.inputs.size() != 2 || node.outputs.size() != 1 ||
                node.outputs[0].dtype != DType::Float32 || node.outputs[0].rank() < 2 ||
                userPinned(id) || !device.valid() ||
                static_cast<std::size_t>(device.index) >= m_enabled.size() ||
                !m_enabled[static_cast<std::size_t>(device.index)] || !postOpsOf(node).empty() ||
                hasViews(node))
                continue;
            MatmulViews views;
            bool any = false;
            for (std::size_t k = 0; k < 2; ++k) {
                views.inputs[k] = resolved(node.inputs[k]);
                const auto before = effective(views.inputs[k].node);
                if (!before || m_in.node(views.inputs[k].node).pin.device != device ||
                    before->second.size() < 2)
                    continue;
                views.inputs[k] = before->first;
                views.perms[k] = before->second;
                any = true;
            }
            const auto& out = readers[i];
            NodeId after;
            if (out.size() == 1 && !m_isOutput[i]) {
                const auto perm = permOf(out[0]);
                if (perm && !userPinned(out[0]) && !m_isOutput[out[0].index] &&
                    !m_alias[out[0].index] && !m_composed[out[0].index] &&
                    m_in.node(out[0]).pin.device == device) {
                    after = out[0];
                    views.perms[2] = *perm;
                    views.output = m_in.node(after).outputs[0];
                    any = true;
                }
            }
            if (!any || !keepsSpeed(node, views))
                continue;
            if (after.valid()) {
                m_alias[after.index] = ValueRef{id, 0};
                ++m_viewed[device.index];
            }
            for (std::size_t k = 0; k < 2; ++k)
                m_viewed[device.index] += views.perms[k].empty() ? 0 : 1;
            m_views[i] = std::move(views);
        }
    }

    /// Whether the device that runs `node` keeps its speed reading and writing `views`.
    bool keepsSpeed(const Node& node, const MatmulViews& views) const {
        const DeviceId device = node.pin.device;
        if (static_cast<std::size_t>(device.index) >= m_physical.size() ||
            !m_physical[static_cast<std::size_t>(device.index)])
            return false;
        Node viewed = node;
        viewed.inputs = {views.inputs[0], views.inputs[1]};
        for (std::size_t k = 0; k < 3; ++k) {
            if (!views.perms[k].empty())
                viewed.attrs.set(kViewAttrs[k], views.perms[k]);
        }
        if (!views.perms[2].empty())
            viewed.outputs = {views.output};
        return m_physical[static_cast<std::size_t>(device.index)]->takesViews(specOf(m_in, viewed));
    }

    void rewrite() {
        m_out = emptyLike(m_in);
        m_map.resize(m_in.size());
        for (std::uint32_t i = 0; i < m_in.size(); ++i) {
            if (m_alias[i] || m_dead[i])
                continue;
            Node node = m_in.nodes()[i];
            node.inputs = inputsOf(NodeId(i));
            for (ValueRef& input : node.inputs)
                input = m_map[input.node.index][input.output];
            if (m_composed[i])
                node.attrs.set(std::string(node.attrs.has("axes") ? "axes" : "perm"),
                               m_composed[i]->second);
            if (m_views[i]) {
                for (std::size_t k = 0; k < 3; ++k) {
                    if (!m_views[i]->perms[k].empty())
                        node.attrs.set(kViewAttrs[k], m_views[i]->perms[k]);
                }
                if (!m_views[i]->perms[2].empty())
                    node.outputs = {m_views[i]->output};
            }
            const std::size_t outputs = node.outputs.size();
            const NodeId made = m_out.addNode(std::move(node));
            m_newOrigin.push_back(m_origin[i]);
            m_newCarried.push_back(m_carried[i]);
            for (std::uint32_t k = 0; k < outputs; ++k)
                m_map[i].push_back(ValueRef{made, k});
        }
        for (const GraphOutput& output : m_in.outputs()) {
            const ValueRef value = resolved(output.value);
            m_out.addOutput(
                GraphOutput{m_map[value.node.index][value.output], output.device, output.name});
        }
    }

    Graph takeGraph() { return std::move(m_out); }
    std::vector<NodeId> takeOrigin() { return std::move(m_newOrigin); }
    std::vector<NodeId> takeCarried() { return std::move(m_newCarried); }
    /// Per device: transposes that cancelled another, and ones left unread.
    const std::map<std::int32_t, int>& cancelled() const { return m_cancelled; }
    /// Per device: transposes matrix products read or write as strided views.
    const std::map<std::int32_t, int>& viewed() const { return m_viewed; }
    const std::map<std::int32_t, int>& removed() const { return m_removed; }

private:
    /// A Transpose's permutation, when it may take part: one input, on an enabled device.
    std::optional<Dims> permOf(NodeId id) const {
        const Node& node = m_in.node(id);
        if (node.op->kernel.family != KernelFamily::Transpose || node.inputs.size() != 1 ||
            node.outputs.size() != 1 || !node.subgraphs.empty())
            return std::nullopt;
        const DeviceId device = node.pin.device;
        if (!device.valid() || static_cast<std::size_t>(device.index) >= m_enabled.size() ||
            !m_enabled[static_cast<std::size_t>(device.index)])
            return std::nullopt;
        KernelSpec spec;
        spec.node = &node;
        spec.inputs = {m_in.type(node.inputs[0])};
        Dims perm;
        if (geometry::readTransposePerm(spec, &perm))
            return std::nullopt;
        return perm;
    }

    /// A transpose as it now computes: (the value it reads, its permutation).
    std::optional<std::pair<ValueRef, Dims>> effective(NodeId id) const {
        if (m_alias[id.index])
            return std::nullopt;
        if (m_composed[id.index])
            return m_composed[id.index];
        const auto perm = permOf(id);
        if (!perm)
            return std::nullopt;
        return std::pair{resolved(m_in.node(id).inputs[0]), *perm};
    }

    /// The value `value` now is: through every cancelled pair.
    ValueRef resolved(ValueRef value) const {
        while (m_alias[value.node.index])
            value = *m_alias[value.node.index];
        return value;
    }

    std::vector<ValueRef> inputsOf(NodeId id) const {
        if (m_composed[id.index])
            return {m_composed[id.index]->first};
        if (!m_views.empty() && m_views[id.index])
            return {m_views[id.index]->inputs[0], m_views[id.index]->inputs[1]};
        std::vector<ValueRef> inputs = m_in.node(id).inputs;
        for (ValueRef& input : inputs)
            input = resolved(input);
        return inputs;
    }

    bool userPinned(NodeId id) const {
        const NodeId user = m_origin[id.index];
        return user.valid() && user.index < m_user.size() &&
               m_user.node(user).pin.kind != PinKind::None;
    }

    const Graph& m_in;
    const Graph& m_user;
    const std::vector<NodeId>& m_origin;
    const std::vector<NodeId>& m_carried;
    const std::vector<bool>& m_enabled;
    const std::vector<Device*>& m_physical;
    std::vector<std::optional<ValueRef>> m_alias; ///< a cancelled transpose: the value it is
    std::vector<std::optional<std::pair<ValueRef, Dims>>> m_composed;
    std::vector<std::optional<MatmulViews>> m_views;
    std::map<std::int32_t, int> m_viewed; ///< per device: transposes read or written as views
    std::vector<bool> m_dead, m_isOutput;
    std::map<std::int32_t, int> m_cancelled, m_removed;
    Graph m_out;
    std::vector<std::vector<ValueRef>> m_map;
    std::vector<NodeId> m_newOrigin, m_newCarried;
};

// ---- weight packing -----------------------------------------------------------------------------

constexpr const char* kPackedAttr = "placer.packed";

/// A constant that one matrix product alone reads, on a device whose kernel wants it in another
/// layout of the same size, is loaded in that layout (Device::loadPacked) rather than copied,
/// and the product reads it so: the constant and its reader carry the layout. Constants a user
/// pinned, graph outputs and constants copied between devices keep their own layout. Per device:
/// how many were packed.
std::map<std::int32_t, int> packWeights(Graph& graph, const std::vector<Device*>& physical,
                                        const std::vector<bool>& enabled,
                                        const std::vector<bool>& keep) {
    std::vector<int> readers(graph.size(), 0);
    for (const Node& node : graph.nodes()) {
        for (const ValueRef input : node.inputs)
            ++readers[input.node.index];
    }
    for (const GraphOutput& output : graph.outputs())
        ++readers[output.value.node.index];
    std::map<std::int32_t, int> packed;
    for (std::uint32_t j = 0; j < graph.size(); ++j) {
        const Node& node = graph.nodes()[j];
        const DeviceId device = node.pin.device;
        if (node.op->kernel.family != KernelFamily::Matmul || node.inputs.size() < 2 ||
            hasViews(node) || !device.valid() ||
            static_cast<std::size_t>(device.index) >= physical.size() ||
            static_cast<std::size_t>(device.index) >= enabled.size() ||
            !enabled[static_cast<std::size_t>(device.index)] || !physical[device.index])
            continue;
        const ValueRef weights = node.inputs[1];
        const Node& constant = graph.node(weights.node);
        if (!constant.isConstant() || !constant.data || constant.pin.kind != PinKind::None ||
            readers[weights.node.index] != 1 || keep[weights.node.index] ||
            node.inputs[0] == weights)
            continue;
        const std::string layout = physical[device.index]->packedLayout(specOf(graph, node), 1);
        if (layout.empty())
            continue;
        graph.node(NodeId(j)).attrs.set(kPackedAttr, layout);
        Node& held = graph.node(weights.node);
        held.attrs.set(kPackedAttr, layout);
        held.pin = Pin{PinKind::Plain, device, "optimizer"}; // loaded where its reader runs
        ++packed[device.index];
    }
    return packed;
}

} // namespace

std::optional<Dims> matmulViewOf(const Node& node, int which) {
    if (which < 0 || which > 2 || !node.attrs.has(kViewAttrs[static_cast<std::size_t>(which)]))
        return std::nullopt;
    return node.attrs.getInts(kViewAttrs[static_cast<std::size_t>(which)], {});
}

std::string packedLayoutOf(const Node& node) {
    return node.attrs.getString(kPackedAttr, "").value_or("");
}

std::string postOpsOf(const Node& node) {
    return node.attrs.getString(kPostOpsAttr, "").value_or("");
}

bool isChannelsLast(const Node& node) {
    return node.attrs.getString(kLayoutAttr, "").value_or("") == "NHWC";
}

OptimizedGraph unoptimized(const Graph& graph, const Plan& plan) {
    OptimizedGraph result;
    if (plan.sharded) {
        // A split plan runs its sharded graph, whose nodes name the user's.
        result.graph = plan.sharded->graph;
        result.plan = *plan.sharded->plan;
        result.origin = plan.sharded->origin;
        result.region = plan.sharded->region;
        result.shard = plan.sharded->shard;
    } else {
        result.graph = graph;
        result.plan = plan;
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            result.origin.push_back(NodeId(i));
    }
    result.fusedInto.assign(graph.size(), NodeId());
    return result;
}

Result<OptimizedGraph> optimizeGraph(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                     const PlanOptions& options,
                                     const std::vector<bool>& cpuDevices,
                                     const OptimizeOptions& passes,
                                     const std::vector<Device*>& physical) {
    // The passes rewrite the graph that runs: the sharded one when the plan splits.
    const OptimizedGraph start = unoptimized(graph, plan);
    const Graph& base = start.graph;
    const Plan& basePlan = start.plan;
    if (basePlan.devices.size() != base.size() || !OpRegistry::global().find("Transpose"))
        return start;
    OptimizedGraph result;
    // Channels-last also copies every node held on its device, which the fusion pass reads.
    const std::vector<bool> none(cpuDevices.size(), false);
    ChannelsLast pass(base, basePlan, passes.channelsLast ? cpuDevices : none);
    pass.run();
    Graph current = pass.takeGraph();
    // Per node of `current`: the node of `base` it comes from, and the user's node.
    std::vector<NodeId> fromBase = pass.takeOrigin();
    std::vector<NodeId> origin(fromBase.size());
    for (std::size_t i = 0; i < fromBase.size(); ++i)
        origin[i] = fromBase[i].valid() ? start.origin[fromBase[i].index] : NodeId();
    bool changed = pass.changed();
    result.insertedNodes = pass.inserted();
    for (const auto& [device, counts] : pass.converted()) {
        if (!pass.changed())
            break;
        const auto changes = pass.changes().find(device);
        result.notes.push_back(
            "channels-last (NHWC) on " + devices[DeviceId(device)].name + ": " +
            std::to_string(counts.first) + " of " + std::to_string(counts.second) +
            " convolutions, " +
            std::to_string(changes == pass.changes().end() ? 0 : changes->second) +
            " layout changes" +
            (pass.shuffles().contains(device)
                 ? ", " + std::to_string(pass.shuffles().at(device)) + " channel shuffles in NHWC"
                 : std::string()));
    }
    result.fusedInto.assign(graph.size(), NodeId());
    if (passes.transposes) {
        TransposeElimination elimination(current, graph, origin, fromBase, cpuDevices, physical);
        if (elimination.find()) {
            elimination.rewrite();
            current = elimination.takeGraph();
            origin = elimination.takeOrigin();
            fromBase = elimination.takeCarried();
            changed = true;
            std::map<std::int32_t, std::pair<int, int>> counts;
            for (const auto& [device, count] : elimination.cancelled())
                counts[device].first = count;
            for (const auto& [device, count] : elimination.removed())
                counts[device].second = count;
            for (const auto& [device, count] : elimination.viewed())
                result.notes.push_back("strided views on " + devices[DeviceId(device)].name + ": " +
                                       std::to_string(count) +
                                       " transposes read or written by matrix products in place");
            for (const auto& [device, count] : counts)
                result.notes.push_back(
                    "transpose elimination on " + devices[DeviceId(device)].name + ": " +
                    std::to_string(count.first) + " transposes cancelled the one before them, " +
                    std::to_string(count.second) + " were no longer read");
        }
    }
    if (passes.fusion) {
        std::vector<DeviceId> held(current.size());
        for (std::uint32_t i = 0; i < current.size(); ++i)
            held[i] = current.nodes()[i].pin.device;
        PostOpFusion fusion(current, graph, origin, fromBase, held, cpuDevices);
        if (fusion.find()) {
            for (const auto& [member, head] : fusion.fusedInto())
                result.fusedInto[member.index] = head;
            fusion.rewrite();
            current = fusion.takeGraph();
            origin = fusion.takeOrigin();
            fromBase = fusion.takeCarried();
            changed = true;
            for (const auto& [device, counts] : fusion.fusedByDevice()) {
                std::string heads;
                if (counts.convolutions > 0)
                    heads = std::to_string(counts.convolutions) + " convolutions";
                if (counts.products > 0)
                    heads += (heads.empty() ? "" : " and ") + std::to_string(counts.products) +
                             " matrix products";
                if (counts.normalisations > 0)
                    heads += (heads.empty() ? "" : " and ") +
                             std::to_string(counts.normalisations) + " batch normalisations";
                result.notes.push_back("post-op fusion on " + devices[DeviceId(device)].name +
                                       ": " + heads + " took " + std::to_string(counts.ops) +
                                       " element-wise ops");
            }
            for (const auto& [device, count] : fusion.gelusByDevice())
                result.notes.push_back("GELU on " + devices[DeviceId(device)].name + ": " +
                                       std::to_string(count) +
                                       " written out as five ops each, now one kernel each");
            for (const auto& [device, count] : fusion.normsByDevice())
                result.notes.push_back("layer normalisation on " + devices[DeviceId(device)].name +
                                       ": " + std::to_string(count) +
                                       " written out as nine ops each, now one kernel each");
        }
    }
    // A constant the first plan copies on every run (auto mode streams those a device's memory
    // cannot keep) stays where it was, copied the same way.
    std::map<std::uint32_t, std::vector<DeviceId>> copiedTo;
    for (const CopyPlan& copy : basePlan.copies) {
        if (!copy.isExplicit && base.node(copy.value.node).isConstant())
            copiedTo[copy.value.node.index].push_back(copy.to);
    }
    if (passes.packWeights && !physical.empty()) {
        std::vector<bool> copied(current.size(), false);
        for (std::uint32_t j = 0; j < current.size(); ++j)
            copied[j] = fromBase[j].valid() && copiedTo.contains(fromBase[j].index);
        for (const auto& [device, count] : packWeights(current, physical, cpuDevices, copied)) {
            changed = true;
            result.notes.push_back("weight packing on " + devices[DeviceId(device)].name + ": " +
                                   std::to_string(count) +
                                   " matrix products read their weights in oneDNN's blocked "
                                   "layout, written so at load");
        }
    }
    if (!changed)
        return start;
    result.graph = std::move(current);
    result.origin = std::move(origin);
    if (!start.region.empty()) {
        for (const NodeId from : fromBase) {
            result.region.push_back(from.valid() ? start.region[from.index] : -1);
            result.shard.push_back(from.valid() ? start.shard[from.index] : -1);
        }
    }
    // Plan the rewritten graph with every compute node held where the first plan put it.
    PlanOptions again = options;
    again.mode = PlanMode::Demand;
    again.rules.clear();
    again.fallbackDevice.clear();
    again.splits.clear(); // already sharded
    for (std::uint32_t j = 0; j < result.graph.size() && !copiedTo.empty(); ++j) {
        Node& node = result.graph.node(NodeId(j));
        const NodeId from = fromBase[j];
        const auto copied = from.valid() ? copiedTo.find(from.index) : copiedTo.end();
        if (!node.isConstant() || copied == copiedTo.end())
            continue;
        if (node.pin.kind == PinKind::None)
            node.pin = Pin{PinKind::Plain, basePlan.devices[from.index], "optimizer"};
        for (const DeviceId to : copied->second)
            again.copiedConstants.emplace_back(node.name, devices[to].name);
    }
    result.plan = planDevices(result.graph, devices, again);
    for (const Conflict& conflict : result.plan.conflicts) {
        if (conflict.kind != ConflictKind::MemoryCapacity)
            return SourceError{"", 0, 0,
                               "the optimised graph cannot be planned as the original was: " +
                                   conflict.message};
    }
    for (std::uint32_t i = 0; i < result.graph.size(); ++i) {
        const NodeId from = fromBase[i];
        if (!from.valid() || result.graph.nodes()[i].role() != OpRole::Compute)
            continue;
        if (result.plan.devices[i] != basePlan.devices[from.index])
            return SourceError{"", 0, 0,
                               "the optimised graph moved node '" + result.graph.nodes()[i].name +
                                   "' to another device"};
    }
    return result;
}

std::vector<NodeId> fusedGroups(const Graph& graph, const std::vector<DeviceId>& devices,
                                const std::vector<bool>& cpuDevices) {
    std::vector<NodeId> fusedInto(graph.size());
    if (devices.size() != graph.size())
        return fusedInto;
    std::vector<NodeId> self(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        self[i] = NodeId(i);
    PostOpFusion fusion(graph, graph, self, self, devices, cpuDevices);
    if (fusion.find()) {
        for (const auto& [member, head] : fusion.fusedInto())
            fusedInto[member.index] = head;
    }
    return fusedInto;
}

Result<OptimizedGraph> optimizeForDevices(const Graph& graph, const DeviceSet& devices,
                                          const Plan& plan, const PlanOptions& options,
                                          const std::vector<Device*>& mapping,
                                          const OptimizeOptions& optimize) {
    std::vector<bool> channelsLast(static_cast<std::size_t>(devices.size()), false);
    for (std::size_t d = 0; d < channelsLast.size() && d < mapping.size(); ++d) {
        channelsLast[d] = mapping[d] && (mapping[d]->kind() == DeviceKind::Cpu ||
                                         mapping[d]->kind() == DeviceKind::VCpu);
    }
    return optimizeGraph(graph, devices, plan, options, channelsLast, optimize, mapping);
}

} // namespace placer
