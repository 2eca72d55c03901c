// Transpose elimination (passes/TransposeElimination.h): composing transposes on one device,
// dropping the ones that cancel or that nothing reads, and letting matrix products read and
// write through strided views.
#include "passes/TransposeElimination.h"

#include "device/Device.h"
#include "kernels/OpGeometry.h"
#include "passes/PassSupport.h"

#include <array>
#include <optional>

namespace placer {

namespace {

using namespace passes;
using Dims = std::vector<std::int64_t>;

constexpr const char* kTransposeElimination = "transpose elimination";

/// A Transpose that reads a Transpose on the same CPU device reads the first one's input with
/// the two permutations composed; where the composition is the identity, its readers read that
/// input and it is gone. A transpose nothing reads any more is gone too. That is where the
/// channels-last pass's layout changes meet the model's own transposes (ConvNeXt moves to
/// channels-last for each LayerNorm and back: with its convolutions NHWC, both cancel).
/// Never a node the user pinned; a graph output stays.
class TransposeRewrite {
    struct MatmulViews {
        std::array<ValueRef, 2> inputs; ///< what the product reads
        std::array<Dims, 3> perms;      ///< per operand and the output: a view's permutation
        TensorType output;              ///< with an output view: the layout it writes
    };

public:
    /// `physical`: per device, the device that runs it, asked whether a matrix product keeps its
    /// speed with strided views (none: no views).
    TransposeRewrite(const Graph& graph, const std::vector<NodeId>& origin,
                     const std::vector<NodeId>& carried, const PassContext& context)
        : m_in(graph), m_origin(origin), m_carried(carried), m_context(context) {}

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
                m_statistics.add(kTransposeElimination, m_in.node(id).pin.device, "cancelled");
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
            m_statistics.add(kTransposeElimination, m_in.node(id).pin.device, "unread");
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
                userPinned(id) || !m_context.enabledOn(device) || !node.hints.postOps.empty() ||
                node.hints.hasViews() || shapesFoundAtRun(m_in, node))
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
                m_statistics.add(kTransposeElimination, device, "viewed");
            }
            for (std::size_t k = 0; k < 2; ++k) {
                if (!views.perms[k].empty())
                    m_statistics.add(kTransposeElimination, device, "viewed");
            }
            m_views[i] = std::move(views);
        }
    }

    /// Whether the device that runs `node` keeps its speed reading and writing `views`.
    bool keepsSpeed(const Node& node, const MatmulViews& views) const {
        Device* physical = m_context.physicalOf(node.pin.device);
        if (!physical)
            return false;
        Node viewed = node;
        viewed.inputs = {views.inputs[0], views.inputs[1]};
        for (std::size_t k = 0; k < 3; ++k)
            viewed.hints.views[k] = views.perms[k];
        if (!views.perms[2].empty())
            viewed.outputs = {views.output};
        return physical->takesViews(specOf(m_in, viewed));
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
                for (std::size_t k = 0; k < 3; ++k)
                    node.hints.views[k] = m_views[i]->perms[k];
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
    /// Per device: transposes that "cancelled" the one before them, were "unread" after that,
    /// and that matrix products read or write as strided views ("viewed").
    const PassStatistics& statistics() const { return m_statistics; }

private:
    /// A Transpose's permutation, when it may take part: one input, on an enabled device.
    std::optional<Dims> permOf(NodeId id) const {
        const Node& node = m_in.node(id);
        if (node.op->kernel.family != KernelFamily::Transpose || node.inputs.size() != 1 ||
            node.outputs.size() != 1 || !node.subgraphs.empty())
            return std::nullopt;
        if (!m_context.enabledOn(node.pin.device) || shapesFoundAtRun(m_in, node))
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

    bool userPinned(NodeId id) const { return m_context.userPinned(m_origin[id.index]); }

    const Graph& m_in;
    const std::vector<NodeId>& m_origin;
    const std::vector<NodeId>& m_carried;
    const PassContext& m_context;
    std::vector<std::optional<ValueRef>> m_alias; ///< a cancelled transpose: the value it is
    std::vector<std::optional<std::pair<ValueRef, Dims>>> m_composed;
    std::vector<std::optional<MatmulViews>> m_views;
    std::vector<bool> m_dead, m_isOutput;
    PassStatistics m_statistics;
    Graph m_out;
    std::vector<std::vector<ValueRef>> m_map;
    std::vector<NodeId> m_newOrigin, m_newCarried;
};

} // namespace

bool TransposeElimination::run(PassState& state, const PassContext& context,
                               PassStatistics& statistics) const {
    TransposeRewrite elimination(state.graph, state.origin, state.carried, context);
    if (!elimination.find())
        return false;
    elimination.rewrite();
    state.graph = elimination.takeGraph();
    state.origin = elimination.takeOrigin();
    state.carried = elimination.takeCarried();
    for (const PassCounter& counter : elimination.statistics().counters())
        statistics.add(counter.pass, counter.device, counter.counter, counter.value);
    return true;
}

std::vector<std::string> TransposeElimination::describe(const PassStatistics& statistics,
                                                        const DeviceSet& devices) const {
    std::vector<std::string> sentences;
    for (const DeviceId device : statistics.devicesOf(kTransposeElimination)) {
        if (const std::int64_t n = statistics.get(kTransposeElimination, device, "viewed"); n > 0)
            sentences.push_back("strided views on " + devices[device].name + ": " +
                                std::to_string(n) +
                                " transposes read or written by matrix products in place");
    }
    for (const DeviceId device : statistics.devicesOf(kTransposeElimination)) {
        const std::int64_t cancelled = statistics.get(kTransposeElimination, device, "cancelled");
        const std::int64_t unread = statistics.get(kTransposeElimination, device, "unread");
        if (cancelled + unread > 0)
            sentences.push_back("transpose elimination on " + devices[device].name + ": " +
                                std::to_string(cancelled) +
                                " transposes cancelled the one before them, " +
                                std::to_string(unread) + " were no longer read");
    }
    return sentences;
}

} // namespace placer
