// Sequences and optionals lowered to tensors at load (see OnnxSequences.h): the helpers, the
// graph's sequence inputs and outputs, and the entry points. io/SequenceLowering.h lists the rest.
#include "io/SequenceLowering.h"

#include "io/OnnxProto.h"
#include "io/OnnxReader.h"
#include "ir/Scalar.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>

namespace placer::sequences {

using onnx::GraphProto;
using onnx::NodeProto;

const std::set<std::string>& sequenceOps() {
    static const std::set<std::string> kOps{
        "SequenceConstruct", "SequenceEmpty",  "SequenceInsert",     "SequenceErase",
        "SequenceAt",        "SequenceLength", "SplitToSequence",    "ConcatFromSequence",
        "SequenceMap",       "Optional",       "OptionalHasElement", "OptionalGetElement"};
    return kOps;
}

bool notTensor(const onnx::TypeProto& type) {
    return type.has_sequence_type() || type.has_optional_type();
}

std::optional<Known> knownFromHost(const HostTensor& tensor) {
    static const std::map<DType, int> kTypes{
        {DType::Int64, onnx::TensorProto::INT64}, {DType::Int32, onnx::TensorProto::INT32},
        {DType::Int16, onnx::TensorProto::INT16}, {DType::Int8, onnx::TensorProto::INT8},
        {DType::UInt8, onnx::TensorProto::UINT8}, {DType::Bool, onnx::TensorProto::BOOL}};
    const auto type = kTypes.find(tensor.type.dtype);
    const std::int64_t count = tensor.type.elementCount();
    const int size = dtypeSize(tensor.type.dtype);
    if (type == kTypes.end() || count > kMaxKnownElements ||
        tensor.data.size() != static_cast<std::size_t>(count * size))
        return std::nullopt;
    Known known{{}, tensor.type.shape, type->second};
    for (std::int64_t i = 0; i < count; ++i) {
        const auto value = decodeScalar(
            tensor.type.dtype,
            std::string_view(reinterpret_cast<const char*>(tensor.data.data()) + i * size,
                             static_cast<std::size_t>(size)));
        if (!value)
            return std::nullopt;
        known.values.push_back(static_cast<std::int64_t>(*value));
    }
    return known;
}

std::optional<Known> knownFromProto(const onnx::TensorProto& tensor) {
    std::int64_t count = 1;
    for (std::int64_t d : tensor.dims()) {
        if (d < 0 || d > kMaxKnownElements)
            return std::nullopt;
        count *= d;
    }
    if (count > kMaxKnownElements || tensor.data_location() == onnx::TensorProto::EXTERNAL)
        return std::nullopt;
    auto host = readOnnxTensor(tensor.SerializeAsString(), tensor.name());
    return host ? knownFromHost(host.value()) : std::nullopt;
}

std::optional<HostTensor> hostFromKnown(const Known& known) {
    const auto dtype = dtypeFromOnnx(known.type);
    if (!dtype)
        return std::nullopt;
    HostTensor tensor{TensorType{known.dims, *dtype}, TensorData()};
    if (tensor.type.elementCount() != static_cast<std::int64_t>(known.values.size()))
        return std::nullopt;
    // Integers of every width as C++ narrows them (bool: 0 or 1), int64 exactly.
    const bool boolean = *dtype == DType::Bool;
    const auto put = [&](auto element) {
        std::string bytes(known.values.size() * sizeof(element), '\0');
        for (std::size_t i = 0; i < known.values.size(); ++i) {
            const std::int64_t value = boolean ? known.values[i] != 0 : known.values[i];
            element = static_cast<decltype(element)>(value);
            std::memcpy(bytes.data() + i * sizeof(element), &element, sizeof(element));
        }
        tensor.data = TensorData(std::move(bytes));
    };
    switch (*dtype) {
    case DType::Int64:
        put(std::int64_t{});
        break;
    case DType::Int32:
        put(std::int32_t{});
        break;
    case DType::Int16:
        put(std::int16_t{});
        break;
    case DType::Int8:
        put(std::int8_t{});
        break;
    case DType::UInt8:
    case DType::Bool:
        put(std::uint8_t{});
        break;
    default:
        return std::nullopt;
    }
    return tensor;
}

std::optional<std::vector<std::int64_t>> broadcastDims(const std::vector<std::int64_t>& a,
                                                       const std::vector<std::int64_t>& b) {
    std::vector<std::int64_t> out(std::max(a.size(), b.size()), 1);
    for (std::size_t k = 0; k < out.size(); ++k) {
        const std::int64_t x = k < a.size() ? a[a.size() - 1 - k] : 1;
        const std::int64_t y = k < b.size() ? b[b.size() - 1 - k] : 1;
        if (x != y && x != 1 && y != 1)
            return std::nullopt;
        out[out.size() - 1 - k] = x == 1 ? y : x;
    }
    return out;
}

std::set<std::string> definedIn(const GraphProto& graph) {
    std::set<std::string> defined;
    for (const auto& input : graph.input())
        defined.insert(input.name());
    for (const auto& tensor : graph.initializer())
        defined.insert(tensor.name());
    for (const NodeProto& node : graph.node())
        for (const std::string& output : node.output())
            defined.insert(output);
    return defined;
}

void renameReads(NodeProto* node, const std::map<std::string, std::string>& renamed) {
    for (std::string& input : *node->mutable_input()) {
        const auto it = renamed.find(input);
        if (it != renamed.end())
            input = it->second;
    }
    for (auto& attr : *node->mutable_attribute()) {
        if (attr.has_g())
            renameFree(attr.mutable_g(), renamed);
        for (GraphProto& g : *attr.mutable_graphs())
            renameFree(&g, renamed);
    }
}

void renameFree(GraphProto* graph, std::map<std::string, std::string> renamed) {
    for (const std::string& name : definedIn(*graph))
        renamed.erase(name);
    if (renamed.empty())
        return;
    for (NodeProto& node : *graph->mutable_node())
        renameReads(&node, renamed);
    for (auto& output : *graph->mutable_output()) {
        const auto it = renamed.find(output.name());
        if (it != renamed.end())
            output.set_name(it->second);
    }
}

const onnx::AttributeProto* attribute(const NodeProto& node, const std::string& name) {
    for (const auto& attr : node.attribute()) {
        if (attr.name() == name)
            return &attr;
    }
    return nullptr;
}

std::int64_t intAttribute(const NodeProto& node, const std::string& name, std::int64_t fallback) {
    const auto* attr = attribute(node, name);
    return attr ? attr->i() : fallback;
}

std::string describe(const NodeProto& node) {
    const std::string& name = node.name().empty()
                                  ? (node.output_size() > 0 ? node.output(0) : std::string())
                                  : node.name();
    return node.op_type() + " node '" + name + "'";
}

bool shapesFollowIteration(const GraphProto& body) {
    std::set<std::string> varying;
    for (int k = 0; k < body.input_size(); ++k) {
        if (k != 1) // the condition decides whether to go on, not a shape
            varying.insert(body.input(k).name());
    }
    for (const NodeProto& node : body.node()) {
        if (node.op_type() == "Shape" || node.op_type() == "Size")
            continue; // they read only a shape
        bool reads = false;
        for (int k = 0; k < node.input_size(); ++k) {
            if (!varying.count(node.input(k)))
                continue;
            if (onnxStandardDomain(node) && onnxInputSetsShapes(node.op_type(), k))
                return true;
            reads = true;
        }
        if (reads)
            varying.insert(node.output().begin(), node.output().end());
    }
    return false;
}

bool hasLoopToUnroll(const GraphProto& graph) {
    for (const NodeProto& node : graph.node()) {
        if (!onnxStandardDomain(node) || node.op_type() != "Loop")
            continue;
        for (const auto& attr : node.attribute())
            if (attr.name() == "body" && attr.has_g() && shapesFollowIteration(attr.g()))
                return true;
    }
    return false;
}

std::optional<std::string> Lowering::run() {
    GraphProto& graph = *m_model.mutable_graph();
    for (const auto& import : m_model.opset_import()) {
        if (import.domain().empty() || import.domain() == "ai.onnx")
            m_opset = static_cast<int>(import.version());
    }
    collectNames(graph);
    for (const auto& tensor : graph.initializer()) {
        if (auto known = knownFromProto(tensor))
            m_known[tensor.name()] = *known;
    }
    if (auto error = lowerInputs())
        return error;
    for (const NodeProto& node : graph.node()) {
        if (auto error = lowerNode(node))
            return error;
    }
    if (auto error = lowerOutputs())
        return error;
    graph.clear_node();
    for (NodeProto& node : m_out)
        *graph.add_node() = std::move(node);
    // Types recorded for values that are now gone, or that were sequences.
    auto* infos = graph.mutable_value_info();
    for (int k = infos->size() - 1; k >= 0; --k) {
        if (m_held.count(infos->Get(k).name()) || notTensor(infos->Get(k).type()))
            infos->DeleteSubrange(k, 1);
    }
    return std::nullopt;
}

void Lowering::collectNames(const GraphProto& graph) {
    for (const std::string& name : definedIn(graph))
        m_names.insert(name);
    for (const auto& output : graph.output())
        m_names.insert(output.name());
    for (const NodeProto& node : graph.node()) {
        for (const auto& attr : node.attribute()) {
            if (attr.has_g())
                collectNames(attr.g());
            for (const GraphProto& g : attr.graphs())
                collectNames(g);
        }
    }
}

std::string Lowering::fresh(const std::string& base) {
    std::string name = base;
    for (int k = 1; m_names.count(name); ++k)
        name = base + "_" + std::to_string(k);
    m_names.insert(name);
    return name;
}

int Lowering::givenLength(const std::string& name) const {
    int length = 0;
    while (m_inputs.inputShapes && m_inputs.inputShapes->count(sequenceElementName(name, length)))
        ++length;
    return length;
}

const OnnxSequenceInput* Lowering::given(const std::string& name) const {
    if (!m_inputs.sequences)
        return nullptr;
    const auto it = m_inputs.sequences->find(name);
    return it == m_inputs.sequences->end() ? nullptr : &it->second;
}

void Lowering::learnGivenValue(const std::string& name) {
    if (!m_inputs.values)
        return;
    const auto value = m_inputs.values->find(name);
    if (value == m_inputs.values->end())
        return;
    if (auto known = knownFromHost(value->second))
        m_known[name] = *known;
}

void Lowering::addTensorInput(const std::string& name, const onnx::TypeProto& elementType,
                              std::vector<onnx::ValueInfoProto>* inputs) {
    onnx::ValueInfoProto input;
    input.set_name(name);
    *input.mutable_type() = elementType;
    m_names.insert(name);
    learnGivenValue(name);
    inputs->push_back(std::move(input));
}

Lowering::Failure Lowering::lowerInputs() {
    GraphProto& graph = *m_model.mutable_graph();
    std::vector<onnx::ValueInfoProto> inputs;
    for (const onnx::ValueInfoProto& input : graph.input()) {
        const std::string& name = input.name();
        const onnx::TypeProto& type = input.type();
        if (!notTensor(type)) {
            if (!m_known.count(name)) // an initializer's value wins
                learnGivenValue(name);
            inputs.push_back(input);
            continue;
        }
        Held held;
        held.optional = type.has_optional_type();
        const onnx::TypeProto& inner = held.optional ? type.optional_type().elem_type() : type;
        held.sequence = inner.has_sequence_type();
        const onnx::TypeProto& element = held.sequence ? inner.sequence_type().elem_type() : inner;
        if (!element.has_tensor_type())
            return "input '" + name + "' is a sequence of sequences or of optionals; only " +
                   "sequences of tensors are supported";
        const bool shaped = element.tensor_type().has_shape();
        const OnnxSequenceInput* explicitly = given(name);
        if (held.optional) {
            held.present = explicitly
                               ? explicitly->present
                               : (m_inputs.inputShapes &&
                                  (m_inputs.inputShapes->count(name) ||
                                   m_inputs.inputShapes->count(sequenceElementName(name, 0))));
            if (!held.present && !explicitly)
                m_warnings->push_back("optional input '" + name +
                                      "' is planned without a value (give --input-shape " +
                                      (held.sequence ? sequenceElementName(name, 0) : name) +
                                      "=... to plan it with one)");
        }
        if (held.present && !held.sequence) {
            if (!shaped && !(m_inputs.inputShapes && m_inputs.inputShapes->count(name)))
                return "input '" + name + "' declares no shape for its value; give it with " +
                       "--input-shape " + name + "=...";
            addTensorInput(name, element, &inputs);
            held.elements.push_back(name);
        } else if (held.present) {
            int length = explicitly ? explicitly->length : givenLength(name);
            if (!explicitly && length == 0) {
                length = 1;
                m_warnings->push_back("sequence input '" + name +
                                      "' is planned with one element (give " + "--input-shape " +
                                      sequenceElementName(name, 0) + "=... for each element)");
            }
            for (int k = 0; k < length; ++k) {
                const std::string elementName = sequenceElementName(name, k);
                if (m_names.count(elementName))
                    return "input '" + name + "': its element " + std::to_string(k) +
                           " would be named '" + elementName + "', which the graph uses";
                if (!shaped && !(m_inputs.inputShapes && m_inputs.inputShapes->count(elementName)))
                    return "input '" + name + "' declares no shape for its elements; give " +
                           "each one with --input-shape " + elementName + "=...";
                addTensorInput(elementName, element, &inputs);
                held.elements.push_back(elementName);
            }
        }
        m_held[name] = std::move(held);
    }
    graph.clear_input();
    for (auto& input : inputs)
        *graph.add_input() = std::move(input);
    return std::nullopt;
}

Lowering::Failure Lowering::lowerOutputs() {
    GraphProto& graph = *m_model.mutable_graph();
    std::set<std::string> sources;
    for (const onnx::ValueInfoProto& output : graph.output()) {
        const auto it = m_held.find(output.name());
        if (it != m_held.end())
            sources.insert(it->second.elements.begin(), it->second.elements.end());
    }
    // ONNX wants a graph output's shape: each element's, as inference finds it.
    const auto shapes = sources.empty() ? decltype(shapesOf({})){} : shapesOf(sources);
    std::vector<onnx::ValueInfoProto> outputs;
    for (const onnx::ValueInfoProto& output : graph.output()) {
        const auto it = m_held.find(output.name());
        if (it == m_held.end()) {
            outputs.push_back(output);
            continue;
        }
        const Held& held = it->second;
        if (held.optional && !held.present)
            continue;
        const onnx::TypeProto* declared = &output.type();
        if (declared->has_optional_type())
            declared = &declared->optional_type().elem_type();
        if (declared->has_sequence_type())
            declared = &declared->sequence_type().elem_type();
        auto add = [&](const std::string& source, const std::string& name) -> Failure {
            const auto shape = shapes.find(source);
            if (shape == shapes.end())
                return "output '" + output.name() + "': the rank of its element '" + source +
                       "' is not known at load";
            onnx::ValueInfoProto info;
            info.set_name(name);
            auto* tensor = info.mutable_type()->mutable_tensor_type();
            if (declared->has_tensor_type())
                tensor->set_elem_type(declared->tensor_type().elem_type());
            auto* dims = tensor->mutable_shape();
            for (std::int64_t d : shape->second) {
                auto* dim = dims->add_dim();
                if (d >= 0)
                    dim->set_dim_value(d);
            }
            if (source != name)
                emitIdentity(source, name);
            outputs.push_back(std::move(info));
            return std::nullopt;
        };
        if (!held.sequence) {
            // An optional tensor's value is output under the optional's name.
            if (auto error = add(held.elements.at(0), output.name()))
                return error;
            continue;
        }
        for (std::size_t k = 0; k < held.elements.size(); ++k) {
            if (auto error = add(held.elements[k],
                                 fresh(sequenceElementName(output.name(), static_cast<int>(k)))))
                return error;
        }
    }
    graph.clear_output();
    for (auto& output : outputs)
        *graph.add_output() = std::move(output);
    return std::nullopt;
}

} // namespace placer::sequences

namespace placer {

using namespace sequences;
using onnx::GraphProto;

std::string sequenceElementName(const std::string& name, int k) {
    return name + "[" + std::to_string(k) + "]";
}

bool usesSequences(const GraphProto& graph) {
    for (const auto& list : {&graph.input(), &graph.output()}) {
        for (const auto& info : *list) {
            if (notTensor(info.type()))
                return true;
        }
    }
    for (const NodeProto& node : graph.node()) {
        if (onnxStandardDomain(node) && sequenceOps().count(node.op_type()))
            return true;
        for (const auto& attr : node.attribute()) {
            if (attr.has_g() && usesSequences(attr.g()))
                return true;
            for (const GraphProto& g : attr.graphs())
                if (usesSequences(g))
                    return true;
        }
    }
    return false;
}

std::optional<std::string> lowerSequences(onnx::ModelProto* model,
                                          const SequenceLoweringInputs& inputs,
                                          std::vector<std::string>* warnings) {
    const bool asked = inputs.unrollLoops && !inputs.unrollLoops->empty();
    if (!model->has_graph() ||
        (!usesSequences(model->graph()) && !hasLoopToUnroll(model->graph()) && !asked))
        return std::nullopt;
    // The rewriting trusts each node's arity and attributes: ONNX's checker comes first.
    try {
        onnxSchemas(); // the contrib operators placer runs are checked as known ones
        onnx::checker::check_model(*model);
    } catch (const onnx::checker::ValidationError& error) {
        std::string line(error.what());
        return "not a valid ONNX model: " + line.substr(0, line.find('\n'));
    }
    return Lowering(*model, inputs, warnings).run();
}

} // namespace placer
