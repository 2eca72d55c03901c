// Constant folding at load: a reader evaluates a node whose inputs are all known (initializers,
// constants, the shape of a statically shaped tensor, and what follows from those) and replaces
// it with a constant. The evaluation is the CPU backend's (placer_runtime installs it with
// installConstantFolding()); core only knows the signature, so what merely reads graphs (the fuzz
// targets) needs no kernels and folds only shapes.
#pragma once

#include "ir/Result.h"
#include "ir/Graph.h"

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

/// Folding never materialises an output larger than this unless its inputs already hold as many
/// bytes (a transposed weight is worth folding; a broadcast of a scalar to a huge shape is not).
inline constexpr std::int64_t kFoldFreeBytes = std::int64_t{1} << 20;

} // namespace placer
