// Building the graph (io/OnnxImporter.h): nodes in topological order, constants, attributes,
// device copies, pins, and data-dependent outputs planned at their bound.
#include "io/OnnxImporter.h"
#include "io/OnnxRunShapes.h"

#include <queue>

namespace placer {

OnnxImporter::Failure OnnxImporter::buildGraph() {
    const onnx::GraphProto& g = m_model.graph();
    std::set<std::string> initializers;
    for (const onnx::TensorProto& tensor : g.initializer())
        initializers.insert(tensor.name());
    for (const onnx::ValueInfoProto& input : g.input()) {
        // A body's inputs are all parameters, the outer constants it reads too (their
        // initializers only let shape inference and folding see the values).
        if (initializers.count(input.name()) && !m_body)
            continue;
        // A run-time body's input (a carried value that changes shape) has a stand-in type.
        const bool atRun = m_body && m_bodyShapesAtRun && !staticType(input.name());
        auto type = typeOf(input.name(), input.name(), !atRun);
        if (!type)
            return type.error();
        Node node;
        node.name = uniqueNodeName(input.name());
        node.op = &OpRegistry::global().parameter();
        node.outputs = {type.take()};
        if (atRun)
            node.runTimeShapes = {true};
        define(input.name(), m_graph.addNode(std::move(node)), 0);
    }
    for (const onnx::TensorProto& tensor : g.initializer()) {
        if (m_body && m_values.count(tensor.name()))
            continue;
        auto failure = addConstant(tensor.name(), tensor, tensor.name());
        if (failure)
            return failure;
    }
    for (int index : m_order) {
        if (auto error = addNode(g.node(index)))
            return error;
    }
    for (const onnx::ValueInfoProto& output : g.output()) {
        const auto it = m_values.find(output.name());
        if (it == m_values.end())
            return fail("graph output '" + output.name() + "' is produced by no node");
        m_graph.addOutput(GraphOutput{it->second, DeviceId(), output.name()});
    }
    return std::nullopt;
}

/// Kahn's algorithm over the nodes, so unsorted files load and cycles are found.
OnnxImporter::Failure OnnxImporter::topologicalOrder(std::vector<int>* order) {
    const onnx::GraphProto& g = m_model.graph();
    const int n = g.node_size();
    for (const onnx::ValueInfoProto& input : g.input())
        m_graphInputs.insert(input.name());
    for (const onnx::TensorProto& tensor : g.initializer())
        m_graphInputs.insert(tensor.name());
    std::unordered_map<std::string, int> producer;
    for (int i = 0; i < n; ++i) {
        for (const std::string& output : g.node(i).output()) {
            if (!output.empty() && !producer.emplace(output, i).second)
                return fail("node '" + displayName(g.node(i)) + "': value '" + output +
                            "' is produced twice");
        }
    }
    std::vector<std::vector<int>> consumers(n);
    std::vector<int> pending(n, 0);
    for (int i = 0; i < n; ++i) {
        // A body's reads of this graph's values are inputs of its node too.
        std::vector<std::string> inputs(g.node(i).input().begin(), g.node(i).input().end());
        for (std::string& outer : onnxOuterNames(g.node(i)))
            inputs.push_back(std::move(outer));
        for (const std::string& input : inputs) {
            if (input.empty() || m_graphInputs.count(input))
                continue;
            const auto it = producer.find(input);
            if (it == producer.end())
                return fail("node '" + displayName(g.node(i)) + "' reads '" + input +
                            "', which no node, input or initializer produces");
            consumers[it->second].push_back(i);
            ++pending[i];
        }
    }
    // Pop the lowest index first so a sorted file keeps its order: a min-heap, as a graph
    // unrolled from a Loop or a file of constants can have thousands of nodes ready at once.
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (int i = 0; i < n; ++i) {
        if (pending[i] == 0)
            ready.push(i);
    }
    std::vector<bool> done(n, false);
    while (!ready.empty()) {
        const int i = ready.top();
        ready.pop();
        order->push_back(i);
        done[i] = true;
        for (int c : consumers[i]) {
            if (--pending[c] == 0)
                ready.push(c);
        }
    }
    if (static_cast<int>(order->size()) != n) {
        for (int i = 0; i < n; ++i) {
            if (!done[i])
                return fail("node '" + displayName(g.node(i)) +
                            "' is part of a cycle: a graph must be acyclic");
        }
    }
    return std::nullopt;
}

std::string OnnxImporter::displayName(const onnx::NodeProto& node) {
    if (!node.name().empty())
        return node.name();
    return node.output_size() > 0 ? node.output(0) : node.op_type();
}

std::string OnnxImporter::uniqueNodeName(const std::string& name) {
    return m_graph.uniqueName(name.empty() ? std::string("node") : name);
}

void OnnxImporter::define(const std::string& value, NodeId node, std::uint32_t output) {
    m_values[value] = ValueRef{node, output};
}

OnnxImporter::Failure OnnxImporter::addConstantNode(const onnx::NodeProto& proto) {
    const std::string name = displayName(proto);
    auto tensor = constantTensor(proto);
    if (!tensor)
        return fail("Constant node '" + name + "' has no value this reader understands");
    tensor->set_name(name);
    return addConstant(proto.output(0), *tensor, name);
}

std::optional<AttrValue> OnnxImporter::attrValue(const onnx::AttributeProto& attr) {
    switch (attr.type()) {
    case onnx::AttributeProto_AttributeType_INT:
        return AttrValue{static_cast<std::int64_t>(attr.i())};
    case onnx::AttributeProto_AttributeType_FLOAT:
        return AttrValue{static_cast<double>(attr.f())};
    case onnx::AttributeProto_AttributeType_STRING:
        return AttrValue{attr.s()};
    case onnx::AttributeProto_AttributeType_INTS:
        return AttrValue{std::vector<std::int64_t>(attr.ints().begin(), attr.ints().end())};
    case onnx::AttributeProto_AttributeType_FLOATS:
        return AttrValue{std::vector<double>(attr.floats().begin(), attr.floats().end())};
    default:
        return std::nullopt; // tensors, graphs: not needed to plan
    }
}

/// A node's attributes as the kernels read them. Tensor attributes (ConstantOfShape's value)
/// are kept as their one value and element type; graphs are not kept.
void OnnxImporter::readAttributes(const onnx::NodeProto& proto, Node* node) {
    for (const onnx::AttributeProto& attr : proto.attribute()) {
        if (auto value = attrValue(attr)) {
            node->attrs.set(attr.name(), std::move(*value));
        } else if (attr.type() == onnx::AttributeProto_AttributeType_STRINGS) {
            // A list of strings (an LSTM's activations): joined (joinStringList), and
            // marked so that a writer writes a list again.
            node->attrs.set(attr.name(),
                            joinStringList({attr.strings().begin(), attr.strings().end()}));
            node->attrs.set(attr.name() + ".strings", true);
        } else if (const auto scalar = attr.type() == onnx::AttributeProto_AttributeType_TENSOR &&
                                               attr.t().dims_size() <= 1
                                           ? scalarOf(attr.t())
                                           : std::nullopt) {
            node->attrs.set(attr.name(), *scalar);
            node->attrs.set(attr.name() + ".dtype",
                            std::string(dtypeName(*dtypeFromOnnx(attr.t().data_type()))));
        } else if (attr.type() == onnx::AttributeProto_AttributeType_GRAPH && node->op->hasBodies) {
            continue; // read as a body (readBodies)
        } else {
            warnOnce("attribute '" + attr.name() + "' of " + proto.op_type() +
                     " nodes is not kept (it is not needed to plan)");
        }
    }
}

bool OnnxImporter::dataDependent(const onnx::NodeProto& proto) {
    return onnxStandardDomain(proto) && dataDependentOutputs(proto.op_type());
}

void OnnxImporter::boundDataDependentOutputs(const onnx::NodeProto& proto, Node* node) {
    std::vector<TensorType> inputs;
    for (const ValueRef& input : node->inputs)
        inputs.push_back(m_graph.type(input));
    boundSelectionOutputs(proto.op_type(), node->attrs, inputs, &node->outputs);
}

const OpDef* OnnxImporter::opFor(const onnx::NodeProto& proto) {
    const bool standard =
        proto.domain().empty() || proto.domain() == "ai.onnx" || proto.domain() == kTrainingDomain;
    if (standard) {
        const OpDef* op = OpRegistry::global().find(proto.op_type());
        if (op && op->dialect == OpDialect::Onnx)
            return op;
    }
    const std::string key = standard ? proto.op_type() : proto.domain() + "." + proto.op_type();
    if (!standard) {
        // A contrib operator the engine runs (io/ContribSchemas.cpp).
        const OpDef* op = OpRegistry::global().find(key);
        if (op && op->dialect == OpDialect::Onnx)
            return op;
    }
    const auto known = m_unsupported.find(key);
    if (known != m_unsupported.end())
        return known->second;
    const OpDef* op = m_graph.adoptOp(makeUnsupportedOp(key, OpDialect::Onnx));
    m_unsupported.emplace(key, op);
    return op;
}

OnnxImporter::Failure OnnxImporter::addNode(const onnx::NodeProto& proto) {
    if (proto.op_type() == "Constant" && (proto.domain().empty() || proto.domain() == "ai.onnx"))
        return addConstantNode(proto);
    const std::string name = displayName(proto);
    if (proto.domain() == kCopyDomain && proto.op_type() == "DeviceCopy")
        return addDeviceCopy(proto, name);
    Node node;
    node.name = uniqueNodeName(name);
    node.op = opFor(proto);
    std::vector<std::int64_t> positions;
    bool gap = false;
    for (int k = 0; k < proto.input_size(); ++k) {
        if (proto.input(k).empty()) {
            gap = true;
            continue; // an optional input left out
        }
        node.inputs.push_back(m_values.at(proto.input(k)));
        positions.push_back(k);
    }
    readAttributes(proto, &node);
    if (gap && !positions.empty() &&
        positions.back() >= static_cast<std::int64_t>(positions.size()))
        node.attrs.set(kInputPositionsAttr, positions);
    // Outputs up to the last named one; a skipped optional output holds nothing.
    int last = proto.output_size() - 1;
    while (last >= 0 && proto.output(last).empty())
        --last;
    for (int k = 0; k <= last; ++k) {
        if (proto.output(k).empty()) {
            node.outputs.push_back(TensorType{{0}, DType::Float32});
            continue;
        }
        const bool atRun =
            !dataDependent(proto) && !node.op->hasBodies && shapeFoundAtRun(proto.output(k));
        auto type =
            typeOf(proto.output(k), name, !dataDependent(proto) && !node.op->hasBodies && !atRun);
        if (!type)
            return type.error();
        node.outputs.push_back(type.take());
        if (atRun) {
            node.runTimeShapes.resize(static_cast<std::size_t>(last + 1), false);
            node.runTimeShapes[static_cast<std::size_t>(k)] = true;
            warnOnce("some shapes are known only at run time (after a data-dependent operator, "
                     "or set by values the model computes): they are planned at a stand-in and "
                     "found when the model runs");
        }
    }
    if (dataDependent(proto))
        boundDataDependentOutputs(proto, &node);
    if (node.op->hasBodies) {
        if (auto error = readBodies(proto, &node)) {
            // A Loop whose body's shapes change may be unrolled where its trip count is
            // known: readOnnx reads the model again asking for that.
            if (!m_body && proto.op_type() == "Loop" && proto.output_size() > 0)
                m_shapeVaryingLoop = proto.output(0);
            return error;
        }
        if (auto error = refineInferredTypes(proto, node))
            return error;
    }
    if (const auto pin = m_pins.find(name); pin != m_pins.end()) {
        // "gpu", or "gpu!" for a fixed pin.
        const std::string& spec = pin->second;
        const bool fixed = !spec.empty() && spec.back() == '!';
        auto pinned = device(fixed ? spec.substr(0, spec.size() - 1) : spec, name);
        if (!pinned)
            return pinned.error();
        node.pin = Pin{fixed ? PinKind::Fixed : PinKind::Plain, pinned.value(),
                       "placement.pin in " + m_file};
    }
    const NodeId id = m_graph.addNode(std::move(node));
    for (int k = 0; k <= last; ++k) {
        if (!proto.output(k).empty())
            define(proto.output(k), id, static_cast<std::uint32_t>(k));
    }
    return std::nullopt;
}

OnnxImporter::Failure OnnxImporter::addDeviceCopy(const onnx::NodeProto& proto,
                                                  const std::string& name) {
    if (proto.input_size() != 1 || proto.output_size() != 1)
        return fail("DeviceCopy node '" + name + "' must have one input and one output");
    std::string src, dst;
    bool inserted = false;
    for (const onnx::AttributeProto& attr : proto.attribute()) {
        if (attr.name() == "src")
            src = attr.s();
        else if (attr.name() == "dst")
            dst = attr.s();
        else if (attr.name() == "inserted")
            inserted = attr.i() != 0;
    }
    auto from = device(src, name);
    if (!from)
        return from.error();
    auto to = device(dst, name);
    if (!to)
        return to.error();
    Node node;
    node.name = uniqueNodeName(name);
    node.op = &OpRegistry::global().deviceCopy();
    node.inputs = {m_values.at(proto.input(0))};
    node.outputs = {m_graph.type(node.inputs[0])};
    node.copySource = from.value();
    node.copyDestination = to.value();
    node.insertedCopy = inserted;
    define(proto.output(0), m_graph.addNode(std::move(node)), 0);
    return std::nullopt;
}

} // namespace placer
