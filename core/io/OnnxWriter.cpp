// ONNX writer.
#include "io/OnnxWriter.h"

#include "io/OnnxProto.h"
#include "ir/StringPool.h"

#include "ir/Scalar.h"

#include <onnx/onnx_pb.h>

#include <cstring>

#include <map>
#include <set>

namespace placer {

void setOnnxTensorData(onnx::TensorProto* tensor, DType dtype, const char* data, std::size_t size) {
    if (dtype != DType::String) {
        tensor->set_raw_data(data, size);
        return;
    }
    for (std::size_t at = 0; at + sizeof(StringHandle) <= size; at += sizeof(StringHandle)) {
        StringHandle handle = 0;
        std::memcpy(&handle, data + at, sizeof(handle));
        tensor->add_string_data(std::string(stringOf(handle)));
    }
}

void setOnnxType(onnx::ValueInfoProto* info, const std::string& name, const TensorType& type) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->Clear();
    tensor->set_elem_type(onnxElementType(type.dtype));
    auto* shape = tensor->mutable_shape();
    for (std::int64_t d : type.shape)
        shape->add_dim()->set_dim_value(d);
}

namespace {

/// Renames, in a body and the bodies within it, the values it reads from outside it.
void renameOuterValues(onnx::GraphProto* graph, std::set<std::string> defined,
                       const std::map<std::string, std::string>& names) {
    for (const onnx::ValueInfoProto& input : graph->input())
        defined.insert(input.name());
    for (const onnx::TensorProto& tensor : graph->initializer())
        defined.insert(tensor.name());
    auto rename = [&](std::string* name) {
        if (defined.count(*name))
            return;
        if (const auto it = names.find(*name); it != names.end())
            *name = it->second;
    };
    for (onnx::NodeProto& node : *graph->mutable_node()) {
        for (std::string& input : *node.mutable_input())
            rename(&input);
        for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
            if (attr.has_g())
                renameOuterValues(attr.mutable_g(), defined, names);
            for (onnx::GraphProto& nested : *attr.mutable_graphs())
                renameOuterValues(&nested, defined, names);
        }
        defined.insert(node.output().begin(), node.output().end());
    }
    for (onnx::ValueInfoProto& output : *graph->mutable_output())
        rename(output.mutable_name());
}

void addMetadata(onnx::ModelProto& model, const std::string& key, const std::string& value) {
    auto* entry = model.add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
}

/// Writes one attribute; false for values ONNX attributes cannot hold.
void setAttribute(onnx::NodeProto* node, const std::string& name, const AttrValue& value,
                  const Attrs& attrs) {
    if (name.size() > 6 && name.ends_with(".dtype"))
        return; // describes the tensor attribute of the same name
    if (name == kInputPositionsAttr)
        return; // written as empty inputs
    if (name.size() > 8 && name.ends_with(".strings"))
        return; // marks the string list of the same name
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(name);
    if (attrs.getBool(name + ".strings", false).value_or(false)) {
        // A list of strings (an LSTM's activations), kept joined (joinStringList).
        attr->set_type(onnx::AttributeProto_AttributeType_STRINGS);
        for (const std::string& item : splitStringList(attrs.getString(name, "").value_or("")))
            attr->add_strings(item);
        return;
    }
    if (const auto dtypeName = attrs.getString(name + ".dtype", "");
        dtypeName && !dtypeName->empty()) {
        // A one-element tensor attribute (ConstantOfShape's value).
        const DType dtype = *parseDType(*dtypeName);
        attr->set_type(onnx::AttributeProto_AttributeType_TENSOR);
        onnx::TensorProto* tensor = attr->mutable_t();
        tensor->set_data_type(onnxElementType(dtype));
        tensor->add_dims(1);
        const auto bytes = encodeScalar(dtype, attrs.getFloat(name, 0).value_or(0));
        tensor->set_raw_data(bytes);
        return;
    }
    struct Visitor {
        onnx::AttributeProto* attr;
        void operator()(std::monostate) const {}
        void operator()(bool b) const {
            attr->set_type(onnx::AttributeProto_AttributeType_INT);
            attr->set_i(b ? 1 : 0);
        }
        void operator()(std::int64_t i) const {
            attr->set_type(onnx::AttributeProto_AttributeType_INT);
            attr->set_i(i);
        }
        void operator()(double d) const {
            attr->set_type(onnx::AttributeProto_AttributeType_FLOAT);
            attr->set_f(static_cast<float>(d));
        }
        void operator()(const std::string& s) const {
            attr->set_type(onnx::AttributeProto_AttributeType_STRING);
            attr->set_s(s);
        }
        void operator()(const std::vector<std::int64_t>& list) const {
            attr->set_type(onnx::AttributeProto_AttributeType_INTS);
            for (std::int64_t i : list)
                attr->add_ints(i);
        }
        void operator()(const std::vector<double>& list) const {
            attr->set_type(onnx::AttributeProto_AttributeType_FLOATS);
            for (double d : list)
                attr->add_floats(static_cast<float>(d));
        }
    };
    std::visit(Visitor{attr}, value);
}

} // namespace

void setOnnxAttributes(onnx::NodeProto* node, const Attrs& attrs) {
    for (const auto& [key, value] : attrs.entries())
        setAttribute(node, key, value, attrs);
}

std::string deviceSetSpec(const DeviceSet& devices) {
    std::string spec;
    for (const VirtualDevice& d : devices.devices()) {
        spec += (spec.empty() ? "" : ",") + d.name + ":" + std::string(deviceKindName(d.kind));
        if (d.memoryCapacity)
            spec += ":mem=" + std::to_string(*d.memoryCapacity);
        spec += ":ordinal=" + std::to_string(d.ordinal);
        if (!d.target.empty())
            spec += ":target=" + d.target;
        if (!d.memoryScope.empty())
            spec += ":scope=" + d.memoryScope;
        if (d.computeType != DType::Float32)
            spec += ":dtype=" + std::string(computeTypeWord(d.computeType));
    }
    return spec;
}

Result<std::string> writeOnnx(const Graph& graph, const DeviceSet& devices,
                              const std::vector<std::string>& docStrings) {
    auto fail = [](std::string message) { return SourceError{"", 0, 0, std::move(message)}; };
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.set_producer_name("placement-explorer");
    int opset = 13;
    for (const auto& [key, value] : graph.properties) {
        if (key == "onnx.opset")
            opset = std::stoi(value);
    }
    auto* defaultSet = model.add_opset_import();
    defaultSet->set_domain("");
    defaultSet->set_version(opset);
    addMetadata(model, "placement.devices", deviceSetSpec(devices));
    if (devices.defaultDevice().valid())
        addMetadata(model, "placement.default", devices[devices.defaultDevice()].name);
    if (devices.hostDevice().valid())
        addMetadata(model, "placement.host", devices[devices.hostDevice()].name);

    onnx::GraphProto* g = model.mutable_graph();
    g->set_name(graph.name.empty() ? "graph" : graph.name);

    // Value names: a graph output keeps its own name, other values are named after their node.
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> outputNames;
    for (const GraphOutput& output : graph.outputs()) {
        if (!output.name.empty())
            outputNames.emplace(std::make_pair(output.value.node.index, output.value.output),
                                output.name);
    }
    auto valueName = [&](ValueRef v) {
        const auto named = outputNames.find({v.node.index, v.output});
        if (named != outputNames.end())
            return named->second;
        const Node& node = graph.node(v.node);
        return node.outputs.size() == 1 ? node.name : node.name + ":" + std::to_string(v.output);
    };

    bool anyCopy = false;
    std::set<std::string> otherDomains; // of the ops written
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        const std::string name = valueName(ValueRef{NodeId(i), 0});
        if (node.device.valid())
            addMetadata(model, "placement.device:" + node.name, devices[node.device].name);
        // The plan travels as pins: the user's own, and the planned device of every op, so
        // reading the model back and planning it gives this plan again.
        if (node.pin.active())
            addMetadata(model, "placement.pin:" + node.name,
                        devices[node.pin.device].name +
                            (node.pin.kind == PinKind::Fixed ? "!" : ""));
        else if (node.role() == OpRole::Compute && node.device.valid())
            addMetadata(model, "placement.pin:" + node.name, devices[node.device].name);
        if (node.isParameter()) {
            setOnnxType(g->add_input(), name, node.outputs[0]);
            continue;
        }
        if (node.isConstant()) {
            const TensorType& type = node.outputs[0];
            if (!node.data || static_cast<std::int64_t>(node.data->size()) != type.bytes())
                return fail("constant '" + node.name + "' has no data to write to ONNX");
            onnx::TensorProto* tensor = g->add_initializer();
            tensor->set_name(name);
            tensor->set_data_type(onnxElementType(type.dtype));
            for (std::int64_t d : type.shape)
                tensor->add_dims(d);
            setOnnxTensorData(tensor, type.dtype, node.data->data(), node.data->size());
            continue;
        }
        onnx::NodeProto* proto = g->add_node();
        proto->set_name(node.name);
        if (i < docStrings.size() && !docStrings[i].empty())
            proto->set_doc_string(docStrings[i]);
        // Optional inputs left out before a given one are written back as empty names.
        const auto positions = node.attrs.getInts(kInputPositionsAttr, {});
        for (std::size_t k = 0; k < node.ownInputs(); ++k) {
            if (positions && k < positions->size()) {
                while (proto->input_size() < (*positions)[k])
                    proto->add_input(std::string());
            }
            proto->add_input(valueName(node.inputs[k]));
        }
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
            const bool skipped = node.outputs[k].shape == std::vector<std::int64_t>{0} &&
                                 k + 1 < node.outputs.size();
            proto->add_output(skipped ? std::string() : valueName(ValueRef{NodeId(i), k}));
        }
        if (node.isDeviceCopy()) {
            anyCopy = true;
            proto->set_domain(kCopyDomain);
            proto->set_op_type("DeviceCopy");
            setAttribute(proto, "src", devices[node.copySource].name, node.attrs);
            setAttribute(proto, "dst", devices[node.copyDestination].name, node.attrs);
            setAttribute(proto, "inserted", std::int64_t{node.insertedCopy ? 1 : 0}, node.attrs);
            setOnnxType(g->add_value_info(), proto->output(0), node.outputs[0]);
            continue;
        }
        if (node.op->dialect != OpDialect::Onnx)
            return fail("'" + node.op->name + "' (node '" + node.name + "') is not an ONNX " +
                        "operator: only models read from ONNX can be written as ONNX");
        // An op of another domain (a contrib operator, or one no device runs) as read.
        const auto [domain, type] = onnxDomainAndType(node.op->name);
        proto->set_op_type(type);
        if (!domain.empty()) {
            proto->set_domain(domain);
            otherDomains.insert(domain);
        }
        setOnnxAttributes(proto, node.attrs);
        // Bodies as read, reading the outer values under the names written here.
        for (const Subgraph& subgraph : node.subgraphs) {
            onnx::AttributeProto* attr = proto->add_attribute();
            attr->set_name(subgraph.attribute);
            attr->set_type(onnx::AttributeProto_AttributeType_GRAPH);
            if (!subgraph.source || !attr->mutable_g()->ParseFromString(*subgraph.source))
                return fail("the " + subgraph.attribute + " of node '" + node.name +
                            "' was not read from ONNX and cannot be written as ONNX");
            std::size_t parameters = 0;
            while (
                parameters < subgraph.graph->size() &&
                subgraph.graph->node(NodeId(static_cast<std::uint32_t>(parameters))).isParameter())
                ++parameters;
            std::map<std::string, std::string> outer;
            for (std::size_t c = 0; c < node.captures && c < parameters; ++c) {
                const auto param = static_cast<std::uint32_t>(parameters - node.captures + c);
                outer.emplace(subgraph.graph->node(NodeId(param)).name,
                              valueName(node.inputs[node.ownInputs() + c]));
            }
            renameOuterValues(attr->mutable_g(), {}, outer);
        }
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
            if (!proto->output(static_cast<int>(k)).empty() && !outputNames.count({i, k}))
                setOnnxType(g->add_value_info(), proto->output(static_cast<int>(k)),
                            node.outputs[k]);
        }
    }
    if (anyCopy) {
        auto* copies = model.add_opset_import();
        copies->set_domain(kCopyDomain);
        copies->set_version(1);
    }
    for (const std::string& domain : otherDomains) {
        auto* set = model.add_opset_import();
        set->set_domain(domain);
        set->set_version(1);
    }
    for (const GraphOutput& output : graph.outputs())
        setOnnxType(g->add_output(), valueName(output.value), graph.type(output.value));
    std::string bytes;
    if (!model.SerializeToString(&bytes))
        return fail("the model could not be serialized (over 2 GiB?)");
    return bytes;
}

} // namespace placer
