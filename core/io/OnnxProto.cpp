// Small questions about ONNX protobuf graphs (io/OnnxProto.h).
#include "io/OnnxProto.h"

#include <onnx/onnx_pb.h>

#include <map>
#include <set>

namespace placer {

namespace {

/// Every dtype with its ONNX element type.
constexpr std::pair<DType, int> kElementTypes[] = {
    {DType::Float32, onnx::TensorProto_DataType_FLOAT},
    {DType::Float16, onnx::TensorProto_DataType_FLOAT16},
    {DType::BFloat16, onnx::TensorProto_DataType_BFLOAT16},
    {DType::Float64, onnx::TensorProto_DataType_DOUBLE},
    {DType::Int8, onnx::TensorProto_DataType_INT8},
    {DType::Int16, onnx::TensorProto_DataType_INT16},
    {DType::Int32, onnx::TensorProto_DataType_INT32},
    {DType::Int64, onnx::TensorProto_DataType_INT64},
    {DType::UInt8, onnx::TensorProto_DataType_UINT8},
    {DType::Bool, onnx::TensorProto_DataType_BOOL},
    {DType::UInt16, onnx::TensorProto_DataType_UINT16},
    {DType::UInt32, onnx::TensorProto_DataType_UINT32},
    {DType::UInt64, onnx::TensorProto_DataType_UINT64},
    {DType::String, onnx::TensorProto_DataType_STRING},
};

} // namespace

int onnxElementType(DType dtype) {
    for (const auto& [known, element] : kElementTypes) {
        if (known == dtype)
            return element;
    }
    return onnx::TensorProto_DataType_UNDEFINED;
}

std::optional<DType> dtypeFromOnnx(int elementType) {
    for (const auto& [dtype, element] : kElementTypes) {
        if (element == elementType)
            return dtype;
    }
    return std::nullopt;
}

namespace {

void collectOuterNames(const onnx::GraphProto& graph, std::set<std::string> defined,
                       std::vector<std::string>* names, std::set<std::string>* seen) {
    for (const onnx::ValueInfoProto& input : graph.input())
        defined.insert(input.name());
    for (const onnx::TensorProto& tensor : graph.initializer())
        defined.insert(tensor.name());
    for (const onnx::NodeProto& node : graph.node()) {
        for (const std::string& input : node.input()) {
            if (!input.empty() && !defined.count(input) && seen->insert(input).second)
                names->push_back(input);
        }
        for (const onnx::AttributeProto& attr : node.attribute()) {
            if (attr.has_g())
                collectOuterNames(attr.g(), defined, names, seen);
            for (const onnx::GraphProto& nested : attr.graphs())
                collectOuterNames(nested, defined, names, seen);
        }
        for (const std::string& output : node.output())
            defined.insert(output);
    }
    for (const onnx::ValueInfoProto& output : graph.output()) {
        if (!defined.count(output.name()) && seen->insert(output.name()).second)
            names->push_back(output.name()); // a body that returns an outer value
    }
}

} // namespace

bool onnxStandardDomain(const onnx::NodeProto& node) {
    return node.domain().empty() || node.domain() == "ai.onnx";
}

bool onnxInputSetsShapes(const std::string& op, int input) {
    static const std::map<std::string, std::set<int>> kInputs{
        {"Reshape", {1}},
        {"Expand", {1}},
        {"Tile", {1}},
        {"Slice", {1, 2, 3, 4}},
        {"Pad", {1, 3}},
        {"Squeeze", {1}},
        {"Unsqueeze", {1}},
        {"ReduceSum", {1}},
        {"Range", {0, 1, 2}},
        {"OneHot", {1}},
        {"TopK", {1}},
        {"Resize", {1, 2, 3}},
        {"Upsample", {1}},
        {"Split", {1}},
        {"ConstantOfShape", {0}},
        {"CenterCropPad", {1}},
        {"Col2Im", {1, 2}},
        {"DFT", {1}},
        {"HannWindow", {0}},
        {"HammingWindow", {0}},
        {"BlackmanWindow", {0}},
        {"MelWeightMatrix", {0, 1, 2}},
        {"STFT", {1, 3}},
        {"Loop", {0}},
        // the present cache's length
        {"com.microsoft.GroupQueryAttention", {6}}};
    const auto it = kInputs.find(op);
    return it != kInputs.end() && it->second.count(input) > 0;
}

std::vector<std::string> onnxOuterNames(const onnx::NodeProto& node) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (const onnx::AttributeProto& attr : node.attribute()) {
        if (attr.has_g())
            collectOuterNames(attr.g(), {}, &names, &seen);
        for (const onnx::GraphProto& graph : attr.graphs())
            collectOuterNames(graph, {}, &names, &seen);
    }
    return names;
}

} // namespace placer
