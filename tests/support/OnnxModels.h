// Building small ONNX models with onnx's protobuf classes, for the tests and benchmarks that need
// a model no committed file has.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

namespace placer::test {

/// An opset-13 model with an empty graph called `name`.
inline onnx::ModelProto emptyModel(const std::string& name) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    model.mutable_graph()->set_name(name);
    return model;
}

/// A graph input or output (`list` is the graph's inputs or outputs) with a static shape.
inline void addValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list,
                     const std::string& name, const std::vector<std::int64_t>& shape,
                     int elemType = onnx::TensorProto_DataType_FLOAT) {
    onnx::ValueInfoProto* info = list->Add();
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(elemType);
    for (std::int64_t d : shape)
        type->mutable_shape()->add_dim()->set_dim_value(d);
}

/// A float32 initializer with dims and no data yet.
inline onnx::TensorProto* addInitializer(onnx::GraphProto* graph, const std::string& name,
                                         const std::vector<std::int64_t>& dims) {
    onnx::TensorProto* tensor = graph->add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (std::int64_t d : dims)
        tensor->add_dims(d);
    return tensor;
}

inline onnx::TensorProto* addInitializer(onnx::ModelProto& model, const std::string& name,
                                         const std::vector<std::int64_t>& dims) {
    return addInitializer(model.mutable_graph(), name, dims);
}

/// A node named after its first output.
inline onnx::NodeProto* addNode(onnx::GraphProto* graph, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
    onnx::NodeProto* node = graph->add_node();
    node->set_op_type(op);
    node->set_name(outputs[0]);
    for (const std::string& input : inputs)
        node->add_input(input);
    for (const std::string& output : outputs)
        node->add_output(output);
    return node;
}

inline onnx::NodeProto* addNode(onnx::ModelProto& model, const std::string& op,
                                const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs) {
    return addNode(model.mutable_graph(), op, inputs, outputs);
}

/// A node with one output.
inline onnx::NodeProto* addOp(onnx::GraphProto* graph, const std::string& op,
                              const std::vector<std::string>& inputs, const std::string& output) {
    return addNode(graph, op, inputs, std::vector<std::string>{output});
}

/// An integer-list attribute ("kernel_shape", "pads", "perm", ...).
inline void setInts(onnx::NodeProto* node, const std::string& name,
                    const std::vector<std::int64_t>& values) {
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (std::int64_t v : values)
        attr->add_ints(v);
}

inline void setInt(onnx::NodeProto* node, const std::string& name, std::int64_t value) {
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto_AttributeType_INT);
    attr->set_i(value);
}

inline void setFloat(onnx::NodeProto* node, const std::string& name, float value) {
    onnx::AttributeProto* attr = node->add_attribute();
    attr->set_name(name);
    attr->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    attr->set_f(value);
}

inline std::string bytesOf(const onnx::ModelProto& model) {
    std::string bytes;
    model.SerializeToString(&bytes);
    return bytes;
}

} // namespace placer::test
