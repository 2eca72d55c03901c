// Load-time evaluation (io/OnnxImporter.h): model functions expanded into their bodies, values
// given for shape-setting inputs bound, and every node whose inputs are known evaluated and made
// a constant, round by round with ONNX's shape inference between.
#include "io/OnnxImporter.h"

namespace placer {

namespace {

/// Whether `value` has the element type and the rank of graph input `input`, and its size
/// wherever the input fixes one.
bool fitsDeclaredInput(const onnx::ValueInfoProto& input, const HostTensor& value) {
    if (!input.type().has_tensor_type())
        return false;
    const auto& type = input.type().tensor_type();
    if (dtypeFromOnnx(type.elem_type()) != value.type.dtype)
        return false;
    if (!type.has_shape())
        return true;
    if (type.shape().dim_size() != value.type.rank())
        return false;
    for (int d = 0; d < type.shape().dim_size(); ++d) {
        const auto& dim = type.shape().dim(d);
        if (dim.has_dim_value() && dim.dim_value() != value.type.shape[static_cast<std::size_t>(d)])
            return false;
    }
    return true;
}

/// What tells a folded value at one size from the same at another: its bytes, or, past 8 KiB,
/// their ends (a large folded value is a transposed weight, the same at every size).
std::uint64_t bytesHash(std::string_view bytes) {
    constexpr std::size_t kEnds = 4096;
    std::uint64_t hash = 1469598103934665603ull;
    const auto mixIn = [&](std::string_view part) {
        for (const char c : part) {
            hash ^= static_cast<unsigned char>(c);
            hash *= 1099511628211ull;
        }
    };
    if (bytes.size() <= 2 * kEnds) {
        mixIn(bytes);
    } else {
        mixIn(bytes.substr(0, kEnds));
        mixIn(bytes.substr(bytes.size() - kEnds));
    }
    return hash ^ bytes.size();
}

} // namespace

/// Whether the engine has a kernel for a standard op (by its ONNX name).
bool OnnxImporter::engineRuns(const onnx::NodeProto& node) {
    if (!onnxStandardDomain(node))
        return false;
    const OpDef* op = OpRegistry::global().find(node.op_type());
    return op && op->dialect == OpDialect::Onnx && op->hasAnyKernel();
}

/// Standard ops the engine has no kernel for, but which ONNX defines as a function of other
/// ops (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, MeanVarianceNormalization, ...),
/// are replaced by their function bodies, until none is left.
OnnxImporter::Failure OnnxImporter::expandFunctions() {
    const int opset = m_graph.onnxOpset();
    bool expanded = false;
    for (int round = 0; round < 8; ++round) {
        m_types.clear();
        collectTypes();
        onnx::GraphProto& g = *m_model.mutable_graph();
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        nodes.Swap(g.mutable_node());
        bool changed = false;
        int counter = 0;
        for (onnx::NodeProto& node : nodes) {
            if (!onnxStandardDomain(node) || node.op_type() == "Constant" || engineRuns(node)) {
                *g.add_node() = std::move(node);
                continue;
            }
            const onnx::OpSchema* schema =
                onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
            onnx::FunctionProto function;
            bool have = false;
            try {
                if (schema && schema->HasFunction() && schema->GetFunction()) {
                    function = *schema->GetFunction();
                    have = true;
                } else if (schema && schema->HasContextDependentFunction()) {
                    std::vector<onnx::TypeProto> types;
                    for (const std::string& input : node.input()) {
                        onnx::TypeProto type;
                        if (const auto it = m_types.find(input); it != m_types.end())
                            *type.mutable_tensor_type() = *it->second;
                        types.push_back(type);
                    }
                    onnx::FunctionBodyBuildContextImpl context(node, types);
                    have = schema->BuildContextDependentFunction(context, function);
                }
                if (have) {
                    const std::string prefix =
                        (node.name().empty() ? node.op_type() : node.name()) + "/" +
                        std::to_string(counter++) + "/";
                    bindDefaultReferences(node, *schema, &function);
                    onnx::FunctionExpandHelper(node, function, g, prefix);
                    changed = true;
                    continue;
                }
            } catch (const std::exception& error) {
                warnOnce("the " + node.op_type() + " node '" + displayName(node) +
                         "' could not be expanded into ONNX's function for it: " +
                         firstLine(error.what()));
            }
            *g.add_node() = std::move(node);
        }
        if (!changed)
            break;
        expanded = true;
        if (auto error = inferShapes())
            return error;
    }
    if (expanded) {
        m_order.clear();
        m_graphInputs.clear();
        return topologicalOrder(&m_order);
    }
    return std::nullopt;
}

/// Attributes of a function body that refer to an attribute the caller leaves out take that
/// attribute's default from the caller's schema, or are dropped where it has none, so the
/// body's op uses its own default (ONNX 1.12's expansion passes 0 instead: a
/// SoftmaxCrossEntropyLoss without ignore_index would ignore class 0).
void OnnxImporter::bindDefaultReferences(const onnx::NodeProto& caller,
                                         const onnx::OpSchema& schema, onnx::FunctionProto* body) {
    for (onnx::NodeProto& node : *body->mutable_node()) {
        auto* attributes = node.mutable_attribute();
        for (int a = attributes->size() - 1; a >= 0; --a) {
            const std::string ref = attributes->at(a).ref_attr_name();
            if (ref.empty())
                continue;
            const bool bound =
                std::any_of(caller.attribute().begin(), caller.attribute().end(),
                            [&](const onnx::AttributeProto& c) { return c.name() == ref; });
            if (bound)
                continue;
            const auto declared = schema.attributes().find(ref);
            if (declared != schema.attributes().end() &&
                declared->second.default_value.type() !=
                    onnx::AttributeProto_AttributeType_UNDEFINED) {
                const std::string name = attributes->at(a).name();
                attributes->at(a) = declared->second.default_value;
                attributes->at(a).set_name(name);
            } else {
                attributes->DeleteSubrange(a, 1);
            }
        }
    }
}

/// Finds the graph inputs whose values set shapes; those with a given value become initializers.
OnnxImporter::Failure OnnxImporter::bindShapeInputs() {
    onnx::GraphProto& g = *m_model.mutable_graph();
    std::set<std::string> shapeValues;
    for (const onnx::NodeProto& node : g.node()) {
        for (int k = 0; k < node.input_size(); ++k) {
            if (onnxStandardDomain(node) && onnxInputSetsShapes(node.op_type(), k))
                shapeValues.insert(node.input(k));
        }
    }
    // And what those are computed from (a window's size through Cast and Sub to a Range),
    // up to Shape and Size, which read only their input's shape.
    std::unordered_map<std::string, const onnx::NodeProto*> producer;
    for (const onnx::NodeProto& node : g.node())
        for (const std::string& output : node.output())
            producer[output] = &node;
    std::vector<std::string> pending(shapeValues.begin(), shapeValues.end());
    while (!pending.empty()) {
        const std::string value = pending.back();
        pending.pop_back();
        const auto it = producer.find(value);
        if (it == producer.end() || it->second->op_type() == "Shape" ||
            it->second->op_type() == "Size")
            continue;
        for (const std::string& input : it->second->input()) {
            if (!input.empty() && shapeValues.insert(input).second)
                pending.push_back(input);
        }
    }
    std::set<std::string> initializers;
    for (const onnx::TensorProto& tensor : g.initializer())
        initializers.insert(tensor.name());
    for (const onnx::ValueInfoProto& input : g.input()) {
        if (initializers.count(input.name()) || !shapeValues.count(input.name()))
            continue;
        m_shapeInputs.insert(input.name());
        const auto given = m_options.shapeInputValues.find(input.name());
        if (given == m_options.shapeInputValues.end())
            continue;
        const HostTensor& value = given->second;
        // A value that does not fit the declared input is no fact to plan with: the run refuses
        // it with the input's name and both types.
        if (!fitsDeclaredInput(input, value))
            continue;
        onnx::TensorProto* tensor = g.add_initializer();
        tensor->set_name(input.name());
        tensor->set_data_type(onnxElementType(value.type.dtype));
        for (std::int64_t d : value.type.shape)
            tensor->add_dims(d);
        setOnnxTensorData(tensor, value.type.dtype, value.data.data(), value.data.size());
        m_boundInputs.insert(input.name());
    }
    return std::nullopt;
}

/// The static type of a value after shape inference, if every dimension is known.
std::optional<TensorType> OnnxImporter::staticType(const std::string& value) const {
    const auto it = m_types.find(value);
    if (it == m_types.end() || !it->second->has_elem_type() || !it->second->has_shape())
        return std::nullopt;
    const auto dtype = dtypeFromOnnx(it->second->elem_type());
    if (!dtype)
        return std::nullopt;
    TensorType type{{}, *dtype};
    std::int64_t count = 1;
    for (const auto& dim : it->second->shape().dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0)
            return std::nullopt;
        const std::int64_t d = dim.dim_value();
        if (d != 0 && count > kMaxElements / d)
            return std::nullopt;
        count *= d;
        type.shape.push_back(d);
    }
    return type;
}

/// Evaluates nodes whose inputs are all known and makes their outputs initializers, then
/// infers shapes again, until nothing changes. Constant nodes become initializers too.
Result<std::vector<TensorData>>
OnnxImporter::evaluateNode(const onnx::NodeProto& node, const std::vector<std::int64_t>& positions,
                           const std::vector<TensorType>& inputTypes,
                           const std::vector<const TensorData*>& inputs,
                           const std::vector<TensorType>& outputTypes) {
    const ConstantEvaluator& evaluate = constantEvaluator();
    if (!evaluate)
        return fail("nothing evaluates values at load in this program (no CPU kernels)");
    const OpDef* op = opFor(node);
    if (!op->hasKernel(DeviceKind::Cpu))
        return fail("no CPU kernel evaluates " + node.op_type());
    Node evaluated;
    evaluated.name = displayName(node);
    evaluated.op = op;
    readAttributes(node, &evaluated);
    if (!positions.empty() && positions.back() >= static_cast<std::int64_t>(positions.size()))
        evaluated.attrs.set(kInputPositionsAttr, positions);
    evaluated.outputs = outputTypes;
    return evaluate(evaluated, inputTypes, inputs, outputTypes, m_graph.onnxOpset());
}

Result<std::vector<HostTensor>>
OnnxImporter::evaluateKnown(const onnx::NodeProto& node, const std::vector<HostTensor>& inputs,
                            const std::vector<TensorType>& outputTypes) {
    std::vector<std::int64_t> positions;
    std::vector<TensorType> types;
    std::vector<const TensorData*> data;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        positions.push_back(static_cast<std::int64_t>(k));
        types.push_back(inputs[k].type);
        data.push_back(&inputs[k].data);
    }
    auto outputs = evaluateNode(node, positions, types, data, outputTypes);
    if (!outputs)
        return outputs.error();
    std::vector<HostTensor> results;
    for (std::size_t k = 0; k < outputTypes.size(); ++k)
        results.push_back(HostTensor{outputTypes[k], std::move(outputs.value()[k])});
    return results;
}

OnnxImporter::Failure OnnxImporter::foldConstants() {
    std::set<std::string> refused; // nodes the evaluator could not run: not tried again
    for (int round = 0; round < 64; ++round) {
        m_types.clear();
        collectTypes();
        onnx::GraphProto& g = *m_model.mutable_graph();
        std::unordered_map<std::string, const onnx::TensorProto*> known;
        for (const onnx::TensorProto& tensor : g.initializer())
            known.emplace(tensor.name(), &tensor);
        std::set<std::string> graphInputs;
        for (const onnx::ValueInfoProto& input : g.input()) {
            if (!known.count(input.name()))
                graphInputs.insert(input.name());
        }
        std::set<std::string> graphOutputs;
        for (const onnx::ValueInfoProto& output : g.output())
            graphOutputs.insert(output.name());
        std::vector<onnx::TensorProto> made;
        std::vector<bool> removed(static_cast<std::size_t>(g.node_size()), false);
        std::unordered_map<std::string, onnx::TensorProto> produced;
        bool foldedThisRound = false;
        for (int index = 0; index < g.node_size(); ++index) {
            const onnx::NodeProto& node = g.node(index);
            if (!onnxStandardDomain(node) || node.output_size() == 0)
                continue;
            // A graph output that is also a graph input or computed constant stays a node.
            if (node.op_type() == "Constant") {
                if (node.output_size() != 1 || graphOutputs.count(node.output(0)))
                    continue;
                auto tensor = constantTensor(node);
                if (!tensor || !dtypeFromOnnx(tensor->data_type()))
                    continue; // addConstantNode reports it
                tensor->set_name(node.output(0));
                produced.emplace(node.output(0), *tensor);
                removed[static_cast<std::size_t>(index)] = true;
                continue;
            }
            if (!m_options.foldConstants || neverFolded(node.op_type()) ||
                refused.count(displayName(node)))
                continue;
            if (!m_options.keepComputed.empty() &&
                std::any_of(node.output().begin(), node.output().end(),
                            [&](const std::string& output) {
                                return m_options.keepComputed.count(output) > 0;
                            }))
                continue;
            bool outputsKnown = true;
            std::vector<TensorType> outputTypes;
            for (const std::string& output : node.output()) {
                auto type = output.empty() ? std::nullopt : staticType(output);
                if (!type || graphOutputs.count(output)) {
                    outputsKnown = false;
                    break;
                }
                outputTypes.push_back(*type);
            }
            if (!outputsKnown)
                continue;
            std::vector<TensorData> results;
            if (node.op_type() == "Shape" || node.op_type() == "Size") {
                auto folded = foldShape(node, outputTypes);
                if (!folded)
                    continue;
                results = std::move(*folded);
            } else {
                if (!constantEvaluator())
                    continue;
                std::vector<TensorType> inputTypes;
                std::vector<TensorData> inputData;
                bool inputsKnown = true;
                std::int64_t inputBytes = 0;
                std::vector<std::int64_t> positions;
                for (int position = 0; position < node.input_size(); ++position) {
                    const std::string& input = node.input(position);
                    if (input.empty())
                        continue;
                    positions.push_back(position);
                    const onnx::TensorProto* tensor = nullptr;
                    if (const auto it = produced.find(input); it != produced.end())
                        tensor = &it->second;
                    else if (const auto k = known.find(input); k != known.end())
                        tensor = k->second;
                    if (!tensor || graphInputs.count(input)) {
                        inputsKnown = false;
                        break;
                    }
                    std::int64_t elements = 0;
                    const auto dtype = dtypeFromOnnx(tensor->data_type());
                    if (!dtype || tensorElements(*tensor, &elements)) {
                        inputsKnown = false;
                        break;
                    }
                    // Shape arithmetic, not weights: planning must not read those.
                    inputBytes += elements * dtypeSize(*dtype);
                    if (inputBytes > kFoldReadBytes) {
                        inputsKnown = false;
                        break;
                    }
                    auto data = copyOfData(*tensor);
                    if (!data) {
                        inputsKnown = false;
                        break;
                    }
                    inputTypes.push_back(TensorType{{tensor->dims().begin(), tensor->dims().end()},
                                                    *dtypeFromOnnx(tensor->data_type())});
                    inputData.push_back(data.take());
                }
                if (!inputsKnown)
                    continue;
                std::int64_t outputBytes = 0;
                for (const TensorType& type : outputTypes)
                    outputBytes += type.bytes();
                if (outputBytes > std::max(kFoldFreeBytes, inputBytes))
                    continue;
                std::vector<const TensorData*> pointers;
                for (const TensorData& data : inputData)
                    pointers.push_back(&data);
                auto outputs = evaluateNode(node, positions, inputTypes, pointers, outputTypes);
                if (!outputs) {
                    refused.insert(displayName(node));
                    continue;
                }
                results = outputs.take();
            }
            for (int k = 0; k < node.output_size(); ++k) {
                const TensorData& result = results[static_cast<std::size_t>(k)];
                Graph::FoldedValue folded;
                folded.name = node.output(k);
                folded.inputs.assign(node.input().begin(), node.input().end());
                folded.dtype = outputTypes[static_cast<std::size_t>(k)].dtype;
                folded.elements = outputTypes[static_cast<std::size_t>(k)].elementCount();
                if (result.size() <= Graph::FoldedValue::kWholeBytes)
                    folded.smallBytes = std::string(result.bytes());
                else
                    folded.hash = bytesHash(result.bytes());
                m_graph.foldedValues.push_back(std::move(folded));
                onnx::TensorProto tensor;
                tensor.set_name(node.output(k));
                tensor.set_data_type(
                    onnxElementType(outputTypes[static_cast<std::size_t>(k)].dtype));
                for (std::int64_t d : outputTypes[static_cast<std::size_t>(k)].shape)
                    tensor.add_dims(d);
                const std::string bytes = results[static_cast<std::size_t>(k)].release();
                setOnnxTensorData(&tensor, outputTypes[static_cast<std::size_t>(k)].dtype,
                                  bytes.data(), bytes.size());
                produced.emplace(node.output(k), std::move(tensor));
            }
            removed[static_cast<std::size_t>(index)] = true;
            foldedThisRound = true;
            ++m_folded;
        }
        if (produced.empty())
            break;
        // The folded nodes go; their outputs become initializers.
        std::set<std::string> readByFolded;
        google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
        for (int index = 0; index < g.node_size(); ++index) {
            if (removed[static_cast<std::size_t>(index)]) {
                for (const std::string& input : g.node(index).input())
                    readByFolded.insert(input);
            } else {
                *kept.Add() = g.node(index);
            }
        }
        g.mutable_node()->Swap(&kept);
        for (auto& [name, tensor] : produced)
            *g.add_initializer() = std::move(tensor);
        // Initializers only the folded nodes read are gone with them.
        std::set<std::string> used(graphOutputs.begin(), graphOutputs.end());
        for (const onnx::NodeProto& node : g.node()) {
            used.insert(node.input().begin(), node.input().end());
            for (const onnx::AttributeProto& attr : node.attribute()) {
                if (attr.has_g())
                    collectNames(attr.g(), &used);
            }
        }
        std::set<std::string> declaredInputs;
        for (const onnx::ValueInfoProto& input : g.input())
            declaredInputs.insert(input.name());
        google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
        for (onnx::TensorProto& tensor : *g.mutable_initializer()) {
            if (readByFolded.count(tensor.name()) && !used.count(tensor.name()) &&
                !declaredInputs.count(tensor.name()))
                continue;
            initializers.Add(std::move(tensor));
        }
        g.mutable_initializer()->Swap(&initializers);
        // Inferred types of the folded values are stale.
        google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
        for (onnx::ValueInfoProto& info : *g.mutable_value_info()) {
            if (!produced.count(info.name()))
                infos.Add(std::move(info));
        }
        g.mutable_value_info()->Swap(&infos);
        if (auto error = inferShapes())
            return error;
        if (!foldedThisRound)
            break; // only Constant nodes were turned into initializers
    }
    m_types.clear();
    m_order.clear();
    m_graphInputs.clear();
    if (auto error = topologicalOrder(&m_order))
        return error;
    if (m_folded > 0)
        m_graph.properties.emplace_back("onnx.folded_nodes", std::to_string(m_folded));
    return std::nullopt;
}

void OnnxImporter::collectNames(const onnx::GraphProto& graph, std::set<std::string>* names) {
    for (const onnx::NodeProto& node : graph.node()) {
        names->insert(node.input().begin(), node.input().end());
        for (const onnx::AttributeProto& attr : node.attribute()) {
            if (attr.has_g())
                collectNames(attr.g(), names);
        }
    }
}

/// Shape and Size of a statically shaped input: known without a kernel.
std::optional<std::vector<TensorData>>
OnnxImporter::foldShape(const onnx::NodeProto& node, const std::vector<TensorType>& outputs) {
    if (node.input_size() < 1 || outputs.size() != 1 || outputs[0].dtype != DType::Int64)
        return std::nullopt;
    const auto input = staticType(node.input(0));
    if (!input)
        return std::nullopt;
    std::vector<std::int64_t> values;
    if (node.op_type() == "Size") {
        values.push_back(input->elementCount());
    } else {
        const auto rank = static_cast<std::int64_t>(input->shape.size());
        std::int64_t start = 0, end = rank;
        for (const onnx::AttributeProto& attr : node.attribute()) {
            if (attr.name() == "start")
                start = attr.i();
            else if (attr.name() == "end")
                end = attr.i();
        }
        start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
        end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
        for (std::int64_t d = start; d < end; ++d)
            values.push_back(input->shape[static_cast<std::size_t>(d)]);
    }
    if (static_cast<std::int64_t>(values.size()) != outputs[0].elementCount())
        return std::nullopt;
    TensorData data(values.size() * sizeof(std::int64_t), '\0');
    if (!values.empty()) // a scalar's shape is empty, and memcpy takes no null pointer
        std::memcpy(data.data(), values.data(), data.size());
    return std::vector<TensorData>{std::move(data)};
}

/// A Constant node's value as a tensor proto (its element type not checked), or nullopt for
/// forms not understood.
std::optional<onnx::TensorProto> OnnxImporter::constantTensor(const onnx::NodeProto& proto) {
    for (const onnx::AttributeProto& attr : proto.attribute()) {
        onnx::TensorProto tensor;
        if (attr.name() == "value" && attr.has_t()) {
            tensor = attr.t();
        } else if (attr.name() == "value_float") {
            tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
            tensor.add_float_data(attr.f());
        } else if (attr.name() == "value_int") {
            tensor.set_data_type(onnx::TensorProto_DataType_INT64);
            tensor.add_int64_data(attr.i());
        } else if (attr.name() == "value_floats") {
            tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
            tensor.add_dims(attr.floats_size());
            *tensor.mutable_float_data() = attr.floats();
        } else if (attr.name() == "value_ints") {
            tensor.set_data_type(onnx::TensorProto_DataType_INT64);
            tensor.add_dims(attr.ints_size());
            *tensor.mutable_int64_data() = attr.ints();
        } else {
            continue;
        }
        if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
            return std::nullopt;
        return tensor;
    }
    return std::nullopt;
}

} // namespace placer
