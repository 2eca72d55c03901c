// Fitting each value's shape in the dimensions the inputs name, from reads at other sizes.
#include "io/SymbolicShapes.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <future>
#include <set>
#include <thread>
#include <unordered_map>

namespace placer {

namespace {

/// An input whose declared dimensions name sizes, and where each axis takes its size from.
struct ProbedInput {
    std::string name;
    /// Per axis: the index of its name in the symbol list, or -1 with the fixed size.
    std::vector<int> symbol;
    std::vector<std::int64_t> fixed;
};

/// Up to this many elements of an integer constant are kept from each read, to be fitted: a
/// shape folded from the sizes (Shape, Gather, Concat, Mul) is a few numbers.
constexpr std::size_t kFittedElements = 64;

/// What a read at other sizes keeps of a node: its output shapes (empty with rank -1 for a
/// stand-in found at run time), what identifies it besides them, and a constant's data (its
/// elements where it is a short integer vector, else a hash).
struct ProbedNode {
    std::vector<std::vector<std::int64_t>> shapes;
    std::uint64_t structure = 0;
    std::uint64_t data = 0;
    std::optional<std::vector<std::int64_t>> elements;
};

struct ProbedShapes {
    std::unordered_map<std::string, ProbedNode> byNode;
    /// The values the read folded, intermediate ones included, by name.
    std::unordered_map<std::string, Graph::FoldedValue> folded;
};

std::uint64_t mix(std::uint64_t hash, std::string_view bytes) {
    for (const char c : bytes) {
        hash ^= static_cast<unsigned char>(c);
        hash *= 1099511628211ull;
    }
    return hash ^ (bytes.size() * 0x9e3779b97f4a7c15ull);
}

/// A body's nodes and types, at every depth: a body typed at the read's sizes reads otherwise.
std::uint64_t bodyHash(const Graph& body, std::uint64_t hash) {
    for (const Node& node : body.nodes()) {
        hash = mix(mix(hash, node.op->name), node.name);
        for (const TensorType& type : node.outputs)
            hash = mix(hash, type.toShortString());
        for (const Subgraph& inner : node.subgraphs) {
            if (inner.graph)
                hash = bodyHash(*inner.graph, hash);
        }
    }
    return hash;
}

/// What identifies a node in a read besides its shapes: op, inputs, attributes, which outputs
/// are found at run time, element types, bodies.
std::uint64_t structureOf(const Graph& graph, const Node& node) {
    std::uint64_t hash = mix(1469598103934665603ull, node.op->name);
    for (const ValueRef& input : node.inputs)
        hash = mix(mix(hash, graph.node(input.node).name), std::to_string(input.output));
    for (const auto& [name, value] : node.attrs.entries())
        hash = mix(mix(hash, name), formatAttrRelay(value));
    for (std::size_t k = 0; k < node.outputs.size(); ++k)
        hash = mix(mix(hash, node.runTimeShape(k) ? "r" : "s"), dtypeName(node.outputs[k].dtype));
    for (const Subgraph& body : node.subgraphs) {
        if (body.graph)
            hash = bodyHash(*body.graph, mix(hash, body.attribute));
    }
    return hash;
}

/// Folding never makes a constant over a mebibyte from sizes (ir/ConstantFolding.h); larger
/// ones are the model's weights, read from the same bytes each time: their ends are hashed.
std::uint64_t dataHash(const TensorData& data) {
    constexpr std::size_t kWhole = std::size_t{1} << 20, kEnds = 4096;
    const std::string_view bytes = data.bytes();
    // A word at a time (the library's hash), not FNV's byte at a time: every weight of a model
    // under a mebibyte is hashed at every read at other sizes.
    const std::hash<std::string_view> hash;
    if (bytes.size() <= kWhole)
        return hash(bytes) ^ bytes.size();
    return hash(bytes.substr(0, kEnds)) * 31 + hash(bytes.substr(bytes.size() - kEnds)) +
           bytes.size();
}

std::optional<std::vector<std::int64_t>> integerElements(const Node& node) {
    if (!node.data || node.outputs.size() != 1)
        return std::nullopt;
    const TensorType& type = node.outputs[0];
    const std::int64_t count = type.elementCount();
    if (count < 0 || static_cast<std::size_t>(count) > kFittedElements)
        return std::nullopt;
    const std::string_view bytes = node.data->bytes();
    std::vector<std::int64_t> out(static_cast<std::size_t>(count));
    if (type.dtype == DType::Int64 && bytes.size() == out.size() * 8) {
        std::memcpy(out.data(), bytes.data(), bytes.size());
        return out;
    }
    if (type.dtype == DType::Int32 && bytes.size() == out.size() * 4) {
        for (std::size_t e = 0; e < out.size(); ++e) {
            std::int32_t v;
            std::memcpy(&v, bytes.data() + e * 4, 4);
            out[e] = v;
        }
        return out;
    }
    return std::nullopt;
}

ProbedNode probedNode(const Graph& graph, const Node& node) {
    ProbedNode out;
    for (std::size_t k = 0; k < node.outputs.size(); ++k)
        out.shapes.push_back(node.runTimeShape(k) ? std::vector<std::int64_t>{-1}
                                                  : node.outputs[k].shape);
    out.structure = structureOf(graph, node);
    if (node.isConstant() && node.data) {
        out.data = dataHash(*node.data);
        out.elements = integerElements(node);
    }
    return out;
}

ProbedShapes shapesOf(const Graph& graph) {
    ProbedShapes out;
    out.byNode.reserve(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(i));
        out.byNode.emplace(node.name, probedNode(graph, node));
    }
    for (const Graph::FoldedValue& value : graph.foldedValues)
        out.folded.emplace(value.name, value);
    return out;
}

/// A folded value's elements, where it is a short integer vector.
std::optional<std::vector<std::int64_t>> foldedElements(const Graph::FoldedValue& value) {
    const std::size_t width = value.dtype == DType::Int64 ? 8 : value.dtype == DType::Int32 ? 4 : 0;
    if (width == 0 || value.elements < 0 ||
        static_cast<std::size_t>(value.elements) > kFittedElements ||
        value.smallBytes.size() != static_cast<std::size_t>(value.elements) * width)
        return std::nullopt;
    std::vector<std::int64_t> out(static_cast<std::size_t>(value.elements));
    for (std::size_t e = 0; e < out.size(); ++e) {
        if (width == 8) {
            std::memcpy(&out[e], value.smallBytes.data() + e * 8, 8);
        } else {
            std::int32_t v;
            std::memcpy(&v, value.smallBytes.data() + e * 4, 4);
            out[e] = v;
        }
    }
    return out;
}

/// Where constants folded from the sizes by no expression of them start to be so: the first
/// folded values on their way from the sizes (a Range over the cache's length, before the
/// Cast, Unsqueeze and Mul that follow it) whose inputs all follow the sizes by an expression
/// or are the same at every size. Kept computed, they make every value after them computed too,
/// and what they read stays folded (io/ModelLoader.cpp).
std::vector<std::string> whereFittingStops(const Graph& graph,
                                           const std::vector<std::string>& unfitted,
                                           const std::vector<ProbedShapes>& probes,
                                           const std::vector<std::string>& symbols,
                                           const std::vector<std::vector<std::int64_t>>& points,
                                           const SymbolValues& base, int degree) {
    std::unordered_map<std::string, const Graph::FoldedValue*> here;
    for (const Graph::FoldedValue& value : graph.foldedValues)
        here.emplace(value.name, &value);
    std::unordered_map<std::string, bool> memo;
    const auto follows = [&](const Graph::FoldedValue& value) {
        if (const auto it = memo.find(value.name); it != memo.end())
            return it->second;
        bool same = true, fits = true;
        std::vector<const Graph::FoldedValue*> found;
        for (const ProbedShapes& read : probes) {
            const auto it = read.folded.find(value.name);
            if (it == read.folded.end()) {
                fits = same = false;
                break;
            }
            found.push_back(&it->second);
            same = same && it->second.smallBytes == value.smallBytes &&
                   it->second.hash == value.hash && it->second.elements == value.elements;
        }
        if (!same && fits) {
            const auto elements = foldedElements(value);
            std::vector<std::vector<std::int64_t>> at;
            fits = elements.has_value();
            for (std::size_t p = 0; fits && p < found.size(); ++p) {
                auto e = foldedElements(*found[p]);
                fits = e && e->size() == elements->size();
                if (fits)
                    at.push_back(std::move(*e));
            }
            std::vector<std::int64_t> sizes(found.size());
            for (std::size_t e = 0; fits && e < elements->size(); ++e) {
                for (std::size_t p = 0; p < found.size(); ++p)
                    sizes[p] = at[p][e];
                const auto fitted = fitDimExpr(symbols, points, sizes, degree);
                fits = fitted && fitted->evaluate(base) == (*elements)[e];
            }
        }
        return memo[value.name] = same || fits;
    };
    std::vector<std::string> out;
    std::set<std::string> seen;
    std::vector<std::string> pending(unfitted.begin(), unfitted.end());
    while (!pending.empty()) {
        const std::string name = pending.back();
        pending.pop_back();
        const auto it = here.find(name);
        if (it == here.end() || !seen.insert(name).second || follows(*it->second))
            continue;
        bool inputsFollow = true;
        for (const std::string& input : it->second->inputs) {
            const auto in = here.find(input);
            if (in == here.end() || follows(*in->second))
                continue;
            inputsFollow = false;
            pending.push_back(input);
        }
        if (inputsFollow)
            out.push_back(name);
    }
    std::sort(out.begin(), out.end());
    return out;
}

/// Reads the model at every point, several reads at a time; std::nullopt with `why` when one
/// fails.
std::optional<std::vector<ProbedShapes>>
readAt(const std::vector<ProbedInput>& inputs, const std::vector<std::vector<std::int64_t>>& points,
       const ShapeProbe& probe, std::string* why) {
    std::vector<std::map<std::string, std::vector<std::int64_t>>> shapes;
    for (const std::vector<std::int64_t>& point : points) {
        std::map<std::string, std::vector<std::int64_t>> byInput;
        for (const ProbedInput& input : inputs) {
            std::vector<std::int64_t> dims = input.fixed;
            for (std::size_t a = 0; a < dims.size(); ++a) {
                if (input.symbol[a] >= 0)
                    dims[a] = point[static_cast<std::size_t>(input.symbol[a])];
            }
            byInput[input.name] = std::move(dims);
        }
        shapes.push_back(std::move(byInput));
    }
    std::vector<ProbedShapes> graphs(points.size());
    const std::size_t parallel = std::max(1u, std::min(4u, std::thread::hardware_concurrency()));
    for (std::size_t first = 0; first < points.size(); first += parallel) {
        std::vector<std::future<Result<Graph>>> reads;
        const std::size_t last = std::min(points.size(), first + parallel);
        for (std::size_t p = first; p < last; ++p)
            reads.push_back(std::async(std::launch::async, probe, std::cref(shapes[p])));
        bool failed = false;
        for (std::size_t p = first; p < last; ++p) {
            auto graph = reads[p - first].get();
            if (!graph) {
                if (!failed)
                    *why = graph.error().toString();
                failed = true;
                continue;
            }
            graphs[p] = shapesOf(graph.value());
        }
        if (failed)
            return std::nullopt;
    }
    return graphs;
}

/// Whether constant `node` (typed and fitted already) is, at its sizes and at every read's,
/// its slice at index 0 of the axes that follow the names repeated along them (a broadcast to
/// the batch); then it says so (Node::tiledData).
bool tiledEverywhere(Node& node, const std::vector<const ProbedNode*>& found) {
    if (node.outputs.size() != 1 || node.symbolicShapes.size() != 1 || !node.data)
        return false;
    const int elementBytes = dtypeSize(node.outputs[0].dtype);
    const SymbolicShape& symbolic = node.symbolicShapes[0];
    const std::vector<std::int64_t>& shape = node.outputs[0].shape;
    if (elementBytes <= 0 || symbolic.size() != shape.size() ||
        node.data->size() != static_cast<std::size_t>(node.outputs[0].bytes()))
        return false;
    std::vector<std::int64_t> one = shape;
    for (std::size_t a = 0; a < symbolic.size(); ++a) {
        if (!symbolic[a])
            return false;
        if (!symbolic[a]->isConstant())
            one[a] = 1;
    }
    const auto size = static_cast<std::size_t>(elementBytes);
    const std::string slice = broadcastBytes(node.data->bytes(), shape, one, size);
    if (broadcastBytes(slice, one, shape, size) != node.data->bytes())
        return false;
    for (const ProbedNode* read : found) {
        const std::vector<std::int64_t>& there = read->shapes[0];
        if (there.size() != one.size())
            return false;
        const TensorData tiled(broadcastBytes(slice, one, there, size));
        if (dataHash(tiled) != read->data)
            return false;
    }
    node.tiledData = true;
    return true;
}

/// Reads the model once more, far beyond the sizes the fit read (251, 257, ... for the names in
/// turn), and binds the graph to its sizes (Graph::sizeBound) where that read is not the graph
/// instantiated there: a clamp such as min(seq, 64), folded into a constant's value, follows
/// the names at small sizes only, and the node that reads it cannot tell. What is shown stays
/// the fit's; only instantiating the graph at other sizes is refused.
void checkFarAway(Graph& graph, const std::vector<ProbedInput>& inputs,
                  const std::vector<std::string>& symbols, const ShapeProbe& probe) {
    constexpr std::int64_t kFar[] = {251, 257, 263, 269, 271, 277};
    std::vector<std::int64_t> point;
    SymbolValues far;
    for (std::size_t k = 0; k < symbols.size() && k < std::size(kFar); ++k) {
        point.push_back(kFar[k]);
        far[symbols[k]] = kFar[k];
    }
    std::string why;
    const auto read = readAt(inputs, {point}, probe, &why);
    const std::string at = symbolValuesText(far);
    if (!read) {
        graph.sizeBound = "the model cannot be read at " + at + ": " + why;
        return;
    }
    const ProbedShapes& there = read->front();
    auto sized = instantiateAtSizes(graph, far);
    if (!sized) {
        graph.sizeBound = sized.error().message;
        return;
    }
    const Graph& instantiated = sized.value();
    if (there.byNode.size() != instantiated.size()) {
        graph.sizeBound = "the model is read as other nodes at " + at;
        return;
    }
    for (std::uint32_t i = 0; i < instantiated.size(); ++i) {
        const Node& node = instantiated.node(NodeId(i));
        const auto it = there.byNode.find(node.name);
        const ProbedNode expected = probedNode(instantiated, node);
        if (it == there.byNode.end() || it->second.structure != expected.structure ||
            it->second.shapes != expected.shapes || it->second.data != expected.data) {
            graph.sizeBound = "node " + node.name + " is read otherwise at " + at +
                              " than its sizes' expressions say";
            return;
        }
    }
}

} // namespace

SymbolicShapeSummary annotateSymbolicShapes(Graph& graph, const ShapeProbe& probe) {
    SymbolicShapeSummary summary;
    graph.symbolValues.clear();
    graph.sizeBound.clear();
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        graph.node(NodeId(i)).symbolicShapes.clear();
        graph.node(NodeId(i)).symbolicData.clear();
        graph.node(NodeId(i)).tiledData = false;
    }
    // The names, in the order the inputs give them, and the values the graph was read at.
    std::vector<ProbedInput> inputs;
    SymbolValues base;
    for (const OpenInput& open : graph.openInputs) {
        if (open.declaredDims.empty() || open.setsShapes)
            continue;
        const auto id = graph.find(open.name);
        if (!id || graph.node(*id).outputs.size() != 1)
            continue;
        const std::vector<std::int64_t>& shape = graph.node(*id).outputs[0].shape;
        if (shape.size() != open.declaredDims.size())
            continue;
        ProbedInput input{open.name, {}, shape};
        bool named = false;
        for (std::size_t a = 0; a < shape.size(); ++a) {
            const std::optional<std::string> dimension = dimensionName(open, a);
            if (!dimension) {
                input.symbol.push_back(-1);
                continue;
            }
            const std::string& name = *dimension;
            auto it = std::find(summary.symbols.begin(), summary.symbols.end(), name);
            if (it == summary.symbols.end()) {
                summary.symbols.push_back(name);
                base[name] = shape[a];
                it = summary.symbols.end() - 1;
            }
            input.symbol.push_back(static_cast<int>(it - summary.symbols.begin()));
            named = true;
        }
        if (named)
            inputs.push_back(std::move(input));
    }
    if (summary.symbols.empty())
        return summary;
    if (summary.symbols.size() > 6) {
        summary.skipped = "the inputs name more than six dimensions";
        return summary;
    }
    // Degree 2 covers batch*seq, seq*seq (attention) and seq+1; more names than three would
    // need too many reads for it.
    const int degree = summary.symbols.size() <= 3 ? 2 : 1;
    // Small sizes first; a model that refuses them (a convolution larger than the input) gets
    // larger ones.
    const std::vector<std::vector<std::int64_t>> grids = {{2, 3, 5}, {16, 24, 40}};
    std::vector<std::vector<std::int64_t>> points;
    std::optional<std::vector<ProbedShapes>> probes;
    for (const std::vector<std::int64_t>& grid : grids) {
        points = fitPoints(summary.symbols.size(), degree, grid, 2);
        summary.reads += static_cast<int>(points.size());
        probes = readAt(inputs, points, probe, &summary.skipped);
        if (probes)
            break;
    }
    if (!probes) {
        summary.skipped = "the model cannot be read at other sizes of " + summary.symbols.front() +
                          (summary.symbols.size() > 1 ? ", ..." : "") + ": " + summary.skipped;
        return summary;
    }
    summary.skipped.clear();
    graph.symbolValues = base;

    // Why the graph is more than its shapes and folded constants at other sizes: the first
    // thing found, in node order.
    const auto bound = [&](std::string why) {
        if (graph.sizeBound.empty())
            graph.sizeBound = std::move(why);
    };
    for (const ProbedShapes& read : *probes) {
        if (read.byNode.size() != graph.size())
            bound("the model is read as " + std::to_string(read.byNode.size()) +
                  " nodes at other sizes of " + summary.symbols.front() + ", " +
                  std::to_string(graph.size()) + " at these");
    }
    std::vector<const ProbedNode*> found(probes->size());
    std::vector<std::int64_t> sizes(probes->size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        Node& node = graph.node(NodeId(i));
        bool everywhere = true;
        for (std::size_t p = 0; p < probes->size() && everywhere; ++p) {
            const auto it = (*probes)[p].byNode.find(node.name);
            everywhere =
                it != (*probes)[p].byNode.end() && it->second.shapes.size() == node.outputs.size();
            found[p] = everywhere ? &it->second : nullptr;
        }
        if (!everywhere) {
            bound("node " + node.name + " is read otherwise at other sizes");
            continue;
        }
        const ProbedNode here = probedNode(graph, node);
        if (std::any_of(found.begin(), found.end(),
                        [&](const ProbedNode* n) { return n->structure != here.structure; }))
            bound("node " + node.name + " is read otherwise at other sizes");
        std::vector<SymbolicShape> shapes(node.outputs.size());
        bool any = false;
        for (std::size_t k = 0; k < node.outputs.size(); ++k) {
            // A stand-in here (a shape set by values folded at the stand-in's sizes, which
            // are no facts) may be a fact at every size read: then it follows the names too.
            const std::size_t rank = found[0]->shapes[k].size();
            const bool sameRank = std::all_of(found.begin(), found.end(), [&](const auto* n) {
                const std::vector<std::int64_t>& shape = n->shapes[k];
                return shape.size() == rank && (shape.empty() || shape[0] >= 0);
            });
            const bool atRun = node.runTimeShape(k);
            if (!sameRank || (!atRun && node.outputs[k].shape.size() != rank)) {
                if (!atRun)
                    bound("the rank of " + node.name + " changes with the sizes");
                continue;
            }
            SymbolicShape shape;
            for (std::size_t a = 0; a < rank; ++a) {
                for (std::size_t p = 0; p < found.size(); ++p)
                    sizes[p] = found[p]->shapes[k][a];
                shape.push_back(fitDimExpr(summary.symbols, points, sizes, degree));
                if (!shape.back()) {
                    ++summary.unknownDimensions;
                    if (!atRun)
                        bound("a dimension of " + node.name +
                              " follows the sizes by no expression of degree " +
                              std::to_string(degree) + " or less");
                }
            }
            // The fit is only ever a fact where it gives this read's shape too (a size of 1
            // may broadcast where the others do not).
            if (!atRun) {
                const auto at = evaluateShape(shape, base);
                if (at && *at != node.outputs[k].shape)
                    bound("the shape of " + node.name + " at " + summary.symbols.front() +
                          " = 1 follows another rule than at other sizes");
            }
            if (isSymbolic(shape)) {
                shapes[k] = std::move(shape);
                any = true;
                ++summary.symbolicValues;
            }
        }
        if (any)
            node.symbolicShapes = std::move(shapes);
        // A constant folded from the sizes: its elements, where each follows them.
        if (!node.isConstant() || !node.data ||
            std::all_of(found.begin(), found.end(),
                        [&](const ProbedNode* n) { return n->data == here.data; }))
            continue;
        const bool fittable =
            here.elements && std::all_of(found.begin(), found.end(), [&](const ProbedNode* n) {
                return n->elements && n->elements->size() == here.elements->size();
            });
        std::vector<DimExpr> elements;
        for (std::size_t e = 0; fittable && e < here.elements->size(); ++e) {
            for (std::size_t p = 0; p < found.size(); ++p)
                sizes[p] = (*found[p]->elements)[e];
            auto fitted = fitDimExpr(summary.symbols, points, sizes, degree);
            if (!fitted || fitted->evaluate(base) != (*here.elements)[e])
                break;
            elements.push_back(std::move(*fitted));
        }
        if (fittable && elements.size() == here.elements->size())
            node.symbolicData = std::move(elements);
        else if (!tiledEverywhere(node, found)) {
            bound("the constant " + node.name + " is folded from the sizes by no expression");
            summary.unfittedConstants.push_back(node.name);
        }
    }
    if (!summary.unfittedConstants.empty()) {
        std::vector<std::string> first = whereFittingStops(
            graph, summary.unfittedConstants, *probes, summary.symbols, points, base, degree);
        if (!first.empty())
            summary.unfittedConstants = std::move(first);
    }
    if (graph.sizeBound.empty())
        checkFarAway(graph, inputs, summary.symbols, probe);
    return summary;
}

} // namespace placer
