// The dataflow graph.
#include "ir/Graph.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>

#include <cassert>

namespace placer {

bool shapeFitsDeclared(const std::vector<std::string>& dims,
                       const std::vector<std::int64_t>& shape) {
    if (dims.size() != shape.size())
        return false;
    for (std::size_t d = 0; d < dims.size(); ++d) {
        std::int64_t fixed = 0;
        const char* end = dims[d].data() + dims[d].size();
        const auto [at, error] = std::from_chars(dims[d].data(), end, fixed);
        if (error == std::errc() && at == end && fixed != shape[d])
            return false;
    }
    return true;
}

std::uint64_t Graph::nextRevision() {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;
}

NodeId Graph::addNode(Node node) {
    assert(node.op && "every node has an op");
    touch();
    const NodeId id(static_cast<std::uint32_t>(m_nodes.size()));
    for ([[maybe_unused]] const ValueRef& input : node.inputs)
        assert(input.node < id && "inputs come before their consumers");
    [[maybe_unused]] const bool inserted = m_byName.emplace(node.name, id).second;
    assert(inserted && "node names are unique");
    for (const std::string& alias : node.aliases)
        m_byName.emplace(alias, id);
    m_nodes.push_back(std::move(node));
    return id;
}

std::optional<NodeId> Graph::find(std::string_view name) const {
    const auto it = m_byName.find(std::string(name));
    if (it == m_byName.end())
        return std::nullopt;
    return it->second;
}

void Graph::addAlias(NodeId id, std::string alias) {
    touch();
    [[maybe_unused]] const bool inserted = m_byName.emplace(alias, id).second;
    assert(inserted && "aliases are unique");
    m_nodes[id.index].aliases.push_back(std::move(alias));
}

std::string Graph::uniqueName(std::string_view base) const {
    std::string candidate(base);
    for (int suffix = 2; m_byName.count(candidate); ++suffix)
        candidate = std::string(base) + "_" + std::to_string(suffix);
    return candidate;
}

const OpDef* Graph::adoptOp(std::unique_ptr<OpDef> op) {
    m_ownedOps.push_back(std::shared_ptr<const OpDef>(std::move(op)));
    return m_ownedOps.back().get();
}

std::string Graph::valueName(ValueRef value) const {
    const Node& producer = node(value.node);
    if (producer.outputs.size() <= 1)
        return producer.name;
    return producer.name + "." + std::to_string(value.output);
}

int Graph::onnxOpset() const {
    for (const auto& [key, value] : properties) {
        if (key == "onnx.opset")
            return std::atoi(value.c_str());
    }
    return 0;
}

int Graph::foldedNodes() const {
    for (const auto& [key, value] : properties) {
        if (key == "onnx.folded_nodes")
            return std::atoi(value.c_str());
    }
    return 0;
}

} // namespace placer

namespace placer {

DType kernelDType(const Graph& graph, const Node& node) {
    // A node that reads or writes strings runs where string kernels are.
    const auto isString = [](const TensorType& type) { return type.dtype == DType::String; };
    if (std::any_of(node.outputs.begin(), node.outputs.end(), isString) ||
        std::any_of(node.inputs.begin(), node.inputs.end(),
                    [&](ValueRef v) { return isString(graph.type(v)); }))
        return DType::String;
    if (!node.inputs.empty())
        return graph.type(node.inputs[0]).dtype;
    return node.outputs.empty() ? DType::Float32 : node.outputs[0].dtype;
}

bool nodeRunsOn(const Node& node, DeviceKind kind, DType dtype) {
    if (node.subgraphs.empty())
        return node.op->hasKernel(kind, dtype);
    for (const Subgraph& body : node.subgraphs) {
        for (const Node& inner : body.graph->nodes()) {
            if (inner.role() == OpRole::Compute &&
                !nodeRunsOn(inner, kind, kernelDType(*body.graph, inner)))
                return false;
        }
    }
    return true;
}

bool nodeHostOnly(const Node& node) {
    if (node.op->hostOnly)
        return true;
    for (const Subgraph& body : node.subgraphs) {
        for (const Node& inner : body.graph->nodes()) {
            if (nodeHostOnly(inner))
                return true;
        }
    }
    return false;
}

std::size_t bodyNodeCount(const Node& node) {
    std::size_t count = 0;
    for (const Subgraph& body : node.subgraphs) {
        for (const Node& inner : body.graph->nodes()) {
            if (inner.role() == OpRole::Compute)
                count += 1 + bodyNodeCount(inner);
        }
    }
    return count;
}

std::vector<std::string> describeBodies(const Node& node) {
    std::vector<std::string> lines;
    for (const Subgraph& body : node.subgraphs) {
        std::map<std::string, int> ops;
        std::size_t count = 0;
        for (const Node& inner : body.graph->nodes()) {
            if (inner.role() != OpRole::Compute)
                continue;
            ++ops[inner.op->name];
            count += 1 + bodyNodeCount(inner);
        }
        std::string line =
            body.attribute + ": " + std::to_string(count) + (count == 1 ? " op" : " ops");
        std::string list;
        for (const auto& [op, n] : ops)
            list += (list.empty() ? "" : ", ") + op + (n > 1 ? " \u00d7" + std::to_string(n) : "");
        lines.push_back(line + (list.empty() ? "" : " (" + list + ")"));
    }
    return lines;
}

bool shapeFoundAtRun(const Graph& graph, ValueRef value) {
    const Node& node = graph.node(value.node);
    if (node.runTimeShape(value.output) || node.op->kernel.family == KernelFamily::Selection)
        return true;
    for (const Subgraph& body : node.subgraphs) {
        if (findsShapesAtRun(*body.graph))
            return true;
    }
    return false;
}

bool findsShapesAtRun(const Graph& graph) {
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(i));
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
            if (shapeFoundAtRun(graph, ValueRef{NodeId(i), k}))
                return true;
        }
    }
    return false;
}

const SymbolicShape* symbolicShapeOf(const Graph& graph, ValueRef value) {
    // A copy's output is the value it copies, on another device.
    for (std::size_t hops = 0; hops <= graph.size(); ++hops) {
        const Node& node = graph.node(value.node);
        if (node.isDeviceCopy() && !node.inputs.empty()) {
            value = node.inputs[0];
            continue;
        }
        if (value.output < node.symbolicShapes.size() &&
            isSymbolic(node.symbolicShapes[value.output]))
            return &node.symbolicShapes[value.output];
        return nullptr;
    }
    return nullptr;
}

namespace {

/// "; ran as 2x16x64 (8.00 KiB)" where `ran` gives the value's shape in that run, else empty.
std::string ranAs(const Graph& graph, ValueRef value, const RanSizes& ran) {
    while (graph.node(value.node).isDeviceCopy() && !graph.node(value.node).inputs.empty())
        value = graph.node(value.node).inputs[0];
    std::optional<std::vector<std::int64_t>> shape;
    const auto found = ran.found.find({graph.node(value.node).name, value.output});
    if (found != ran.found.end())
        shape = found->second;
    else if (const SymbolicShape* symbolic = symbolicShapeOf(graph, value))
        shape = evaluateShape(*symbolic, ran.symbols);
    if (!shape)
        return "";
    const TensorType type{*shape, graph.type(value).dtype};
    const std::string text = type.toShortString();
    return "; ran as " + text.substr(0, text.find(' ')) + " (" + formatBytes(type.bytes()) + ")";
}

} // namespace

Graph graphAtSizes(const Graph& graph, const SymbolValues& values) {
    Graph sized = graph;
    for (std::uint32_t i = 0; i < sized.size(); ++i) {
        Node& node = sized.node(NodeId(i));
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k) {
            const SymbolicShape* symbolic = symbolicShapeOf(graph, ValueRef{NodeId(i), k});
            if (!symbolic)
                continue;
            if (auto shape = evaluateShape(*symbolic, values))
                node.outputs[k].shape = std::move(*shape);
        }
    }
    return sized;
}

std::string broadcastBytes(std::string_view bytes, const std::vector<std::int64_t>& from,
                           const std::vector<std::int64_t>& to, std::size_t elementBytes) {
    const auto rank = static_cast<std::ptrdiff_t>(to.size());
    std::int64_t count = 1;
    for (const std::int64_t d : to)
        count *= d;
    std::string out(static_cast<std::size_t>(count) * elementBytes, '\0');
    if (rank == 0) {
        std::memcpy(out.data(), bytes.data(), std::min(out.size(), bytes.size()));
        return out;
    }
    // Source strides, 0 along a broadcast axis (an axis of `to` of size 1 takes index 0).
    std::vector<std::int64_t> stride(to.size(), 0), index(to.size(), 0);
    std::int64_t step = 1;
    for (std::ptrdiff_t a = rank - 1; a >= 0; --a) {
        const auto at = static_cast<std::size_t>(a);
        stride[at] = from[at] == 1 && to[at] != 1 ? 0 : step;
        step *= from[at];
    }
    const auto size = static_cast<std::int64_t>(elementBytes);
    for (std::int64_t e = 0; e < count; ++e) {
        std::int64_t source = 0;
        for (std::size_t a = 0; a < to.size(); ++a)
            source += index[a] * stride[a];
        std::memcpy(out.data() + e * size, bytes.data() + source * size, elementBytes);
        for (std::ptrdiff_t a = rank - 1; a >= 0; --a) {
            const auto at = static_cast<std::size_t>(a);
            if (++index[at] < to[at])
                break;
            index[at] = 0;
        }
    }
    return out;
}

std::optional<std::string> dimensionName(const OpenInput& input, std::size_t axis) {
    if (axis >= input.declaredDims.size())
        return std::nullopt;
    const std::string& declared = input.declaredDims[axis];
    if (declared.empty() || declared == "?")
        return input.name + "." + std::to_string(axis);
    if (std::all_of(declared.begin(), declared.end(),
                    [](unsigned char c) { return std::isdigit(c) != 0; }))
        return std::nullopt;
    return declared;
}

Result<std::string> symbolicDataAt(const Node& node, const SymbolValues& at) {
    const DType dtype = node.outputs.empty() ? DType::Float32 : node.outputs[0].dtype;
    std::string bytes;
    for (const DimExpr& element : node.symbolicData) {
        const auto value = element.evaluate(at);
        if (!value)
            return SourceError::sentence("at " + symbolValuesText(at) + ", the constant " +
                                         node.name + " folded from the sizes has no value (" +
                                         element.toString() + ")");
        if (dtype == DType::Int32) {
            if (*value < std::numeric_limits<std::int32_t>::min() ||
                *value > std::numeric_limits<std::int32_t>::max())
                return SourceError::sentence("at " + symbolValuesText(at) + ", the constant " +
                                             node.name + " overflows int32");
            const auto narrow = static_cast<std::int32_t>(*value);
            bytes.append(reinterpret_cast<const char*>(&narrow), sizeof narrow);
        } else {
            bytes.append(reinterpret_cast<const char*>(&*value), sizeof *value);
        }
    }
    return bytes;
}

Result<Graph> instantiateAtSizes(const Graph& graph, const SymbolValues& values) {
    if (graph.symbolValues.empty())
        return SourceError::sentence("its shapes follow no named dimension");
    if (!graph.sizeBound.empty())
        return SourceError::sentence(graph.sizeBound);
    SymbolValues at = graph.symbolValues;
    for (const auto& [name, value] : values) {
        if (!at.count(name))
            return SourceError::sentence("the model names no dimension " + name);
        // 0 is a size: an empty cache before the prompt (the fit, made at positive sizes, is
        // checked there by checkTypesAtSizes like everywhere else).
        if (value < 0)
            return SourceError::sentence(name + " = " + std::to_string(value) +
                                         " is no size (it must be at least 0)");
        at[name] = value;
    }
    const auto spelled = [&] { return symbolValuesText(at); };
    Graph sized = graph;
    for (std::uint32_t i = 0; i < sized.size(); ++i) {
        const Node& read = graph.node(NodeId(i));
        if (read.symbolicShapes.empty() && read.symbolicData.empty() && !read.tiledData)
            continue;
        Node& node = sized.node(NodeId(i));
        for (std::size_t k = 0; k < read.symbolicShapes.size() && k < node.outputs.size(); ++k) {
            const SymbolicShape& symbolic = read.symbolicShapes[k];
            if (!isSymbolic(symbolic))
                continue;
            auto shape = evaluateShape(symbolic, at);
            if (!shape) {
                if (read.runTimeShape(k))
                    continue; // found when it runs, as at the planned sizes
                return SourceError::sentence("at " + spelled() + ", " + read.name +
                                             " has no shape (" + symbolicShapeText(symbolic) + ")");
            }
            node.outputs[k].shape = std::move(*shape);
        }
        if (read.tiledData && read.data && !read.outputs.empty()) {
            // The slice at index 0 of the axes that follow the names, repeated along them.
            std::vector<std::int64_t> one = read.outputs[0].shape;
            for (std::size_t a = 0; a < one.size() && !read.symbolicShapes.empty(); ++a) {
                const auto& dim = read.symbolicShapes[0][a];
                if (dim && !dim->isConstant())
                    one[a] = 1;
            }
            const auto elementBytes = static_cast<std::size_t>(dtypeSize(read.outputs[0].dtype));
            const std::string slice =
                broadcastBytes(read.data->bytes(), read.outputs[0].shape, one, elementBytes);
            node.data = std::make_shared<const TensorData>(
                broadcastBytes(slice, one, node.outputs[0].shape, elementBytes));
            continue;
        }
        if (read.symbolicData.empty())
            continue;
        auto bytes = symbolicDataAt(read, at);
        if (!bytes)
            return bytes.error();
        node.data = std::make_shared<const TensorData>(bytes.take());
    }
    sized.symbolValues = std::move(at);
    return sized;
}

std::string describeValueType(const Graph& graph, ValueRef value, const RanSizes* ran) {
    if (ran && !ran->empty())
        return describeValueType(graph, value) + ranAs(graph, value, *ran);
    const TensorType& type = graph.type(value);
    const bool atRun = shapeFoundAtRun(graph, value);
    const SymbolicShape* symbolic = symbolicShapeOf(graph, value);
    // A shape in the names is a fact even where the planned type is a stand-in (a shape set by
    // values folded at the stand-in's sizes); one with unknown dimensions is not, there.
    if (symbolic && (!atRun || symbolicBytesText(*symbolic, type.dtype))) {
        const std::string shape = type.toShortString();
        return symbolicShapeText(*symbolic) + " " + std::string(dtypeName(type.dtype)) + " (" +
               describeValueBytes(graph, value) + ")" +
               (atRun ? std::string() : ", planned at " + shape.substr(0, shape.find(' ')));
    }
    if (atRun)
        return std::string(dtypeName(type.dtype)) + ", rank " + std::to_string(type.rank()) +
               ", shape known at run time";
    return type.toShortString() + " (" + formatBytes(type.bytes()) + ")";
}

std::string describeValueBytes(const Graph& graph, ValueRef value) {
    const TensorType& type = graph.type(value);
    if (const SymbolicShape* symbolic = symbolicShapeOf(graph, value)) {
        if (auto bytes = symbolicBytesText(*symbolic, type.dtype))
            return *bytes;
        return "size known at run time";
    }
    if (shapeFoundAtRun(graph, value))
        return "size known at run time";
    return formatBytes(type.bytes());
}

} // namespace placer
