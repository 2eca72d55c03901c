// Shapes in the dimensions a model's inputs name: "batch×seq×64" rather than the stand-in a plan
// is made at.
//
// The reader types a model by ONNX's shape inference and its own folding, at concrete input
// shapes; neither carries names through arithmetic (a Reshape to batch*seq, a Concat to seq+1, a
// product of computed sizes). So the model is read again at a few values of the named dimensions,
// and each dimension of each value is fitted the one polynomial of total degree at most 2 in
// those names that gives its sizes there (ir/DimExpr.h), then checked at two more values of
// every name, of both parities. A dimension the check refutes (a stride's floor division, a size
// found in the data) is left unknown rather than guessed. Every op and every shape the model
// computes is covered, because each read is the reader itself.
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace placer {

/// Reads the same model with these inputs' shapes fixed (by input name).
using ShapeProbe =
    std::function<Result<Graph>(const std::map<std::string, std::vector<std::int64_t>>&)>;

/// What annotating found.
struct SymbolicShapeSummary {
    std::vector<std::string> symbols; ///< the names, as the inputs give them
    int reads = 0;                    ///< how many times the model was read again
    int symbolicValues = 0;           ///< values whose shape follows the names
    int unknownDimensions = 0;        ///< dimensions that change, but by no polynomial of them
    /// Why nothing was annotated, where nothing was ("every read at other sizes failed: ...").
    std::string skipped;
    /// The constants folded from the sizes that no expression of them gives (a Range over a
    /// cache's length, a mask), by name: read again with them kept computed
    /// (OnnxReadOptions::keepComputed), the graph serves every size.
    std::vector<std::string> unfittedConstants;
};

/// Sets Node::symbolicShapes for every value of `graph` whose shape follows the dimensions its
/// open inputs name, and Graph::symbolValues to the values `graph` was read at. `probe` reads
/// the model again. Nothing changes when the inputs name no dimension, when there are more than
/// six names, or when the model cannot be read at other sizes.
SymbolicShapeSummary annotateSymbolicShapes(Graph& graph, const ShapeProbe& probe);

} // namespace placer
