// ONNX reader.
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
#include <random>
#include <set>
#include <unordered_map>

namespace placer {

namespace {

namespace fs = std::filesystem;

/// Tensors with more elements than this are refused as absurd (2^40 ≈ 10^12).
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;
constexpr int kMinOpset = 11;
/// Older models are converted to this opset with ONNX's version converter.
constexpr int kUpgradeOpset = 13;
constexpr int kMaxTestedOpset = 17;
/// The domain of ONNX's training operators (Adagrad, Momentum, Adam), registered by op name.
constexpr const char* kTrainingDomain = "ai.onnx.preview.training";
constexpr const char* kCopyDomain = "ai.placement_explorer";
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

std::optional<DType> dtypeFromOnnx(int elemType) {
    switch (elemType) {
    case onnx::TensorProto_DataType_FLOAT:
        return DType::Float32;
    case onnx::TensorProto_DataType_FLOAT16:
        return DType::Float16;
    case onnx::TensorProto_DataType_BFLOAT16:
        return DType::BFloat16;
    case onnx::TensorProto_DataType_DOUBLE:
        return DType::Float64;
    case onnx::TensorProto_DataType_INT8:
        return DType::Int8;
    case onnx::TensorProto_DataType_INT16:
        return DType::Int16;
    case onnx::TensorProto_DataType_INT32:
        return DType::Int32;
    case onnx::TensorProto_DataType_INT64:
        return DType::Int64;
    case onnx::TensorProto_DataType_UINT8:
        return DType::UInt8;
    case onnx::TensorProto_DataType_BOOL:
        return DType::Bool;
    case onnx::TensorProto_DataType_UINT16:
        return DType::UInt16;
    case onnx::TensorProto_DataType_UINT32:
        return DType::UInt32;
    case onnx::TensorProto_DataType_UINT64:
        return DType::UInt64;
    case onnx::TensorProto_DataType_STRING:
        return DType::String;
    default:
        return std::nullopt;
    }
}

/// Ops whose result is not a function of their inputs: never folded.
/// Ops whose output extents depend on the values of their inputs: the Selection family, as
/// the op registry declares it.
bool dataDependentOutputs(const std::string& op) {
    const OpDef* def = OpRegistry::global().find(op);
    return def && def->dialect == OpDialect::Onnx && def->kernel.family == KernelFamily::Selection;
}

bool neverFolded(const std::string& op) {
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

class OnnxReader {
public:
    OnnxReader(const std::string& file, DeviceSet* devices, bool devicesGiven,
               std::vector<std::string>* warnings, const OnnxReadOptions& options)
        : m_file(file), m_devices(*devices), m_devicesGiven(devicesGiven), m_warnings(warnings),
          m_options(options) {}

    /// A tensor proto's type and elements, checked against its dims.
    Result<HostTensor> hostTensor(const onnx::TensorProto& tensor) const {
        std::int64_t count = 0;
        if (auto error = tensorElements(tensor, &count))
            return *error;
        const auto dtype = dtypeFromOnnx(tensor.data_type());
        if (!dtype)
            return fail("tensor '" + tensor.name() + "' has an unsupported element type (" +
                        std::to_string(tensor.data_type()) + ")");
        auto data = tensorData(tensor, *dtype, count);
        if (!data)
            return data.error();
        return HostTensor{TensorType{{tensor.dims().begin(), tensor.dims().end()}, *dtype},
                          data.take()};
    }

    Result<Graph> read(std::string_view bytes) {
        if (bytes.empty())
            return fail("the file is empty");
        // The model is parsed without its large initializers' bytes; those stay in `bytes` (a
        // mapped file, when the options keep it alive) and are viewed there, never copied.
        std::vector<PayloadRange> payloads;
        const std::optional<std::string> skeleton = stripInitializerPayloads(
            bytes, kOutsideBytes, [this](std::size_t k) { return outsideMarker(k); }, &payloads);
        const std::string_view parsed = skeleton ? std::string_view(*skeleton) : bytes;
        if (parsed.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
            return fail("the model's graph is larger than 2 GiB; store its weights as external "
                        "data");
        if (!m_model.ParseFromArray(parsed.data(), static_cast<int>(parsed.size())))
            return fail("not an ONNX model: the protobuf does not parse (a truncated file, or "
                        "another format?)");
        for (const PayloadRange& range : payloads) {
            const char* data = bytes.data() + range.offset;
            m_outside.push_back(m_options.bytesFile ? TensorData::viewOfFile(m_options.bytesFile,
                                                                             data, range.length)
                                                    : TensorData(std::string(data, range.length)));
        }
        if (!m_model.has_graph() || m_model.ir_version() <= 0)
            return fail("not an ONNX model: no graph or no IR version");
        if (auto error = checkOpset())
            return *error;
        if (auto error = readDeviceSet())
            return *error;
        if (auto error = lowerSequences())
            return *error;
        if (auto error = applyInputShapes())
            return *error;
        if (auto error = bindShapeInputs())
            return *error;
        if (auto error = checkDeclaredShapes())
            return *error;
        if (auto error = checkTensorSizes())
            return *error;
        if (auto error = loadExternalData())
            return *error;
        if (auto error = readGraph())
            return *error;
        // Exporters name graphs generically ("torch_jit", "main_graph"): such a graph is named
        // after its file by the loader; a real name (one this project wrote) is kept.
        static const std::set<std::string> kGeneric{"", "torch_jit", "torch-jit-export",
                                                    "main_graph", "graph"};
        if (!kGeneric.count(m_model.graph().name()))
            m_graph.name = m_model.graph().name();
        return std::move(m_graph);
    }

    /// Reads the body of an If, Loop or Scan: `model` holds it as its graph, every input typed
    /// (its formal inputs, then the outer values it reads). Its parameters are those inputs, in
    /// order, and its outputs the body's outputs. Every value in it must have a static shape.
    Result<Graph> readBody(onnx::ModelProto model,
                           const std::vector<std::pair<std::string, std::string>>& properties) {
        m_model = std::move(model);
        m_body = true;
        for (const auto& property : properties) {
            if (property.first == "onnx.opset" || property.first == "onnx.ir_version")
                m_graph.properties.push_back(property);
        }
        if (auto error = readGraph())
            return *error;
        m_graph.name = m_model.graph().name();
        return std::move(m_graph);
    }

    /// The Loop (by first output) whose body could not be typed, when that failed the read.
    const std::string& shapeVaryingLoop() const { return m_shapeVaryingLoop; }

private:
    using Failure = std::optional<SourceError>;

    /// From the model's graph to m_graph, for a model and for a body alike: order, check, infer
    /// shapes, expand functions, fold constants, build. A body is not checked on its own (the
    /// model's check covered it, and its outputs need not declare types).
    Failure readGraph() {
        // Dangling inputs and cycles get this reader's own messages before ONNX's checker.
        if (auto error = topologicalOrder(&m_order))
            return error;
        if (auto error = checkWindowAttributes())
            return error;
        if (auto error = m_body ? inferShapes() : validateAndInferShapes())
            return error;
        if (auto error = expandFunctions())
            return error;
        if (auto error = foldConstants())
            return error;
        collectTypes();
        if (auto error = buildGraph())
            return error;
        m_graph.sourceFormat = "onnx";
        return std::nullopt;
    }

    SourceError fail(std::string message) const {
        return SourceError{m_file, 0, 0, std::move(message)};
    }

    void warn(std::string message) { m_warnings->push_back(std::move(message)); }

    Failure checkOpset() {
        int opset = 0;
        for (const auto& import : m_model.opset_import()) {
            if (import.domain().empty() || import.domain() == "ai.onnx")
                opset = static_cast<int>(import.version());
        }
        // A graph of training steps may import only ai.onnx.preview.training (its optimisers
        // are plain tensor arithmetic); it is read as the newest opset this build knows.
        bool training = false;
        for (const auto& import : m_model.opset_import())
            training = training || import.domain() == kTrainingDomain;
        if (opset == 0 && training)
            opset = kMaxTestedOpset;
        if (opset == 0)
            return fail("the model imports no version of the default ONNX operator set");
        if (opset < kMinOpset) {
            if (auto error = upgradeOpset(opset))
                return error;
            warn("the model uses opset " + std::to_string(opset) + "; it was converted to opset " +
                 std::to_string(kUpgradeOpset) + " with ONNX's version converter");
            opset = kUpgradeOpset;
        }
        if (opset > kMaxTestedOpset)
            warn("the model uses opset " + std::to_string(opset) + ", newer than the opsets " +
                 "11-17 this build was tested with");
        m_graph.properties.emplace_back("onnx.opset", std::to_string(opset));
        m_graph.properties.emplace_back("onnx.ir_version", std::to_string(m_model.ir_version()));
        if (!m_model.producer_name().empty())
            m_graph.properties.emplace_back("onnx.producer", m_model.producer_name());
        return std::nullopt;
    }

    /// ONNX's version converter brings an old model to kUpgradeOpset; what it cannot convert is
    /// refused with its reason.
    Failure upgradeOpset(int opset) {
        for (const onnx::NodeProto& node : m_model.graph().node()) {
            if (!node.domain().empty() && node.domain() != "ai.onnx")
                return fail("the model uses opset " + std::to_string(opset) + " and node '" +
                            displayName(node) + "' of domain '" + node.domain() +
                            "', which ONNX's version converter cannot convert; re-export it "
                            "with opset 11 or newer");
        }
        try {
            onnx::checker::check_model(m_model);
            onnx::ModelProto converted =
                onnx::version_conversion::ConvertVersion(m_model, kUpgradeOpset);
            m_model = std::move(converted);
        } catch (const std::exception& error) {
            return fail("the model uses opset " + std::to_string(opset) +
                        ", and ONNX's version converter cannot bring it to opset " +
                        std::to_string(kUpgradeOpset) + ": " + firstLine(error.what()) +
                        "; re-export it with opset 11 or newer");
        }
        return std::nullopt;
    }

    /// The device set a planned model carries in its metadata, used unless the user gave one.
    Failure readDeviceSet() {
        for (const auto& entry : m_model.metadata_props()) {
            if (entry.key() != "placement.devices" || m_devicesGiven)
                continue;
            auto set = DeviceSet::parse(entry.value());
            if (!set)
                return fail("the model's placement.devices metadata is not a device list: " +
                            set.error().message);
            m_devices = set.take();
        }
        for (const auto& entry : m_model.metadata_props()) {
            if (entry.key().rfind(kPinKey, 0) == 0)
                m_pins.emplace(entry.key().substr(std::strlen(kPinKey)), entry.value());
            if (entry.key() != "placement.default" && entry.key() != "placement.host")
                continue;
            const auto id = m_devices.find(entry.value());
            if (!id)
                continue; // the user's own devices name other roles
            if (entry.key() == "placement.default")
                m_devices.setDefaultDevice(*id);
            else if (!m_devicesGiven)
                m_devices.setHostDevice(*id);
        }
        return std::nullopt;
    }

    Result<DeviceId> device(const std::string& name, const std::string& node) const {
        if (const auto id = m_devices.find(name))
            return *id;
        return fail("node '" + node + "' names unknown device '" + name +
                    "' (devices: " + m_devices.namesList() + ")");
    }

    /// The element count of a tensor's dims, or a failure for negative or absurd sizes.
    Failure tensorElements(const onnx::TensorProto& tensor, std::int64_t* count) const {
        *count = 1;
        for (std::int64_t d : tensor.dims()) {
            if (d < 0)
                return fail("tensor '" + tensor.name() + "' has a negative dimension (" +
                            std::to_string(d) + ")");
            if (d != 0 && *count > kMaxElements / d)
                return fail("tensor '" + tensor.name() +
                            "' claims more than 10^12 elements; the file is corrupt");
            *count *= d;
        }
        return std::nullopt;
    }

    /// The user's shapes for graph inputs (--input-shape) replace the declared ones, which they
    /// must agree with where those are fixed.
    /// Sequences and optionals become the tensors they hold (io/OnnxSequences.h).
    Failure lowerSequences() {
        SequenceLoweringInputs inputs{&m_options.inputShapes, &m_options.sequenceInputs,
                                      &m_options.shapeInputValues, &m_options.unrollLoops};
        if (auto error = placer::lowerSequences(&m_model, inputs, m_warnings))
            return fail(*error);
        return std::nullopt;
    }

    Failure applyInputShapes() {
        std::set<std::string> initializers;
        for (const onnx::TensorProto& tensor : m_model.graph().initializer())
            initializers.insert(tensor.name());
        std::set<std::string> used;
        for (onnx::ValueInfoProto& input : *m_model.mutable_graph()->mutable_input()) {
            const auto given = m_options.inputShapes.find(input.name());
            if (initializers.count(input.name()))
                continue;
            if (given == m_options.inputShapes.end()) {
                // Symbolic dimensions nobody fixed are planned as 1, and everything computed
                // from them (shape subgraphs folded at load) follows.
                if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
                    continue;
                auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
                for (auto& dim : *shape->mutable_dim()) {
                    if (dim.has_dim_value())
                        continue;
                    warnOnce("dimension '" +
                             (dim.has_dim_param() ? dim.dim_param() : std::string("?")) +
                             "' is not fixed; it is taken as 1 (give --input-shape " +
                             input.name() + "=... to plan real sizes)");
                    dim.set_dim_value(1);
                }
                continue;
            }
            used.insert(input.name());
            if (!input.type().has_tensor_type())
                return fail("input '" + input.name() + "' is not a tensor; it takes no shape");
            onnx::TypeProto_Tensor* tensor = input.mutable_type()->mutable_tensor_type();
            const std::vector<std::int64_t>& dims = given->second;
            if (tensor->has_shape()) {
                const auto& declared = tensor->shape();
                if (declared.dim_size() != static_cast<int>(dims.size()))
                    return fail("input '" + input.name() + "' has rank " +
                                std::to_string(declared.dim_size()) + ", but the shape given " +
                                "for it has " + std::to_string(dims.size()) + " dimensions");
                for (int d = 0; d < declared.dim_size(); ++d) {
                    const auto& dim = declared.dim(d);
                    if (dim.has_dim_value() && dim.dim_value() != dims[static_cast<std::size_t>(d)])
                        return fail("input '" + input.name() + "' has dimension " +
                                    std::to_string(d) + " fixed at " +
                                    std::to_string(dim.dim_value()) + "; the shape given says " +
                                    std::to_string(dims[static_cast<std::size_t>(d)]));
                }
            }
            auto* shape = tensor->mutable_shape();
            shape->clear_dim();
            for (std::int64_t d : dims) {
                if (d < 0)
                    return fail("the shape given for input '" + input.name() +
                                "' has a negative dimension");
                shape->add_dim()->set_dim_value(d);
            }
        }
        for (const auto& [name, dims] : m_options.inputShapes) {
            if (!used.count(name)) {
                std::string names;
                for (const onnx::ValueInfoProto& input : m_model.graph().input()) {
                    if (!initializers.count(input.name()))
                        names += (names.empty() ? "" : ", ") + input.name();
                }
                return fail("a shape is given for '" + name + "', which is not an input of the " +
                            "graph (its inputs: " + names + ")");
            }
        }
        return std::nullopt;
    }

    /// Declared value shapes (inputs, outputs, value_info) must be sane before inference runs.
    Failure checkDeclaredShapes() const {
        const onnx::GraphProto& g = m_model.graph();
        for (const auto& list : {&g.input(), &g.output(), &g.value_info()}) {
            for (const onnx::ValueInfoProto& info : *list) {
                if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape())
                    continue;
                std::int64_t count = 1;
                for (const auto& dim : info.type().tensor_type().shape().dim()) {
                    if (!dim.has_dim_value())
                        continue;
                    const std::int64_t d = dim.dim_value();
                    if (d < 0)
                        return fail("value '" + info.name() + "' has a negative dimension (" +
                                    std::to_string(d) + ")");
                    if (d != 0 && count > kMaxElements / d)
                        return fail("value '" + info.name() +
                                    "' claims more than 10^12 elements; the file is corrupt");
                    count *= d;
                }
            }
        }
        return std::nullopt;
    }

    /// Every initializer's stored data must match its dims before anything is allocated for it.
    Failure checkTensorSizes() {
        for (const onnx::TensorProto& tensor : m_model.graph().initializer()) {
            std::int64_t count = 0;
            if (auto error = tensorElements(tensor, &count))
                return error;
            const auto dtype = dtypeFromOnnx(tensor.data_type());
            if (!dtype)
                return fail("initializer '" + tensor.name() +
                            "' has an unsupported element type (" +
                            std::to_string(tensor.data_type()) + ")");
            if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
                continue; // checked when its file is read
            const TensorData* outside = outsideData(tensor);
            const std::size_t stored = outside ? outside->size() : tensor.raw_data().size();
            if ((outside || tensor.has_raw_data()) &&
                static_cast<std::int64_t>(stored) != count * dtypeSize(*dtype))
                return fail("initializer '" + tensor.name() + "' holds " + std::to_string(stored) +
                            " bytes of data but its dims " + "need " +
                            std::to_string(count * dtypeSize(*dtype)));
        }
        return std::nullopt;
    }

    /// Reads external data into the tensors, refusing paths outside the model's folder.
    Failure loadExternalData() {
        const fs::path modelDir = fs::path(m_file).parent_path();
        for (onnx::TensorProto& tensor : *m_model.mutable_graph()->mutable_initializer()) {
            if (tensor.data_location() != onnx::TensorProto_DataLocation_EXTERNAL)
                continue;
            std::string location;
            std::int64_t offset = 0, length = -1;
            for (const auto& entry : tensor.external_data()) {
                if (entry.key() == "location")
                    location = entry.value();
                else if (entry.key() == "offset")
                    offset = std::strtoll(entry.value().c_str(), nullptr, 10);
                else if (entry.key() == "length")
                    length = std::strtoll(entry.value().c_str(), nullptr, 10);
            }
            const std::string what = "initializer '" + tensor.name() + "'";
            if (location.empty())
                return fail(what + " has external data without a location");
            const fs::path relative(location);
            if (relative.is_absolute())
                return fail(what + " points to external data at an absolute path (" + location +
                            "); only files beside the model are read");
            std::error_code ec;
            const fs::path base =
                fs::weakly_canonical(modelDir.empty() ? fs::path(".") : modelDir, ec);
            const fs::path target = fs::weakly_canonical(base / relative, ec);
            const auto [baseEnd, targetIt] =
                std::mismatch(base.begin(), base.end(), target.begin(), target.end());
            if (ec || baseEnd != base.end())
                return fail(what + " points to external data outside the model's folder (" +
                            location + ")");
            std::int64_t count = 0;
            if (auto error = tensorElements(tensor, &count))
                return error;
            const std::int64_t expected = count * dtypeSize(*dtypeFromOnnx(tensor.data_type()));
            if (length >= 0 && length != expected)
                return fail(what + ": external data length " + std::to_string(length) +
                            " does not match its dims (" + std::to_string(expected) + " bytes)");
            auto file = mappedExternalFile(target);
            if (!file)
                return fail(what + ": cannot open external data file '" + location + "'");
            const auto size = static_cast<std::int64_t>(file->size());
            if (offset < 0 || offset > size || size - offset < expected)
                return fail(what + ": external data file '" + location + "' is too short (" +
                            std::to_string(size) + " bytes, needs " +
                            std::to_string(offset + expected) + ")");
            // Nothing is read now: the constant views the file's mapped pages.
            tensor.set_raw_data(outsideMarker(m_outside.size()));
            m_outside.push_back(TensorData::viewOfFile(file, file->data() + offset,
                                                       static_cast<std::size_t>(expected)));
            tensor.clear_external_data();
            tensor.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
        }
        return std::nullopt;
    }

    /// ONNX's checker does not look at attribute values, and its shape inference divides by
    /// strides and groups: a zero there would crash the process (found by fuzz_onnx_reader).
    Failure checkWindowAttributes() const {
        static const std::set<std::string> kWindowOps{"Conv",        "ConvTranspose", "MaxPool",
                                                      "AveragePool", "LpPool",        "MaxUnpool"};
        for (const onnx::NodeProto& node : m_model.graph().node()) {
            if (!kWindowOps.count(node.op_type()))
                continue;
            for (const onnx::AttributeProto& attr : node.attribute()) {
                const bool positive = attr.name() == "strides" || attr.name() == "dilations" ||
                                      attr.name() == "kernel_shape" || attr.name() == "group";
                const bool nonNegative = attr.name() == "pads" || attr.name() == "output_padding";
                if (!positive && !nonNegative)
                    continue;
                std::vector<std::int64_t> values(attr.ints().begin(), attr.ints().end());
                if (attr.type() == onnx::AttributeProto_AttributeType_INT)
                    values.push_back(attr.i());
                for (std::int64_t v : values) {
                    if (v > 0 || (v == 0 && nonNegative))
                        continue;
                    return fail("node '" + displayName(node) + "': " + node.op_type() +
                                " attribute '" + attr.name() + "' must be " +
                                (positive ? "positive" : "non-negative") + ", not " +
                                std::to_string(v));
                }
            }
        }
        return std::nullopt;
    }

    /// Whether the engine has a kernel for a standard op (by its ONNX name).
    static bool engineRuns(const onnx::NodeProto& node) {
        if (!onnxStandardDomain(node))
            return false;
        const OpDef* op = OpRegistry::global().find(node.op_type());
        return op && op->dialect == OpDialect::Onnx && op->hasAnyKernel();
    }

    /// Standard ops the engine has no kernel for, but which ONNX defines as a function of other
    /// ops (SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss, MeanVarianceNormalization, ...),
    /// are replaced by their function bodies, until none is left.
    Failure expandFunctions() {
        const int opset = m_graph.onnxOpset();
        bool expanded = false;
        for (int round = 0; round < 8; ++round) {
            m_types.clear();
            collectTypes();
            onnx::GraphProto& g = *m_model.mutable_graph();
            google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
            nodes.Swap(g.mutable_node());
            bool changed = false;
            int counter = 0;
            for (onnx::NodeProto& node : nodes) {
                if (!onnxStandardDomain(node) || node.op_type() == "Constant" || engineRuns(node)) {
                    *g.add_node() = std::move(node);
                    continue;
                }
                const onnx::OpSchema* schema =
                    onnx::OpSchemaRegistry::Schema(node.op_type(), opset, "");
                onnx::FunctionProto function;
                bool have = false;
                try {
                    if (schema && schema->HasFunction() && schema->GetFunction()) {
                        function = *schema->GetFunction();
                        have = true;
                    } else if (schema && schema->HasContextDependentFunction()) {
                        std::vector<onnx::TypeProto> types;
                        for (const std::string& input : node.input()) {
                            onnx::TypeProto type;
                            if (const auto it = m_types.find(input); it != m_types.end())
                                *type.mutable_tensor_type() = *it->second;
                            types.push_back(type);
                        }
                        onnx::FunctionBodyBuildContextImpl context(node, types);
                        have = schema->BuildContextDependentFunction(context, function);
                    }
                    if (have) {
                        const std::string prefix =
                            (node.name().empty() ? node.op_type() : node.name()) + "/" +
                            std::to_string(counter++) + "/";
                        bindDefaultReferences(node, *schema, &function);
                        onnx::FunctionExpandHelper(node, function, g, prefix);
                        changed = true;
                        continue;
                    }
                } catch (const std::exception& error) {
                    warnOnce("the " + node.op_type() + " node '" + displayName(node) +
                             "' could not be expanded into ONNX's function for it: " +
                             firstLine(error.what()));
                }
                *g.add_node() = std::move(node);
            }
            if (!changed)
                break;
            expanded = true;
            if (auto error = inferShapes())
                return error;
        }
        if (expanded) {
            m_order.clear();
            m_graphInputs.clear();
            return topologicalOrder(&m_order);
        }
        return std::nullopt;
    }

    /// Attributes of a function body that refer to an attribute the caller leaves out take that
    /// attribute's default from the caller's schema, or are dropped where it has none, so the
    /// body's op uses its own default (ONNX 1.12's expansion passes 0 instead: a
    /// SoftmaxCrossEntropyLoss without ignore_index would ignore class 0).
    static void bindDefaultReferences(const onnx::NodeProto& caller, const onnx::OpSchema& schema,
                                      onnx::FunctionProto* body) {
        for (onnx::NodeProto& node : *body->mutable_node()) {
            auto* attributes = node.mutable_attribute();
            for (int a = attributes->size() - 1; a >= 0; --a) {
                const std::string ref = attributes->at(a).ref_attr_name();
                if (ref.empty())
                    continue;
                const bool bound =
                    std::any_of(caller.attribute().begin(), caller.attribute().end(),
                                [&](const onnx::AttributeProto& c) { return c.name() == ref; });
                if (bound)
                    continue;
                const auto declared = schema.attributes().find(ref);
                if (declared != schema.attributes().end() &&
                    declared->second.default_value.type() !=
                        onnx::AttributeProto_AttributeType_UNDEFINED) {
                    const std::string name = attributes->at(a).name();
                    attributes->at(a) = declared->second.default_value;
                    attributes->at(a).set_name(name);
                } else {
                    attributes->DeleteSubrange(a, 1);
                }
            }
        }
    }

    /// Graph inputs that set shapes and have a given value become initializers.
    Failure bindShapeInputs() {
        if (m_options.shapeInputValues.empty())
            return std::nullopt;
        onnx::GraphProto& g = *m_model.mutable_graph();
        std::set<std::string> shapeValues;
        for (const onnx::NodeProto& node : g.node()) {
            for (int k = 0; k < node.input_size(); ++k) {
                if (onnxStandardDomain(node) && onnxInputSetsShapes(node.op_type(), k))
                    shapeValues.insert(node.input(k));
            }
        }
        // And what those are computed from (a window's size through Cast and Sub to a Range),
        // up to Shape and Size, which read only their input's shape.
        std::unordered_map<std::string, const onnx::NodeProto*> producer;
        for (const onnx::NodeProto& node : g.node())
            for (const std::string& output : node.output())
                producer[output] = &node;
        std::vector<std::string> pending(shapeValues.begin(), shapeValues.end());
        while (!pending.empty()) {
            const std::string value = pending.back();
            pending.pop_back();
            const auto it = producer.find(value);
            if (it == producer.end() || it->second->op_type() == "Shape" ||
                it->second->op_type() == "Size")
                continue;
            for (const std::string& input : it->second->input()) {
                if (!input.empty() && shapeValues.insert(input).second)
                    pending.push_back(input);
            }
        }
        std::set<std::string> initializers;
        for (const onnx::TensorProto& tensor : g.initializer())
            initializers.insert(tensor.name());
        for (const onnx::ValueInfoProto& input : g.input()) {
            const auto given = m_options.shapeInputValues.find(input.name());
            if (given == m_options.shapeInputValues.end() || initializers.count(input.name()) ||
                !shapeValues.count(input.name()))
                continue;
            const HostTensor& value = given->second;
            onnx::TensorProto* tensor = g.add_initializer();
            tensor->set_name(input.name());
            tensor->set_data_type(onnxElementType(value.type.dtype));
            for (std::int64_t d : value.type.shape)
                tensor->add_dims(d);
            setOnnxTensorData(tensor, value.type.dtype,
                              value.data.data(), value.data.size());
            m_boundInputs.insert(input.name());
        }
        return std::nullopt;
    }

    /// The bytes of an initializer without taking them from it (folding reads them again).
    Result<TensorData> copyOfData(const onnx::TensorProto& tensor) const {
        const auto dtype = dtypeFromOnnx(tensor.data_type());
        std::int64_t count = 0;
        if (!dtype)
            return fail("unsupported element type");
        if (auto error = tensorElements(tensor, &count))
            return *error;
        if (const TensorData* outside = outsideData(tensor)) {
            if (static_cast<std::int64_t>(outside->size()) != count * dtypeSize(*dtype))
                return fail("tensor '" + tensor.name() + "' has the wrong size");
            return *outside;
        }
        if (tensor.has_raw_data()) {
            if (static_cast<std::int64_t>(tensor.raw_data().size()) != count * dtypeSize(*dtype))
                return fail("tensor '" + tensor.name() + "' has the wrong size");
            return TensorData(tensor.raw_data());
        }
        onnx::TensorProto copy = tensor;
        return tensorData(copy, *dtype, count);
    }

    /// The static type of a value after shape inference, if every dimension is known.
    std::optional<TensorType> staticType(const std::string& value) const {
        const auto it = m_types.find(value);
        if (it == m_types.end() || !it->second->has_elem_type() || !it->second->has_shape())
            return std::nullopt;
        const auto dtype = dtypeFromOnnx(it->second->elem_type());
        if (!dtype)
            return std::nullopt;
        TensorType type{{}, *dtype};
        std::int64_t count = 1;
        for (const auto& dim : it->second->shape().dim()) {
            if (!dim.has_dim_value() || dim.dim_value() < 0)
                return std::nullopt;
            const std::int64_t d = dim.dim_value();
            if (d != 0 && count > kMaxElements / d)
                return std::nullopt;
            count *= d;
            type.shape.push_back(d);
        }
        return type;
    }

    /// Evaluates nodes whose inputs are all known and makes their outputs initializers, then
    /// infers shapes again, until nothing changes. Constant nodes become initializers too.
    Failure foldConstants() {
        const ConstantEvaluator& evaluate = constantEvaluator();
        const int opset = m_graph.onnxOpset();
        std::set<std::string> refused; // nodes the evaluator could not run: not tried again
        for (int round = 0; round < 64; ++round) {
            m_types.clear();
            collectTypes();
            onnx::GraphProto& g = *m_model.mutable_graph();
            std::unordered_map<std::string, const onnx::TensorProto*> known;
            for (const onnx::TensorProto& tensor : g.initializer())
                known.emplace(tensor.name(), &tensor);
            std::set<std::string> graphInputs;
            for (const onnx::ValueInfoProto& input : g.input()) {
                if (!known.count(input.name()))
                    graphInputs.insert(input.name());
            }
            std::set<std::string> graphOutputs;
            for (const onnx::ValueInfoProto& output : g.output())
                graphOutputs.insert(output.name());
            std::vector<onnx::TensorProto> made;
            std::vector<bool> removed(static_cast<std::size_t>(g.node_size()), false);
            std::unordered_map<std::string, onnx::TensorProto> produced;
            bool foldedThisRound = false;
            for (int index = 0; index < g.node_size(); ++index) {
                const onnx::NodeProto& node = g.node(index);
                if (!onnxStandardDomain(node) || node.output_size() == 0)
                    continue;
                // A graph output that is also a graph input or computed constant stays a node.
                if (node.op_type() == "Constant") {
                    if (node.output_size() != 1 || graphOutputs.count(node.output(0)))
                        continue;
                    auto tensor = constantTensor(node);
                    if (!tensor || !dtypeFromOnnx(tensor->data_type()))
                        continue; // addConstantNode reports it
                    tensor->set_name(node.output(0));
                    produced.emplace(node.output(0), *tensor);
                    removed[static_cast<std::size_t>(index)] = true;
                    continue;
                }
                if (!m_options.foldConstants || neverFolded(node.op_type()) ||
                    refused.count(displayName(node)))
                    continue;
                bool outputsKnown = true;
                std::vector<TensorType> outputTypes;
                for (const std::string& output : node.output()) {
                    auto type = output.empty() ? std::nullopt : staticType(output);
                    if (!type || graphOutputs.count(output)) {
                        outputsKnown = false;
                        break;
                    }
                    outputTypes.push_back(*type);
                }
                if (!outputsKnown)
                    continue;
                std::vector<TensorData> results;
                if (node.op_type() == "Shape" || node.op_type() == "Size") {
                    auto folded = foldShape(node, outputTypes);
                    if (!folded)
                        continue;
                    results = std::move(*folded);
                } else {
                    if (!evaluate)
                        continue;
                    std::vector<TensorType> inputTypes;
                    std::vector<TensorData> inputData;
                    bool inputsKnown = true;
                    std::int64_t inputBytes = 0;
                    std::vector<std::int64_t> positions;
                    for (int position = 0; position < node.input_size(); ++position) {
                        const std::string& input = node.input(position);
                        if (input.empty())
                            continue;
                        positions.push_back(position);
                        const onnx::TensorProto* tensor = nullptr;
                        if (const auto it = produced.find(input); it != produced.end())
                            tensor = &it->second;
                        else if (const auto k = known.find(input); k != known.end())
                            tensor = k->second;
                        if (!tensor || graphInputs.count(input)) {
                            inputsKnown = false;
                            break;
                        }
                        std::int64_t elements = 0;
                        const auto dtype = dtypeFromOnnx(tensor->data_type());
                        if (!dtype || tensorElements(*tensor, &elements)) {
                            inputsKnown = false;
                            break;
                        }
                        // Shape arithmetic, not weights: planning must not read those.
                        inputBytes += elements * dtypeSize(*dtype);
                        if (inputBytes > kFoldReadBytes) {
                            inputsKnown = false;
                            break;
                        }
                        auto data = copyOfData(*tensor);
                        if (!data) {
                            inputsKnown = false;
                            break;
                        }
                        inputTypes.push_back(
                            TensorType{{tensor->dims().begin(), tensor->dims().end()},
                                       *dtypeFromOnnx(tensor->data_type())});
                        inputData.push_back(data.take());
                    }
                    if (!inputsKnown)
                        continue;
                    std::int64_t outputBytes = 0;
                    for (const TensorType& type : outputTypes)
                        outputBytes += type.bytes();
                    if (outputBytes > std::max(kFoldFreeBytes, inputBytes))
                        continue;
                    const OpDef* op = opFor(node);
                    if (!op->hasKernel(DeviceKind::Cpu)) {
                        refused.insert(displayName(node));
                        continue;
                    }
                    Node evaluated;
                    evaluated.name = displayName(node);
                    evaluated.op = op;
                    readAttributes(node, &evaluated);
                    if (!positions.empty() &&
                        positions.back() >= static_cast<std::int64_t>(positions.size()))
                        evaluated.attrs.set(kInputPositionsAttr, positions);
                    evaluated.outputs = outputTypes;
                    std::vector<const TensorData*> pointers;
                    for (const TensorData& data : inputData)
                        pointers.push_back(&data);
                    auto outputs = evaluate(evaluated, inputTypes, pointers, outputTypes, opset);
                    if (!outputs) {
                        refused.insert(displayName(node));
                        continue;
                    }
                    results = outputs.take();
                }
                for (int k = 0; k < node.output_size(); ++k) {
                    onnx::TensorProto tensor;
                    tensor.set_name(node.output(k));
                    tensor.set_data_type(
                        onnxElementType(outputTypes[static_cast<std::size_t>(k)].dtype));
                    for (std::int64_t d : outputTypes[static_cast<std::size_t>(k)].shape)
                        tensor.add_dims(d);
                    const std::string bytes = results[static_cast<std::size_t>(k)].release();
                    setOnnxTensorData(&tensor, outputTypes[static_cast<std::size_t>(k)].dtype,
                                      bytes.data(), bytes.size());
                    produced.emplace(node.output(k), std::move(tensor));
                }
                removed[static_cast<std::size_t>(index)] = true;
                foldedThisRound = true;
                ++m_folded;
            }
            if (produced.empty())
                break;
            // The folded nodes go; their outputs become initializers.
            std::set<std::string> readByFolded;
            google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
            for (int index = 0; index < g.node_size(); ++index) {
                if (removed[static_cast<std::size_t>(index)]) {
                    for (const std::string& input : g.node(index).input())
                        readByFolded.insert(input);
                } else {
                    *kept.Add() = g.node(index);
                }
            }
            g.mutable_node()->Swap(&kept);
            for (auto& [name, tensor] : produced)
                *g.add_initializer() = std::move(tensor);
            // Initializers only the folded nodes read are gone with them.
            std::set<std::string> used(graphOutputs.begin(), graphOutputs.end());
            for (const onnx::NodeProto& node : g.node()) {
                used.insert(node.input().begin(), node.input().end());
                for (const onnx::AttributeProto& attr : node.attribute()) {
                    if (attr.has_g())
                        collectNames(attr.g(), &used);
                }
            }
            std::set<std::string> declaredInputs;
            for (const onnx::ValueInfoProto& input : g.input())
                declaredInputs.insert(input.name());
            google::protobuf::RepeatedPtrField<onnx::TensorProto> initializers;
            for (onnx::TensorProto& tensor : *g.mutable_initializer()) {
                if (readByFolded.count(tensor.name()) && !used.count(tensor.name()) &&
                    !declaredInputs.count(tensor.name()))
                    continue;
                initializers.Add(std::move(tensor));
            }
            g.mutable_initializer()->Swap(&initializers);
            // Inferred types of the folded values are stale.
            google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
            for (onnx::ValueInfoProto& info : *g.mutable_value_info()) {
                if (!produced.count(info.name()))
                    infos.Add(std::move(info));
            }
            g.mutable_value_info()->Swap(&infos);
            if (auto error = inferShapes())
                return error;
            if (!foldedThisRound)
                break; // only Constant nodes were turned into initializers
        }
        m_types.clear();
        m_order.clear();
        m_graphInputs.clear();
        if (auto error = topologicalOrder(&m_order))
            return error;
        if (m_folded > 0)
            m_graph.properties.emplace_back("onnx.folded_nodes", std::to_string(m_folded));
        return std::nullopt;
    }

    static void collectNames(const onnx::GraphProto& graph, std::set<std::string>* names) {
        for (const onnx::NodeProto& node : graph.node()) {
            names->insert(node.input().begin(), node.input().end());
            for (const onnx::AttributeProto& attr : node.attribute()) {
                if (attr.has_g())
                    collectNames(attr.g(), names);
            }
        }
    }

    /// Shape and Size of a statically shaped input: known without a kernel.
    std::optional<std::vector<TensorData>> foldShape(const onnx::NodeProto& node,
                                                     const std::vector<TensorType>& outputs) {
        if (node.input_size() < 1 || outputs.size() != 1 || outputs[0].dtype != DType::Int64)
            return std::nullopt;
        const auto input = staticType(node.input(0));
        if (!input)
            return std::nullopt;
        std::vector<std::int64_t> values;
        if (node.op_type() == "Size") {
            values.push_back(input->elementCount());
        } else {
            const auto rank = static_cast<std::int64_t>(input->shape.size());
            std::int64_t start = 0, end = rank;
            for (const onnx::AttributeProto& attr : node.attribute()) {
                if (attr.name() == "start")
                    start = attr.i();
                else if (attr.name() == "end")
                    end = attr.i();
            }
            start = std::clamp<std::int64_t>(start < 0 ? start + rank : start, 0, rank);
            end = std::clamp<std::int64_t>(end < 0 ? end + rank : end, 0, rank);
            for (std::int64_t d = start; d < end; ++d)
                values.push_back(input->shape[static_cast<std::size_t>(d)]);
        }
        if (static_cast<std::int64_t>(values.size()) != outputs[0].elementCount())
            return std::nullopt;
        TensorData data(values.size() * sizeof(std::int64_t), '\0');
        std::memcpy(data.data(), values.data(), data.size());
        return std::vector<TensorData>{std::move(data)};
    }

    /// A Constant node's value as a tensor proto (its element type not checked), or nullopt for
    /// forms not understood.
    static std::optional<onnx::TensorProto> constantTensor(const onnx::NodeProto& proto) {
        for (const onnx::AttributeProto& attr : proto.attribute()) {
            onnx::TensorProto tensor;
            if (attr.name() == "value" && attr.has_t()) {
                tensor = attr.t();
            } else if (attr.name() == "value_float") {
                tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
                tensor.add_float_data(attr.f());
            } else if (attr.name() == "value_int") {
                tensor.set_data_type(onnx::TensorProto_DataType_INT64);
                tensor.add_int64_data(attr.i());
            } else if (attr.name() == "value_floats") {
                tensor.set_data_type(onnx::TensorProto_DataType_FLOAT);
                tensor.add_dims(attr.floats_size());
                *tensor.mutable_float_data() = attr.floats();
            } else if (attr.name() == "value_ints") {
                tensor.set_data_type(onnx::TensorProto_DataType_INT64);
                tensor.add_dims(attr.ints_size());
                *tensor.mutable_int64_data() = attr.ints();
            } else {
                continue;
            }
            if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
                return std::nullopt;
            return tensor;
        }
        return std::nullopt;
    }

    Failure validateAndInferShapes() {
        try {
            onnx::checker::check_model(m_model);
        } catch (const onnx::checker::ValidationError& error) {
            return fail("not a valid ONNX model: " + firstLine(error.what()));
        }
        return inferShapes();
    }

    Failure inferShapes() {
        // Data propagation (shape arithmetic through Concat, Slice, Gather) first. ONNX 1.12's
        // propagation refuses some valid graphs (a Concat of an empty 1-d constant: "axis must
        // be in [-rank, rank-1]"); those are inferred again without it, and the folding at
        // load computes what it would have.
        for (const bool propagate : {true, false}) {
            try {
                onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                                    /*data_prop=*/propagate);
                onnx::shape_inference::InferShapes(m_model, onnx::OpSchemaRegistry::Instance(),
                                                   options);
                return std::nullopt;
            } catch (const onnx::InferenceError& error) {
                if (!propagate)
                    return fail("ONNX shape inference failed: " + firstLine(error.what()));
            } catch (const onnx::checker::ValidationError& error) {
                return fail("ONNX shape inference failed: " + firstLine(error.what()));
            }
        }
        return std::nullopt;
    }

    static std::string firstLine(const char* text) {
        std::string line(text);
        const std::size_t end = line.find('\n');
        return end == std::string::npos ? line : line.substr(0, end);
    }

    void collectTypes() {
        const onnx::GraphProto& g = m_model.graph();
        for (const auto& list : {&g.input(), &g.output(), &g.value_info()}) {
            for (const onnx::ValueInfoProto& info : *list) {
                if (info.has_type() && info.type().has_tensor_type())
                    m_types.emplace(info.name(), &info.type().tensor_type());
            }
        }
    }

    /// The static type of a value; symbolic or unknown dimensions become 1 with a warning.
    Result<TensorType> typeOf(const std::string& value, const std::string& node,
                              bool warnUnknown = true) {
        const auto it = m_types.find(value);
        if (it == m_types.end() || !it->second->has_elem_type())
            return fail("node '" + node + "': ONNX shape inference found no type for '" + value +
                        "'");
        const auto dtype = dtypeFromOnnx(it->second->elem_type());
        if (!dtype)
            return fail("node '" + node + "': value '" + value + "' has an unsupported element " +
                        "type (" + std::to_string(it->second->elem_type()) + ")");
        TensorType type{{}, *dtype};
        if (m_body && warnUnknown && !staticType(value))
            return fail("node '" + node + "': ONNX shape inference cannot fix the shape of '" +
                        value + "' from the types the body is given; every value in a body " +
                        "must keep one static shape over the iterations");
        if (!it->second->has_shape()) {
            if (warnUnknown)
                warnOnce("'" + value + "' has no known shape; it is planned as a scalar");
            return type;
        }
        std::int64_t count = 1;
        for (const auto& dim : it->second->shape().dim()) {
            std::int64_t d = 1;
            if (dim.has_dim_value()) {
                d = dim.dim_value();
                if (d < 0)
                    return fail("node '" + node + "': value '" + value +
                                "' has a negative dimension");
            } else if (warnUnknown) {
                warnOnce("dimension '" +
                         (dim.has_dim_param() ? dim.dim_param() : std::string("?")) +
                         "' is not fixed; it is taken as 1 (export with fixed input shapes to "
                         "plan real sizes)");
            }
            if (d != 0 && count > kMaxElements / d)
                return fail("node '" + node + "': value '" + value +
                            "' claims more than 10^12 elements");
            count *= d;
            type.shape.push_back(d);
        }
        return type;
    }

    void warnOnce(const std::string& message) {
        if (m_warned.insert(message).second)
            warn(message);
    }

    Failure buildGraph() {
        const onnx::GraphProto& g = m_model.graph();
        std::set<std::string> initializers;
        for (const onnx::TensorProto& tensor : g.initializer())
            initializers.insert(tensor.name());
        for (const onnx::ValueInfoProto& input : g.input()) {
            // A body's inputs are all parameters, the outer constants it reads too (their
            // initializers only let shape inference and folding see the values).
            if (initializers.count(input.name()) && !m_body)
                continue;
            auto type = typeOf(input.name(), input.name());
            if (!type)
                return type.error();
            Node node;
            node.name = uniqueNodeName(input.name());
            node.op = &OpRegistry::global().parameter();
            node.outputs = {type.take()};
            define(input.name(), m_graph.addNode(std::move(node)), 0);
        }
        for (const onnx::TensorProto& tensor : g.initializer()) {
            if (m_body && m_values.count(tensor.name()))
                continue;
            auto failure = addConstant(tensor.name(), tensor, tensor.name());
            if (failure)
                return failure;
        }
        for (int index : m_order) {
            if (auto error = addNode(g.node(index)))
                return error;
        }
        for (const onnx::ValueInfoProto& output : g.output()) {
            const auto it = m_values.find(output.name());
            if (it == m_values.end())
                return fail("graph output '" + output.name() + "' is produced by no node");
            m_graph.addOutput(GraphOutput{it->second, DeviceId(), output.name()});
        }
        return std::nullopt;
    }

    /// Kahn's algorithm over the nodes, so unsorted files load and cycles are found.
    Failure topologicalOrder(std::vector<int>* order) {
        const onnx::GraphProto& g = m_model.graph();
        const int n = g.node_size();
        for (const onnx::ValueInfoProto& input : g.input())
            m_graphInputs.insert(input.name());
        for (const onnx::TensorProto& tensor : g.initializer())
            m_graphInputs.insert(tensor.name());
        std::unordered_map<std::string, int> producer;
        for (int i = 0; i < n; ++i) {
            for (const std::string& output : g.node(i).output()) {
                if (!output.empty() && !producer.emplace(output, i).second)
                    return fail("node '" + displayName(g.node(i)) + "': value '" + output +
                                "' is produced twice");
            }
        }
        std::vector<std::vector<int>> consumers(n);
        std::vector<int> pending(n, 0);
        for (int i = 0; i < n; ++i) {
            // A body's reads of this graph's values are inputs of its node too.
            std::vector<std::string> inputs(g.node(i).input().begin(), g.node(i).input().end());
            for (std::string& outer : onnxOuterNames(g.node(i)))
                inputs.push_back(std::move(outer));
            for (const std::string& input : inputs) {
                if (input.empty() || m_graphInputs.count(input))
                    continue;
                const auto it = producer.find(input);
                if (it == producer.end())
                    return fail("node '" + displayName(g.node(i)) + "' reads '" + input +
                                "', which no node, input or initializer produces");
                consumers[it->second].push_back(i);
                ++pending[i];
            }
        }
        std::vector<int> ready;
        for (int i = n - 1; i >= 0; --i) {
            if (pending[i] == 0)
                ready.push_back(i);
        }
        // Pop the lowest index first so a sorted file keeps its order.
        std::vector<bool> done(n, false);
        while (!ready.empty()) {
            std::sort(ready.begin(), ready.end(), std::greater<>());
            const int i = ready.back();
            ready.pop_back();
            order->push_back(i);
            done[i] = true;
            for (int c : consumers[i]) {
                if (--pending[c] == 0)
                    ready.push_back(c);
            }
        }
        if (static_cast<int>(order->size()) != n) {
            for (int i = 0; i < n; ++i) {
                if (!done[i])
                    return fail("node '" + displayName(g.node(i)) +
                                "' is part of a cycle: a graph must be acyclic");
            }
        }
        return std::nullopt;
    }

    static std::string displayName(const onnx::NodeProto& node) {
        if (!node.name().empty())
            return node.name();
        return node.output_size() > 0 ? node.output(0) : node.op_type();
    }

    std::string uniqueNodeName(const std::string& name) {
        return m_graph.uniqueName(name.empty() ? std::string("node") : name);
    }

    void define(const std::string& value, NodeId node, std::uint32_t output) {
        m_values[value] = ValueRef{node, output};
    }

    Failure addConstant(const std::string& value, const onnx::TensorProto& tensor,
                        const std::string& name) {
        std::int64_t count = 0;
        if (auto error = tensorElements(tensor, &count))
            return error;
        const auto dtype = dtypeFromOnnx(tensor.data_type());
        if (!dtype)
            return fail("tensor '" + name + "' has an unsupported element type (" +
                        std::to_string(tensor.data_type()) + ")");
        Node node;
        node.name = uniqueNodeName(name);
        node.op = &OpRegistry::global().constant();
        node.outputs = {TensorType{{tensor.dims().begin(), tensor.dims().end()}, *dtype}};
        auto data = tensorData(tensor, *dtype, count);
        if (!data)
            return data.error();
        node.data = std::make_shared<const TensorData>(data.take());
        define(value, m_graph.addNode(std::move(node)), 0);
        return std::nullopt;
    }

    /// The tensor's elements as little-endian bytes of `dtype`, from raw or typed fields.
    Result<TensorData> tensorData(const onnx::TensorProto& tensor, DType dtype,
                                  std::int64_t count) const {
        const std::size_t bytes = static_cast<std::size_t>(count) * dtypeSize(dtype);
        TensorData out;
        auto mismatch = [&](std::size_t stored) {
            return fail("tensor '" + tensor.name() + "' stores " + std::to_string(stored) +
                        " values but its dims need " + std::to_string(count));
        };
        if (const TensorData* outside = outsideData(tensor)) {
            if (outside->size() != bytes)
                return mismatch(outside->size() / std::max(1, dtypeSize(dtype)));
            return *outside; // another view of the same bytes
        }
        if (tensor.has_raw_data() && dtype == DType::String)
            return fail("tensor '" + tensor.name() + "' is of strings but stores raw data; ONNX " +
                        "stores strings in string_data");
        if (tensor.has_raw_data()) {
            if (tensor.raw_data().size() != bytes)
                return mismatch(tensor.raw_data().size() / std::max(1, dtypeSize(dtype)));
            // The reader owns m_model (nothing else sees it, and it is not const): take the
            // bytes over instead of copying hundreds of megabytes of weights.
            out.swap(*const_cast<onnx::TensorProto&>(tensor).mutable_raw_data());
            return out;
        }
        auto copyTyped = [&](const auto& field, auto cast) -> Result<TensorData> {
            if (static_cast<std::int64_t>(field.size()) != count)
                return mismatch(field.size());
            out.resize(bytes);
            for (std::int64_t i = 0; i < count; ++i) {
                const auto value = cast(field.Get(static_cast<int>(i)));
                std::memcpy(out.data() + i * sizeof(value), &value, sizeof(value));
            }
            return out;
        };
        switch (dtype) {
        case DType::Float32:
            return copyTyped(tensor.float_data(), [](float v) { return v; });
        case DType::Float64:
            return copyTyped(tensor.double_data(), [](double v) { return v; });
        case DType::Int64:
            return copyTyped(tensor.int64_data(), [](std::int64_t v) { return v; });
        case DType::Int32:
            return copyTyped(tensor.int32_data(), [](std::int32_t v) { return v; });
        case DType::Int16:
            return copyTyped(tensor.int32_data(),
                             [](std::int32_t v) { return static_cast<std::int16_t>(v); });
        case DType::Float16:
        case DType::BFloat16:
            return copyTyped(tensor.int32_data(),
                             [](std::int32_t v) { return static_cast<std::uint16_t>(v); });
        case DType::Int8:
            return copyTyped(tensor.int32_data(),
                             [](std::int32_t v) { return static_cast<std::int8_t>(v); });
        case DType::UInt8:
        case DType::Bool:
            return copyTyped(tensor.int32_data(),
                             [](std::int32_t v) { return static_cast<std::uint8_t>(v); });
        case DType::UInt16:
            return copyTyped(tensor.int32_data(),
                             [](std::int32_t v) { return static_cast<std::uint16_t>(v); });
        case DType::UInt32:
            return copyTyped(tensor.uint64_data(),
                             [](std::uint64_t v) { return static_cast<std::uint32_t>(v); });
        case DType::UInt64:
            return copyTyped(tensor.uint64_data(), [](std::uint64_t v) { return v; });
        case DType::String:
            return copyTyped(tensor.string_data(),
                             [](const std::string& v) { return internString(v); });
        }
        return out;
    }

    Failure addConstantNode(const onnx::NodeProto& proto) {
        const std::string name = displayName(proto);
        auto tensor = constantTensor(proto);
        if (!tensor)
            return fail("Constant node '" + name + "' has no value this reader understands");
        tensor->set_name(name);
        return addConstant(proto.output(0), *tensor, name);
    }

    static std::optional<AttrValue> attrValue(const onnx::AttributeProto& attr) {
        switch (attr.type()) {
        case onnx::AttributeProto_AttributeType_INT:
            return AttrValue{static_cast<std::int64_t>(attr.i())};
        case onnx::AttributeProto_AttributeType_FLOAT:
            return AttrValue{static_cast<double>(attr.f())};
        case onnx::AttributeProto_AttributeType_STRING:
            return AttrValue{attr.s()};
        case onnx::AttributeProto_AttributeType_INTS:
            return AttrValue{std::vector<std::int64_t>(attr.ints().begin(), attr.ints().end())};
        case onnx::AttributeProto_AttributeType_FLOATS:
            return AttrValue{std::vector<double>(attr.floats().begin(), attr.floats().end())};
        default:
            return std::nullopt; // tensors, graphs: not needed to plan
        }
    }

    /// The value of a one-element tensor, if it has one.
    std::optional<double> scalarOf(const onnx::TensorProto& tensor) const {
        const auto dtype = dtypeFromOnnx(tensor.data_type());
        std::int64_t count = 0;
        if (!dtype || tensorElements(tensor, &count) || count != 1)
            return std::nullopt;
        onnx::TensorProto copy = tensor; // tensorData takes raw bytes out of what it reads
        auto data = tensorData(copy, *dtype, 1);
        if (!data)
            return std::nullopt;
        return decodeScalar(*dtype, data.value());
    }

    /// A node's attributes as the kernels read them. Tensor attributes (ConstantOfShape's value)
    /// are kept as their one value and element type; graphs are not kept.
    void readAttributes(const onnx::NodeProto& proto, Node* node) {
        for (const onnx::AttributeProto& attr : proto.attribute()) {
            if (auto value = attrValue(attr)) {
                node->attrs.set(attr.name(), std::move(*value));
            } else if (attr.type() == onnx::AttributeProto_AttributeType_STRINGS) {
                // A list of strings (an LSTM's activations): joined (joinStringList), and
                // marked so that a writer writes a list again.
                node->attrs.set(attr.name(),
                                joinStringList({attr.strings().begin(), attr.strings().end()}));
                node->attrs.set(attr.name() + ".strings", true);
            } else if (const auto scalar =
                           attr.type() == onnx::AttributeProto_AttributeType_TENSOR &&
                                   attr.t().dims_size() <= 1
                               ? scalarOf(attr.t())
                               : std::nullopt) {
                node->attrs.set(attr.name(), *scalar);
                node->attrs.set(attr.name() + ".dtype",
                                std::string(dtypeName(*dtypeFromOnnx(attr.t().data_type()))));
            } else if (attr.type() == onnx::AttributeProto_AttributeType_GRAPH &&
                       node->op->hasBodies) {
                continue; // read as a body (readBodies)
            } else {
                warnOnce("attribute '" + attr.name() + "' of " + proto.op_type() +
                         " nodes is not kept (it is not needed to plan)");
            }
        }
    }

    /// The inputs a control-flow node gives each of its bodies (before the outer values).
    Result<std::vector<TensorType>> formalBodyInputs(const onnx::NodeProto& proto,
                                                     const Node& node) const {
        const std::string& op = proto.op_type();
        std::vector<TensorType> formal;
        if (op == "Loop") {
            const LoopLayout layout = loopLayout(node, node.inputs.size());
            formal.push_back(TensorType{{}, DType::Int64});
            formal.push_back(TensorType{{}, DType::Bool});
            for (std::size_t k = 0; k < layout.carried; ++k)
                formal.push_back(m_graph.type(node.inputs[layout.firstCarried + k]));
        } else if (op == "Scan") {
            const ScanLayout layout = scanLayout(node, node.inputs.size());
            for (std::size_t k = 0; k < layout.states; ++k)
                formal.push_back(m_graph.type(node.inputs[k]));
            for (std::size_t j = 0; j < layout.scanInputs; ++j) {
                TensorType slice = m_graph.type(node.inputs[layout.states + j]);
                const auto rank = static_cast<std::int64_t>(slice.shape.size());
                std::int64_t axis = layout.inputAxes[j];
                axis = axis < 0 ? axis + rank : axis;
                if (axis < 0 || axis >= rank)
                    return fail("Scan node '" + node.name + "': scan input " + std::to_string(j) +
                                " of rank " + std::to_string(rank) + " has no axis " +
                                std::to_string(layout.inputAxes[j]));
                slice.shape.erase(slice.shape.begin() + axis);
                formal.push_back(slice);
            }
        }
        return formal;
    }

    /// If, Loop and Scan: every graph attribute is read as a body of its own (readBody), typed
    /// by ONNX shape inference from what this node gives it. The outer values the bodies read
    /// become the node's last inputs, so that the plan sees them as data flow. The node's
    /// outputs are typed from the bodies' outputs.
    Failure readBodies(const onnx::NodeProto& proto, Node* node) {
        const std::string& op = proto.op_type();
        auto failNode = [&](const std::string& message) {
            return fail(op + " node '" + node->name + "': " + message);
        };
        const std::vector<std::string> outer = onnxOuterNames(proto);
        std::vector<TensorType> outerTypes;
        for (const std::string& value : outer) {
            const auto it = m_values.find(value);
            if (it == m_values.end())
                return failNode("its body reads '" + value + "', which nothing before it produces");
            node->inputs.push_back(it->second);
            outerTypes.push_back(m_graph.type(it->second));
        }
        node->captures = static_cast<std::uint32_t>(outer.size());
        auto formal = formalBodyInputs(proto, *node);
        if (!formal)
            return formal.error();
        for (const onnx::AttributeProto& attr : proto.attribute()) {
            if (!attr.has_g())
                continue;
            const onnx::GraphProto& source = attr.g();
            if (source.input_size() != static_cast<int>(formal.value().size()))
                return failNode("its " + attr.name() + " has " +
                                std::to_string(source.input_size()) + " inputs, but the node " +
                                "gives it " + std::to_string(formal.value().size()));
            onnx::ModelProto model;
            model.set_ir_version(m_model.ir_version());
            *model.mutable_opset_import() = m_model.opset_import();
            onnx::GraphProto& g = *model.mutable_graph();
            g = source;
            for (int k = 0; k < g.input_size(); ++k)
                setOnnxType(g.mutable_input(k), g.input(k).name(),
                            formal.value()[static_cast<std::size_t>(k)]);
            for (std::size_t c = 0; c < outer.size(); ++c) {
                setOnnxType(g.add_input(), outer[c], outerTypes[c]);
                // An outer constant's value, so that shape inference and folding see it.
                const Node& producer = m_graph.node(node->inputs[node->ownInputs() + c].node);
                if (producer.isConstant() && producer.data &&
                    static_cast<std::int64_t>(producer.data->size()) <= kFoldFreeBytes) {
                    onnx::TensorProto* tensor = g.add_initializer();
                    tensor->set_name(outer[c]);
                    tensor->set_data_type(onnxElementType(outerTypes[c].dtype));
                    for (std::int64_t d : outerTypes[c].shape)
                        tensor->add_dims(d);
                    tensor->set_raw_data(producer.data->data(), producer.data->size());
                }
            }
            OnnxReader reader(m_file, &m_devices, true, m_warnings, m_options);
            auto body = reader.readBody(std::move(model), m_graph.properties);
            if (!body)
                return failNode("in its " + attr.name() + ": " + body.error().message);
            node->subgraphs.push_back(
                Subgraph{attr.name(), std::make_shared<const Graph>(body.take()),
                         std::make_shared<const std::string>(source.SerializeAsString())});
        }
        return typeBodyOutputs(proto, node, formal.value());
    }

    /// ONNX's inference leaves a Loop's outputs without shapes (they may change per iteration);
    /// the bodies fixed them, so they are told to ONNX, and what follows is inferred again.
    Failure refineInferredTypes(const onnx::NodeProto& proto, const Node& node) {
        onnx::GraphProto& g = *m_model.mutable_graph();
        bool refined = false;
        for (int k = 0; k < proto.output_size() && k < static_cast<int>(node.outputs.size()); ++k) {
            const std::string& name = proto.output(k);
            if (name.empty() || staticType(name))
                continue;
            onnx::ValueInfoProto* info = nullptr;
            for (auto* list : {g.mutable_output(), g.mutable_value_info()}) {
                for (onnx::ValueInfoProto& entry : *list) {
                    if (!info && entry.name() == name)
                        info = &entry;
                }
            }
            if (!info)
                info = g.add_value_info();
            setOnnxType(info, name, node.outputs[static_cast<std::size_t>(k)]);
            refined = true;
        }
        if (!refined)
            return std::nullopt;
        m_types.clear();
        if (auto error = inferShapes())
            return error;
        collectTypes();
        return std::nullopt;
    }

    /// A control-flow node's output types, from its bodies' outputs.
    Failure typeBodyOutputs(const onnx::NodeProto& proto, Node* node,
                            const std::vector<TensorType>& formal) {
        const std::string& op = proto.op_type();
        auto failNode = [&](const std::string& message) {
            return fail(op + " node '" + node->name + "': " + message);
        };
        auto bodyOutput = [&](std::size_t body, std::size_t k) {
            const Graph& graph = *node->subgraphs[body].graph;
            return graph.type(graph.outputs()[k].value);
        };
        const std::size_t outputs = node->outputs.size();
        auto expectOutputs = [&](std::size_t body, std::size_t count) -> Failure {
            const Subgraph& subgraph = node->subgraphs[body];
            if (subgraph.graph->outputs().size() != count)
                return failNode("its " + subgraph.attribute + " has " +
                                std::to_string(subgraph.graph->outputs().size()) +
                                " outputs; it needs " + std::to_string(count));
            return std::nullopt;
        };
        if (op == "If") {
            if (node->subgraphs.size() != 2 ||
                node->subgraphs[0].attribute == node->subgraphs[1].attribute)
                return failNode("it needs a then_branch and an else_branch");
            if (node->subgraphs[0].attribute != "then_branch")
                std::swap(node->subgraphs[0], node->subgraphs[1]);
            for (std::size_t b = 0; b < 2; ++b) {
                if (auto error = expectOutputs(b, outputs))
                    return error;
            }
            for (std::size_t k = 0; k < outputs; ++k) {
                const TensorType then = bodyOutput(0, k), otherwise = bodyOutput(1, k);
                if (then != otherwise)
                    return failNode("output " + std::to_string(k) + " is " + then.toShortString() +
                                    " in then_branch and " + otherwise.toShortString() +
                                    " in else_branch; both branches must give one type");
                node->outputs[k] = then;
            }
            return std::nullopt;
        }
        if (node->subgraphs.size() != 1)
            return failNode("it needs one body");
        if (op == "Loop") {
            const LoopLayout layout = loopLayout(*node, node->inputs.size());
            if (auto error = expectOutputs(0, 1 + layout.carried + layout.scanOutputs))
                return error;
            for (std::size_t k = 0; k < layout.carried; ++k) {
                const TensorType out = bodyOutput(0, 1 + k);
                if (out != formal[2 + k])
                    return failNode("loop-carried value " + std::to_string(k) + " enters the " +
                                    "body as " + formal[2 + k].toShortString() +
                                    " and leaves it as " + out.toShortString() +
                                    "; a carried value must keep its type and shape");
                node->outputs[k] = out;
            }
            auto constant = [&](std::size_t k) -> const TensorData* {
                const Node& producer = m_graph.node(node->inputs[k].node);
                return producer.isConstant() ? producer.data.get() : nullptr;
            };
            std::optional<std::int64_t> rows = exactTripCount(*node, node->inputs.size(), constant);
            if (!rows && layout.tripCount >= 0) {
                if (const TensorData* count = constant(static_cast<std::size_t>(layout.tripCount));
                    count && count->size() == sizeof(std::int64_t)) {
                    std::int64_t trips = 0;
                    std::memcpy(&trips, count->data(), sizeof trips);
                    rows = std::max<std::int64_t>(trips, 0); // at most that many
                }
            }
            for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
                const TensorType slice = bodyOutput(0, 1 + layout.carried + j);
                const std::string& name = proto.output(static_cast<int>(layout.carried + j));
                std::optional<std::int64_t> length = rows;
                // Without a constant trip count: the length ONNX inferred or the model declares.
                if (const auto declared = name.empty() ? std::nullopt : staticType(name);
                    !length && declared && declared->rank() == slice.rank() + 1)
                    length = declared->shape[0];
                if (!length)
                    return failNode("scan output '" + name + "' has a row per iteration, and " +
                                    "nothing bounds the iterations at load: give the loop a " +
                                    "constant trip count");
                TensorType stacked = slice;
                stacked.shape.insert(stacked.shape.begin(), *length);
                node->outputs[layout.carried + j] = stacked;
            }
            return std::nullopt;
        }
        // Scan
        const ScanLayout layout = scanLayout(*node, node->inputs.size());
        if (auto error = expectOutputs(0, layout.states + layout.scanOutputs))
            return error;
        std::int64_t length = -1;
        for (std::size_t j = 0; j < layout.scanInputs; ++j) {
            const TensorType input = m_graph.type(node->inputs[layout.states + j]);
            std::int64_t axis = layout.inputAxes[j];
            axis = axis < 0 ? axis + input.rank() : axis;
            const std::int64_t d = input.shape[static_cast<std::size_t>(axis)];
            if (length >= 0 && d != length)
                return failNode("its scan inputs have different lengths (" +
                                std::to_string(length) + " and " + std::to_string(d) + ")");
            length = d;
        }
        if (length < 0)
            return failNode("it has no scan input");
        for (std::size_t k = 0; k < layout.states; ++k) {
            const TensorType out = bodyOutput(0, k);
            if (out != formal[k])
                return failNode("state " + std::to_string(k) + " enters the body as " +
                                formal[k].toShortString() + " and leaves it as " +
                                out.toShortString() + "; a state must keep its type and shape");
            node->outputs[k] = out;
        }
        for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
            TensorType stacked = bodyOutput(0, layout.states + j);
            const auto rank = static_cast<std::int64_t>(stacked.shape.size()) + 1;
            std::int64_t axis = layout.outputAxes[j];
            axis = axis < 0 ? axis + rank : axis;
            if (axis < 0 || axis >= rank)
                return failNode("scan output " + std::to_string(j) + " of rank " +
                                std::to_string(rank) + " has no axis " +
                                std::to_string(layout.outputAxes[j]));
            stacked.shape.insert(stacked.shape.begin() + axis, length);
            node->outputs[layout.states + j] = stacked;
        }
        return std::nullopt;
    }

    static bool dataDependent(const onnx::NodeProto& proto) {
        return onnxStandardDomain(proto) && dataDependentOutputs(proto.op_type());
    }

    /// NonZero, Compress, Unique and NonMaxSuppression: how many elements they select depends
    /// on the data, so their outputs are planned at the most they can hold (the storage a run
    /// needs at worst) and the kernel reports what it filled.
    void boundDataDependentOutputs(const onnx::NodeProto& proto, Node* node) {
        const std::string& op = proto.op_type();
        if (node->inputs.empty())
            return;
        const TensorType input = m_graph.type(node->inputs[0]);
        const std::int64_t elements = input.elementCount();
        const auto axisOf = [&](int rank) -> std::optional<std::size_t> {
            const auto axis = node->attrs.getInt("axis", 0);
            if (!node->attrs.has("axis") || !axis)
                return std::nullopt;
            const std::int64_t a = *axis < 0 ? *axis + rank : *axis;
            if (a < 0 || a >= rank)
                return std::nullopt;
            return static_cast<std::size_t>(a);
        };
        auto& outputs = node->outputs;
        if (op == "NonZero" && !outputs.empty()) {
            outputs[0].shape = {input.rank(), elements};
        } else if (op == "Compress" && !outputs.empty()) {
            const auto axis = axisOf(input.rank());
            outputs[0].shape = input.shape;
            if (!axis)
                outputs[0].shape = {elements};
        } else if (op == "Unique") {
            const auto axis = axisOf(input.rank());
            const std::int64_t slices = axis ? input.shape[*axis] : elements;
            for (std::size_t k = 0; k < outputs.size(); ++k) {
                if (k == 0)
                    outputs[k].shape = axis ? input.shape : std::vector<std::int64_t>{elements};
                else
                    outputs[k].shape = {slices};
            }
        } else if (op == "StringNormalizer" && !outputs.empty()) {
            // Stop words leave at most every string ([C] or [1, C]); none left is one "".
            outputs[0].shape = input.shape;
            if (elements == 0 && !outputs[0].shape.empty())
                outputs[0].shape.back() = 1;
        } else if (op == "NonMaxSuppression" && node->inputs.size() >= 2 && !outputs.empty()) {
            const TensorType scores = m_graph.type(node->inputs[1]);
            // Every (batch, class) pair selects at most every box.
            outputs[0].shape = {scores.elementCount(), 3};
        }
    }

    const OpDef* opFor(const onnx::NodeProto& proto) {
        const bool standard = proto.domain().empty() || proto.domain() == "ai.onnx" ||
                              proto.domain() == kTrainingDomain;
        if (standard) {
            const OpDef* op = OpRegistry::global().find(proto.op_type());
            if (op && op->dialect == OpDialect::Onnx)
                return op;
        }
        const std::string key = standard ? proto.op_type() : proto.domain() + "." + proto.op_type();
        const auto known = m_unsupported.find(key);
        if (known != m_unsupported.end())
            return known->second;
        const OpDef* op = m_graph.adoptOp(makeUnsupportedOp(key, OpDialect::Onnx));
        m_unsupported.emplace(key, op);
        return op;
    }

    Failure addNode(const onnx::NodeProto& proto) {
        if (proto.op_type() == "Constant" &&
            (proto.domain().empty() || proto.domain() == "ai.onnx"))
            return addConstantNode(proto);
        const std::string name = displayName(proto);
        if (proto.domain() == kCopyDomain && proto.op_type() == "DeviceCopy")
            return addDeviceCopy(proto, name);
        Node node;
        node.name = uniqueNodeName(name);
        node.op = opFor(proto);
        std::vector<std::int64_t> positions;
        bool gap = false;
        for (int k = 0; k < proto.input_size(); ++k) {
            if (proto.input(k).empty()) {
                gap = true;
                continue; // an optional input left out
            }
            node.inputs.push_back(m_values.at(proto.input(k)));
            positions.push_back(k);
        }
        readAttributes(proto, &node);
        if (gap && !positions.empty() &&
            positions.back() >= static_cast<std::int64_t>(positions.size()))
            node.attrs.set(kInputPositionsAttr, positions);
        // Outputs up to the last named one; a skipped optional output holds nothing.
        int last = proto.output_size() - 1;
        while (last >= 0 && proto.output(last).empty())
            --last;
        for (int k = 0; k <= last; ++k) {
            if (proto.output(k).empty()) {
                node.outputs.push_back(TensorType{{0}, DType::Float32});
                continue;
            }
            auto type = typeOf(proto.output(k), name, !dataDependent(proto) && !node.op->hasBodies);
            if (!type)
                return type.error();
            node.outputs.push_back(type.take());
        }
        if (dataDependent(proto))
            boundDataDependentOutputs(proto, &node);
        if (node.op->hasBodies) {
            if (auto error = readBodies(proto, &node)) {
                // A Loop whose body's shapes change may be unrolled where its trip count is
                // known: readOnnx reads the model again asking for that.
                if (!m_body && proto.op_type() == "Loop" && proto.output_size() > 0)
                    m_shapeVaryingLoop = proto.output(0);
                return error;
            }
            if (auto error = refineInferredTypes(proto, node))
                return error;
        }
        if (const auto pin = m_pins.find(name); pin != m_pins.end()) {
            // "gpu", or "gpu!" for a fixed pin.
            const std::string& spec = pin->second;
            const bool fixed = !spec.empty() && spec.back() == '!';
            auto pinned = device(fixed ? spec.substr(0, spec.size() - 1) : spec, name);
            if (!pinned)
                return pinned.error();
            node.pin = Pin{fixed ? PinKind::Fixed : PinKind::Plain, pinned.value(),
                           "placement.pin in " + m_file};
        }
        const NodeId id = m_graph.addNode(std::move(node));
        for (int k = 0; k <= last; ++k) {
            if (!proto.output(k).empty())
                define(proto.output(k), id, static_cast<std::uint32_t>(k));
        }
        return std::nullopt;
    }

    Failure addDeviceCopy(const onnx::NodeProto& proto, const std::string& name) {
        if (proto.input_size() != 1 || proto.output_size() != 1)
            return fail("DeviceCopy node '" + name + "' must have one input and one output");
        std::string src, dst;
        bool inserted = false;
        for (const onnx::AttributeProto& attr : proto.attribute()) {
            if (attr.name() == "src")
                src = attr.s();
            else if (attr.name() == "dst")
                dst = attr.s();
            else if (attr.name() == "inserted")
                inserted = attr.i() != 0;
        }
        auto from = device(src, name);
        if (!from)
            return from.error();
        auto to = device(dst, name);
        if (!to)
            return to.error();
        Node node;
        node.name = uniqueNodeName(name);
        node.op = &OpRegistry::global().deviceCopy();
        node.inputs = {m_values.at(proto.input(0))};
        node.outputs = {m_graph.type(node.inputs[0])};
        node.copySource = from.value();
        node.copyDestination = to.value();
        node.insertedCopy = inserted;
        define(proto.output(0), m_graph.addNode(std::move(node)), 0);
        return std::nullopt;
    }

    /// What stands in a tensor's raw_data for m_outside[k]: 16 bytes (this read's nonce and k),
    /// enough for ONNX's checker, which wants one value field, and unforgeable by a file.
    std::string outsideMarker(std::size_t k) const {
        std::string marker(16, '\0');
        const std::uint64_t index = k;
        std::memcpy(marker.data(), &m_nonce, 8);
        std::memcpy(marker.data() + 8, &index, 8);
        return marker;
    }

    /// The bytes a tensor's marker stands for, or null when its raw_data is its own.
    const TensorData* outsideData(const onnx::TensorProto& tensor) const {
        const std::string& raw = tensor.raw_data();
        if (raw.size() != 16 || std::memcmp(raw.data(), &m_nonce, 8) != 0)
            return nullptr;
        std::uint64_t index = 0;
        std::memcpy(&index, raw.data() + 8, 8);
        return index < m_outside.size() ? &m_outside[static_cast<std::size_t>(index)] : nullptr;
    }

    std::shared_ptr<const MappedFile> mappedExternalFile(const fs::path& path) {
        auto& file = m_externalFiles[path];
        if (!file) {
            auto opened = MappedFile::open(path.string());
            if (!opened)
                return nullptr;
            file = opened.take();
        }
        return file;
    }

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
    std::uint64_t m_nonce = std::random_device{}() * 0x100000001ull ^ std::random_device{}();
    std::map<fs::path, std::shared_ptr<const MappedFile>> m_externalFiles;
    std::unordered_map<std::string, const onnx::TypeProto_Tensor*> m_types;
    std::unordered_map<std::string, ValueRef> m_values;
    std::map<std::string, const OpDef*> m_unsupported;
    std::set<std::string> m_warned;
    std::map<std::string, std::string> m_pins;
    std::set<std::string> m_graphInputs;
    std::vector<int> m_order;
    std::set<std::string> m_boundInputs;
    int m_folded = 0;
    bool m_body = false; ///< reading the body of a control-flow node (readBody)
    std::string m_shapeVaryingLoop;
};

} // namespace

bool looksLikeOnnx(std::string_view bytes) {
    // A serialized ModelProto starts with a field tag: ir_version (0x08) in every exporter we
    // know, or another low field number; text formats start with a printable character.
    return !bytes.empty() && (static_cast<unsigned char>(bytes[0]) == 0x08 ||
                              static_cast<unsigned char>(bytes[0]) == 0x12 ||
                              static_cast<unsigned char>(bytes[0]) == 0x1a ||
                              static_cast<unsigned char>(bytes[0]) == 0x3a);
}

Result<Graph> readOnnx(std::string_view bytes, const std::string& fileName, DeviceSet* devices,
                       bool devicesGiven, std::vector<std::string>* warnings) {
    return readOnnx(bytes, fileName, devices, devicesGiven, warnings, OnnxReadOptions{});
}

Result<Graph> readOnnx(std::string_view bytes, const std::string& fileName, DeviceSet* devices,
                       bool devicesGiven, std::vector<std::string>* warnings,
                       const OnnxReadOptions& options) {
    // A Loop whose body's shapes change cannot run as one op; read again with it unrolled (which
    // works where its trip count is known at load), until no new Loop asks for it.
    OnnxReadOptions current = options;
    const std::size_t warned = warnings->size();
    const DeviceSet givenDevices = *devices;
    for (;;) {
        OnnxReader reader(fileName, devices, devicesGiven, warnings, current);
        auto graph = reader.read(bytes);
        const std::string loop = reader.shapeVaryingLoop();
        if (graph || loop.empty() || current.unrollLoops.count(loop))
            return graph;
        current.unrollLoops.insert(loop);
        warnings->resize(warned);
        *devices = givenDevices;
    }
}

std::vector<SymbolicInput> onnxSymbolicInputs(std::string_view bytes) {
    onnx::ModelProto model;
    std::vector<SymbolicInput> inputs;
    // The graph alone: large initializers are left out unparsed (and unread, in a mapped file).
    std::vector<PayloadRange> payloads;
    const std::optional<std::string> skeleton = stripInitializerPayloads(
        bytes, kOutsideBytes, [](std::size_t) { return std::string(1, '\0'); }, &payloads);
    if (skeleton)
        bytes = *skeleton;
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
        !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return inputs;
    std::set<std::string> initializers;
    for (const onnx::TensorProto& tensor : model.graph().initializer())
        initializers.insert(tensor.name());
    for (const onnx::ValueInfoProto& input : model.graph().input()) {
        // A sequence's first element ("S[0]") and an optional's value are fixed the same way.
        const onnx::TypeProto* type = &input.type();
        std::string name = input.name();
        if (type->has_optional_type())
            type = &type->optional_type().elem_type();
        if (type->has_sequence_type()) {
            type = &type->sequence_type().elem_type();
            name = sequenceElementName(name, 0);
        }
        if (initializers.count(input.name()) || !type->has_tensor_type() ||
            !type->tensor_type().has_shape())
            continue;
        SymbolicInput symbolic{name, {}};
        bool open = false;
        for (const auto& dim : type->tensor_type().shape().dim()) {
            if (dim.has_dim_value()) {
                symbolic.dims.push_back(std::to_string(dim.dim_value()));
            } else {
                open = true;
                symbolic.dims.push_back(dim.has_dim_param() && !dim.dim_param().empty()
                                            ? dim.dim_param()
                                            : std::string("?"));
            }
        }
        if (open)
            inputs.push_back(std::move(symbolic));
    }
    return inputs;
}

Result<HostTensor> readOnnxTensor(std::string_view bytes, const std::string& fileName) {
    auto fail = [&](std::string message) {
        return SourceError{fileName, 0, 0, std::move(message)};
    };
    onnx::TensorProto tensor;
    if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()) ||
        !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
        return fail("not a serialized ONNX tensor (onnx.TensorProto)");
    if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL)
        return fail("the tensor keeps its data in an external file, which is not read here");
    DeviceSet none;
    std::vector<std::string> warnings;
    const OnnxReader reader(fileName, &none, true, &warnings, OnnxReadOptions{});
    auto host = reader.hostTensor(tensor);
    if (!host)
        return host.error();
    return host.take();
}

} // namespace placer
