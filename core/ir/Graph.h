// The dataflow graph: SSA nodes in topological order, with first-class placement fields.
#pragma once

#include "ir/Attrs.h"
#include "ir/DimExpr.h"
#include "ir/HostTensor.h"
#include "ir/Ids.h"
#include "ir/KernelHints.h"
#include "ir/OpRegistry.h"
#include "ir/Result.h"
#include "ir/TensorData.h"
#include "ir/TensorType.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace placer {

/// Where something was written in an input file (1-based; 0 = unknown).
struct SourceLocation {
    int line = 0;
    int column = 0;
    bool operator==(const SourceLocation&) const = default;
};

/// How strongly a node is fixed to a device.
///  - Plain: the op runs there; its consumers are free to run elsewhere (soft out-edges).
///  - Fixed: the op and its result are there; in `unify` mode consumers follow (hard out-edges).
enum class PinKind : std::uint8_t { None, Plain, Fixed };

struct Pin {
    PinKind kind = PinKind::None;
    DeviceId device;
    std::string origin; ///< who set it: "on_device at model.relay:4:8", "--pin", "gui", ...
    /// Set by the planner, not the user: a node of a sharded graph held where the user's plan
    /// put it. Such a node is no more pinned, to what reads pins, than the user's node it
    /// computes (a prediction fuses it as the run does).
    bool hold = false;

    bool active() const { return kind != PinKind::None; }
    bool operator==(const Pin&) const = default;
};

class Graph;

/// A graph attribute of a node (an If's then_branch, a Loop's body). The body's parameters are,
/// in order, its own formal inputs and then one per value it reads from the enclosing graph;
/// those outer values are the node's last `captures` inputs, in the same order.
struct Subgraph {
    std::string attribute; ///< "then_branch", "else_branch", "body"
    std::shared_ptr<const Graph> graph;
    /// The body as its source format wrote it (a serialized onnx.GraphProto), for writers.
    std::shared_ptr<const std::string> source;
};

struct Node {
    std::string name;                 ///< unique in the graph: "%0", "%a", "conv1"
    std::vector<std::string> aliases; ///< other names bound to it (Relay on_device bindings)
    const OpDef* op = nullptr;        ///< never null in a graph
    std::vector<ValueRef> inputs;
    Attrs attrs;
    std::vector<TensorType> outputs;
    SourceLocation location;

    /// The planned device; invalid until a plan is applied.
    DeviceId device;
    /// Where a user or a file fixed the node.
    Pin pin;
    /// Further pins on this node that disagree with `pin`; the planner reports each as a conflict.
    std::vector<Pin> rejectedPins;

    /// device_copy only: the source and destination devices, and whether the planner made it.
    DeviceId copySource;
    DeviceId copyDestination;
    bool insertedCopy = false;

    /// What the optimisations after placement tell this node's kernel (empty in a user's graph).
    KernelHints hints;
    /// In a pipelined plan's graph (--micro-batches): the micro-batch this node computes, or -1.
    /// Earlier micro-batches go first on every device (vm/Schedule.h).
    std::int32_t microBatch = -1;

    /// constant only: the raw little-endian data, or null for shape-only graphs.
    std::shared_ptr<const TensorData> data;

    /// Per output (empty: none): its shape is known only at run time, because it follows a
    /// data-dependent shape (NonZero's) or a value the model computes (a Reshape's shape). Its
    /// type is a stand-in; the executor asks the op's shape function when the node runs.
    std::vector<bool> runTimeShapes;
    bool runTimeShape(std::size_t k) const { return k < runTimeShapes.size() && runTimeShapes[k]; }
    bool anyRunTimeShape() const {
        return std::find(runTimeShapes.begin(), runTimeShapes.end(), true) != runTimeShapes.end();
    }

    /// Per output (empty: none): its shape in the dimensions the model's inputs name
    /// ("batch×seq×64"), where some dimension follows them (io/SymbolicShapes.h). Its type is
    /// the shape at Graph::symbolValues.
    std::vector<SymbolicShape> symbolicShapes;
    /// constant only, where the reader folded it from the sizes of named dimensions (a
    /// Reshape's target from Shape(x), a Concat of sizes): each element as an expression of
    /// them; `data` holds its value at Graph::symbolValues. Empty otherwise.
    std::vector<DimExpr> symbolicData;
    /// constant only, where the reader folded it from the sizes as a broadcast (a class token
    /// expanded to the batch): `data` repeats its slice at index 0 of every axis whose size
    /// follows the names along those axes, at any size.
    bool tiledData = false;

    /// Control flow only (OpDef::hasBodies): the bodies, and how many of the inputs, at the end,
    /// are values the bodies read from this graph.
    std::vector<Subgraph> subgraphs;
    std::uint32_t captures = 0;

    OpRole role() const { return op->role; }
    bool isParameter() const { return op->role == OpRole::Parameter; }
    bool isConstant() const { return op->role == OpRole::Constant; }
    bool isDeviceCopy() const { return op->role == OpRole::DeviceCopy; }
    /// The inputs the op itself declares (all of them but the captured outer values).
    std::size_t ownInputs() const { return inputs.size() - captures; }
};

/// The element type a node's kernel works on: its first input's, else its first output's.
DType kernelDType(const Graph& graph, const Node& node);
/// Whether a device of `kind` can run the node with inputs of `dtype`: its op's kernels, or for
/// control flow, a kernel for every node of every body (recursively).
bool nodeRunsOn(const Node& node, DeviceKind kind, DType dtype);
/// Whether a node must run on the host device: a host-only op, or a body holding one.
bool nodeHostOnly(const Node& node);
/// How many nodes a node's bodies hold, recursively (0 for an op without bodies).
std::size_t bodyNodeCount(const Node& node);
/// One line per body: "body: 7 ops (Add ×2, Identity ×2, Slice, Unsqueeze ×2)".
std::vector<std::string> describeBodies(const Node& node);

/// A graph result, optionally required on a given device (Relay's result virtual_device).
struct GraphOutput {
    ValueRef value;
    DeviceId device;
    std::string name; ///< the output's own name where the format has one (ONNX)
    bool operator==(const GraphOutput&) const = default;
};

/// A graph input that the model leaves open, and what the reader planned it as: dimensions the
/// model names ("batch") or leaves unknown were fixed (at the data a run gives, or 1), and an
/// input whose value sets shapes (a Slice's bounds, a window's size) was planned for a given
/// value, then a constant. A run whose data differs is planned again for it
/// (session/Session.h).
struct OpenInput {
    std::string name;
    /// Each dimension as the model declares it ("batch", "?", "3"); empty when all are fixed.
    std::vector<std::string> declaredDims;
    bool setsShapes = false;
    /// The value the plan was made for, when it was planned for one (the input is a constant
    /// of the graph then).
    std::optional<HostTensor> plannedValue;
};

/// Whether `shape` fits dimensions declared as `dims` ("batch", "?", "3"): the same rank, and
/// equal where a dimension is a number.
bool shapeFitsDeclared(const std::vector<std::string>& dims,
                       const std::vector<std::int64_t>& shape);

/// The name axis `axis` of open input `input` is known by: the one the model declares, or, for
/// an unnamed one ("" or "?"), the input's name and the axis ("x.1"); std::nullopt where the
/// model fixes it to a number.
std::optional<std::string> dimensionName(const OpenInput& input, std::size_t axis);

class Graph {
public:
    Graph() = default;

    /// Appends a node. Its inputs must refer to nodes already in the graph (topological order);
    /// its name must be unique (see uniqueName()).
    NodeId addNode(Node node);

    std::size_t size() const { return m_nodes.size(); }
    const Node& node(NodeId id) const { return m_nodes[id.index]; }
    /// A node to change: anything of it may change, so the graph takes a new revision.
    Node& node(NodeId id) {
        touch();
        return m_nodes[id.index];
    }
    /// Change where a node is pinned and nothing else: the graph keeps its revision, so the
    /// planner's index of it stays valid (plan/GraphIndex.h).
    void setPin(NodeId id, Pin pin) { m_nodes[id.index].pin = std::move(pin); }
    void setRejectedPins(NodeId id, std::vector<Pin> pins) {
        m_nodes[id.index].rejectedPins = std::move(pins);
    }
    /// Identifies the graph's structure (nodes, inputs, types, roles, copies, outputs): a number
    /// no other structure in this process has had. Every change but setPin() takes a new one; a
    /// copy of a graph has its revision.
    std::uint64_t revision() const { return m_revision; }
    const std::vector<Node>& nodes() const { return m_nodes; }
    const TensorType& type(ValueRef value) const {
        return m_nodes[value.node.index].outputs[value.output];
    }

    const std::vector<GraphOutput>& outputs() const { return m_outputs; }
    void addOutput(GraphOutput output) {
        touch();
        m_outputs.push_back(output);
    }
    std::vector<GraphOutput>& outputs() {
        touch();
        return m_outputs;
    }

    /// The node with this name or alias.
    std::optional<NodeId> find(std::string_view name) const;
    /// Records another name for a node (must be unused).
    void addAlias(NodeId id, std::string alias);
    /// `base` if no node is called that, else base_2, base_3, ...
    std::string uniqueName(std::string_view base) const;

    /// Keeps an op definition that only this graph uses (an importer's op without kernels) alive.
    const OpDef* adoptOp(std::unique_ptr<OpDef> op);

    /// A printable name for a value: "%0", or "%5.1" for output 1 of a multi-output node.
    std::string valueName(ValueRef value) const;

    std::string name;         ///< a display name, usually the file's base name
    std::string sourceFormat; ///< "relay", "json", "onnx"
    /// Facts about the source a writer may need again, in order: ("onnx.opset", "13"), ...
    std::vector<std::pair<std::string, std::string>> properties;
    /// The inputs whose shapes or values run time may change (an ONNX model's symbolic
    /// dimensions and shape-setting inputs); empty for a graph of static shapes.
    std::vector<OpenInput> openInputs;
    /// The values of the dimensions the inputs name that the types are planned at ("batch" 1,
    /// "seq" 1 for stand-ins), where nodes carry symbolic shapes.
    SymbolValues symbolValues;
    /// Where `symbolValues` is set: why the graph read at other sizes of the names is more
    /// than this graph with its shapes and folded constants evaluated there (a node read
    /// otherwise, a constant folded from the sizes that no expression gives, a dimension no
    /// expression gives); empty when instantiateAtSizes() gives that graph.
    std::string sizeBound;
    /// A value the reader folded at load (ir/ConstantFolding.h), intermediate ones included:
    /// the values it was computed from, and its bytes (a short one whole, else a hash), so that
    /// reads at other sizes tell where a value stops following the sizes by an expression
    /// (io/SymbolicShapes.h).
    struct FoldedValue {
        std::string name;
        std::vector<std::string> inputs;
        DType dtype = DType::Float32;
        std::string smallBytes; ///< the bytes, where at most kWholeBytes
        std::uint64_t hash = 0; ///< of the bytes, otherwise
        std::int64_t elements = 0;
        static constexpr std::size_t kWholeBytes = 512;
    };
    std::vector<FoldedValue> foldedValues;
    /// The model's ONNX opset, or 0 when it did not come from ONNX.
    int onnxOpset() const;
    /// How many nodes the reader evaluated at load and replaced by constants
    /// (ir/ConstantFolding.h).
    int foldedNodes() const;

private:
    /// Takes a new revision.
    void touch() { m_revision = nextRevision(); }
    static std::uint64_t nextRevision();

    std::vector<Node> m_nodes;
    std::vector<GraphOutput> m_outputs;
    std::uint64_t m_revision = nextRevision();
    std::unordered_map<std::string, NodeId> m_byName;
    std::vector<std::shared_ptr<const OpDef>> m_ownedOps;
};

/// Whether value `value`'s shape is found only at run time: its producer marks it so
/// (Node::runTimeShapes), or is an op that finds its extent from the data (the Selection
/// family: NonZero, NonMaxSuppression, Unique, Compress), or is control flow whose bodies hold
/// such shapes. Its planned type is a stand-in.
bool shapeFoundAtRun(const Graph& graph, ValueRef value);

/// Whether any value of `graph`, or of its nodes' bodies at any depth, has a shape found only
/// at run time.
bool findsShapesAtRun(const Graph& graph);

/// A value's shape in the dimensions the inputs name, following copies to the value copied;
/// null where the value's shape follows none of them.
const SymbolicShape* symbolicShapeOf(const Graph& graph, ValueRef value);

/// `graph` with every value whose shape follows the named dimensions typed at `values` (where
/// each of its dimensions has a value there): what costs at those sizes are computed on. Its
/// folded constants stay the graph's: it is for costing, never for running.
Graph graphAtSizes(const Graph& graph, const SymbolValues& values);

/// `graph`, whose nodes carry symbolic shapes and data (io/SymbolicShapes.h), at other values
/// of the named dimensions: every such shape and folded constant evaluated at `values` (names
/// it lacks keep the graph's), so that it is the graph the model would be read as at those
/// sizes, with the same nodes (a plan of `graph` places it as it is). An error says why not:
/// the graph is bound to its sizes (Graph::sizeBound), a name's value is negative, or an
/// expression has no value there.
Result<Graph> instantiateAtSizes(const Graph& graph, const SymbolValues& values);

/// The bytes of constant `node`, folded from the sizes (Node::symbolicData), at sizes `at`; an
/// error when an element has no value there or overflows its type.
Result<std::string> symbolicDataAt(const Node& node, const SymbolValues& at);

/// `bytes`, elements of `elementBytes` in shape `from`, broadcast to shape `to` (of the same
/// rank, each axis of `from` of size 1 or `to`'s).
std::string broadcastBytes(std::string_view bytes, const std::vector<std::int64_t>& from,
                           const std::vector<std::int64_t>& to, std::size_t elementBytes);

/// The sizes a run of a graph had: the values of the dimensions its inputs name, and the shapes
/// its kernels found at run time, by node name and output.
struct RanSizes {
    SymbolValues symbols;
    std::map<std::pair<std::string, std::uint32_t>, std::vector<std::int64_t>> found;
    bool empty() const { return symbols.empty() && found.empty(); }
};

/// A value's type for people: "1x3x64x64 float32 (48.0 KiB)"; "batch×seq×64 float32
/// (batch×seq×256 B), planned at 1x1x64" where its shape follows named dimensions; or
/// "float32, rank 2, shape known at run time" where its planned shape is a stand-in. With
/// `ran`, a shape that follows the names or was found at run time adds the shape that ran:
/// "; ran as 2x16x64 (8.00 KiB)".
std::string describeValueType(const Graph& graph, ValueRef value, const RanSizes* ran = nullptr);
/// A value's size for people: "48.0 KiB", "batch×seq×256 B", or "size known at run time".
std::string describeValueBytes(const Graph& graph, ValueRef value);

} // namespace placer
