// Channels-last (passes/ChannelsLast.h): rewriting each CPU device's convolutions and what
// follows them into NHWC, with a layout change wherever the model's NCHW is needed.
#include "passes/ChannelsLast.h"

#include "ir/OpRegistry.h"
#include "kernels/OpGeometry.h"
#include "passes/PassSupport.h"

#include <array>
#include <cstring>
#include <map>

namespace placer {

namespace {

using namespace passes;
using Dims = std::vector<std::int64_t>;
using Perm = std::array<std::int64_t, 4>;

constexpr const char* kChannelsLast = "channels-last";
constexpr Perm kToNhwc{0, 2, 3, 1}; ///< nhwc[k] = nchw[kToNhwc[k]]
constexpr Perm kToNchw{0, 3, 1, 2}; ///< nchw[k] = nhwc[kToNchw[k]]

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
    bool setsAttr = false;  ///< a kernel that reads KernelHints::channelsLast (conv, pooling, norm)
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

class NhwcRewrite {
public:
    NhwcRewrite(const Graph& graph, const PassContext& context)
        : m_in(graph), m_context(context), m_transpose(OpRegistry::global().find("Transpose")) {
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
    /// Per node of the rewritten graph: the node of the graph given it comes from.
    std::vector<NodeId> takeOrigin() { return std::move(m_origin); }
    bool changed() const { return m_inserted > 0 || m_anyConverted; }
    /// Per device: its "convolutions", those "converted", the "layout changes" inserted and the
    /// "channel shuffles" done in NHWC.
    const PassStatistics& statistics() const { return m_statistics; }

private:
    /// Where a node runs: every compute node is held on its device (the pass protocol).
    DeviceId deviceOf(NodeId node) const { return m_in.node(node).pin.device; }

    NodeId add(Node node, NodeId origin) {
        const NodeId id = m_out.addNode(std::move(node));
        m_origin.push_back(origin);
        return id;
    }

    ValueRef transpose(ValueRef src, const TensorType& type, const Perm& perm, DeviceId device,
                       const std::string& name) {
        Node node;
        node.name = m_out.uniqueName(name);
        node.op = m_transpose;
        node.inputs = {src};
        node.attrs.set("perm", Dims(perm.begin(), perm.end()));
        node.outputs = {TensorType{permuted(type.shape, perm), type.dtype}};
        // In a pipeline, the layout change belongs to its value's micro-batch: it is scheduled
        // with it, and a copy of it between stages is double-buffered (plan/MemoryPlanner.cpp).
        node.microBatch = m_out.node(src.node).microBatch;
        hold(node, device);
        ++m_inserted;
        m_statistics.add(kChannelsLast, device, "layout changes");
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
        const bool enabled = m_context.enabledOn(device) && !shapesFoundAtRun(m_in, node);
        NodeLayout layout = enabled ? layoutOf(m_in, node) : NodeLayout{};
        if (enabled && node.op->name == "Conv")
            m_statistics.add(kChannelsLast, device, "convolutions");
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
            copy.hints.channelsLast = true;
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
            m_statistics.add(kChannelsLast, device, "converted");
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
        if (first.op->name != "Reshape" || first.inputs.size() != 2 ||
            !m_context.enabledOn(device) || !hasLast(first.inputs[0], device) ||
            !m_in.node(first.inputs[1].node).isConstant())
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
        m_statistics.add(kChannelsLast, device, "channel shuffles");
        return true;
    }

    const Graph& m_in;
    const PassContext& m_context;
    const OpDef* m_transpose;
    Graph m_out;
    std::vector<NodeId> m_origin;
    static constexpr std::int32_t kAnyDevice = -1; ///< a permuted constant
    std::vector<std::vector<ValueRef>> m_plain;
    /// Per user value: its NHWC forms by device index (kAnyDevice for a constant's).
    std::vector<std::vector<std::map<std::int32_t, ValueRef>>> m_last;
    int m_inserted = 0;
    bool m_anyConverted = false;
    PassStatistics m_statistics;
    std::vector<std::vector<NodeId>> m_readers; ///< per node; an invalid id: a graph output
    std::vector<bool> m_done;                   ///< rewritten with an earlier node
};

} // namespace

bool ChannelsLast::run(PassState& state, const PassContext& context,
                       PassStatistics& statistics) const {
    NhwcRewrite pass(state.graph, context);
    pass.run();
    if (!pass.changed())
        return false;
    const std::vector<NodeId> from = pass.takeOrigin();
    adoptRewrite(state, pass.takeGraph(), from, pass.statistics(), statistics);
    return true;
}

std::vector<std::string> ChannelsLast::describe(const PassStatistics& statistics,
                                                const DeviceSet& devices) const {
    std::vector<std::string> sentences;
    for (const DeviceId device : statistics.devicesOf(kChannelsLast)) {
        const auto count = [&](const char* counter) {
            return std::to_string(statistics.get(kChannelsLast, device, counter));
        };
        const std::int64_t shuffles = statistics.get(kChannelsLast, device, "channel shuffles");
        sentences.push_back("channels-last (NHWC) on " + devices[device].name + ": " +
                            count("converted") + " of " + count("convolutions") +
                            " convolutions, " + count("layout changes") + " layout changes" +
                            (shuffles > 0
                                 ? ", " + std::to_string(shuffles) + " channel shuffles in NHWC"
                                 : std::string()));
    }
    return sentences;
}

} // namespace placer
