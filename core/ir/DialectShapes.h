// Run-time shape functions of an op dialect whose ops carry none of their own (ONNX's, which
// ask ONNX's shape inference): the VM calls them before it allocates, and the reader of that
// format installs them (io/OnnxRunShapes.h), so the VM reads no file format. A hook like
// ir/ConstantFolding.h, in the other direction.
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"
#include "ir/TensorData.h"

#include <functional>
#include <string>
#include <vector>

namespace placer {

struct DialectShapeFunctions {
    /// The output types of `node` for inputs of these types; values[i], where not null, is
    /// input i's value (those that set shapes). An error says why an output stays unknown.
    std::function<Result<std::vector<TensorType>>(
        const Node& node, const std::vector<TensorType>& inputs,
        const std::vector<const TensorData*>& values, int opset)>
        types;
    /// Whether input `position` (the format's own numbering) of `op` sets its outputs' shapes.
    std::function<bool(const std::string& op, int position)> inputSetsShapes;
};

/// Installs `functions` for `dialect` (every later call sees them). Safe from several threads.
void setDialectShapeFunctions(OpDialect dialect, DialectShapeFunctions functions);
/// Those installed for `dialect`, or null when no reader of its format has been used.
const DialectShapeFunctions* dialectShapeFunctions(OpDialect dialect);

} // namespace placer
