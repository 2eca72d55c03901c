// Sequences and optionals lowered to tensors at load (see OnnxSequences.h).
#include "io/OnnxSequences.h"

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

namespace placer {

namespace {

using onnx::GraphProto;
using onnx::NodeProto;

/// A Loop is unrolled at most this many times: beyond it, a sequence built step by step is no
/// longer something to plan statically.
constexpr std::int64_t kMaxUnrolled = 4096;
/// Unrolling stops with an error beyond this many nodes in the main graph: loops inside loops
/// multiply.
constexpr std::size_t kMaxLoweredNodes = 1000000;
/// Known values are small integers: positions, conditions, trip counts.
constexpr std::int64_t kMaxKnownElements = 4096;

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

/// An integer tensor known at load: its elements, and its dimensions.
struct Known {
    std::vector<std::int64_t> values;
    std::vector<std::int64_t> dims;
    int type = onnx::TensorProto::INT64; ///< its ONNX element type
};

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

/// A small integer constant, read as the reader reads any tensor (readOnnxTensor).
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

/// A known value as a tensor of its element type.
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

/// The shape two shapes broadcast to (numpy's rules), or nothing when they do not.
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

/// The names a graph defines: its inputs, initializers and node outputs.
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

void renameFree(GraphProto* graph, std::map<std::string, std::string> renamed);

/// Renames what a node reads: its inputs, and the outer values its bodies read.
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

/// Renames the outer values a body reads (`renamed` maps old outer names to new ones).
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

/// A sequence or optional value: the tensors it holds.
struct Held {
    bool optional = false;
    bool present = true;  ///< an optional: holds a value
    bool sequence = true; ///< a sequence, or an optional sequence (else one tensor)
    std::vector<std::string> elements;
};

std::string describe(const NodeProto& node) {
    const std::string& name = node.name().empty()
                                  ? (node.output_size() > 0 ? node.output(0) : std::string())
                                  : node.name();
    return node.op_type() + " node '" + name + "'";
}

/// True if, in a Loop's body, the iteration number or a carried value reaches an input that sets
/// a shape (a Slice's bounds, a Reshape's shape): the body's shapes may then change from one
/// iteration to the next, which a body run as one op cannot have.
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

class Lowering {
public:
    Lowering(onnx::ModelProto& model, const SequenceLoweringInputs& inputs,
             std::vector<std::string>* warnings)
        : m_model(model), m_inputs(inputs), m_warnings(warnings) {}

    std::optional<std::string> run() {
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

private:
    using Failure = std::optional<std::string>;

    void collectNames(const GraphProto& graph) {
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

    /// A name no value has: `base`, or `base` with a number.
    std::string fresh(const std::string& base) {
        std::string name = base;
        for (int k = 1; m_names.count(name); ++k)
            name = base + "_" + std::to_string(k);
        m_names.insert(name);
        return name;
    }

    // --- inputs and outputs ----------------------------------------------------------------

    int givenLength(const std::string& name) const {
        int length = 0;
        while (m_inputs.inputShapes &&
               m_inputs.inputShapes->count(sequenceElementName(name, length)))
            ++length;
        return length;
    }

    const OnnxSequenceInput* given(const std::string& name) const {
        if (!m_inputs.sequences)
            return nullptr;
        const auto it = m_inputs.sequences->find(name);
        return it == m_inputs.sequences->end() ? nullptr : &it->second;
    }

    /// A value given for the input `name` (a position, a trip count) is known at load.
    void learnGivenValue(const std::string& name) {
        if (!m_inputs.values)
            return;
        const auto value = m_inputs.values->find(name);
        if (value == m_inputs.values->end())
            return;
        if (auto known = knownFromHost(value->second))
            m_known[name] = *known;
    }

    void addTensorInput(const std::string& name, const onnx::TypeProto& elementType,
                        std::vector<onnx::ValueInfoProto>* inputs) {
        onnx::ValueInfoProto input;
        input.set_name(name);
        *input.mutable_type() = elementType;
        m_names.insert(name);
        learnGivenValue(name);
        inputs->push_back(std::move(input));
    }

    Failure lowerInputs() {
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
            const onnx::TypeProto& element =
                held.sequence ? inner.sequence_type().elem_type() : inner;
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
                    m_warnings->push_back(
                        "sequence input '" + name + "' is planned with one element (give " +
                        "--input-shape " + sequenceElementName(name, 0) + "=... for each element)");
                }
                for (int k = 0; k < length; ++k) {
                    const std::string elementName = sequenceElementName(name, k);
                    if (m_names.count(elementName))
                        return "input '" + name + "': its element " + std::to_string(k) +
                               " would be named '" + elementName + "', which the graph uses";
                    if (!shaped &&
                        !(m_inputs.inputShapes && m_inputs.inputShapes->count(elementName)))
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

    Failure lowerOutputs() {
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
                if (auto error =
                        add(held.elements[k],
                            fresh(sequenceElementName(output.name(), static_cast<int>(k)))))
                    return error;
            }
        }
        graph.clear_output();
        for (auto& output : outputs)
            *graph.add_output() = std::move(output);
        return std::nullopt;
    }

    // --- emitting --------------------------------------------------------------------------

    void emit(NodeProto node) {
        for (const std::string& output : node.output())
            m_names.insert(output);
        evaluate(node);
        m_out.push_back(std::move(node));
    }

    void emitIdentity(const std::string& from, const std::string& to) {
        NodeProto node;
        node.set_op_type("Identity");
        node.set_name(to);
        node.add_input(from);
        node.add_output(to);
        emit(std::move(node));
    }

    /// A Constant node of int64 (or bool) elements.
    std::string emitConstant(const std::string& name, const std::vector<std::int64_t>& values,
                             const std::vector<std::int64_t>& dims, bool boolean = false) {
        NodeProto node;
        node.set_op_type("Constant");
        node.set_name(name);
        node.add_output(name);
        auto* attr = node.add_attribute();
        attr->set_name("value");
        attr->set_type(onnx::AttributeProto::TENSOR);
        onnx::TensorProto* tensor = attr->mutable_t();
        for (std::int64_t d : dims)
            tensor->add_dims(d);
        if (boolean) {
            tensor->set_data_type(onnx::TensorProto::BOOL);
            for (std::int64_t v : values)
                tensor->add_int32_data(v != 0 ? 1 : 0);
        } else {
            tensor->set_data_type(onnx::TensorProto::INT64);
            for (std::int64_t v : values)
                tensor->add_int64_data(v);
        }
        emit(std::move(node));
        return name;
    }

    /// An int64 initializer (an axes or split input).
    std::string addInitializer(const std::string& base, const std::vector<std::int64_t>& values) {
        const std::string name = fresh(base);
        onnx::TensorProto* tensor = m_model.mutable_graph()->add_initializer();
        tensor->set_name(name);
        tensor->set_data_type(onnx::TensorProto::INT64);
        tensor->add_dims(static_cast<std::int64_t>(values.size()));
        for (std::int64_t v : values)
            tensor->add_int64_data(v);
        m_known[name] =
            Known{values, {static_cast<std::int64_t>(values.size())}, onnx::TensorProto::INT64};
        return name;
    }

    /// Unsqueeze or Squeeze along one axis: axes as an input from opset 13, else an attribute.
    void emitAxisOp(const std::string& op, const std::string& input, const std::string& output,
                    std::int64_t axis) {
        NodeProto node;
        node.set_op_type(op);
        node.set_name(output);
        node.add_input(input);
        node.add_output(output);
        if (m_opset >= 13) {
            node.add_input(addInitializer(output + "_axes", {axis}));
        } else {
            auto* attr = node.add_attribute();
            attr->set_name("axes");
            attr->set_type(onnx::AttributeProto::INTS);
            attr->add_ints(axis);
        }
        emit(std::move(node));
    }

    /// Binds `output` to what `source` is: the same sequence, or the tensor through Identity.
    void bind(const std::string& output, const std::string& source) {
        if (output.empty())
            return;
        const auto held = m_held.find(source);
        if (held != m_held.end()) {
            Held copy = held->second;
            m_held[output] = std::move(copy);
            m_names.insert(output);
            return;
        }
        emitIdentity(source, output);
    }

    // --- values known at load --------------------------------------------------------------

    const Known* known(const std::string& name) const {
        const auto it = m_known.find(name);
        return it == m_known.end() ? nullptr : &it->second;
    }

    /// Integer arithmetic on values known at load, enough for positions and conditions.
    void evaluate(const NodeProto& node) {
        if (!onnxStandardDomain(node) || node.output_size() < 1)
            return;
        const std::string& op = node.op_type();
        if (op == "Constant") {
            if (const auto* value = attribute(node, "value"); value && value->has_t()) {
                if (auto result = knownFromProto(value->t()))
                    m_known[node.output(0)] = *result;
            } else if (const auto* i = attribute(node, "value_int")) {
                m_known[node.output(0)] = Known{{i->i()}, {}, onnx::TensorProto::INT64};
            } else if (const auto* ints = attribute(node, "value_ints")) {
                m_known[node.output(0)] = Known{{ints->ints().begin(), ints->ints().end()},
                                                {ints->ints_size()},
                                                onnx::TensorProto::INT64};
            }
            return;
        }
        std::vector<const Known*> in;
        for (const std::string& input : node.input()) {
            const Known* value = input.empty() ? nullptr : known(input);
            if (!value)
                return;
            in.push_back(value);
        }
        if (in.empty())
            return;
        Known result = *in[0];
        // Ops that only reshape what they read.
        if (op == "Identity") {
        } else if (op == "Unsqueeze" || op == "Reshape" || op == "Flatten") {
            result.dims = {static_cast<std::int64_t>(result.values.size())};
        } else if (op == "Squeeze") {
            result.dims =
                result.values.size() == 1
                    ? std::vector<std::int64_t>{}
                    : std::vector<std::int64_t>{static_cast<std::int64_t>(result.values.size())};
        } else if (auto computed = computeKnown(node, in)) {
            result = std::move(*computed);
        } else {
            return;
        }
        m_known[node.output(0)] = std::move(result);
    }

    /// Element-wise integer arithmetic, comparisons and logic on values known at load, and
    /// Cast between integer types, evaluated by the reader's one load-time evaluator (the CPU
    /// kernels, as folding at load runs them); nothing when there is none, the op is another,
    /// or the kernel refuses.
    std::optional<Known> computeKnown(const NodeProto& node, const std::vector<const Known*>& in) {
        static const std::set<std::string> kArithmetic{"Add", "Sub", "Mul", "Div",
                                                       "Mod", "Max", "Min"};
        static const std::set<std::string> kBoolean{
            "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"};
        static const std::set<int> kIntegral{onnx::TensorProto::INT64, onnx::TensorProto::INT32,
                                             onnx::TensorProto::INT16, onnx::TensorProto::INT8,
                                             onnx::TensorProto::UINT8, onnx::TensorProto::BOOL};
        if (!m_inputs.evaluate || !*m_inputs.evaluate)
            return std::nullopt;
        const std::string& op = node.op_type();
        Known shape{{}, in[0]->dims, in[0]->type};
        if (op == "Cast") {
            shape.type = static_cast<int>(intAttribute(node, "to", 0));
            if (!kIntegral.count(shape.type))
                return std::nullopt;
        } else if (op == "Not") {
            shape.type = onnx::TensorProto::BOOL;
        } else if (op == "Neg" || op == "Abs") {
        } else if (in.size() == 2 && (kArithmetic.count(op) || kBoolean.count(op))) {
            auto dims = broadcastDims(in[0]->dims, in[1]->dims);
            if (!dims)
                return std::nullopt;
            shape.dims = std::move(*dims);
            if (kBoolean.count(op))
                shape.type = onnx::TensorProto::BOOL;
        } else {
            return std::nullopt;
        }
        std::vector<HostTensor> inputs;
        for (const Known* value : in) {
            auto host = hostFromKnown(*value);
            if (!host)
                return std::nullopt;
            inputs.push_back(std::move(*host));
        }
        const auto dtype = dtypeFromOnnx(shape.type);
        if (!dtype)
            return std::nullopt;
        auto outputs = (*m_inputs.evaluate)(node, inputs, {TensorType{shape.dims, *dtype}});
        if (!outputs || outputs.value().size() != 1)
            return std::nullopt;
        return knownFromHost(outputs.value()[0]);
    }

    /// A scalar (or one-element) value known at load, or the reason it is not.
    std::optional<std::int64_t> knownScalar(const std::string& name) const {
        const Known* value = known(name);
        if (!value || value->values.size() != 1)
            return std::nullopt;
        return value->values[0];
    }

    std::string notKnown(const NodeProto& node, const std::string& what,
                         const std::string& name) const {
        return describe(node) + ": " + what + " '" + name + "' must be known at load (a " +
               "constant, or a value given for the input it comes from): the plan is made for " +
               "the lengths and shapes that follow from it";
    }

    // --- the rewriting ---------------------------------------------------------------------

    const Held* heldInput(const NodeProto& node, int k) const {
        if (k >= node.input_size() || node.input(k).empty())
            return nullptr;
        const auto it = m_held.find(node.input(k));
        return it == m_held.end() ? nullptr : &it->second;
    }

    Failure sequenceInput(const NodeProto& node, int k, const Held** held) const {
        *held = heldInput(node, k);
        if (!*held || !(*held)->sequence || ((*held)->optional && !(*held)->present))
            return describe(node) + ": input " + std::to_string(k) + " is not a sequence";
        return std::nullopt;
    }

    /// The position input `k` of a sequence node, normalised against `length`; `allowEnd` lets
    /// it be the length itself (an insertion at the back).
    Failure position(const NodeProto& node, int k, std::int64_t length, bool allowEnd,
                     std::int64_t* at) const {
        const auto value = knownScalar(node.input(k));
        if (!value)
            return notKnown(node, "the position", node.input(k));
        std::int64_t p = *value < 0 ? *value + length : *value;
        if (p < 0 || p > length || (p == length && !allowEnd))
            return describe(node) + ": position " + std::to_string(*value) +
                   " is outside the sequence of " + std::to_string(length) + " elements";
        *at = p;
        return std::nullopt;
    }

    /// A Loop whose body's shapes follow the iteration is unrolled where its trip count is known
    /// at load; otherwise it is left to be read as one op (and refused there if it cannot be).
    bool unrollsForShapes(const NodeProto& node) const {
        const GraphProto* loopBody = body(node, "body");
        const bool asked = m_inputs.unrollLoops && node.output_size() > 0 &&
                           m_inputs.unrollLoops->count(node.output(0));
        if (!loopBody || node.input_size() < 2 || node.input(0).empty() ||
            !(asked || shapesFollowIteration(*loopBody)))
            return false;
        const auto trips = knownScalar(node.input(0));
        return trips && *trips > 0 && *trips <= kMaxUnrolled &&
               (node.input(1).empty() || knownScalar(node.input(1)));
    }

    /// Whether a node reads a sequence or optional: as an input, from its bodies' outer
    /// values, or within its bodies.
    bool readsSequences(const NodeProto& node) const {
        for (int k = 0; k < node.input_size(); ++k)
            if (heldInput(node, k))
                return true;
        for (const auto& attr : node.attribute())
            if (attr.has_g() && usesSequences(attr.g()))
                return true;
        const std::vector<std::string> outer = onnxOuterNames(node);
        return std::any_of(outer.begin(), outer.end(),
                           [&](const std::string& name) { return m_held.count(name) > 0; });
    }

    bool needsLowering(const NodeProto& node) const {
        if (!onnxStandardDomain(node))
            return false;
        return sequenceOps().count(node.op_type()) || readsSequences(node) ||
               (node.op_type() == "Loop" && unrollsForShapes(node));
    }

    Failure lowerNode(const NodeProto& node) {
        if (!needsLowering(node)) {
            emit(node);
            return std::nullopt;
        }
        const std::string& op = node.op_type();
        const std::string out = node.output_size() > 0 ? node.output(0) : std::string();
        if (op == "SequenceEmpty") {
            m_held[out] = Held{};
        } else if (op == "SequenceConstruct") {
            Held held;
            for (const std::string& input : node.input())
                held.elements.push_back(input);
            m_held[out] = std::move(held);
        } else if (op == "SequenceInsert") {
            const Held* sequence = nullptr;
            if (auto error = sequenceInput(node, 0, &sequence))
                return error;
            const auto n = static_cast<std::int64_t>(sequence->elements.size());
            std::int64_t at = n;
            if (node.input_size() > 2 && !node.input(2).empty())
                if (auto error = position(node, 2, n, true, &at))
                    return error;
            Held held{false, true, true, sequence->elements};
            held.elements.insert(held.elements.begin() + at, node.input(1));
            m_held[out] = std::move(held);
        } else if (op == "SequenceErase") {
            const Held* sequence = nullptr;
            if (auto error = sequenceInput(node, 0, &sequence))
                return error;
            const auto n = static_cast<std::int64_t>(sequence->elements.size());
            if (n == 0)
                return describe(node) + ": the sequence is empty";
            std::int64_t at = n - 1;
            if (node.input_size() > 1 && !node.input(1).empty())
                if (auto error = position(node, 1, n, false, &at))
                    return error;
            Held held{false, true, true, sequence->elements};
            held.elements.erase(held.elements.begin() + at);
            m_held[out] = std::move(held);
        } else if (op == "SequenceAt") {
            const Held* sequence = nullptr;
            if (auto error = sequenceInput(node, 0, &sequence))
                return error;
            std::int64_t at = 0;
            if (auto error = position(node, 1, static_cast<std::int64_t>(sequence->elements.size()),
                                      false, &at))
                return error;
            bind(out, sequence->elements[static_cast<std::size_t>(at)]);
        } else if (op == "SequenceLength") {
            const Held* sequence = nullptr;
            if (auto error = sequenceInput(node, 0, &sequence))
                return error;
            emitConstant(out, {static_cast<std::int64_t>(sequence->elements.size())}, {});
        } else if (op == "SplitToSequence") {
            return lowerSplit(node);
        } else if (op == "ConcatFromSequence") {
            return lowerConcat(node);
        } else if (op == "Optional") {
            Held held;
            held.optional = true;
            if (node.input_size() > 0 && !node.input(0).empty()) {
                if (const Held* inner = heldInput(node, 0)) {
                    if (inner->optional)
                        return describe(node) + ": an optional of an optional is not supported";
                    held.elements = inner->elements;
                } else {
                    held.sequence = false;
                    held.elements = {node.input(0)};
                }
            } else {
                held.present = false;
                const auto* type = attribute(node, "type");
                held.sequence = type && type->has_tp() && type->tp().has_sequence_type();
            }
            m_held[out] = std::move(held);
        } else if (op == "OptionalHasElement") {
            const Held* held = heldInput(node, 0);
            const bool has = node.input_size() > 0 && !node.input(0).empty() &&
                             (!held || !held->optional || held->present);
            emitConstant(out, {has ? 1 : 0}, {}, true);
        } else if (op == "OptionalGetElement") {
            const Held* held = heldInput(node, 0);
            if (!held) {
                bind(out, node.input(0));
            } else if (held->optional && !held->present) {
                return describe(node) + ": the optional '" + node.input(0) + "' holds no value";
            } else if (!held->sequence) {
                bind(out, held->elements.at(0));
            } else {
                Held sequence{false, true, true, held->elements};
                m_held[out] = std::move(sequence);
            }
        } else if (op == "Identity") {
            bind(out, node.input(0));
        } else if (op == "If") {
            return lowerIf(node);
        } else if (op == "Loop") {
            return lowerLoop(node);
        } else if (op == "SequenceMap") {
            return lowerMap(node);
        } else {
            for (int k = 0; k < node.input_size(); ++k) {
                if (heldInput(node, k))
                    return describe(node) + " reads '" + node.input(k) + "', a sequence or " +
                           "optional, which only the sequence and optional operators may read";
            }
            return describe(node) + " has a body that uses sequences or optionals; only If, " +
                   "Loop and SequenceMap bodies may";
        }
        for (const std::string& output : node.output())
            m_names.insert(output);
        return std::nullopt;
    }

    /// Emits a body's nodes with its inputs bound to `bound`; *outputs gets the names its
    /// outputs then have.
    Failure inlineBody(const GraphProto& body, const std::vector<std::string>& bound,
                       const std::string& prefix, std::vector<std::string>* outputs) {
        if (static_cast<int>(bound.size()) != body.input_size())
            return "the body '" + body.name() + "' has " + std::to_string(body.input_size()) +
                   " inputs; it is given " + std::to_string(bound.size());
        std::map<std::string, std::string> renamed;
        for (int k = 0; k < body.input_size(); ++k)
            renamed[body.input(k).name()] = bound[static_cast<std::size_t>(k)];
        for (const onnx::TensorProto& tensor : body.initializer()) {
            onnx::TensorProto copy = tensor;
            copy.set_name(fresh(prefix + tensor.name()));
            renamed[tensor.name()] = copy.name();
            if (auto value = knownFromProto(copy))
                m_known[copy.name()] = *value;
            *m_model.mutable_graph()->add_initializer() = std::move(copy);
        }
        for (const NodeProto& original : body.node()) {
            NodeProto node = original;
            renameReads(&node, renamed);
            for (std::string& output : *node.mutable_output()) {
                if (output.empty())
                    continue;
                const std::string name = fresh(prefix + output);
                renamed[output] = name;
                output = name;
            }
            node.set_name(prefix +
                          (original.name().empty() ? original.op_type() : original.name()));
            if (auto error = lowerNode(node))
                return error;
        }
        outputs->clear();
        for (const auto& output : body.output()) {
            const auto it = renamed.find(output.name());
            outputs->push_back(it == renamed.end() ? output.name() : it->second);
        }
        return std::nullopt;
    }

    const GraphProto* body(const NodeProto& node, const std::string& name) const {
        const auto* attr = attribute(node, name);
        return attr && attr->has_g() ? &attr->g() : nullptr;
    }

    std::string prefixOf(const NodeProto& node) const {
        return (node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type())
                                    : node.name()) +
               "/";
    }

    Failure lowerIf(const NodeProto& node) {
        const auto condition = knownScalar(node.input(0));
        if (!condition)
            return notKnown(node, "the condition", node.input(0));
        const GraphProto* branch = body(node, *condition ? "then_branch" : "else_branch");
        if (!branch)
            return describe(node) + " has no branch";
        std::vector<std::string> outputs;
        if (auto error = inlineBody(*branch, {}, prefixOf(node) + (*condition ? "then/" : "else/"),
                                    &outputs))
            return describe(node) + ": " + *error;
        if (static_cast<int>(outputs.size()) != node.output_size())
            return describe(node) + ": its branch has " + std::to_string(outputs.size()) +
                   " outputs; the node has " + std::to_string(node.output_size());
        for (int k = 0; k < node.output_size(); ++k)
            bind(node.output(k), outputs[static_cast<std::size_t>(k)]);
        return std::nullopt;
    }

    Failure lowerLoop(const NodeProto& node) {
        const GraphProto* loopBody = body(node, "body");
        if (!loopBody || node.input_size() < 2)
            return describe(node) + " has no body or too few inputs";
        const bool forSequences = readsSequences(node);
        std::optional<std::int64_t> trips;
        if (!node.input(0).empty()) {
            trips = knownScalar(node.input(0));
            if (!trips)
                return notKnown(node, "the trip count", node.input(0));
            // Refused before any iteration: each may copy the sequences it grows.
            if (*trips > kMaxUnrolled)
                return describe(node) + " is unrolled at load, and its trip count " +
                       std::to_string(*trips) + " is more than " + std::to_string(kMaxUnrolled) +
                       " iterations";
        }
        bool condition = true;
        if (!node.input(1).empty()) {
            const auto value = knownScalar(node.input(1));
            if (!value)
                return notKnown(node, "the condition", node.input(1));
            condition = *value != 0;
        }
        const int carried = node.input_size() - 2;
        const int scans = loopBody->output_size() - 1 - carried;
        if (scans < 0 || loopBody->input_size() != carried + 2)
            return describe(node) + ": its body's inputs and outputs do not fit its " +
                   std::to_string(carried) + " carried values";
        std::vector<std::string> current(node.input().begin() + 2, node.input().end());
        std::vector<std::vector<std::string>> pieces(static_cast<std::size_t>(scans));
        const std::string prefix = prefixOf(node);
        std::int64_t iterations = 0;
        for (std::int64_t i = 0; condition && (!trips || i < *trips); ++i, ++iterations) {
            if (i >= kMaxUnrolled)
                return describe(node) + " is unrolled at load, and would run more than " +
                       std::to_string(kMaxUnrolled) + " iterations";
            if (m_out.size() > kMaxLoweredNodes)
                return describe(node) + " is unrolled at load, and would make more than " +
                       std::to_string(kMaxLoweredNodes) + " nodes";
            const std::string step = prefix + "iteration" + std::to_string(i) + "/";
            std::vector<std::string> bound;
            bound.push_back(emitConstant(fresh(step + "i"), {i}, {}));
            bound.push_back(emitConstant(fresh(step + "condition"), {1}, {}, true));
            bound.insert(bound.end(), current.begin(), current.end());
            std::vector<std::string> outputs;
            if (auto error = inlineBody(*loopBody, bound, step, &outputs))
                return describe(node) + ": " + *error;
            const auto next = knownScalar(outputs[0]);
            if (!next)
                return notKnown(node, "the condition its body computes,", outputs[0]);
            condition = *next != 0;
            for (int j = 0; j < carried; ++j)
                current[static_cast<std::size_t>(j)] = outputs[static_cast<std::size_t>(1 + j)];
            for (int s = 0; s < scans; ++s)
                pieces[static_cast<std::size_t>(s)].push_back(
                    outputs[static_cast<std::size_t>(1 + carried + s)]);
        }
        if (!forSequences)
            m_warnings->push_back(describe(node) + " is unrolled at load for its " +
                                  std::to_string(iterations) +
                                  " iterations: its body's shapes change from one iteration to "
                                  "the next, which a Loop run as one op cannot have");
        for (int j = 0; j < carried && j < node.output_size(); ++j)
            bind(node.output(j), current[static_cast<std::size_t>(j)]);
        for (int s = 0; s < scans && carried + s < node.output_size(); ++s) {
            const std::string& output = node.output(carried + s);
            if (output.empty())
                continue;
            const auto& parts = pieces[static_cast<std::size_t>(s)];
            if (parts.empty())
                return describe(node) + " runs no iteration, so its scan output '" + output +
                       "' has no element to take its shape from";
            if (std::any_of(parts.begin(), parts.end(),
                            [&](const std::string& part) { return m_held.count(part) > 0; }))
                return describe(node) + ": scan output '" + output + "' is a sequence";
            emitConcat(parts, 0, true, output);
        }
        return std::nullopt;
    }

    Failure lowerMap(const NodeProto& node) {
        const GraphProto* mapBody = body(node, "body");
        if (!mapBody)
            return describe(node) + " has no body";
        const Held* first = nullptr;
        if (auto error = sequenceInput(node, 0, &first))
            return error;
        const std::size_t n = first->elements.size();
        std::vector<std::vector<std::string>> results(static_cast<std::size_t>(node.output_size()));
        for (std::size_t i = 0; i < n; ++i) {
            if (m_out.size() > kMaxLoweredNodes)
                return describe(node) + " runs its body once per element, and would make more " +
                       "than " + std::to_string(kMaxLoweredNodes) + " nodes";
            std::vector<std::string> bound;
            for (int k = 0; k < node.input_size(); ++k) {
                const Held* held = heldInput(node, k);
                if (!held) {
                    bound.push_back(node.input(k));
                    continue;
                }
                if (!held->sequence || held->elements.size() != n)
                    return describe(node) + ": input " + std::to_string(k) + " is not a " +
                           "sequence of " + std::to_string(n) + " elements, as input 0 is";
                bound.push_back(held->elements[i]);
            }
            std::vector<std::string> outputs;
            if (auto error =
                    inlineBody(*mapBody, bound,
                               prefixOf(node) + "element" + std::to_string(i) + "/", &outputs))
                return describe(node) + ": " + *error;
            if (outputs.size() != results.size())
                return describe(node) + ": its body has " + std::to_string(outputs.size()) +
                       " outputs; the node has " + std::to_string(results.size());
            for (std::size_t k = 0; k < outputs.size(); ++k)
                results[k].push_back(outputs[k]);
        }
        for (int k = 0; k < node.output_size(); ++k) {
            if (node.output(k).empty())
                continue;
            m_held[node.output(k)] = Held{false, true, true, results[static_cast<std::size_t>(k)]};
        }
        return std::nullopt;
    }

    /// Shapes of tensors, by ONNX shape inference over what is emitted so far (inputs with the
    /// shapes given for them): -1 for a dimension it leaves open (a Slice whose bounds fold
    /// later); a tensor of unknown rank is left out.
    std::map<std::string, std::vector<std::int64_t>>
    shapesOf(const std::set<std::string>& names) const {
        onnx::ModelProto model = m_model;
        GraphProto& graph = *model.mutable_graph();
        graph.clear_node();
        // What is known at load goes in as values (ONNX's inference does not fold a Slice's
        // bounds computed from an iteration number).
        for (const NodeProto& node : m_out) {
            const bool known = node.output_size() == 1 && node.op_type() != "Constant" &&
                               m_known.count(node.output(0));
            if (!known) {
                *graph.add_node() = node;
                continue;
            }
            const Known& value = m_known.at(node.output(0));
            onnx::TensorProto* tensor = graph.add_initializer();
            tensor->set_name(node.output(0));
            tensor->set_data_type(value.type);
            for (std::int64_t d : value.dims)
                tensor->add_dims(d);
            for (std::int64_t v : value.values) {
                if (value.type == onnx::TensorProto::INT64)
                    tensor->add_int64_data(v);
                else
                    tensor->add_int32_data(static_cast<std::int32_t>(v));
            }
        }
        graph.clear_value_info();
        graph.clear_output();
        for (auto& input : *graph.mutable_input()) {
            if (!input.type().has_tensor_type())
                continue;
            auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
            if (m_inputs.inputShapes) {
                const auto given = m_inputs.inputShapes->find(input.name());
                if (given != m_inputs.inputShapes->end()) {
                    shape->clear_dim();
                    for (std::int64_t d : given->second)
                        shape->add_dim()->set_dim_value(d);
                }
            }
            for (auto& dim : *shape->mutable_dim())
                if (!dim.has_dim_value())
                    dim.set_dim_value(1);
        }
        std::map<std::string, std::vector<std::int64_t>> shapes;
        try {
            onnx::ShapeInferenceOptions options(false, 0, true);
            onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), options);
        } catch (const std::exception&) {
            return shapes;
        }
        for (const auto& list : {&graph.value_info(), &graph.input()}) {
            for (const auto& info : *list) {
                if (!names.count(info.name()) || !info.type().has_tensor_type() ||
                    !info.type().tensor_type().has_shape())
                    continue;
                std::vector<std::int64_t> dims;
                for (const auto& dim : info.type().tensor_type().shape().dim())
                    dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
                shapes[info.name()] = std::move(dims);
            }
        }
        return shapes;
    }

    Failure lowerSplit(const NodeProto& node) {
        const std::string& input = node.input(0);
        std::int64_t axis = intAttribute(node, "axis", 0);
        const bool keepDims = intAttribute(node, "keepdims", 1) != 0;
        std::vector<std::int64_t> sizes;
        bool squeeze = false;
        const bool splitGiven = node.input_size() > 1 && !node.input(1).empty();
        const Known* split = splitGiven ? known(node.input(1)) : nullptr;
        if (splitGiven && !split)
            return notKnown(node, "the split", node.input(1));
        if (split && !split->dims.empty()) {
            sizes = split->values;
        } else {
            const auto shapes = shapesOf({input});
            const auto found = shapes.find(input);
            const auto* shape = found == shapes.end() ? nullptr : &found->second;
            if (!shape || std::any_of(shape->begin(), shape->end(), [](auto d) { return d < 0; }))
                return describe(node) + ": the shape of '" + input + "' must be known at load";
            const auto rank = static_cast<std::int64_t>(shape->size());
            if (axis < -rank || axis >= rank)
                return describe(node) + ": axis " + std::to_string(axis) + " is outside rank " +
                       std::to_string(rank);
            if (axis < 0)
                axis += rank;
            const std::int64_t extent = (*shape)[static_cast<std::size_t>(axis)];
            const std::int64_t chunk = split ? split->values.at(0) : 1;
            if (chunk <= 0)
                return describe(node) + ": the split size must be positive";
            for (std::int64_t at = 0; at < extent; at += chunk)
                sizes.push_back(std::min(chunk, extent - at));
            squeeze = !split && !keepDims;
        }
        for (std::int64_t size : sizes) {
            if (size < 0)
                return describe(node) + ": a split size is negative";
        }
        NodeProto splitNode;
        splitNode.set_op_type("Split");
        splitNode.set_name(prefixOf(node) + "Split");
        splitNode.add_input(input);
        auto* axisAttr = splitNode.add_attribute();
        axisAttr->set_name("axis");
        axisAttr->set_type(onnx::AttributeProto::INT);
        axisAttr->set_i(axis);
        if (m_opset >= 13) {
            splitNode.add_input(addInitializer(prefixOf(node) + "sizes", sizes));
        } else {
            auto* attr = splitNode.add_attribute();
            attr->set_name("split");
            attr->set_type(onnx::AttributeProto::INTS);
            for (std::int64_t size : sizes)
                attr->add_ints(size);
        }
        Held held;
        for (std::size_t k = 0; k < sizes.size(); ++k) {
            const std::string part = fresh(node.output(0) + "_part" + std::to_string(k));
            splitNode.add_output(part);
            held.elements.push_back(part);
        }
        emit(std::move(splitNode));
        if (squeeze) {
            for (std::string& part : held.elements) {
                const std::string squeezed = fresh(part + "_squeezed");
                emitAxisOp("Squeeze", part, squeezed, axis);
                part = squeezed;
            }
        }
        m_held[node.output(0)] = std::move(held);
        return std::nullopt;
    }

    Failure lowerConcat(const NodeProto& node) {
        const Held* sequence = nullptr;
        if (auto error = sequenceInput(node, 0, &sequence))
            return error;
        if (sequence->elements.empty())
            return describe(node) + ": the sequence is empty, so the result has no shape";
        emitConcat(sequence->elements, intAttribute(node, "axis", 0),
                   intAttribute(node, "new_axis", 0) != 0, node.output(0));
        return std::nullopt;
    }

    /// Concat of `parts` along `axis` into `output`; with `newAxis`, each part first gains that
    /// axis (an Unsqueeze), so the parts are stacked.
    void emitConcat(const std::vector<std::string>& parts, std::int64_t axis, bool newAxis,
                    const std::string& output) {
        NodeProto concat;
        concat.set_op_type("Concat");
        concat.set_name(output);
        auto* attr = concat.add_attribute();
        attr->set_name("axis");
        attr->set_type(onnx::AttributeProto::INT);
        attr->set_i(axis);
        for (const std::string& part : parts) {
            if (!newAxis) {
                concat.add_input(part);
                continue;
            }
            const std::string expanded = fresh(part + "_expanded");
            emitAxisOp("Unsqueeze", part, expanded, axis);
            concat.add_input(expanded);
        }
        concat.add_output(output);
        emit(std::move(concat));
    }

    onnx::ModelProto& m_model;
    const SequenceLoweringInputs& m_inputs;
    std::vector<std::string>* m_warnings;
    int m_opset = 0;
    std::vector<NodeProto> m_out;
    std::map<std::string, Held> m_held;
    std::map<std::string, Known> m_known;
    std::set<std::string> m_names;
};

} // namespace

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
        onnx::checker::check_model(*model);
    } catch (const onnx::checker::ValidationError& error) {
        std::string line(error.what());
        return "not a valid ONNX model: " + line.substr(0, line.find('\n'));
    }
    return Lowering(*model, inputs, warnings).run();
}

} // namespace placer
