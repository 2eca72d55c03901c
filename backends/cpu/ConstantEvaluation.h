// The CPU backend as the readers' constant evaluator (ir/ConstantFolding.h): a node whose inputs
// are known at load is run once, with the same kernels as a run on a cpu or vcpu device.
#pragma once

#include "ir/ConstantFolding.h"

namespace placer {

/// Evaluates one node on host data with the CPU kernels.
Result<std::vector<TensorData>> evaluateOnCpu(const Node& node,
                                              const std::vector<TensorType>& inputTypes,
                                              const std::vector<const TensorData*>& inputs,
                                              const std::vector<TensorType>& outputTypes,
                                              int onnxOpset);

/// Makes evaluateOnCpu the process's constant evaluator; each program's main() calls it (tests
/// that read models and want them folded too).
void installConstantFolding();

} // namespace placer
