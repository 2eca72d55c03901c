// The ONNX importer's state and steps (io/OnnxReader.h is the interface): the class is declared
// here so that each concern of reading a model lives in a unit of its own:
//  - OnnxReader.cpp: the driver, the model's checks (opset, devices, declared shapes, sizes),
//    input shapes given at load, and ONNX's shape inference as a source of types;
//  - OnnxTensorData.cpp: tensor payloads (raw, typed and string fields), initializers kept out of
//    the protobuf, and external data files, mapped;
//  - OnnxFolding.cpp: functions expanded, values given for shape-setting inputs bound, and the
//    load-time evaluation of what is known (io/OnnxEvaluation.h);
//  - OnnxBodies.cpp: the bodies of If, Loop and Scan, typed;
//  - OnnxGraphBuilder.cpp: the graph built from the protobuf in topological order.
// Only those units include it.
#pragma once

#include "io/OnnxReader.h"

#include "io/OnnxPayloads.h"
#include "io/OnnxProto.h"
#include "io/OnnxSequences.h"
#include "io/OnnxWriter.h"

#include "ir/ConstantFolding.h"
#include "ir/ControlFlow.h"
#include "ir/OpRegistry.h"
#include "ir/Scalar.h"
#include "ir/StringPool.h"

#include <onnx/checker.h>
#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace placer {

namespace fs = std::filesystem;

/// Tensors with more elements than this are refused as absurd (2^40 ≈ 10^12).
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
constexpr int kMinOpset = 11;
/// Older models are converted to this opset with ONNX's version converter.
constexpr int kUpgradeOpset = 13;
constexpr int kMaxTestedOpset = 17;
/// The domain of ONNX's training operators (Adagrad, Momentum, Adam), registered by op name.
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
/// Model metadata key prefix of a node's pin ("placement.pin:conv1" = "gpu" or "gpu!"). ONNX
/// 1.12 has no per-node metadata, so placement travels in the model's metadata_props.
constexpr const char* kPinKey = "placement.pin:";
/// Initializers of at least this many bytes are not parsed into the model's protobuf: they stay
/// where they are (the mapped model file, an external data file) and the graph's constants view
/// them there. Smaller ones (shapes, scales) are parsed as usual, so ONNX's shape inference sees
/// their values.
constexpr std::size_t kOutsideBytes = 4096;
/// Constant folding at load reads at most this many bytes of inputs for one node: it is there for
/// shape arithmetic, and must not read a model's weights just to plan it.
constexpr std::int64_t kFoldReadBytes = std::int64_t{1} << 20;

/// Ops whose result is not a function of their inputs: never folded.
/// Ops whose output extents depend on the values of their inputs: the Selection family, as
/// the op registry declares it.
inline bool dataDependentOutputs(const std::string& op) {
    const OpDef* def = OpRegistry::global().find(op);
    return def && def->dialect == OpDialect::Onnx && def->kernel.family == KernelFamily::Selection;
}

inline bool neverFolded(const std::string& op) {
    static const std::set<std::string> kOps{"RandomNormal",
                                            "RandomUniform",
                                            "RandomNormalLike",
                                            "RandomUniformLike",
                                            "Multinomial",
                                            "Bernoulli",
                                            "If",
                                            "Loop",
                                            "Scan"};
    return kOps.count(op) > 0 || dataDependentOutputs(op);
}

class OnnxImporter {
public:
    OnnxImporter(const std::string& file, DeviceSet* devices, bool devicesGiven,
                 std::vector<std::string>* warnings, const OnnxReadOptions& options)
        : m_file(file), m_devices(*devices), m_devicesGiven(devicesGiven), m_warnings(warnings),
          m_options(options) {}

    /// A tensor proto's type and elements, checked against its dims.
    Result<HostTensor> hostTensor(const onnx::TensorProto& tensor) const;

    Result<Graph> read(std::string_view bytes);

    /// Reads the body of an If, Loop or Scan: `model` holds it as its graph, every input typed
    /// (its formal inputs, then the outer values it reads). Its parameters are those inputs, in
    /// order, and its outputs the body's outputs. Every value in a Loop's or Scan's body must
    /// have one static shape; an If's branch runs once a run, so a value in it may have a shape
    /// found only at run time (`shapesAtRun`), as in the main graph.
    Result<Graph> readBody(onnx::ModelProto model,
                           const std::vector<std::pair<std::string, std::string>>& properties,
                           bool shapesAtRun);

    /// The Loop (by first output) whose body could not be typed, when that failed the read.
    const std::string& shapeVaryingLoop() const { return m_shapeVaryingLoop; }
    /// The graph inputs whose values set shapes, and those of them bound to a given value.
    const std::set<std::string>& shapeInputs() const { return m_shapeInputs; }
    const std::set<std::string>& boundInputs() const { return m_boundInputs; }

private:
    using Failure = std::optional<SourceError>;

    /// From the model's graph to m_graph, for a model and for a body alike: order, check, infer
    /// shapes, expand functions, fold constants, build. A body is not checked on its own (the
    /// model's check covered it, and its outputs need not declare types).
    Failure readGraph();

    SourceError fail(std::string message) const;

    void warn(std::string message) { m_warnings->push_back(std::move(message)); }

    Failure checkOpset();

    /// ONNX's version converter brings an old model to kUpgradeOpset; what it cannot convert is
    /// refused with its reason.
    Failure upgradeOpset(int opset);

    /// The device set a planned model carries in its metadata, used unless the user gave one.
    Failure readDeviceSet();

    Result<DeviceId> device(const std::string& name, const std::string& node) const;

    /// The element count of a tensor's dims, or a failure for negative or absurd sizes.
    Failure tensorElements(const onnx::TensorProto& tensor, std::int64_t* count) const;

    /// The user's shapes for graph inputs (--input-shape) replace the declared ones, which they
    /// must agree with where those are fixed.
    /// Sequences and optionals become the tensors they hold (io/OnnxSequences.h).
    Failure lowerSequences();

    Failure applyInputShapes();

    /// Declared value shapes (inputs, outputs, value_info) must be sane before inference runs.
    Failure checkDeclaredShapes() const;

    /// Every initializer's stored data must match its dims before anything is allocated for it.
    Failure checkTensorSizes();

    /// Reads external data into the tensors, refusing paths outside the model's folder.
    Failure loadExternalData();

    /// ONNX's checker does not look at attribute values, and its shape inference divides by
    /// strides and groups: a zero there would crash the process (found by fuzz_onnx_reader).
    Failure checkWindowAttributes() const;

    /// Whether the engine has a kernel for a standard op (by its ONNX name).
    static bool engineRuns(const onnx::NodeProto& node);

    /// Standard ops the engine has no kernel for, but which ONNX defines as a function of other
    /// ops (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, MeanVarianceNormalization, ...),
    /// are replaced by their function bodies, until none is left.
    Failure expandFunctions();

    /// Attributes of a function body that refer to an attribute the caller leaves out take that
    /// attribute's default from the caller's schema, or are dropped where it has none, so the
    /// body's op uses its own default (ONNX 1.12's expansion passes 0 instead: a
    /// SoftmaxCrossEntropyLoss without ignore_index would ignore class 0).
    static void bindDefaultReferences(const onnx::NodeProto& caller, const onnx::OpSchema& schema,
                                      onnx::FunctionProto* body);

    /// Graph inputs that set shapes and have a given value become initializers.
    Failure bindShapeInputs();

    /// The bytes of an initializer without taking them from it (folding reads them again).
    Result<TensorData> copyOfData(const onnx::TensorProto& tensor) const;

    /// The static type of a value after shape inference, if every dimension is known.
    std::optional<TensorType> staticType(const std::string& value) const;
    /// Whether ONNX's inference left a dimension of `value` unknown that no graph input's
    /// symbol names: a shape the model finds only when it runs.
    bool shapeFoundAtRun(const std::string& value) const;

    /// Evaluates nodes whose inputs are all known and makes their outputs initializers, then
    /// infers shapes again, until nothing changes. Constant nodes become initializers too.
    /// Evaluates `node` on values known at load with the process's constant evaluator
    /// (ir/ConstantFolding.h, the CPU kernels): its attributes read as the graph's nodes are;
    /// `positions`: where each input sits among the node's (ONNX may leave some out). The one
    /// load-time evaluator, for folding and for the sequence lowering alike.
    Result<std::vector<TensorData>> evaluateNode(const onnx::NodeProto& node,
                                                 const std::vector<std::int64_t>& positions,
                                                 const std::vector<TensorType>& inputTypes,
                                                 const std::vector<const TensorData*>& inputs,
                                                 const std::vector<TensorType>& outputTypes);
    /// evaluateNode() on whole tensors, every input present (io/OnnxSequences.h).
    Result<std::vector<HostTensor>> evaluateKnown(const onnx::NodeProto& node,
                                                  const std::vector<HostTensor>& inputs,
                                                  const std::vector<TensorType>& outputTypes);
    Failure foldConstants();

    static void collectNames(const onnx::GraphProto& graph, std::set<std::string>* names);

    /// Shape and Size of a statically shaped input: known without a kernel.
    std::optional<std::vector<TensorData>> foldShape(const onnx::NodeProto& node,
                                                     const std::vector<TensorType>& outputs);

    /// A Constant node's value as a tensor proto (its element type not checked), or nullopt for
    /// forms not understood.
    static std::optional<onnx::TensorProto> constantTensor(const onnx::NodeProto& proto);

    Failure validateAndInferShapes();

    Failure inferShapes();
    Failure inferShapesAsOnnxDoes();
    /// STFT's output shapes as the spec gives them (ONNX 1.12's inference ignores `onesided`),
    /// into m_stftShapes, its declared shapes set aside for inference.
    void typeStftOutputs();
    std::map<std::string, std::vector<std::int64_t>> m_stftShapes;

    static std::string firstLine(const char* text);

    void collectTypes();

    /// The static type of a value; symbolic or unknown dimensions become 1 with a warning.
    Result<TensorType> typeOf(const std::string& value, const std::string& node,
                              bool warnUnknown = true);

    void warnOnce(const std::string& message);
    /// Graph inputs and outputs that ONNX's version converter took a leading axis of 1 from
    /// (opset 8's Scan) keep their declared type in `converted`.
    static void keepDeclaredBatchAxes(const onnx::GraphProto& original,
                                      onnx::GraphProto* converted);

    Failure buildGraph();

    /// Kahn's algorithm over the nodes, so unsorted files load and cycles are found.
    Failure topologicalOrder(std::vector<int>* order);

    static std::string displayName(const onnx::NodeProto& node);

    std::string uniqueNodeName(const std::string& name);

    void define(const std::string& value, NodeId node, std::uint32_t output);

    Failure addConstant(const std::string& value, const onnx::TensorProto& tensor,
                        const std::string& name);

    /// The tensor's elements as little-endian bytes of `dtype`, from raw or typed fields.
    Result<TensorData> tensorData(const onnx::TensorProto& tensor, DType dtype,
                                  std::int64_t count) const;

    Failure addConstantNode(const onnx::NodeProto& proto);

    static std::optional<AttrValue> attrValue(const onnx::AttributeProto& attr);

    /// The value of a one-element tensor, if it has one.
    std::optional<double> scalarOf(const onnx::TensorProto& tensor) const;

    /// A node's attributes as the kernels read them. Tensor attributes (ConstantOfShape's value)
    /// are kept as their one value and element type; graphs are not kept.
    void readAttributes(const onnx::NodeProto& proto, Node* node);

    /// The inputs a control-flow node gives each of its bodies (before the outer values).
    Result<std::vector<TensorType>> formalBodyInputs(const onnx::NodeProto& proto,
                                                     const Node& node) const;

    /// If, Loop and Scan: every graph attribute is read as a body of its own (readBody), typed
    /// by ONNX shape inference from what this node gives it. The outer values the bodies read
    /// become the node's last inputs, so that the plan sees them as data flow. The node's
    /// outputs are typed from the bodies' outputs.
    Failure readBodies(const onnx::NodeProto& proto, Node* node);

    /// ONNX's inference leaves a Loop's outputs without shapes (they may change per iteration);
    /// the bodies fixed them, so they are told to ONNX, and what follows is inferred again.
    Failure refineInferredTypes(const onnx::NodeProto& proto, const Node& node);

    /// A control-flow node's output types, from its bodies' outputs.
    Failure typeBodyOutputs(const onnx::NodeProto& proto, Node* node,
                            const std::vector<TensorType>& formal);

    static bool dataDependent(const onnx::NodeProto& proto);

    /// NonZero, Compress, Unique and NonMaxSuppression: how many elements they select depends
    /// on the data, so their outputs are planned at the most they can hold (the storage a run
    /// needs at worst) and the kernel reports what it filled.
    void boundDataDependentOutputs(const onnx::NodeProto& proto, Node* node);

    const OpDef* opFor(const onnx::NodeProto& proto);

    Failure addNode(const onnx::NodeProto& proto);

    Failure addDeviceCopy(const onnx::NodeProto& proto, const std::string& name);

    /// What stands in a tensor's raw_data for m_outside[k]: 16 bytes (this read's nonce and k),
    /// enough for ONNX's checker, which wants one value field, and unforgeable by a file.
    std::string outsideMarker(std::size_t k) const;

    /// A nonce no file can know: a random seed drawn once per process, mixed with a count of
    /// the reads (a read of every Constant's value builds a reader, and the system's random
    /// device is too slow to open for each).
    static std::uint64_t freshNonce();

    /// The bytes a tensor's marker stands for, or null when its raw_data is its own.
    const TensorData* outsideData(const onnx::TensorProto& tensor) const;

    std::shared_ptr<const MappedFile> mappedExternalFile(const fs::path& path);

    const std::string& m_file;
    DeviceSet& m_devices;
    bool m_devicesGiven;
    std::vector<std::string>* m_warnings;
    const OnnxReadOptions& m_options;
    onnx::ModelProto m_model;
    Graph m_graph;
    /// The bytes of initializers kept out of m_model, and the nonce that marks a tensor's
    /// raw_data as standing for one of them (outsideMarker).
    std::vector<TensorData> m_outside;
    std::uint64_t m_nonce = freshNonce();
    std::map<fs::path, std::shared_ptr<const MappedFile>> m_externalFiles;
    std::unordered_map<std::string, const onnx::TypeProto_Tensor*> m_types;
    std::unordered_map<std::string, ValueRef> m_values;
    std::map<std::string, const OpDef*> m_unsupported;
    std::set<std::string> m_warned;
    std::map<std::string, std::string> m_pins;
    std::set<std::string> m_graphInputs;
    std::vector<int> m_order;
    std::set<std::string> m_boundInputs;
    std::set<std::string> m_shapeInputs;
    int m_folded = 0;
    bool m_body = false;            ///< reading the body of a control-flow node (readBody)
    bool m_bodyShapesAtRun = false; ///< an If's branch: its shapes may be found at run time
    std::string m_shapeVaryingLoop;
};

} // namespace placer
