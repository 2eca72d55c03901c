// Constant folding at load: a reader evaluates a node whose inputs are all known (initializers,
// constants, the shape of a statically shaped tensor, and what follows from those) and replaces
// it with a constant. The evaluation is a backend's: the CPU backend offers its kernels when it
// registers (backends/cpu), and the session installs what is on offer; core only knows the
// signature, so what merely reads graphs (the fuzz targets) needs no kernels and folds only shapes.
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace placer {

/// Evaluates `node` on host data: inputs[k] holds the bytes of an input of type inputTypes[k];
/// returns one buffer per output type, or why it cannot.
using ConstantEvaluator = std::function<Result<std::vector<TensorData>>(
    const Node& node, const std::vector<TensorType>& inputTypes,
    const std::vector<const TensorData*>& inputs, const std::vector<TensorType>& outputTypes,
    int onnxOpset)>;

/// The process's evaluator (null until one is installed).
const ConstantEvaluator& constantEvaluator();
void setConstantEvaluator(ConstantEvaluator evaluator);

/// A backend's evaluator, on offer until someone installs it: the CPU backend offers its kernels
/// when it registers, and a session installs the offer (installOfferedConstantEvaluator), so a
/// program that merely links a reader folds only shapes.
void offerConstantEvaluator(ConstantEvaluator evaluator);
/// Installs the evaluator on offer, if any; returns whether one was.
bool installOfferedConstantEvaluator();

/// Folding never materialises an output larger than this unless its inputs already hold as many
/// bytes (a transposed weight is worth folding; a broadcast of a scalar to a huge shape is not).
inline constexpr std::int64_t kFoldFreeBytes = std::int64_t{1} << 20;

} // namespace placer
