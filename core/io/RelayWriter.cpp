// Relay text writer.
#include "io/RelayWriter.h"

#include "ir/Scalar.h"

#include <cctype>
#include <map>
#include <unordered_set>

namespace placer {

namespace {

class RelayWriter {
public:
    RelayWriter(const Graph& graph, const DeviceSet& devices)
        : m_graph(graph), m_devices(devices) {}

    std::string run() {
        assignNames();
        m_resultDevice = resultDevice();
        m_out += "#[version = \"0.0.5\"]\n";
        m_out += "// meta[VirtualDevice]:";
        for (int i = 0; i < m_devices.size(); ++i) {
            const VirtualDevice& d = m_devices[DeviceId(i)];
            m_out += (i ? "," : "") + std::string(" ") + std::to_string(i) + " = " + d.name + " (" +
                     std::string(deviceKindName(d.kind)) + ")";
        }
        m_out += "\n";
        writeSignature();
        m_out += " {\n";
        for (std::uint32_t i = 0; i < m_graph.size(); ++i)
            writeBinding(NodeId(i));
        m_out += "  " + resultExpression() + "\n}\n";
        return std::move(m_out);
    }

private:
    static bool isRelayName(std::string_view name) {
        if (name.size() < 2 || name[0] != '%')
            return false;
        for (char c : name.substr(1)) {
            if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
                return false;
        }
        return true;
    }

    void assignNames() {
        std::unordered_set<std::string> used;
        m_names.resize(m_graph.size());
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            const std::string& original = m_graph.nodes()[i].name;
            std::string name = original;
            if (!isRelayName(name)) {
                name = "%";
                for (char c : original) {
                    if (c == '%' && name.size() == 1)
                        continue;
                    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                }
                if (name.size() == 1)
                    name += "v";
            }
            std::string candidate = name;
            for (int suffix = 2; used.count(candidate); ++suffix)
                candidate = name + "_" + std::to_string(suffix);
            used.insert(candidate);
            m_names[i] = candidate;
        }
        m_metaIndex.assign(m_graph.size(), 0);
        int nextMeta = 0;
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            if (m_graph.nodes()[i].isConstant())
                m_metaIndex[i] = nextMeta++;
        }
    }

    DeviceId resultDevice() const {
        if (m_graph.outputs().empty())
            return DeviceId();
        const GraphOutput& first = m_graph.outputs().front();
        if (first.device.valid())
            return first.device;
        return m_graph.node(first.value.node).device;
    }

    std::string deviceRef(DeviceId d) const {
        return "meta[VirtualDevice][" + std::to_string(d.index) + "]";
    }

    void writeSignature() {
        m_out += "def @main(";
        bool first = true;
        for (std::uint32_t i = 0; i < m_graph.size(); ++i) {
            const Node& node = m_graph.nodes()[i];
            if (!node.isParameter())
                continue;
            m_out += first ? "" : ", ";
            first = false;
            m_out += m_names[i];
            const DeviceId device = node.pin.active() ? node.pin.device : node.device;
            if (device.valid())
                m_out += " {virtual_device=" + deviceRef(device) + "}";
            m_out += ": " + node.outputs[0].toRelay();
        }
        if (m_resultDevice.valid())
            m_out += std::string(first ? "" : ", ") + "virtual_device=" + deviceRef(m_resultDevice);
        m_out += ")";
    }

    /// How a value is referred to: %name, %name.1, or an inline scalar constant.
    std::string ref(ValueRef value) const {
        const Node& node = m_graph.node(value.node);
        if (node.isConstant() && isInline(value.node))
            return constantLiteral(node);
        if (node.outputs.size() > 1)
            return m_names[value.node.index] + "." + std::to_string(value.output);
        return m_names[value.node.index];
    }

    /// Constants are written where they are used unless something must be said about them.
    bool isInline(NodeId id) const {
        const Node& node = m_graph.node(id);
        return node.isConstant() && !node.pin.active() &&
               (!node.device.valid() || node.device == m_resultDevice);
    }

    std::string constantLiteral(const Node& node) const {
        const TensorType& type = node.outputs[0];
        const std::optional<double> value =
            type.shape.empty() && node.data ? decodeScalar(type.dtype, *node.data) : std::nullopt;
        if (value) {
            static const std::map<DType, std::string> kSuffix{
                {DType::Float32, ""},  {DType::Float64, "64"}, {DType::Int32, ""},
                {DType::Int64, "i64"}, {DType::Int8, "i8"},    {DType::Int16, "i16"},
                {DType::UInt8, "u8"}};
            const auto suffix = kSuffix.find(type.dtype);
            if (suffix != kSuffix.end()) {
                if (isFloatingPoint(type.dtype))
                    return formatAttrRelay(*value) + suffix->second;
                return std::to_string(static_cast<std::int64_t>(*value)) + suffix->second;
            }
        }
        // Shape-only constants keep their type in the comment the reader looks for.
        const std::size_t index = static_cast<std::size_t>(&node - m_graph.nodes().data());
        return "meta[relay.Constant][" + std::to_string(m_metaIndex[index]) +
               "] /* ty=" + type.toRelay() + " */";
    }

    /// The last node, when it is the single result and has no name from the input, is written
    /// as the body's final expression, the way TVM prints a function.
    bool isFinalExpression(NodeId id) const {
        const auto& outputs = m_graph.outputs();
        const Node& node = m_graph.node(id);
        return outputs.size() == 1 && outputs[0].value.node == id &&
               id.index + 1 == m_graph.size() && node.outputs.size() == 1 &&
               !node.name.starts_with("%") && !node.isParameter() && !node.isConstant();
    }

    std::string expression(NodeId id) const {
        const Node& node = m_graph.node(id);
        std::string expr;
        if (node.isConstant()) {
            expr = constantLiteral(node);
        } else if (node.isDeviceCopy()) {
            expr = "device_copy(" + ref(node.inputs[0]) +
                   ", src_virtual_device=" + deviceRef(node.copySource) +
                   ", dst_virtual_device=" + deviceRef(node.copyDestination) + ")";
        } else {
            expr = node.op->name + "(";
            std::string args;
            for (std::size_t i = 0; i < node.inputs.size(); ++i)
                args += (i ? ", " : "") + ref(node.inputs[i]);
            if (node.op->tupleInput)
                args = "(" + args + (node.inputs.size() == 1 ? "," : "") + ")";
            expr += args;
            for (const auto& [name, value] : node.attrs.entries())
                expr += ", " + name + "=" + formatAttrRelay(value);
            expr += ")";
        }
        if (!node.isDeviceCopy()) {
            if (node.pin.active()) {
                expr = "on_device(" + expr + ", virtual_device=" + deviceRef(node.pin.device) +
                       (node.pin.kind == PinKind::Fixed ? ", constrain_result=True" : "") + ")";
            } else if (node.device.valid() && node.device != m_resultDevice) {
                expr = "on_device(" + expr + ", virtual_device=" + deviceRef(node.device) +
                       ", constrain_result=True)";
            }
        }
        return expr;
    }

    void writeBinding(NodeId id) {
        const Node& node = m_graph.node(id);
        if (node.isParameter() || isInline(id) || isFinalExpression(id))
            return;
        m_out += "  " + m_names[id.index] + " = " + expression(id) + ";";
        if (node.outputs.size() == 1)
            m_out += " /* ty=" + node.outputs[0].toRelay() + " */";
        m_out += "\n";
    }

    std::string resultExpression() const {
        const auto& outputs = m_graph.outputs();
        if (outputs.size() == 1 && isFinalExpression(outputs[0].value.node))
            return expression(outputs[0].value.node);
        if (outputs.size() == 1)
            return ref(outputs[0].value);
        std::string tuple = "(";
        for (std::size_t i = 0; i < outputs.size(); ++i)
            tuple += (i ? ", " : "") + ref(outputs[i].value);
        return tuple + (outputs.size() == 1 ? ",)" : ")");
    }

    const Graph& m_graph;
    const DeviceSet& m_devices;
    std::vector<std::string> m_names;
    std::vector<int> m_metaIndex;
    DeviceId m_resultDevice;
    std::string m_out;
};

} // namespace

std::string writeRelay(const Graph& graph, const DeviceSet& devices) {
    return RelayWriter(graph, devices).run();
}

} // namespace placer
