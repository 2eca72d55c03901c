// Post-op fusion (passes/PostOpFusion.h): finding the groups a CPU kernel computes at once,
// and rewriting each group as one node whose kernel applies the rest as post-ops.
#include "passes/PostOpFusion.h"

#include "ir/OpRegistry.h"
#include "kernels/OpGeometry.h"
#include "passes/PassSupport.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

namespace placer {

namespace {

using namespace passes;

constexpr const char* kPostOpFusion = "post-op fusion";

/// The unary functions oneDNN applies as a post-op of a convolution or a matrix product.
bool fusableUnary(UnaryFn fn) {
    switch (fn) {
    case UnaryFn::Relu:
    case UnaryFn::LeakyRelu:
    case UnaryFn::Clip:
    case UnaryFn::Sigmoid:
    case UnaryFn::Tanh:
    case UnaryFn::HardSwish:
    case UnaryFn::Elu:
    case UnaryFn::Gelu:
        return true;
    default:
        return false;
    }
}

/// The post-op a unary node is, with its parameters read as its own kernel reads them, or
/// nothing when it is none.
std::optional<PostOp> unaryPostOp(const Graph& graph, const Node& node) {
    if (node.op->kernel.family != KernelFamily::Unary || node.outputs.size() != 1 ||
        !fusableUnary(node.op->kernel.unary()))
        return std::nullopt;
    const KernelSpec spec = specOf(graph, node);
    for (std::size_t i = 1; i < spec.constantInputs.size(); ++i) {
        if (!spec.constantInputs[i])
            return std::nullopt; // Clip's bounds known only at run time
    }
    double a = 0, b = 0;
    if (geometry::readUnaryParameters(spec, &a, &b))
        return std::nullopt;
    const UnaryFn fn = node.op->kernel.unary();
    if (fn == UnaryFn::Clip && !(a <= b))
        return std::nullopt; // an empty range: the Clip kernel's own business
    if (fn == UnaryFn::Gelu &&
        node.attrs.getString("approximate", "none").value_or("none") != "none")
        return std::nullopt;
    PostOp op{PostOp::Kind::Unary, fn};
    op.alpha = a;
    op.beta = b;
    return op;
}

/// Convolutions and matrix products on CPU devices take the element-wise ops after them as
/// oneDNN post-ops: an activation (Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSwish, Elu, GELU,
/// the written-out GELU included), SiLU (x * Sigmoid(x)), and a residual Add of a tensor of the
/// output's shape, in a chain (Conv, Add, Relu); a matrix product also takes the Add of a bias
/// row first (MatMul, Add bias, GELU). A fused node is the head with the chain in its
/// KernelHints::postOps and the Adds' other operands as extra inputs at the end; it is named
/// after every node it computes ("conv+relu").
/// Only values no other node reads are fused, never across a device, never a node the user
/// pinned, never a graph output but the chain's last value.
class FusionGroups {
public:
    /// `origin`: per node of `graph`, the user's node; `carried`: a further per-node id the
    /// rewritten graph keeps alongside (the node of the sharded graph it comes from);
    /// `device`: per node of `graph`, the device that runs it.
    FusionGroups(const Graph& graph, const Graph& user, const std::vector<NodeId>& origin,
                 const std::vector<NodeId>& carried, const std::vector<DeviceId>& device,
                 const std::vector<bool>& enabled)
        : m_in(graph), m_user(user), m_origin(origin), m_device(device), m_enabled(enabled),
          m_carried(carried), m_readers(graph),
          m_haveGelu(OpRegistry::global().find("Gelu") != nullptr),
          m_haveLayerNorm(OpRegistry::global().find("LayerNormalization") != nullptr) {}

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
                m_statistics.add(kPostOpFusion, m_device[i], "gelus");
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
                m_statistics.add(kPostOpFusion, m_device[i], "layer norms");
            } else {
                for (ValueRef& input : fused.inputs)
                    input = mapped(input);
                for (const ValueRef operand : group.operands)
                    fused.inputs.push_back(mapped(operand));
                fused.hints.postOps = group.postOps;
                fused.outputs = {node.outputs[0]};
                m_statistics.add(kPostOpFusion, m_device[i],
                                 isConv(head)     ? "convolutions"
                                 : isMatmul(head) ? "matrix products"
                                                  : "batch normalisations");
                m_statistics.add(kPostOpFusion, m_device[i], "element-wise ops",
                                 static_cast<std::int64_t>(group.members.size()));
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
    /// Per device: "convolutions", "matrix products" and "batch normalisations" that took
    /// post-ops, the "element-wise ops" they took, and "gelus" and "layer norms" written out
    /// that became one kernel each.
    const PassStatistics& statistics() const { return m_statistics; }

private:
    struct Group {
        NodeId head;
        std::vector<NodeId> members;    ///< in graph order, the chain after the head
        std::vector<PostOp> postOps;    ///< what each step applies
        std::vector<ValueRef> operands; ///< the residual Adds' other operands
        bool layerNorm = false;         ///< a layer normalisation: operands are gamma, beta
        bool gelu = false;              ///< a GELU written out: one op on the head's input
        bool absorbed = false; ///< a GELU a matrix product took as a post-op: not a group now
        double epsilon = 0;
    };

    /// The one node that reads `value`, when it is not a graph output and may join a group on
    /// `device`; else an invalid id.
    NodeId onlyReader(ValueRef value, DeviceId device) const {
        const auto& readers = m_readers.of(value);
        if (readers.size() != 1 || m_readers.isOutput(value) || !joinable(readers[0], device))
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
            !m_haveLayerNorm)
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
        const auto& readers = m_readers.of(ValueRef{sub, 0});
        if (readers.size() != 2 || m_readers.isOutput(ValueRef{sub, 0}))
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
        const bool divides = isBinary(scale, BinaryFn::Div);
        if (!divides && !isBinary(scale, BinaryFn::Mul))
            return false; // first: every node of the graph is asked, most are neither
        if (!enabledOn(first) || userPinned(first) || !m_haveGelu)
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
        return !shapesFoundAtRun(m_in, m_in.node(id)) && device.valid() &&
               static_cast<std::size_t>(device.index) < m_enabled.size() &&
               m_enabled[static_cast<std::size_t>(device.index)];
    }

    /// Whether the user pinned the node this one computes.
    bool userPinned(NodeId id) const {
        const NodeId user = m_origin[id.index];
        if (!user.valid() || user.index >= m_user.size())
            return false;
        const Pin& pin = m_user.node(user).pin;
        return pin.kind != PinKind::None && !pin.hold;
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
               node.subgraphs.empty() && enabledOn(id) && node.hints.postOps.empty() &&
               !node.hints.hasViews();
    }

    /// When `norm` is a batch normalisation (inference) of convolution `conv`'s output over its
    /// channels, that the convolution can take folded into its weights: its post-op. Only
    /// where refolding costs less than normalising: everything constant (folded once), or
    /// weights no larger than the output (folded every run).
    std::optional<PostOp> foldableBatchNorm(NodeId conv, NodeId norm) const {
        const Node& c = m_in.node(conv);
        const Node& n = m_in.node(norm);
        if (!isBatchNorm(n) || n.inputs.size() != 5 || n.inputs[0] != ValueRef{conv, 0} ||
            n.outputs[0] != c.outputs[0] || c.inputs.size() < 2)
            return std::nullopt;
        for (std::uint32_t k = 1; k < n.outputs.size(); ++k) {
            if (!m_readers.of(ValueRef{norm, k}).empty() || m_readers.isOutput(ValueRef{norm, k}))
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
        PostOp folded;
        folded.kind = PostOp::Kind::BatchNorm;
        folded.alpha = static_cast<double>(attrs.epsilon);
        folded.scaled = attrs.scale;
        folded.shifted = attrs.center;
        return folded;
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
        const auto& readers = m_readers.of(value);
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
        if (m_readers.isOutput(value))
            return false;
        const auto& readers = m_readers.of(value);
        const DeviceId device = m_device[group.head.index];
        const TensorType& type = m_in.type(value);
        if (userPinned(group.head))
            return false;
        if (isBatchNorm(m_in.node(group.head))) {
            // oneDNN's batch normalisation applies a Relu after it, and nothing else.
            if (!group.members.empty() || readers.size() != 1 || !joinable(readers[0], device))
                return false;
            const Node& next = m_in.node(readers[0]);
            const std::optional<PostOp> relu = unaryPostOp(m_in, next);
            if (next.inputs[0] != value || next.outputs[0] != type || !relu ||
                relu->fn != UnaryFn::Relu)
                return false;
            group.members.push_back(readers[0]);
            group.postOps.push_back(*relu);
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
                group.postOps.push_back(PostOp{PostOp::Kind::Unary, UnaryFn::Gelu});
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
                    group.postOps.push_back(PostOp{PostOp::Kind::Bias});
                    group.operands.push_back(other);
                    value = ValueRef{readers[0], 0};
                    return true;
                }
            }
            if (next.inputs[0] == value && next.outputs[0] == type) {
                if (const std::optional<PostOp> op = unaryPostOp(m_in, next)) {
                    group.members.push_back(readers[0]);
                    group.postOps.push_back(*op);
                    value = ValueRef{readers[0], 0};
                    return true;
                }
            }
            if (isBinary(next, BinaryFn::Add) && next.outputs[0] == type) {
                const ValueRef other = next.inputs[0] == value ? next.inputs[1] : next.inputs[0];
                if (other != value && m_in.type(other) == type) {
                    group.members.push_back(readers[0]);
                    group.postOps.push_back(PostOp{PostOp::Kind::Add});
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
                    m_readers.of(ValueRef{s, 0}).size() != 1 || m_readers.isOutput(ValueRef{s, 0}))
                    continue;
                const bool reads = (mul.inputs[0] == value && mul.inputs[1] == gate) ||
                                   (mul.inputs[1] == value && mul.inputs[0] == gate);
                if (!reads)
                    continue;
                // Graph order: the product comes after the sigmoid.
                group.members.push_back(std::min(s, m));
                group.members.push_back(std::max(s, m));
                group.postOps.push_back(PostOp{PostOp::Kind::Swish});
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
    const std::vector<NodeId>& m_carried;
    ValueReaders m_readers;
    bool m_haveGelu; ///< the fused ops these patterns become are registered
    bool m_haveLayerNorm;
    std::vector<int> m_groupOf;
    std::vector<Group> m_groups;
    Graph m_out;
    std::vector<std::vector<ValueRef>> m_map;
    std::vector<NodeId> m_newOrigin;
    std::vector<NodeId> m_newCarried;
    PassStatistics m_statistics;
};

} // namespace

bool PostOpFusion::run(PassState& state, const PassContext& context,
                       PassStatistics& statistics) const {
    std::vector<DeviceId> held(state.graph.size());
    for (std::uint32_t i = 0; i < state.graph.size(); ++i)
        held[i] = state.graph.nodes()[i].pin.device;
    FusionGroups fusion(state.graph, *context.user, state.origin, state.carried, held,
                        context.enabled);
    if (!fusion.find())
        return false;
    for (const auto& [member, head] : fusion.fusedInto())
        state.fusedInto[member.index] = head;
    fusion.rewrite();
    state.graph = fusion.takeGraph();
    state.origin = fusion.takeOrigin();
    state.carried = fusion.takeCarried();
    for (const PassCounter& counter : fusion.statistics().counters())
        statistics.add(counter.pass, counter.device, counter.counter, counter.value);
    return true;
}

std::vector<std::string> PostOpFusion::describe(const PassStatistics& statistics,
                                                const DeviceSet& devices) const {
    std::vector<std::string> sentences;
    const auto count = [&](DeviceId device, const char* counter) {
        return statistics.get(kPostOpFusion, device, counter);
    };
    for (const DeviceId device : statistics.devicesOf(kPostOpFusion)) {
        std::string heads;
        for (const char* kind : {"convolutions", "matrix products", "batch normalisations"}) {
            if (const std::int64_t n = count(device, kind); n > 0)
                heads += (heads.empty() ? "" : " and ") + std::to_string(n) + " " + kind;
        }
        const std::string& name = devices[device].name;
        if (!heads.empty())
            sentences.push_back("post-op fusion on " + name + ": " + heads + " took " +
                                std::to_string(count(device, "element-wise ops")) +
                                " element-wise ops");
    }
    for (const DeviceId device : statistics.devicesOf(kPostOpFusion)) {
        if (const std::int64_t n = count(device, "gelus"); n > 0)
            sentences.push_back("GELU on " + devices[device].name + ": " + std::to_string(n) +
                                " written out as five ops each, now one kernel each");
    }
    for (const DeviceId device : statistics.devicesOf(kPostOpFusion)) {
        if (const std::int64_t n = count(device, "layer norms"); n > 0)
            sentences.push_back("layer normalisation on " + devices[device].name + ": " +
                                std::to_string(n) +
                                " written out as nine ops each, now one kernel each");
    }
    return sentences;
}

std::vector<NodeId> fusedGroups(const Graph& graph, const std::vector<DeviceId>& devices,
                                const std::vector<bool>& cpuDevices) {
    std::vector<NodeId> fusedInto(graph.size());
    if (devices.size() != graph.size())
        return fusedInto;
    // Nothing on a device that fuses: nothing to find (a GPU-only plan of a large graph would
    // otherwise pay for the readers of every value on every re-plan).
    const bool anyFusing = std::any_of(devices.begin(), devices.end(), [&](DeviceId d) {
        return d.valid() && static_cast<std::size_t>(d.index) < cpuDevices.size() &&
               cpuDevices[static_cast<std::size_t>(d.index)];
    });
    if (!anyFusing)
        return fusedInto;
    std::vector<NodeId> self(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        self[i] = NodeId(i);
    FusionGroups fusion(graph, graph, self, self, devices, cpuDevices);
    if (fusion.find()) {
        for (const auto& [member, head] : fusion.fusedInto())
            fusedInto[member.index] = head;
    }
    return fusedInto;
}

} // namespace placer
