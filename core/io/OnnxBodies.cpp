// The bodies of control-flow nodes (io/OnnxImporter.h): each body read as a graph of its own,
// its formal inputs and captured values typed, and its outputs' types carried back to the node.
#include "io/OnnxImporter.h"

namespace placer {

/// The inputs a control-flow node gives each of its bodies (before the outer values).
Result<std::vector<TensorType>> OnnxImporter::formalBodyInputs(const onnx::NodeProto& proto,
                                                               const Node& node) const {
    const std::string& op = proto.op_type();
    std::vector<TensorType> formal;
    if (op == "Loop") {
        const LoopLayout layout = loopLayout(node, node.inputs.size());
        formal.push_back(TensorType{{}, DType::Int64});
        formal.push_back(TensorType{{}, DType::Bool});
        for (std::size_t k = 0; k < layout.carried; ++k)
            formal.push_back(m_graph.type(node.inputs[layout.firstCarried + k]));
    } else if (op == "Scan") {
        const ScanLayout layout = scanLayout(node, node.inputs.size());
        for (std::size_t k = 0; k < layout.states; ++k)
            formal.push_back(m_graph.type(node.inputs[k]));
        for (std::size_t j = 0; j < layout.scanInputs; ++j) {
            TensorType slice = m_graph.type(node.inputs[layout.states + j]);
            const auto rank = static_cast<std::int64_t>(slice.shape.size());
            std::int64_t axis = layout.inputAxes[j];
            axis = axis < 0 ? axis + rank : axis;
            if (axis < 0 || axis >= rank)
                return fail("Scan node '" + node.name + "': scan input " + std::to_string(j) +
                            " of rank " + std::to_string(rank) + " has no axis " +
                            std::to_string(layout.inputAxes[j]));
            slice.shape.erase(slice.shape.begin() + axis);
            formal.push_back(slice);
        }
    }
    return formal;
}

/// If, Loop and Scan: every graph attribute is read as a body of its own (readBody), typed
/// by ONNX shape inference from what this node gives it. The outer values the bodies read
/// become the node's last inputs, so that the plan sees them as data flow. The node's
/// outputs are typed from the bodies' outputs.
OnnxImporter::Failure OnnxImporter::readBodies(const onnx::NodeProto& proto, Node* node) {
    const std::string& op = proto.op_type();
    auto failNode = [&](const std::string& message) {
        return fail(op + " node '" + node->name + "': " + message);
    };
    const std::vector<std::string> outer = onnxOuterNames(proto);
    std::vector<TensorType> outerTypes;
    for (const std::string& value : outer) {
        const auto it = m_values.find(value);
        if (it == m_values.end())
            return failNode("its body reads '" + value + "', which nothing before it produces");
        node->inputs.push_back(it->second);
        outerTypes.push_back(m_graph.type(it->second));
    }
    node->captures = static_cast<std::uint32_t>(outer.size());
    auto formal = formalBodyInputs(proto, *node);
    if (!formal)
        return formal.error();
    // An If's branch runs once a run, and a Loop whose carried values change shape runs node by
    // node: their values' shapes may be found at run time.
    const bool runTimeLoop = op == "Loop" && !m_body && proto.output_size() > 0 &&
                             m_options.runTimeLoops.count(proto.output(0)) > 0;
    const bool shapesAtRun = op == "If" || runTimeLoop;
    for (const onnx::AttributeProto& attr : proto.attribute()) {
        if (!attr.has_g())
            continue;
        const onnx::GraphProto& source = attr.g();
        if (source.input_size() != static_cast<int>(formal.value().size()))
            return failNode("its " + attr.name() + " has " + std::to_string(source.input_size()) +
                            " inputs, but the node " + "gives it " +
                            std::to_string(formal.value().size()));
        onnx::ModelProto model;
        model.set_ir_version(m_model.ir_version());
        *model.mutable_opset_import() = m_model.opset_import();
        onnx::GraphProto& g = *model.mutable_graph();
        g = source;
        for (int k = 0; k < g.input_size(); ++k) {
            setOnnxType(g.mutable_input(k), g.input(k).name(),
                        formal.value()[static_cast<std::size_t>(k)]);
            if (runTimeLoop && k >= 2) // a carried value: its rank, and no size
                for (auto& dim : *g.mutable_input(k)
                                      ->mutable_type()
                                      ->mutable_tensor_type()
                                      ->mutable_shape()
                                      ->mutable_dim())
                    dim.set_dim_param("carried_" + std::to_string(k));
        }
        for (std::size_t c = 0; c < outer.size(); ++c) {
            onnx::ValueInfoProto* input = g.add_input();
            setOnnxType(input, outer[c], outerTypes[c]);
            // A value whose shape is found at run time has a stand-in, not even of its rank:
            // the body is told its element type alone.
            if (placer::shapeFoundAtRun(m_graph, node->inputs[node->ownInputs() + c]))
                input->mutable_type()->mutable_tensor_type()->clear_shape();
            // An outer constant's value, so that shape inference and folding see it.
            const Node& producer = m_graph.node(node->inputs[node->ownInputs() + c].node);
            if (producer.isConstant() && producer.data &&
                static_cast<std::int64_t>(producer.data->size()) <= kFoldFreeBytes) {
                onnx::TensorProto* tensor = g.add_initializer();
                tensor->set_name(outer[c]);
                tensor->set_data_type(onnxElementType(outerTypes[c].dtype));
                for (std::int64_t d : outerTypes[c].shape)
                    tensor->add_dims(d);
                tensor->set_raw_data(producer.data->data(), producer.data->size());
            }
        }
        OnnxImporter reader(m_file, &m_devices, true, m_warnings, m_options);
        auto body = reader.readBody(std::move(model), m_graph.properties, shapesAtRun);
        if (!body)
            return failNode("in its " + attr.name() + ": " + body.error().message);
        node->subgraphs.push_back(
            Subgraph{attr.name(), std::make_shared<const Graph>(body.take()),
                     std::make_shared<const std::string>(source.SerializeAsString())});
    }
    return typeBodyOutputs(proto, node, formal.value());
}

/// ONNX's inference leaves a Loop's outputs without shapes (they may change per iteration);
/// the bodies fixed them, so they are told to ONNX, and what follows is inferred again.
OnnxImporter::Failure OnnxImporter::refineInferredTypes(const onnx::NodeProto& proto,
                                                        const Node& node) {
    onnx::GraphProto& g = *m_model.mutable_graph();
    bool refined = false;
    for (int k = 0; k < proto.output_size() && k < static_cast<int>(node.outputs.size()); ++k) {
        const std::string& name = proto.output(k);
        // A shape found at run time has only a stand-in here, which is no fact to tell.
        if (name.empty() || staticType(name) || node.runTimeShape(static_cast<std::size_t>(k)))
            continue;
        onnx::ValueInfoProto* info = nullptr;
        for (auto* list : {g.mutable_output(), g.mutable_value_info()}) {
            for (onnx::ValueInfoProto& entry : *list) {
                if (!info && entry.name() == name)
                    info = &entry;
            }
        }
        if (!info)
            info = g.add_value_info();
        setOnnxType(info, name, node.outputs[static_cast<std::size_t>(k)]);
        refined = true;
    }
    if (!refined)
        return std::nullopt;
    m_types.clear();
    if (auto error = inferShapes())
        return error;
    collectTypes();
    return std::nullopt;
}

/// A control-flow node's output types, from its bodies' outputs.
OnnxImporter::Failure OnnxImporter::typeBodyOutputs(const onnx::NodeProto& proto, Node* node,
                                                    const std::vector<TensorType>& formal) {
    const std::string& op = proto.op_type();
    auto failNode = [&](const std::string& message) {
        return fail(op + " node '" + node->name + "': " + message);
    };
    auto bodyOutput = [&](std::size_t body, std::size_t k) {
        const Graph& graph = *node->subgraphs[body].graph;
        return graph.type(graph.outputs()[k].value);
    };
    const std::size_t outputs = node->outputs.size();
    auto expectOutputs = [&](std::size_t body, std::size_t count) -> Failure {
        const Subgraph& subgraph = node->subgraphs[body];
        if (subgraph.graph->outputs().size() != count)
            return failNode("its " + subgraph.attribute + " has " +
                            std::to_string(subgraph.graph->outputs().size()) +
                            " outputs; it needs " + std::to_string(count));
        return std::nullopt;
    };
    if (op == "If") {
        if (node->subgraphs.size() != 2 ||
            node->subgraphs[0].attribute == node->subgraphs[1].attribute)
            return failNode("it needs a then_branch and an else_branch");
        if (node->subgraphs[0].attribute != "then_branch")
            std::swap(node->subgraphs[0], node->subgraphs[1]);
        for (std::size_t b = 0; b < 2; ++b) {
            if (auto error = expectOutputs(b, outputs))
                return error;
        }
        for (std::size_t k = 0; k < outputs; ++k) {
            const TensorType then = bodyOutput(0, k), otherwise = bodyOutput(1, k);
            if (then.dtype != otherwise.dtype)
                return failNode("output " + std::to_string(k) + " is " + then.toShortString() +
                                " in then_branch and " + otherwise.toShortString() +
                                " in else_branch; both branches must give one element type");
            node->outputs[k] = then;
            // Branches of other shapes, or a shape found as a branch runs: the output's shape
            // is the taken branch's, found at run time.
            const bool atRun =
                then != otherwise ||
                placer::shapeFoundAtRun(*node->subgraphs[0].graph,
                                        node->subgraphs[0].graph->outputs()[k].value) ||
                placer::shapeFoundAtRun(*node->subgraphs[1].graph,
                                        node->subgraphs[1].graph->outputs()[k].value);
            if (atRun) {
                node->runTimeShapes.resize(outputs, false);
                node->runTimeShapes[k] = true;
            }
        }
        return std::nullopt;
    }
    if (node->subgraphs.size() != 1)
        return failNode("it needs one body");
    if (op == "Loop") {
        const LoopLayout layout = loopLayout(*node, node->inputs.size());
        if (auto error = expectOutputs(0, 1 + layout.carried + layout.scanOutputs))
            return error;
        if (m_options.runTimeLoops.count(proto.output(0)) > 0 && !m_body) {
            // Every output's shape is found as the loop runs: stand-ins here, a row per scan.
            for (std::size_t k = 0; k < outputs; ++k) {
                TensorType type = k < layout.carried ? formal[2 + k] : bodyOutput(0, 1 + k);
                if (k >= layout.carried)
                    type.shape.insert(type.shape.begin(), 1);
                node->outputs[k] = type;
            }
            node->runTimeShapes.assign(outputs, true);
            warnOnce("Loop node '" + node->name + "': its carried values change shape from one " +
                     "iteration to the next and its trip count is known only at run time, so " +
                     "it runs node by node with shapes found then");
            return std::nullopt;
        }
        for (std::size_t k = 0; k < layout.carried; ++k) {
            const TensorType out = bodyOutput(0, 1 + k);
            if (out != formal[2 + k])
                return failNode("loop-carried value " + std::to_string(k) + " enters the " +
                                "body as " + formal[2 + k].toShortString() + " and leaves it as " +
                                out.toShortString() +
                                "; a carried value must keep its type and shape");
            node->outputs[k] = out;
        }
        auto constant = [&](std::size_t k) -> const TensorData* {
            const Node& producer = m_graph.node(node->inputs[k].node);
            return producer.isConstant() ? producer.data.get() : nullptr;
        };
        std::optional<std::int64_t> rows = exactTripCount(*node, node->inputs.size(), constant);
        if (!rows && layout.tripCount >= 0) {
            if (const TensorData* count = constant(static_cast<std::size_t>(layout.tripCount));
                count && count->size() == sizeof(std::int64_t)) {
                std::int64_t trips = 0;
                std::memcpy(&trips, count->data(), sizeof trips);
                rows = std::max<std::int64_t>(trips, 0); // at most that many
            }
        }
        for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
            const TensorType slice = bodyOutput(0, 1 + layout.carried + j);
            const std::string& name = proto.output(static_cast<int>(layout.carried + j));
            std::optional<std::int64_t> length = rows;
            // Without a constant trip count: the length ONNX inferred or the model declares.
            if (const auto declared = name.empty() ? std::nullopt : staticType(name);
                !length && declared && declared->rank() == slice.rank() + 1)
                length = declared->shape[0];
            if (!length)
                return failNode("scan output '" + name + "' has a row per iteration, and " +
                                "nothing bounds the iterations at load: give the loop a " +
                                "constant trip count");
            TensorType stacked = slice;
            stacked.shape.insert(stacked.shape.begin(), *length);
            node->outputs[layout.carried + j] = stacked;
        }
        return std::nullopt;
    }
    // Scan
    const ScanLayout layout = scanLayout(*node, node->inputs.size());
    if (auto error = expectOutputs(0, layout.states + layout.scanOutputs))
        return error;
    std::int64_t length = -1;
    for (std::size_t j = 0; j < layout.scanInputs; ++j) {
        const TensorType input = m_graph.type(node->inputs[layout.states + j]);
        std::int64_t axis = layout.inputAxes[j];
        axis = axis < 0 ? axis + input.rank() : axis;
        const std::int64_t d = input.shape[static_cast<std::size_t>(axis)];
        if (length >= 0 && d != length)
            return failNode("its scan inputs have different lengths (" + std::to_string(length) +
                            " and " + std::to_string(d) + ")");
        length = d;
    }
    if (length < 0)
        return failNode("it has no scan input");
    for (std::size_t k = 0; k < layout.states; ++k) {
        const TensorType out = bodyOutput(0, k);
        if (out != formal[k])
            return failNode("state " + std::to_string(k) + " enters the body as " +
                            formal[k].toShortString() + " and leaves it as " + out.toShortString() +
                            "; a state must keep its type and shape");
        node->outputs[k] = out;
    }
    for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
        TensorType stacked = bodyOutput(0, layout.states + j);
        const auto rank = static_cast<std::int64_t>(stacked.shape.size()) + 1;
        std::int64_t axis = layout.outputAxes[j];
        axis = axis < 0 ? axis + rank : axis;
        if (axis < 0 || axis >= rank)
            return failNode("scan output " + std::to_string(j) + " of rank " +
                            std::to_string(rank) + " has no axis " +
                            std::to_string(layout.outputAxes[j]));
        stacked.shape.insert(stacked.shape.begin() + axis, length);
        node->outputs[layout.states + j] = stacked;
    }
    return std::nullopt;
}

} // namespace placer
