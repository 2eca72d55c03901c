// ONNX sequences and optionals, lowered at load to the tensors they hold.
//
// The engine plans static tensors, so a sequence is planned for a length and element shapes
// fixed at load, as symbolic dimensions and shape-setting inputs are: a sequence input is given
// as its elements (tensor inputs named "S[0]", "S[1]", ...), and every operator on sequences is
// resolved to the tensors it moves. SequenceConstruct, SequenceInsert, SequenceErase,
// SequenceAt, SequenceLength and Identity only rename tensors; SplitToSequence becomes a Split,
// ConcatFromSequence a Concat; Optional, OptionalHasElement and OptionalGetElement resolve to the
// value or its absence. An If that yields a sequence is taken on its condition, which must be
// known at load; a Loop that carries a sequence, or reads one, is unrolled for its trip count;
// SequenceMap runs its body once per element. A graph output that is a sequence becomes one
// output per element, "S[0]", "S[1]", ...
//
// The same pass unrolls a Loop whose iteration number (or a carried value) reaches an input that
// sets a shape, when its trip count is known at load: such a body's shapes may change from one
// iteration to the next, which a body run as one op cannot have.
#pragma once

#include "ir/HostTensor.h"
#include "ir/Result.h"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace onnx {
class GraphProto;
class ModelProto;
class NodeProto;
} // namespace onnx

namespace placer {

/// How a sequence or optional graph input is given.
struct OnnxSequenceInput {
    /// An optional input: whether it holds a value (ignored for a sequence).
    bool present = true;
    /// A sequence (or an optional sequence): its number of elements.
    int length = 0;
};

/// Evaluates an ONNX node on values known at load, as folding at load does (the reader's one
/// evaluator): one tensor per output of the types given, or why not.
using LoadTimeEvaluator = std::function<Result<std::vector<HostTensor>>(
    const onnx::NodeProto& node, const std::vector<HostTensor>& inputs,
    const std::vector<TensorType>& outputTypes)>;

/// What the caller knows of a model's inputs.
struct SequenceLoweringInputs {
    /// Shapes given for inputs ("S[0]" for a sequence's first element).
    const std::map<std::string, std::vector<std::int64_t>>* inputShapes = nullptr;
    /// Sequence and optional inputs given explicitly. One not listed takes its length from the
    /// consecutive "S[k]" names in inputShapes (an optional: present if "S" or "S[0]" is there).
    const std::map<std::string, OnnxSequenceInput>* sequences = nullptr;
    /// Values given for inputs: positions, conditions and trip counts may come from them.
    const std::map<std::string, HostTensor>* values = nullptr;
    /// Loops (by first output) to unroll where their trip count is known, whatever their body.
    const std::set<std::string>* unrollLoops = nullptr;
    /// What computes positions, conditions and trip counts from values known at load (none:
    /// only constants and given values are known).
    const LoadTimeEvaluator* evaluate = nullptr;
};

/// The tensor input or output that holds element `k` of sequence `name`: "name[k]".
std::string sequenceElementName(const std::string& name, int k);

/// True if the graph (or a body in it) has a sequence or optional value or operator.
bool usesSequences(const onnx::GraphProto& graph);

/// Rewrites `model` so that no value in its main graph is a sequence or an optional, and unrolls
/// the Loops described above. Returns the
/// reason when that cannot be done, naming the node (a position or condition not known at load,
/// a position out of range, an empty optional read). Lengths defaulted for inputs nobody gave
/// are reported in *warnings. A model with no sequence is left as it is.
std::optional<std::string> lowerSequences(onnx::ModelProto* model,
                                          const SequenceLoweringInputs& inputs,
                                          std::vector<std::string>* warnings);

} // namespace placer
