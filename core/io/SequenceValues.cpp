// Lowering sequences (io/SequenceLowering.h): the nodes it emits, and the values known at load
// (positions, lengths, conditions) that decide what it unrolls.
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

void Lowering::emit(NodeProto node) {
    for (const std::string& output : node.output())
        m_names.insert(output);
    evaluate(node);
    m_out.push_back(std::move(node));
}

void Lowering::emitIdentity(const std::string& from, const std::string& to) {
    NodeProto node;
    node.set_op_type("Identity");
    node.set_name(to);
    node.add_input(from);
    node.add_output(to);
    emit(std::move(node));
}

std::string Lowering::emitConstant(const std::string& name, const std::vector<std::int64_t>& values,
                                   const std::vector<std::int64_t>& dims, bool boolean) {
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

std::string Lowering::addInitializer(const std::string& base,
                                     const std::vector<std::int64_t>& values) {
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

void Lowering::emitAxisOp(const std::string& op, const std::string& input,
                          const std::string& output, std::int64_t axis) {
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

void Lowering::bind(const std::string& output, const std::string& source) {
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

const Known* Lowering::known(const std::string& name) const {
    const auto it = m_known.find(name);
    return it == m_known.end() ? nullptr : &it->second;
}

void Lowering::evaluate(const NodeProto& node) {
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

std::optional<Known> Lowering::computeKnown(const NodeProto& node,
                                            const std::vector<const Known*>& in) {
    static const std::set<std::string> kArithmetic{"Add", "Sub", "Mul", "Div", "Mod", "Max", "Min"};
    static const std::set<std::string> kBoolean{"Equal",          "Less", "LessOrEqual", "Greater",
                                                "GreaterOrEqual", "And",  "Or",          "Xor"};
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

std::optional<std::int64_t> Lowering::knownScalar(const std::string& name) const {
    const Known* value = known(name);
    if (!value || value->values.size() != 1)
        return std::nullopt;
    return value->values[0];
}

std::string Lowering::notKnown(const NodeProto& node, const std::string& what,
                               const std::string& name) const {
    return describe(node) + ": " + what + " '" + name + "' must be known at load (a " +
           "constant, or a value given for the input it comes from): the plan is made for " +
           "the lengths and shapes that follow from it";
}

const Held* Lowering::heldInput(const NodeProto& node, int k) const {
    if (k >= node.input_size() || node.input(k).empty())
        return nullptr;
    const auto it = m_held.find(node.input(k));
    return it == m_held.end() ? nullptr : &it->second;
}

Lowering::Failure Lowering::sequenceInput(const NodeProto& node, int k, const Held** held) const {
    *held = heldInput(node, k);
    if (!*held || !(*held)->sequence || ((*held)->optional && !(*held)->present))
        return describe(node) + ": input " + std::to_string(k) + " is not a sequence";
    return std::nullopt;
}

Lowering::Failure Lowering::position(const NodeProto& node, int k, std::int64_t length,
                                     bool allowEnd, std::int64_t* at) const {
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

} // namespace placer::sequences
