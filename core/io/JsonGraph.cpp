// JSON graph reader and writer.
#include "io/JsonGraph.h"

#include "io/OnnxRunShapes.h"

#include "ir/Scalar.h"

#include <cstdlib>

namespace placer {

namespace {

constexpr std::string_view kFormat = "placer-graph";

Json typeToJson(const TensorType& type) {
    Json shape = Json::array();
    for (std::int64_t d : type.shape)
        shape.push(d);
    Json out = Json::object();
    out.set("shape", std::move(shape));
    out.set("dtype", std::string(dtypeName(type.dtype)));
    return out;
}

Json attrToJson(const AttrValue& value) {
    struct Visitor {
        Json operator()(std::monostate) const { return Json(); }
        Json operator()(bool b) const { return Json(b); }
        Json operator()(std::int64_t i) const { return Json(i); }
        Json operator()(double d) const { return Json(d); }
        Json operator()(const std::string& s) const { return Json(s); }
        Json operator()(const std::vector<std::int64_t>& list) const {
            Json out = Json::array();
            for (std::int64_t i : list)
                out.push(i);
            return out;
        }
        Json operator()(const std::vector<double>& list) const {
            Json out = Json::array();
            for (double d : list)
                out.push(d);
            return out;
        }
    };
    return std::visit(Visitor{}, value);
}

Json deviceSetToJson(const DeviceSet& devices) {
    Json list = Json::array();
    for (const VirtualDevice& d : devices.devices()) {
        Json entry = Json::object();
        entry.set("name", d.name);
        entry.set("kind", std::string(deviceKindName(d.kind)));
        entry.set("ordinal", d.ordinal);
        if (d.memoryCapacity)
            entry.set("memory", *d.memoryCapacity);
        if (!d.target.empty())
            entry.set("target", d.target);
        if (!d.memoryScope.empty())
            entry.set("scope", d.memoryScope);
        if (d.computeType != DType::Float32)
            entry.set("dtype", std::string(computeTypeWord(d.computeType)));
        list.push(std::move(entry));
    }
    return list;
}

/// Reads a JSON document into a Graph, with errors pointing at the offending value.
class JsonGraphReader {
public:
    JsonGraphReader(const DeviceSet& devices, const std::string& file)
        : m_devices(devices), m_file(file) {}

    Result<Graph> read(const Json& document) {
        if (!document.isObject())
            return error(document, "a JSON graph is an object with \"nodes\" and \"outputs\"");
        if (const Json* format = document.find("format");
            format && (!format->isString() || format->asString() != kFormat))
            return error(*format, "\"format\" must be \"placer-graph\"");
        if (const Json* version = document.find("version");
            version && (!version->isInteger() || version->asInt() != 1))
            return error(*version, "unsupported graph version (this build reads version 1)");
        if (const Json* name = document.find("name"); name && name->isString())
            m_graph.name = name->asString();
        const Json* nodes = document.find("nodes");
        if (!nodes || !nodes->isArray())
            return error(nodes ? *nodes : document, "\"nodes\" must be an array of nodes");
        for (const Json& node : nodes->items()) {
            if (auto failure = readNode(node))
                return *failure;
        }
        const Json* outputs = document.find("outputs");
        if (!outputs || !outputs->isArray())
            return error(outputs ? *outputs : document,
                         "\"outputs\" must be an array of value names");
        for (const Json& output : outputs->items()) {
            if (auto failure = readOutput(output))
                return *failure;
        }
        m_graph.sourceFormat = "json";
        return std::move(m_graph);
    }

private:
    using Failure = std::optional<SourceError>;

    SourceError error(const Json& at, std::string message) const {
        return SourceError{m_file, at.line(), at.column(), std::move(message)};
    }

    Result<ValueRef> readValueName(const Json& at, const std::string& text,
                                   const std::string& context) const {
        if (const auto node = m_graph.find(text)) {
            if (m_graph.node(*node).outputs.size() != 1)
                return error(at, context + ": " + text + " has " +
                                     std::to_string(m_graph.node(*node).outputs.size()) +
                                     " outputs; name one as \"" + text + ":0\"");
            return ValueRef{*node, 0};
        }
        const std::size_t colon = text.rfind(':');
        if (colon != std::string::npos) {
            if (const auto node = m_graph.find(text.substr(0, colon))) {
                const std::string index = text.substr(colon + 1);
                char* end = nullptr;
                const long k = std::strtol(index.c_str(), &end, 10);
                const auto outputs = static_cast<long>(m_graph.node(*node).outputs.size());
                if (index.empty() || *end != '\0' || k < 0 || k >= outputs)
                    return error(at, context + ": " + text + " names output " + index + " of " +
                                         text.substr(0, colon) + ", which has " +
                                         std::to_string(outputs));
                return ValueRef{*node, static_cast<std::uint32_t>(k)};
            }
        }
        return error(at, context + ": unknown value \"" + text +
                             "\" (inputs must name nodes defined earlier)");
    }

    Result<DeviceId> readDevice(const Json& at, const std::string& context) const {
        if (!at.isString())
            return error(at, context + " must be a device name");
        if (const auto device = m_devices.find(at.asString()))
            return *device;
        return error(at, context + " names unknown device '" + at.asString() +
                             "' (devices: " + m_devices.namesList() + ")");
    }

    Result<TensorType> readType(const Json& at, const std::string& context) const {
        if (!at.isObject())
            return error(at, context + ": a type is {\"shape\": [...], \"dtype\": \"float32\"}");
        TensorType type;
        const Json* shape = at.find("shape");
        const Json* dtype = at.find("dtype");
        if (!shape || !shape->isArray())
            return error(at, context + ": \"shape\" must be an array of dimensions");
        for (const Json& d : shape->items()) {
            if (!d.isInteger() || d.asInt() < 0)
                return error(d, context + ": dimensions must be non-negative integers");
            type.shape.push_back(d.asInt());
        }
        const auto parsed =
            dtype && dtype->isString() ? parseDType(dtype->asString()) : std::nullopt;
        if (!parsed)
            return error(dtype ? *dtype : at,
                         context + ": \"dtype\" must be a type such as \"float32\"");
        type.dtype = *parsed;
        if (type.bytes() == INT64_MAX)
            return error(at, context + ": tensor " + type.toShortString() + " is too large");
        return type;
    }

    Result<AttrValue> readAttr(const Json& value, const std::string& context) const {
        switch (value.type()) {
        case Json::Type::Null:
            return AttrValue{std::monostate{}};
        case Json::Type::Bool:
            return AttrValue{value.asBool()};
        case Json::Type::Number:
            return value.isInteger() ? AttrValue{value.asInt()} : AttrValue{value.asDouble()};
        case Json::Type::String:
            return AttrValue{value.asString()};
        case Json::Type::Array: {
            bool anyFloat = false;
            for (const Json& item : value.items()) {
                if (!item.isNumber())
                    return error(item, context + ": list attributes hold numbers only");
                anyFloat = anyFloat || !item.isInteger();
            }
            if (anyFloat) {
                std::vector<double> list;
                for (const Json& item : value.items())
                    list.push_back(item.asDouble());
                return AttrValue{list};
            }
            std::vector<std::int64_t> list;
            for (const Json& item : value.items())
                list.push_back(item.asInt());
            return AttrValue{list};
        }
        case Json::Type::Object:
            break;
        }
        return error(value, context + ": attribute values are numbers, strings, booleans, null or "
                                      "lists of numbers");
    }

    Failure readNode(const Json& at) {
        if (!at.isObject())
            return error(at, "each node is an object with \"name\" and \"op\"");
        const Json* nameJson = at.find("name");
        const Json* opJson = at.find("op");
        if (!nameJson || !nameJson->isString() || nameJson->asString().empty())
            return error(at, "node " + std::to_string(m_graph.size()) + " has no \"name\"");
        const std::string name = nameJson->asString();
        const std::string context = "node '" + name + "'";
        if (m_graph.find(name))
            return error(*nameJson, context + " is defined twice");
        if (!opJson || !opJson->isString())
            return error(at, context + " has no \"op\"");
        const OpDef* op = OpRegistry::global().find(opJson->asString());
        const Json* unsupported = at.find("unsupported");
        if (!op && unsupported && unsupported->isBool() && unsupported->asBool())
            op = adoptUnsupported(opJson->asString());
        if (!op)
            return error(*opJson, context + ": unknown operator '" + opJson->asString() + "'");
        Node node;
        node.name = name;
        node.op = op;
        node.location = {at.line(), at.column()};
        if (const Json* inputs = at.find("inputs")) {
            if (!inputs->isArray())
                return error(*inputs, context + ": \"inputs\" must be an array of value names");
            for (const Json& input : inputs->items()) {
                if (!input.isString())
                    return error(input, context + ": inputs are value names (strings)");
                auto value = readValueName(input, input.asString(), context);
                if (!value)
                    return value.error();
                node.inputs.push_back(value.value());
            }
        }
        if (const Json* attrs = at.find("attrs")) {
            if (!attrs->isObject())
                return error(*attrs, context + ": \"attrs\" must be an object");
            for (const auto& [key, value] : attrs->members()) {
                auto attr = readAttr(value, context + " attribute '" + key + "'");
                if (!attr)
                    return attr.error();
                node.attrs.set(key, attr.take());
            }
        }
        if (auto failure = readTypes(at, op, context, &node))
            return failure;
        if (auto failure = readPlacement(at, context, &node))
            return failure;
        if (auto failure = readBodies(at, context, &node))
            return failure;
        if (const Json* aliases = at.find("aliases"); aliases && aliases->isArray()) {
            for (const Json& alias : aliases->items()) {
                if (!alias.isString() || m_graph.find(alias.asString()) || alias.asString() == name)
                    return error(alias, context + ": aliases must be unused names");
                node.aliases.push_back(alias.asString());
            }
        }
        m_graph.addNode(std::move(node));
        return std::nullopt;
    }

    /// A control-flow node's "bodies" (each {"attribute", "graph"}) and "captures".
    Failure readBodies(const Json& at, const std::string& context, Node* node) const {
        const Json* bodies = at.find("bodies");
        const Json* captures = at.find("captures");
        if (!bodies && !captures)
            return std::nullopt;
        if (!node->op->hasBodies)
            return error(at, context + ": " + node->op->name + " has no bodies");
        if (!bodies || !bodies->isArray())
            return error(bodies ? *bodies : at,
                         context + ": \"bodies\" must be an array of {\"attribute\", \"graph\"}");
        if (!captures || !captures->isInteger() || captures->asInt() < 0 ||
            captures->asInt() > static_cast<std::int64_t>(node->inputs.size()))
            return error(captures ? *captures : at,
                         context + ": \"captures\" must count the node's last inputs that its "
                                   "bodies read");
        node->captures = static_cast<std::uint32_t>(captures->asInt());
        for (const Json& body : bodies->items()) {
            const Json* attribute = body.isObject() ? body.find("attribute") : nullptr;
            const Json* graph = body.isObject() ? body.find("graph") : nullptr;
            if (!attribute || !attribute->isString() || !graph)
                return error(body, context + ": each body is {\"attribute\", \"graph\"}");
            JsonGraphReader reader(m_devices, m_file);
            auto read = reader.read(*graph);
            if (!read)
                return read.error();
            node->subgraphs.push_back(Subgraph{
                attribute->asString(), std::make_shared<const Graph>(read.take()), nullptr});
        }
        return std::nullopt;
    }

    /// An op an importer met but could not run ("unsupported": true), shared by its nodes.
    const OpDef* adoptUnsupported(const std::string& name) {
        for (const Node& node : m_graph.nodes()) {
            if (node.op->name == name && !node.op->hasAnyKernel())
                return node.op;
        }
        return m_graph.adoptOp(makeUnsupportedOp(name, OpDialect::Onnx));
    }

    Failure readTypes(const Json& at, const OpDef* op, const std::string& context, Node* node) {
        const Json* outputs = at.find("outputs");
        std::vector<TensorType> declared;
        if (outputs) {
            if (!outputs->isArray())
                return error(*outputs, context + ": \"outputs\" must be an array of types");
            for (const Json& output : outputs->items()) {
                auto type = readType(output, context);
                if (!type)
                    return type.error();
                declared.push_back(type.take());
            }
        }
        const int count = static_cast<int>(node->inputs.size());
        if (count < op->minInputs || (op->maxInputs >= 0 && count > op->maxInputs))
            return error(at, context + ": " + op->name + " takes " + std::to_string(op->minInputs) +
                                 (op->maxInputs == op->minInputs ? "" : " or more") +
                                 " inputs, got " + std::to_string(count));
        if (op->role == OpRole::Parameter || op->role == OpRole::Constant) {
            if (declared.size() != 1)
                return error(at, context + ": a " + op->name + " declares exactly one output type");
            node->outputs = std::move(declared);
            if (op->role == OpRole::Constant)
                return readConstantValue(at, context, node);
            return std::nullopt;
        }
        if (!op->inferShape) {
            // ONNX ops are typed by the file, as ONNX shape inference typed them on import.
            if (declared.empty())
                return error(at, context + ": " + op->name +
                                     " is an ONNX operator; its "
                                     "\"outputs\" types must be given");
            node->outputs = std::move(declared);
            return std::nullopt;
        }
        std::vector<TensorType> inputTypes;
        for (const ValueRef& input : node->inputs)
            inputTypes.push_back(m_graph.type(input));
        ShapeResult inferred = op->inferShape(inputTypes, node->attrs);
        if (inferred.failed())
            return error(at, context + ": " + inferred.error);
        if (outputs && declared != inferred.outputs)
            return error(*outputs, context + ": declared output types differ from the inferred " +
                                       (inferred.outputs.empty() ? std::string("none")
                                                                 : inferred.outputs[0].toRelay()));
        node->outputs = std::move(inferred.outputs);
        return std::nullopt;
    }

    Failure readConstantValue(const Json& at, const std::string& context, Node* node) {
        const Json* value = at.find("value");
        if (!value)
            return std::nullopt;
        const TensorType& type = node->outputs[0];
        if (!value->isNumber() || !type.shape.empty())
            return error(*value, context + ": \"value\" is a number and only for scalar constants");
        auto data = std::make_shared<const TensorData>(encodeScalar(type.dtype, value->asDouble()));
        if (data->empty())
            return error(*value, context + ": scalar values of " +
                                     std::string(dtypeName(type.dtype)) + " are not stored");
        node->data = std::move(data);
        return std::nullopt;
    }

    Failure readPlacement(const Json& at, const std::string& context, Node* node) {
        if (const Json* pin = at.find("pin")) {
            if (!pin->isObject() || !pin->find("device"))
                return error(*pin, context + ": \"pin\" is {\"device\": NAME, \"fixed\": bool}");
            auto device = readDevice(*pin->find("device"), context + " pin");
            if (!device)
                return device.error();
            const Json* fixed = pin->find("fixed");
            const Json* origin = pin->find("origin");
            node->pin =
                Pin{fixed && fixed->isBool() && fixed->asBool() ? PinKind::Fixed : PinKind::Plain,
                    device.value(),
                    origin && origin->isString()
                        ? origin->asString()
                        : "pin at " + m_file + ":" + std::to_string(pin->line()) + ":" +
                              std::to_string(pin->column())};
        }
        if (const Json* device = at.find("device"); device && !device->isNull()) {
            auto id = readDevice(*device, context + " device");
            if (!id)
                return id.error();
            node->device = id.value();
        }
        if (node->isDeviceCopy()) {
            const Json* src = at.find("src");
            const Json* dst = at.find("dst");
            if (!src || !dst)
                return error(at, context + ": a device_copy names \"src\" and \"dst\" devices");
            auto from = readDevice(*src, context + " src");
            if (!from)
                return from.error();
            auto to = readDevice(*dst, context + " dst");
            if (!to)
                return to.error();
            node->copySource = from.value();
            node->copyDestination = to.value();
            const Json* inserted = at.find("inserted");
            node->insertedCopy = inserted && inserted->isBool() && inserted->asBool();
        }
        return std::nullopt;
    }

    Failure readOutput(const Json& at) {
        GraphOutput output;
        const Json* name = &at;
        if (at.isObject()) {
            name = at.find("value");
            if (const Json* device = at.find("device")) {
                auto id = readDevice(*device, "output device");
                if (!id)
                    return id.error();
                output.device = id.value();
            }
        }
        if (!name || !name->isString())
            return error(at, "each output is a value name or {\"value\": NAME, \"device\": NAME}");
        auto value = readValueName(*name, name->asString(), "output");
        if (!value)
            return value.error();
        output.value = value.value();
        m_graph.addOutput(output);
        return std::nullopt;
    }

    const DeviceSet& m_devices;
    const std::string& m_file;
    Graph m_graph;
};

} // namespace

Result<std::optional<DeviceSet>> readJsonGraphDevices(const Json& document,
                                                      const std::string& fileName) {
    const Json* list = document.isObject() ? document.find("devices") : nullptr;
    if (!list)
        return std::optional<DeviceSet>();
    auto fail = [&](const Json& at, std::string message) {
        return SourceError{fileName, at.line(), at.column(), std::move(message)};
    };
    if (!list->isArray() || list->items().empty())
        return fail(*list, "\"devices\" must be a non-empty array of {\"name\", \"kind\"}");
    DeviceSet set;
    for (const Json& entry : list->items()) {
        const Json* name = entry.isObject() ? entry.find("name") : nullptr;
        const Json* kind = entry.isObject() ? entry.find("kind") : nullptr;
        if (!name || !name->isString() || !kind || !kind->isString())
            return fail(entry, "each device has a \"name\" and a \"kind\" (cpu, cuda, vcpu)");
        const auto parsedKind = parseDeviceKind(kind->asString());
        if (!parsedKind)
            return fail(*kind, "unknown device kind '" + kind->asString() + "' (cpu, cuda, vcpu)");
        if (set.find(name->asString()))
            return fail(*name, "device '" + name->asString() + "' is listed twice");
        VirtualDevice device;
        device.name = name->asString();
        device.kind = *parsedKind;
        int ordinal = 0;
        for (const VirtualDevice& existing : set.devices())
            ordinal += existing.kind == device.kind ? 1 : 0;
        device.ordinal = ordinal;
        if (const Json* o = entry.find("ordinal"); o && o->isInteger())
            device.ordinal = static_cast<int>(o->asInt());
        if (const Json* memory = entry.find("memory")) {
            if (!memory->isInteger() || memory->asInt() < 0)
                return fail(*memory, "\"memory\" is a number of bytes");
            device.memoryCapacity = memory->asInt();
        }
        if (const Json* target = entry.find("target"); target && target->isString())
            device.target = target->asString();
        if (const Json* scope = entry.find("scope"); scope && scope->isString())
            device.memoryScope = scope->asString();
        if (const Json* type = entry.find("dtype")) {
            const auto parsed =
                type->isString() ? parseComputeType(type->asString()) : std::nullopt;
            if (!parsed)
                return fail(*type, "\"dtype\" is a compute type: \"bf16\", \"f16\" or \"f32\"");
            device.computeType = *parsed;
        }
        set.add(std::move(device));
    }
    for (const char* role : {"default", "host"}) {
        const Json* value = document.find(role);
        if (!value)
            continue;
        const auto id = value->isString() ? set.find(value->asString()) : std::nullopt;
        if (!id)
            return fail(*value, std::string("\"") + role + "\" must name one of the devices");
        if (std::string_view(role) == "default")
            set.setDefaultDevice(*id);
        else
            set.setHostDevice(*id);
    }
    set.chooseDefaults();
    return std::optional<DeviceSet>(std::move(set));
}

Result<Graph> readJsonGraph(const Json& document, const DeviceSet& devices,
                            const std::string& fileName) {
    installOnnxShapeFunctions(); // its nodes may be ONNX operators whose shapes settle at run time
    return JsonGraphReader(devices, fileName).read(document);
}

Json writeJsonGraph(const Graph& graph, const DeviceSet& devices) {
    Json doc = Json::object();
    doc.set("format", std::string(kFormat));
    doc.set("version", 1);
    if (!graph.name.empty())
        doc.set("name", graph.name);
    doc.set("devices", deviceSetToJson(devices));
    if (devices.defaultDevice().valid())
        doc.set("default", devices[devices.defaultDevice()].name);
    if (devices.hostDevice().valid())
        doc.set("host", devices[devices.hostDevice()].name);
    auto valueName = [&](ValueRef v) {
        const Node& n = graph.node(v.node);
        return n.outputs.size() == 1 ? n.name : n.name + ":" + std::to_string(v.output);
    };
    Json nodes = Json::array();
    for (const Node& node : graph.nodes()) {
        Json entry = Json::object();
        entry.set("name", node.name);
        entry.set("op", node.op->name);
        if (OpRegistry::global().find(node.op->name) != node.op)
            entry.set("unsupported", true); // an op no device can run, known only to this graph
        if (!node.aliases.empty()) {
            Json aliases = Json::array();
            for (const std::string& alias : node.aliases)
                aliases.push(alias);
            entry.set("aliases", std::move(aliases));
        }
        if (!node.inputs.empty()) {
            Json inputs = Json::array();
            for (const ValueRef& input : node.inputs)
                inputs.push(valueName(input));
            entry.set("inputs", std::move(inputs));
        }
        if (!node.attrs.empty()) {
            Json attrs = Json::object();
            for (const auto& [key, value] : node.attrs.entries())
                attrs.set(key, attrToJson(value));
            entry.set("attrs", std::move(attrs));
        }
        Json outputs = Json::array();
        for (const TensorType& type : node.outputs)
            outputs.push(typeToJson(type));
        entry.set("outputs", std::move(outputs));
        if (node.isConstant() && node.data && node.outputs[0].shape.empty()) {
            const DType dtype = node.outputs[0].dtype;
            if (const auto value = decodeScalar(dtype, *node.data))
                entry.set("value", isFloatingPoint(dtype)
                                       ? Json(*value)
                                       : Json(static_cast<std::int64_t>(*value)));
        }
        if (node.pin.active()) {
            Json pin = Json::object();
            pin.set("device", devices[node.pin.device].name);
            pin.set("fixed", node.pin.kind == PinKind::Fixed);
            pin.set("origin", node.pin.origin);
            entry.set("pin", std::move(pin));
        }
        if (node.isDeviceCopy()) {
            entry.set("src", devices[node.copySource].name);
            entry.set("dst", devices[node.copyDestination].name);
            if (node.insertedCopy)
                entry.set("inserted", true);
        }
        if (node.device.valid())
            entry.set("device", devices[node.device].name);
        if (!node.subgraphs.empty()) {
            // Control flow: the bodies as graphs of their own, and how many of the inputs are
            // the outer values they read.
            entry.set("captures", static_cast<std::int64_t>(node.captures));
            Json bodies = Json::array();
            for (const Subgraph& subgraph : node.subgraphs) {
                Json body = Json::object();
                body.set("attribute", subgraph.attribute);
                body.set("graph", writeJsonGraph(*subgraph.graph, devices));
                bodies.push(std::move(body));
            }
            entry.set("bodies", std::move(bodies));
        }
        nodes.push(std::move(entry));
    }
    doc.set("nodes", std::move(nodes));
    Json outputs = Json::array();
    for (const GraphOutput& output : graph.outputs()) {
        if (!output.device.valid()) {
            outputs.push(valueName(output.value));
            continue;
        }
        Json entry = Json::object();
        entry.set("value", valueName(output.value));
        entry.set("device", devices[output.device].name);
        outputs.push(std::move(entry));
    }
    doc.set("outputs", std::move(outputs));
    return doc;
}

} // namespace placer
