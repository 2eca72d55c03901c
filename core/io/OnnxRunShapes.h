// Shapes found when a model runs: ONNX's own shape function for one node, asked with the types
// (and the shape-setting values) its inputs have at run time, and the most a data-dependent
// output can hold. The executor asks them for the nodes after a data-dependent shape (TVM's
// Relay VM runs its shape functions on the host the same way, before it allocates).
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"
#include "ir/TensorData.h"

#include <string>
#include <vector>

namespace placer {

/// The output types of `node` (an ONNX operator, not control flow) for inputs of `inputs`'
/// types. `values[i]`, where not null, is input i's value (ONNX reads those of inputs that set
/// shapes: a Reshape's shape, a Slice's bounds, a TopK's k). A data-dependent output (NonZero's,
/// NonMaxSuppression's) comes at the most it can hold (boundSelectionOutputs). An error says why
/// an output's shape stays unknown.
Result<std::vector<TensorType>> onnxRunTimeTypes(const Node& node,
                                                 const std::vector<TensorType>& inputs,
                                                 const std::vector<const TensorData*>& values,
                                                 int opset);

/// NonZero, Compress, Unique, StringNormalizer and NonMaxSuppression select a number of
/// elements that depends on the data: their outputs are given the most they can hold (the
/// storage a run needs at worst), and the kernel reports what it filled.
void boundSelectionOutputs(const std::string& op, const Attrs& attrs,
                           const std::vector<TensorType>& inputs, std::vector<TensorType>* outputs);

/// Installs onnxRunTimeTypes and onnxInputSetsShapes as the ONNX dialect's run-time shape
/// functions (ir/DialectShapes.h), once a process; the ONNX and JSON readers call it.
void installOnnxShapeFunctions();

} // namespace placer
