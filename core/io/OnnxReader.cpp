// Reading an ONNX model (io/OnnxReader.h): the driver of the importer (io/OnnxImporter.h), the
// model's checks, input shapes given at load, and ONNX's shape inference as a source of types.
#include "io/OnnxReader.h"
#include "io/OnnxProto.h"

#include "io/OnnxImporter.h"
#include "io/OnnxRunShapes.h"

#include <set>
#include <string>
#include <vector>

namespace placer {

Result<Graph> OnnxImporter::read(std::string_view bytes) {
    installOnnxShapeFunctions(); // what the VM asks of ONNX nodes whose shapes settle at run time
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
        m_outside.push_back(m_options.bytesFile
                                ? TensorData::viewOfFile(m_options.bytesFile, data, range.length)
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
    static const std::set<std::string> kGeneric{"", "torch_jit", "torch-jit-export", "main_graph",
                                                "graph"};
    if (!kGeneric.count(m_model.graph().name()))
        m_graph.name = m_model.graph().name();
    return std::move(m_graph);
}

/// Reads the body of an If, Loop or Scan: `model` holds it as its graph, every input typed
/// (its formal inputs, then the outer values it reads). Its parameters are those inputs, in
/// order, and its outputs the body's outputs.
Result<Graph>
OnnxImporter::readBody(onnx::ModelProto model,
                       const std::vector<std::pair<std::string, std::string>>& properties,
                       bool shapesAtRun) {
    m_model = std::move(model);
    m_body = true;
    m_bodyShapesAtRun = shapesAtRun;
    for (const auto& property : properties) {
        if (property.first == "onnx.opset" || property.first == "onnx.ir_version")
            m_graph.properties.push_back(property);
    }
    if (auto error = readGraph())
        return *error;
    m_graph.name = m_model.graph().name();
    return std::move(m_graph);
}

/// From the model's graph to m_graph, for a model and for a body alike: order, check, infer
/// shapes, expand functions, fold constants, build. A body is not checked on its own (the
/// model's check covered it, and its outputs need not declare types).
OnnxImporter::Failure OnnxImporter::readGraph() {
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

SourceError OnnxImporter::fail(std::string message) const {
    return SourceError{m_file, 0, 0, std::move(message)};
}

OnnxImporter::Failure OnnxImporter::checkOpset() {
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

namespace {

/// The first name `graph` reads that neither it (an input, an initializer, an earlier node's
/// output) nor the scopes around it (`outer`) define, as a sentence; empty when there is none.
/// Subgraphs (If's and Loop's bodies) are checked with this graph's names in scope.
std::string firstUndefinedName(const onnx::GraphProto& graph, std::set<std::string> outer) {
    std::set<std::string>& defined = outer;
    defined.insert("");
    for (const auto& input : graph.input())
        defined.insert(input.name());
    for (const auto& initializer : graph.initializer())
        defined.insert(initializer.name());
    for (const onnx::NodeProto& node : graph.node()) {
        for (const std::string& input : node.input()) {
            if (!defined.count(input))
                return "node '" + (node.name().empty() ? node.op_type() : node.name()) +
                       "' reads '" + input + "', which no earlier node, input or initializer " +
                       "defines";
        }
        for (const onnx::AttributeProto& attribute : node.attribute()) {
            std::vector<const onnx::GraphProto*> bodies;
            if (attribute.has_g())
                bodies.push_back(&attribute.g());
            for (const auto& g : attribute.graphs())
                bodies.push_back(&g);
            for (const onnx::GraphProto* body : bodies) {
                if (std::string why = firstUndefinedName(*body, defined); !why.empty())
                    return "in a body of node '" +
                           (node.name().empty() ? node.op_type() : node.name()) + "': " + why;
            }
        }
        for (const std::string& output : node.output())
            defined.insert(output);
    }
    for (const auto& output : graph.output()) {
        if (!defined.count(output.name()))
            return "graph output '" + output.name() + "' is produced by no node, input or " +
                   "initializer";
    }
    return {};
}

} // namespace

namespace {

/// The declared dimensions of a value, when every one is a number.
std::optional<std::vector<std::int64_t>> declaredDims(const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape())
        return std::nullopt;
    std::vector<std::int64_t> dims;
    for (const auto& dim : info.type().tensor_type().shape().dim()) {
        if (!dim.has_dim_value())
            return std::nullopt;
        dims.push_back(dim.dim_value());
    }
    return dims;
}

} // namespace

void OnnxImporter::keepDeclaredBatchAxes(const onnx::GraphProto& original,
                                         onnx::GraphProto* converted) {
    // ONNX's converter takes opset 8's Scan (a batch axis first on every input and output) to
    // opset 9's by dropping that axis from the graph's inputs and outputs, which then no longer
    // take the data the model declares. Where an input or output lost a leading axis of 1, the
    // graph keeps the declared one, with a Squeeze after the input or an Unsqueeze before the
    // output.
    const auto lostBatch = [](const onnx::ValueInfoProto& before, const onnx::ValueInfoProto& now) {
        const auto a = declaredDims(before), b = declaredDims(now);
        return a && b && a->size() == b->size() + 1 && a->front() == 1 &&
               std::equal(b->begin(), b->end(), a->begin() + 1);
    };
    // Axes as Constant nodes: a model of IR version 3 takes initializers only as inputs.
    const auto axesZero = [](const std::string& name) {
        onnx::NodeProto constant;
        constant.set_op_type("Constant");
        constant.set_name(name);
        constant.add_output(name);
        onnx::AttributeProto* value = constant.add_attribute();
        value->set_name("value");
        value->set_type(onnx::AttributeProto_AttributeType_TENSOR);
        onnx::TensorProto* axes = value->mutable_t();
        axes->set_data_type(onnx::TensorProto_DataType_INT64);
        axes->add_dims(1);
        axes->add_int64_data(0);
        return constant;
    };
    // Every use of `from` by the graph's nodes (their outputs too, with `outputs`) reads `to`.
    const auto rename = [&](const std::string& from, const std::string& to, bool outputs) {
        for (onnx::NodeProto& node : *converted->mutable_node()) {
            for (std::string& name : *node.mutable_input())
                if (name == from)
                    name = to;
            if (!outputs)
                continue;
            for (std::string& name : *node.mutable_output())
                if (name == from)
                    name = to;
        }
    };
    std::vector<onnx::NodeProto> squeezes;
    for (onnx::ValueInfoProto& input : *converted->mutable_input()) {
        for (const onnx::ValueInfoProto& before : original.input()) {
            if (before.name() != input.name() || !lostBatch(before, input))
                continue;
            const std::string inner = input.name() + "/unbatched";
            rename(input.name(), inner, false);
            onnx::NodeProto squeeze;
            squeeze.set_op_type("Squeeze");
            squeeze.set_name(inner);
            squeeze.add_input(input.name());
            squeeze.add_input(inner + "/axes");
            squeeze.add_output(inner);
            squeezes.push_back(axesZero(inner + "/axes"));
            squeezes.push_back(std::move(squeeze));
            *input.mutable_type() = before.type();
        }
    }
    if (!squeezes.empty()) {
        // Before every node that reads them.
        google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
        for (onnx::NodeProto& squeeze : squeezes)
            *nodes.Add() = std::move(squeeze);
        for (const onnx::NodeProto& node : converted->node())
            *nodes.Add() = node;
        *converted->mutable_node() = std::move(nodes);
    }
    for (onnx::ValueInfoProto& output : *converted->mutable_output()) {
        for (const onnx::ValueInfoProto& before : original.output()) {
            if (before.name() != output.name() || !lostBatch(before, output))
                continue;
            const std::string inner = output.name() + "/unbatched";
            rename(output.name(), inner, true);
            *converted->add_node() = axesZero(inner + "/axes");
            onnx::NodeProto* unsqueeze = converted->add_node();
            unsqueeze->set_op_type("Unsqueeze");
            unsqueeze->set_name(inner);
            unsqueeze->add_input(inner);
            unsqueeze->add_input(inner + "/axes");
            unsqueeze->add_output(output.name());
            *output.mutable_type() = before.type();
        }
    }
}

/// ONNX's version converter brings an old model to kUpgradeOpset; what it cannot convert is
/// refused with its reason.
OnnxImporter::Failure OnnxImporter::upgradeOpset(int opset) {
    for (const onnx::NodeProto& node : m_model.graph().node()) {
        if (!node.domain().empty() && node.domain() != "ai.onnx")
            return fail("the model uses opset " + std::to_string(opset) + " and node '" +
                        displayName(node) + "' of domain '" + node.domain() +
                        "', which ONNX's version converter cannot convert; re-export it "
                        "with opset 11 or newer");
    }
    // ONNX's converter imports the graph into its IR, which follows every name it reads without
    // a check: a graph output (or a node input) that nothing defines crashes it, and ONNX 1.12's
    // checker lets graph outputs through. So every name must be defined first.
    if (const std::string undefined = firstUndefinedName(m_model.graph(), {}); !undefined.empty())
        return fail(undefined);
    try {
        onnxSchemas(); // the contrib operators placer runs are checked as known ones
        onnx::checker::check_model(m_model);
        onnx::ModelProto converted =
            onnx::version_conversion::ConvertVersion(m_model, kUpgradeOpset);
        keepDeclaredBatchAxes(m_model.graph(), converted.mutable_graph());
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
OnnxImporter::Failure OnnxImporter::readDeviceSet() {
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

Result<DeviceId> OnnxImporter::device(const std::string& name, const std::string& node) const {
    if (const auto id = m_devices.find(name))
        return *id;
    return fail("node '" + node + "' names unknown device '" + name +
                "' (devices: " + m_devices.namesList() + ")");
}

/// Sequences and optionals become the tensors they hold (io/OnnxSequences.h); what they need
/// known at load (positions, conditions, trip counts) is evaluated as folding evaluates.
OnnxImporter::Failure OnnxImporter::lowerSequences() {
    const LoadTimeEvaluator evaluate = [this](const onnx::NodeProto& node,
                                              const std::vector<HostTensor>& inputs,
                                              const std::vector<TensorType>& outputTypes) {
        return evaluateKnown(node, inputs, outputTypes);
    };
    SequenceLoweringInputs inputs{&m_options.inputShapes, &m_options.sequenceInputs,
                                  &m_options.shapeInputValues, &m_options.unrollLoops, &evaluate};
    if (auto error = placer::lowerSequences(&m_model, inputs, m_warnings))
        return fail(*error);
    return std::nullopt;
}

/// The user's shapes for graph inputs (--input-shape) replace the declared ones, which they
/// must agree with where those are fixed.
OnnxImporter::Failure OnnxImporter::applyInputShapes() {
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
                         "' is not fixed; it is taken as 1 (give --input-shape " + input.name() +
                         "=... to plan real sizes)");
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
                    return fail("input '" + input.name() + "' has dimension " + std::to_string(d) +
                                " fixed at " + std::to_string(dim.dim_value()) +
                                "; the shape given says " +
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
OnnxImporter::Failure OnnxImporter::checkDeclaredShapes() const {
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
OnnxImporter::Failure OnnxImporter::checkTensorSizes() {
    for (const onnx::TensorProto& tensor : m_model.graph().initializer()) {
        std::int64_t count = 0;
        if (auto error = tensorElements(tensor, &count))
            return error;
        const auto dtype = dtypeFromOnnx(tensor.data_type());
        if (!dtype)
            return fail("initializer '" + tensor.name() + "' has an unsupported element type (" +
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

/// ONNX's checker does not look at attribute values, and its shape inference divides by
/// strides and groups: a zero there would crash the process (found by fuzz_onnx_reader).
OnnxImporter::Failure OnnxImporter::checkWindowAttributes() const {
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
                return fail("node '" + displayName(node) + "': " + node.op_type() + " attribute '" +
                            attr.name() + "' must be " + (positive ? "positive" : "non-negative") +
                            ", not " + std::to_string(v));
            }
        }
    }
    return std::nullopt;
}

OnnxImporter::Failure OnnxImporter::validateAndInferShapes() {
    try {
        onnxSchemas(); // the contrib operators placer runs are checked as known ones
        onnx::checker::check_model(m_model);
    } catch (const onnx::checker::ValidationError& error) {
        return fail("not a valid ONNX model: " + firstLine(error.what()));
    }
    return inferShapes();
}

namespace {

/// The declared type of `name` among a graph's outputs and value_info, or null.
onnx::TypeProto_Tensor* declaredType(onnx::GraphProto* graph, const std::string& name) {
    for (auto* list : {graph->mutable_output(), graph->mutable_value_info()}) {
        for (onnx::ValueInfoProto& info : *list) {
            if (info.name() == name && info.type().has_tensor_type())
                return info.mutable_type()->mutable_tensor_type();
        }
    }
    return nullptr;
}

} // namespace

void OnnxImporter::typeStftOutputs() {
    // ONNX 1.12's STFT inference ignores `onesided` (it gives frame_length bins, where the
    // default one-sided transform has frame_length / 2 + 1) and contradicts a model that
    // declares the right shape. The declared shape is set aside for inference, and the shape
    // is found here from the signal, frame_step, the window or frame_length, and onesided.
    onnx::GraphProto* graph = m_model.mutable_graph();
    const auto valueOf = [&](const std::string& name) -> std::optional<double> {
        if (name.empty())
            return std::nullopt;
        for (const onnx::TensorProto& tensor : graph->initializer()) {
            if (tensor.name() == name)
                return scalarOf(tensor);
        }
        for (const onnx::NodeProto& node : graph->node()) {
            if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name)
                continue;
            for (const onnx::AttributeProto& attr : node.attribute()) {
                if (attr.name() == "value" && attr.has_t())
                    return scalarOf(attr.t());
            }
        }
        return std::nullopt;
    };
    const auto shapeOf = [&](const std::string& name) -> std::optional<std::vector<std::int64_t>> {
        for (auto* list : {&graph->input(), &graph->value_info(), &graph->output()}) {
            for (const onnx::ValueInfoProto& info : *list) {
                if (info.name() != name || !info.type().tensor_type().has_shape())
                    continue;
                return declaredDims(info);
            }
        }
        for (const onnx::TensorProto& tensor : graph->initializer()) {
            if (tensor.name() == name)
                return std::vector<std::int64_t>(tensor.dims().begin(), tensor.dims().end());
        }
        return std::nullopt;
    };
    for (const onnx::NodeProto& node : graph->node()) {
        if (node.op_type() != "STFT" || !onnxStandardDomain(node) || node.output_size() < 1 ||
            node.input_size() < 2)
            continue;
        if (onnx::TypeProto_Tensor* declared = declaredType(graph, node.output(0)))
            declared->clear_shape();
        bool onesided = true;
        for (const onnx::AttributeProto& attr : node.attribute()) {
            if (attr.name() == "onesided")
                onesided = attr.i() != 0;
        }
        const auto signal = shapeOf(node.input(0));
        const auto step = valueOf(node.input(1));
        std::optional<double> length;
        if (node.input_size() > 3)
            length = valueOf(node.input(3));
        if (!length && node.input_size() > 2 && !node.input(2).empty()) {
            if (const auto window = shapeOf(node.input(2)); window && window->size() == 1)
                length = static_cast<double>((*window)[0]);
        }
        m_stftShapes[node.output(0)] = {}; // found when it runs, unless found here
        if (!signal || signal->size() != 3 || !step || *step <= 0 || !length || *length <= 0 ||
            *length > static_cast<double>((*signal)[1]))
            continue;
        const auto frames =
            static_cast<std::int64_t>((static_cast<double>((*signal)[1]) - *length) / *step) + 1;
        const auto size = static_cast<std::int64_t>(*length);
        m_stftShapes[node.output(0)] = {(*signal)[0], frames, onesided ? size / 2 + 1 : size, 2};
    }
}

OnnxImporter::Failure OnnxImporter::inferShapes() {
    m_stftShapes.clear();
    typeStftOutputs();
    if (auto error = inferShapesAsOnnxDoes())
        return error;
    // What ONNX 1.12 gets wrong of STFT, as found above.
    for (const auto& [name, shape] : m_stftShapes) {
        onnx::TypeProto_Tensor* type = declaredType(m_model.mutable_graph(), name);
        if (!type)
            continue;
        type->clear_shape();
        for (const std::int64_t d : shape)
            type->mutable_shape()->add_dim()->set_dim_value(d);
        if (shape.empty())
            type->clear_shape(); // not even its rank: found when it runs
    }
    return std::nullopt;
}

OnnxImporter::Failure OnnxImporter::inferShapesAsOnnxDoes() {
    // Data propagation (shape arithmetic through Concat, Slice, Gather) first. ONNX 1.12's
    // propagation refuses some valid graphs (a Concat of an empty 1-d constant: "axis must
    // be in [-rank, rank-1]"); those are inferred again without it, and the folding at
    // load computes what it would have.
    for (const bool propagate : {true, false}) {
        try {
            onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/0,
                                                /*data_prop=*/propagate);
            onnx::shape_inference::InferShapes(m_model, onnxSchemas(), options);
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

std::string OnnxImporter::firstLine(const char* text) {
    std::string line(text);
    const std::size_t end = line.find('\n');
    return end == std::string::npos ? line : line.substr(0, end);
}

void OnnxImporter::collectTypes() {
    const onnx::GraphProto& g = m_model.graph();
    for (const auto& list : {&g.input(), &g.output(), &g.value_info()}) {
        for (const onnx::ValueInfoProto& info : *list) {
            if (info.has_type() && info.type().has_tensor_type())
                m_types.emplace(info.name(), &info.type().tensor_type());
        }
    }
}

bool OnnxImporter::shapeFoundAtRun(const std::string& value) const {
    if (m_body && !m_bodyShapesAtRun)
        return false; // a Loop's or Scan's body keeps one shape (readBodies checks)
    if (m_body && staticType(value))
        return false;
    const auto it = m_types.find(value);
    if (it == m_types.end() || !it->second->has_elem_type())
        return false;
    if (!it->second->has_shape())
        return true; // not even its rank is known before it runs
    std::set<std::string> inputSymbols;
    for (const onnx::ValueInfoProto& input : m_model.graph().input()) {
        if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
            continue;
        for (const auto& dim : input.type().tensor_type().shape().dim()) {
            if (dim.has_dim_param())
                inputSymbols.insert(dim.dim_param());
        }
    }
    for (const auto& dim : it->second->shape().dim()) {
        if (dim.has_dim_value())
            continue;
        if (!dim.has_dim_param() || !inputSymbols.count(dim.dim_param()))
            return true;
    }
    return false;
}

/// The static type of a value; symbolic or unknown dimensions become 1 with a warning.
Result<TensorType> OnnxImporter::typeOf(const std::string& value, const std::string& node,
                                        bool warnUnknown) {
    const auto it = m_types.find(value);
    if (it == m_types.end() || !it->second->has_elem_type())
        return fail("node '" + node + "': ONNX shape inference found no type for '" + value + "'");
    const auto dtype = dtypeFromOnnx(it->second->elem_type());
    if (!dtype)
        return fail("node '" + node + "': value '" + value + "' has an unsupported element " +
                    "type (" + std::to_string(it->second->elem_type()) + ")");
    TensorType type{{}, *dtype};
    if (m_body && warnUnknown && !staticType(value))
        return fail("node '" + node + "': ONNX shape inference cannot fix the shape of '" + value +
                    "' from the types the body is given; every value in a body " +
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
                return fail("node '" + node + "': value '" + value + "' has a negative dimension");
        } else if (warnUnknown) {
            warnOnce("dimension '" + (dim.has_dim_param() ? dim.dim_param() : std::string("?")) +
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

void OnnxImporter::warnOnce(const std::string& message) {
    // The bodies' importers share the model's warnings: once in all of them.
    if (m_warned.insert(message).second &&
        std::find(m_warnings->begin(), m_warnings->end(), message) == m_warnings->end())
        warn(message);
}

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

namespace {

/// A run's data as the shapes of open inputs and the values of shape-setting ones, where the
/// options do not give those already.
void adoptRunInputs(const std::vector<SymbolicInput>& open, OnnxReadOptions* options) {
    for (const SymbolicInput& input : open) {
        const auto data = options->runInputs.find(input.name);
        if (data != options->runInputs.end() && !options->inputShapes.count(input.name) &&
            shapeFitsDeclared(input.dims, data->second.type.shape))
            options->inputShapes[input.name] = data->second.type.shape;
    }
    for (const auto& [name, data] : options->runInputs)
        options->shapeInputValues.emplace(name, data);
}

std::vector<OpenInput> openInputs(const std::vector<SymbolicInput>& open,
                                  const OnnxImporter& reader, const OnnxReadOptions& options) {
    std::vector<OpenInput> inputs;
    for (const SymbolicInput& input : open)
        inputs.push_back(OpenInput{input.name, input.dims, false, std::nullopt});
    for (const std::string& name : reader.shapeInputs()) {
        auto at = std::find_if(inputs.begin(), inputs.end(),
                               [&](const OpenInput& input) { return input.name == name; });
        if (at == inputs.end())
            at = inputs.insert(inputs.end(), OpenInput{name, {}, false, std::nullopt});
        at->setsShapes = true;
        if (reader.boundInputs().count(name))
            at->plannedValue = options.shapeInputValues.at(name);
    }
    return inputs;
}

} // namespace

Result<Graph> readOnnx(std::string_view bytes, const std::string& fileName, DeviceSet* devices,
                       bool devicesGiven, std::vector<std::string>* warnings,
                       const OnnxReadOptions& options) {
    // A Loop whose body's shapes change cannot run as one op; read again with it unrolled (which
    // works where its trip count is known at load), until no new Loop asks for it.
    OnnxReadOptions current = options;
    const std::vector<SymbolicInput> open = onnxSymbolicInputs(bytes);
    adoptRunInputs(open, &current);
    const std::size_t warned = warnings->size();
    const DeviceSet givenDevices = *devices;
    for (;;) {
        OnnxImporter reader(fileName, devices, devicesGiven, warnings, current);
        auto graph = reader.read(bytes);
        const std::string loop = reader.shapeVaryingLoop();
        if (graph) {
            graph.value().openInputs = openInputs(open, reader, current);
            return graph;
        }
        if (loop.empty() || current.runTimeLoops.count(loop))
            return graph;
        if (current.unrollLoops.count(loop)) {
            // Its trip count is not known at load: its shapes are found as it runs.
            current.unrollLoops.erase(loop);
            current.runTimeLoops.insert(loop);
        } else {
            current.unrollLoops.insert(loop);
        }
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
    const OnnxImporter reader(fileName, &none, true, &warnings, OnnxReadOptions{});
    auto host = reader.hostTensor(tensor);
    if (!host)
        return host.error();
    return host.take();
}

} // namespace placer
