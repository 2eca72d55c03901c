// The precision pass (passes/PrecisionCasts.h): the planned graph rewritten so that the nodes a
// precision policy narrows compute in 16 bits, with the plan's casts.
#include "passes/PrecisionCasts.h"

#include "ir/OpRegistry.h"
#include "kernels/ElementFunctors.h"
#include "passes/PassSupport.h"
#include "plan/Precision.h"

#include <cstring>
#include <map>
#include <tuple>

namespace placer {

namespace {

using namespace passes;

constexpr const char* kPrecision = "precision";

/// ONNX's TensorProto code for the Cast's `to` attribute.
std::int64_t onnxTypeCode(DType type) {
    switch (type) {
    case DType::Float16:
        return 10;
    case DType::BFloat16:
        return 16;
    default:
        return 1;
    }
}

class PrecisionRewrite {
public:
    PrecisionRewrite(const Graph& graph, const PassContext& context)
        : m_in(graph), m_context(context), m_cast(OpRegistry::global().find("Cast")) {
        std::vector<DeviceId> placed(graph.size());
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            placed[i] = graph.nodes()[i].pin.device;
        m_types = computeTypes(graph, *context.devices, placed);
        m_out = emptyLike(graph);
        m_made.resize(graph.size());
    }

    bool run() {
        if (!m_cast)
            return false;
        bool narrowed = false;
        for (const DType type : m_types)
            narrowed = narrowed || type != DType::Float32;
        if (!narrowed)
            return false;
        for (std::uint32_t i = 0; i < m_in.size(); ++i)
            rewrite(NodeId(i));
        for (const GraphOutput& output : m_in.outputs()) {
            GraphOutput given = output;
            given.value = as(output.value, m_in.type(output.value).dtype,
                             m_in.node(output.value.node).pin.device);
            m_out.addOutput(std::move(given));
        }
        return true;
    }

    Graph takeGraph() { return std::move(m_out); }
    std::vector<NodeId> takeOrigin() { return std::move(m_origin); }
    const PassStatistics& statistics() const { return m_statistics; }

private:
    NodeId add(Node node, NodeId origin) {
        const NodeId id = m_out.addNode(std::move(node));
        m_origin.push_back(origin);
        return id;
    }

    void rewrite(NodeId id) {
        const Node& node = m_in.node(id);
        const DType type = m_types[id.index];
        const DeviceId device = node.pin.device;
        Node copy = node;
        for (std::size_t k = 0; k < node.inputs.size(); ++k) {
            const ValueRef input = node.inputs[k];
            const DType own = m_in.type(input).dtype;
            const DType want = own == DType::Float32 && followsComputeType(node, k) ? type : own;
            // An explicit device_copy moves float32: its value is given back on its producer.
            copy.inputs[k] = node.role() == OpRole::Compute
                                 ? as(input, want, device)
                                 : as(input, own, m_in.node(input.node).pin.device);
        }
        if (type != DType::Float32) {
            for (TensorType& output : copy.outputs) {
                if (output.dtype == DType::Float32)
                    output.dtype = type;
            }
            m_statistics.add(kPrecision, device, "16-bit nodes");
        }
        const NodeId at = add(std::move(copy), id);
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k)
            m_made[id.index].push_back(ValueRef{at, k});
    }

    /// The rewritten graph's form of the user's value, in the type it is made in.
    ValueRef made(ValueRef value) const { return m_made[value.node.index].at(value.output); }

    /// The value in `type` for a reader on `device`: as it is made, a constant converted once,
    /// or a Cast on `device`, made once per value, device and type.
    ValueRef as(ValueRef value, DType type, DeviceId device) {
        const ValueRef source = made(value);
        const DType from = producedType(m_in, m_types, value);
        if (from == type)
            return source;
        const auto key =
            std::make_tuple(value.node.index, value.output,
                            type != DType::Float32 && convertible(value) ? -1 : device.index,
                            static_cast<int>(type));
        if (const auto found = m_casts.find(key); found != m_casts.end())
            return found->second;
        const ValueRef result = std::get<2>(key) < 0 ? converted(value, type, device)
                                                     : cast(source, value, type, device);
        m_casts.emplace(key, result);
        return result;
    }

    /// Whether `value` is a float32 constant whose data is here to convert at load.
    bool convertible(ValueRef value) const {
        const Node& source = m_in.node(value.node);
        const NodeId from = value.node;
        const bool copied =
            from.index < m_context.copiedConstants.size() && m_context.copiedConstants[from.index];
        return source.isConstant() && source.data && !copied && source.pin.kind == PinKind::None &&
               source.outputs.size() == 1 && source.outputs[0].dtype == DType::Float32 &&
               source.data->size() == static_cast<std::size_t>(source.outputs[0].bytes());
    }

    /// A float32 constant's data in `type`, a new constant (counted on `device`, its first
    /// reader's).
    ValueRef converted(ValueRef value, DType type, DeviceId device) {
        const Node& source = m_in.node(value.node);
        const std::int64_t n = source.outputs[0].elementCount();
        auto data = std::make_shared<TensorData>(static_cast<std::size_t>(n) * 2, '\0');
        const char* from = source.data->data();
        char* to = data->data();
        for (std::int64_t i = 0; i < n; ++i) {
            float f = 0;
            std::memcpy(&f, from + i * 4, 4);
            const std::uint16_t bits =
                type == DType::BFloat16 ? functors::floatToBFloat16(f) : functors::floatToHalf(f);
            std::memcpy(to + i * 2, &bits, 2);
        }
        Node node;
        node.name = m_out.uniqueName(source.name + "/" + std::string(dtypeName(type)));
        node.op = source.op;
        node.outputs = {TensorType{source.outputs[0].shape, type}};
        node.data = std::move(data);
        node.microBatch = source.microBatch;
        m_statistics.add(kPrecision, device, "constants");
        return ValueRef{add(std::move(node), value.node), 0};
    }

    ValueRef cast(ValueRef source, ValueRef value, DType type, DeviceId device) {
        Node node;
        node.name = m_out.uniqueName(m_in.valueName(value) + "/to_" + std::string(dtypeName(type)));
        node.op = m_cast;
        node.inputs = {source};
        node.attrs.set("to", onnxTypeCode(type));
        node.outputs = {TensorType{m_in.type(value).shape, type}};
        node.microBatch = m_out.node(source.node).microBatch;
        hold(node, device);
        m_statistics.add(kPrecision, device, "casts");
        return ValueRef{add(std::move(node), NodeId()), 0};
    }

    const Graph& m_in;
    const PassContext& m_context;
    const OpDef* m_cast;
    std::vector<DType> m_types;
    Graph m_out;
    std::vector<NodeId> m_origin;
    std::vector<std::vector<ValueRef>> m_made;
    /// (node, output, device or -1 for a converted constant, type) -> the value in that type.
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::int32_t, int>, ValueRef> m_casts;
    PassStatistics m_statistics;
};

} // namespace

bool PrecisionCasts::run(PassState& state, const PassContext& context,
                         PassStatistics& statistics) const {
    if (!context.devices || !hasPrecisionPolicy(*context.devices))
        return false;
    PrecisionRewrite pass(state.graph, context);
    if (!pass.run())
        return false;
    const std::vector<NodeId> from = pass.takeOrigin();
    adoptRewrite(state, pass.takeGraph(), from, pass.statistics(), statistics);
    return true;
}

std::vector<std::string> PrecisionCasts::describe(const PassStatistics& statistics,
                                                  const DeviceSet& devices) const {
    std::vector<std::string> sentences;
    for (const DeviceId device : statistics.devicesOf(kPrecision)) {
        const std::int64_t nodes = statistics.get(kPrecision, device, "16-bit nodes");
        const std::int64_t casts = statistics.get(kPrecision, device, "casts");
        const std::int64_t constants = statistics.get(kPrecision, device, "constants");
        std::string sentence = "precision on " + devices[device].name + ":";
        if (nodes > 0)
            sentence += " " + std::to_string(nodes) + " nodes in " +
                        std::string(dtypeName(devices[device].computeType)) + ",";
        sentence += " " + std::to_string(casts) + (casts == 1 ? " cast" : " casts");
        if (constants > 0)
            sentence += ", " + std::to_string(constants) + " constants converted as they load";
        sentences.push_back(std::move(sentence));
    }
    return sentences;
}

} // namespace placer
