// Fitting each value's shape in the dimensions the inputs name, from reads at other sizes.
#include "io/SymbolicShapes.h"

#include <algorithm>
#include <cctype>
#include <future>
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

bool isNumber(const std::string& text) {
    return !text.empty() && std::all_of(text.begin(), text.end(),
                                        [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// What a read at other sizes keeps: each node's output shapes by node name, with an empty
/// shape and rank -1 for a stand-in found at run time.
struct ProbedShapes {
    std::unordered_map<std::string, std::vector<std::vector<std::int64_t>>> byNode;
};

ProbedShapes shapesOf(const Graph& graph) {
    ProbedShapes out;
    out.byNode.reserve(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(i));
        std::vector<std::vector<std::int64_t>> shapes;
        for (std::size_t k = 0; k < node.outputs.size(); ++k)
            shapes.push_back(node.runTimeShape(k) ? std::vector<std::int64_t>{-1}
                                                  : node.outputs[k].shape);
        out.byNode.emplace(node.name, std::move(shapes));
    }
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

} // namespace

SymbolicShapeSummary annotateSymbolicShapes(Graph& graph, const ShapeProbe& probe) {
    SymbolicShapeSummary summary;
    graph.symbolValues.clear();
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        graph.node(NodeId(i)).symbolicShapes.clear();
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
            const std::string& declared = open.declaredDims[a];
            if (isNumber(declared)) {
                input.symbol.push_back(-1);
                continue;
            }
            // An unnamed dimension is named after its input and axis.
            const std::string name = declared.empty() || declared == "?"
                                         ? open.name + "." + std::to_string(a)
                                         : declared;
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

    std::vector<const std::vector<std::vector<std::int64_t>>*> found(probes->size());
    std::vector<std::int64_t> sizes(probes->size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        Node& node = graph.node(NodeId(i));
        bool everywhere = true;
        for (std::size_t p = 0; p < probes->size() && everywhere; ++p) {
            const auto it = (*probes)[p].byNode.find(node.name);
            everywhere =
                it != (*probes)[p].byNode.end() && it->second.size() == node.outputs.size();
            found[p] = everywhere ? &it->second : nullptr;
        }
        if (!everywhere)
            continue;
        std::vector<SymbolicShape> shapes(node.outputs.size());
        bool any = false;
        for (std::size_t k = 0; k < node.outputs.size(); ++k) {
            // A stand-in here (a shape set by values folded at the stand-in's sizes, which
            // are no facts) may be a fact at every size read: then it follows the names too.
            const std::size_t rank = (*found[0])[k].size();
            const bool sameRank = std::all_of(found.begin(), found.end(), [&](const auto* n) {
                const std::vector<std::int64_t>& shape = (*n)[k];
                return shape.size() == rank && (shape.empty() || shape[0] >= 0);
            });
            if (!sameRank || (!node.runTimeShape(k) && node.outputs[k].shape.size() != rank))
                continue;
            SymbolicShape shape;
            for (std::size_t a = 0; a < rank; ++a) {
                for (std::size_t p = 0; p < found.size(); ++p)
                    sizes[p] = (*found[p])[k][a];
                shape.push_back(fitDimExpr(summary.symbols, points, sizes, degree));
                if (!shape.back())
                    ++summary.unknownDimensions;
            }
            if (isSymbolic(shape)) {
                shapes[k] = std::move(shape);
                any = true;
                ++summary.symbolicValues;
            }
        }
        if (any)
            node.symbolicShapes = std::move(shapes);
    }
    return summary;
}

} // namespace placer
