// Sequences and optionals lowered to tensors at load (io/OnnxSequences.h): what the lowering's
// files share (private to core/io). OnnxSequences.cpp holds the helpers, the graph's inputs and
// outputs and the entry points; SequenceValues.cpp the nodes emitted and the values known at
// load; SequenceNodes.cpp each sequence operator, If, Loop and the maps over sequences.
#pragma once

#include "io/OnnxSequences.h"

#include "ir/HostTensor.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace placer::sequences {

using onnx::GraphProto;
using onnx::NodeProto;

/// A Loop is unrolled at most this many times: beyond it, a sequence built step by step is no
/// longer something to plan statically.
inline constexpr std::int64_t kMaxUnrolled = 4096;

/// Unrolling stops with an error beyond this many nodes in the main graph: loops inside loops
/// multiply.
inline constexpr std::size_t kMaxLoweredNodes = 1000000;

/// Known values are small integers: positions, conditions, trip counts.
inline constexpr std::int64_t kMaxKnownElements = 4096;

const std::set<std::string>& sequenceOps();

bool notTensor(const onnx::TypeProto& type);

/// An integer tensor known at load: its elements, and its dimensions.
struct Known {
    std::vector<std::int64_t> values;
    std::vector<std::int64_t> dims;
    int type = onnx::TensorProto::INT64; ///< its ONNX element type
};

std::optional<Known> knownFromHost(const HostTensor& tensor);

/// A small integer constant, read as the reader reads any tensor (readOnnxTensor).
std::optional<Known> knownFromProto(const onnx::TensorProto& tensor);

/// A known value as a tensor of its element type.
std::optional<HostTensor> hostFromKnown(const Known& known);

/// The shape two shapes broadcast to (numpy's rules), or nothing when they do not.
std::optional<std::vector<std::int64_t>> broadcastDims(const std::vector<std::int64_t>& a,
                                                       const std::vector<std::int64_t>& b);

/// The names a graph defines: its inputs, initializers and node outputs.
std::set<std::string> definedIn(const GraphProto& graph);

/// Renames what a node reads: its inputs, and the outer values its bodies read.
void renameReads(NodeProto* node, const std::map<std::string, std::string>& renamed);

/// Renames the outer values a body reads (`renamed` maps old outer names to new ones).
void renameFree(GraphProto* graph, std::map<std::string, std::string> renamed);

const onnx::AttributeProto* attribute(const NodeProto& node, const std::string& name);

std::int64_t intAttribute(const NodeProto& node, const std::string& name, std::int64_t fallback);

/// A sequence or optional value: the tensors it holds.
struct Held {
    bool optional = false;
    bool present = true;  ///< an optional: holds a value
    bool sequence = true; ///< a sequence, or an optional sequence (else one tensor)
    std::vector<std::string> elements;
};

std::string describe(const NodeProto& node);

/// True if, in a Loop's body, the iteration number or a carried value reaches an input that sets
/// a shape (a Slice's bounds, a Reshape's shape): the body's shapes may then change from one
/// iteration to the next, which a body run as one op cannot have.
bool shapesFollowIteration(const GraphProto& body);

bool hasLoopToUnroll(const GraphProto& graph);

/// One model's lowering: run() rewrites its main graph so that no value is a sequence or an
/// optional, or says why it cannot.
class Lowering {
public:
    Lowering(onnx::ModelProto& model, const SequenceLoweringInputs& inputs,
             std::vector<std::string>* warnings)
        : m_model(model), m_inputs(inputs), m_warnings(warnings) {}

    std::optional<std::string> run();

private:
    using Failure = std::optional<std::string>;

    void collectNames(const GraphProto& graph);

    /// A name no value has: `base`, or `base` with a number.
    std::string fresh(const std::string& base);

    // --- inputs and outputs ----------------------------------------------------------------

    int givenLength(const std::string& name) const;

    const OnnxSequenceInput* given(const std::string& name) const;

    /// A value given for the input `name` (a position, a trip count) is known at load.
    void learnGivenValue(const std::string& name);

    void addTensorInput(const std::string& name, const onnx::TypeProto& elementType,
                        std::vector<onnx::ValueInfoProto>* inputs);

    Failure lowerInputs();

    Failure lowerOutputs();

    // --- emitting --------------------------------------------------------------------------

    void emit(NodeProto node);

    void emitIdentity(const std::string& from, const std::string& to);

    /// A Constant node of int64 (or bool) elements.
    std::string emitConstant(const std::string& name, const std::vector<std::int64_t>& values,
                             const std::vector<std::int64_t>& dims, bool boolean = false);

    /// An int64 initializer (an axes or split input).
    std::string addInitializer(const std::string& base, const std::vector<std::int64_t>& values);

    /// Unsqueeze or Squeeze along one axis: axes as an input from opset 13, else an attribute.
    void emitAxisOp(const std::string& op, const std::string& input, const std::string& output,
                    std::int64_t axis);

    /// Binds `output` to what `source` is: the same sequence, or the tensor through Identity.
    void bind(const std::string& output, const std::string& source);

    // --- values known at load --------------------------------------------------------------

    const Known* known(const std::string& name) const;

    /// Integer arithmetic on values known at load, enough for positions and conditions.
    void evaluate(const NodeProto& node);

    /// Element-wise integer arithmetic, comparisons and logic on values known at load, and
    /// Cast between integer types, evaluated by the reader's one load-time evaluator (the CPU
    /// kernels, as folding at load runs them); nothing when there is none, the op is another,
    /// or the kernel refuses.
    std::optional<Known> computeKnown(const NodeProto& node, const std::vector<const Known*>& in);

    /// A scalar (or one-element) value known at load, or the reason it is not.
    std::optional<std::int64_t> knownScalar(const std::string& name) const;

    std::string notKnown(const NodeProto& node, const std::string& what,
                         const std::string& name) const;

    // --- the rewriting ---------------------------------------------------------------------

    const Held* heldInput(const NodeProto& node, int k) const;

    Failure sequenceInput(const NodeProto& node, int k, const Held** held) const;

    /// The position input `k` of a sequence node, normalised against `length`; `allowEnd` lets
    /// it be the length itself (an insertion at the back).
    Failure position(const NodeProto& node, int k, std::int64_t length, bool allowEnd,
                     std::int64_t* at) const;

    /// A Loop whose body's shapes follow the iteration is unrolled where its trip count is known
    /// at load; otherwise it is left to be read as one op (and refused there if it cannot be).
    bool unrollsForShapes(const NodeProto& node) const;

    /// Whether a node reads a sequence or optional: as an input, from its bodies' outer
    /// values, or within its bodies.
    bool readsSequences(const NodeProto& node) const;

    bool needsLowering(const NodeProto& node) const;

    Failure lowerNode(const NodeProto& node);

    /// Emits a body's nodes with its inputs bound to `bound`; *outputs gets the names its
    /// outputs then have.
    Failure inlineBody(const GraphProto& body, const std::vector<std::string>& bound,
                       const std::string& prefix, std::vector<std::string>* outputs);

    const GraphProto* body(const NodeProto& node, const std::string& name) const;

    std::string prefixOf(const NodeProto& node) const;

    Failure lowerIf(const NodeProto& node);

    Failure lowerLoop(const NodeProto& node);

    Failure lowerMap(const NodeProto& node);

    /// Shapes of tensors, by ONNX shape inference over what is emitted so far (inputs with the
    /// shapes given for them): -1 for a dimension it leaves open (a Slice whose bounds fold
    /// later); a tensor of unknown rank is left out.
    std::map<std::string, std::vector<std::int64_t>>
    shapesOf(const std::set<std::string>& names) const;

    Failure lowerSplit(const NodeProto& node);

    Failure lowerConcat(const NodeProto& node);

    /// Concat of `parts` along `axis` into `output`; with `newAxis`, each part first gains that
    /// axis (an Unsqueeze), so the parts are stacked.
    void emitConcat(const std::vector<std::string>& parts, std::int64_t axis, bool newAxis,
                    const std::string& output);

    onnx::ModelProto& m_model;
    const SequenceLoweringInputs& m_inputs;
    std::vector<std::string>* m_warnings;
    int m_opset = 0;
    std::vector<NodeProto> m_out;
    std::map<std::string, Held> m_held;
    std::map<std::string, Known> m_known;
    std::set<std::string> m_names;
};

} // namespace placer::sequences
