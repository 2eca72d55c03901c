// ONNX shape functions at run time (io/OnnxRunShapes.h): one node written as a model of its own,
// typed by ONNX's shape inference with the types and values its inputs have then.
#include "io/OnnxRunShapes.h"
#include "io/OnnxProto.h"

#include "ir/DialectShapes.h"

#include "io/OnnxImporter.h"
#include "io/OnnxWriter.h"
#include "ir/Scalar.h"

#include <mutex>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <mutex>

namespace placer {

void boundSelectionOutputs(const std::string& op, const Attrs& attrs,
                           const std::vector<TensorType>& inputs,
                           std::vector<TensorType>* outputs) {
    if (inputs.empty() || outputs->empty())
        return;
    const TensorType& input = inputs[0];
    const std::int64_t elements = input.elementCount();
    const auto axisOf = [&](int rank) -> std::optional<std::size_t> {
        const auto axis = attrs.getInt("axis", 0);
        if (!attrs.has("axis") || !axis)
            return std::nullopt;
        const std::int64_t a = *axis < 0 ? *axis + rank : *axis;
        if (a < 0 || a >= rank)
            return std::nullopt;
        return static_cast<std::size_t>(a);
    };
    auto& out = *outputs;
    if (op == "NonZero") {
        out[0].shape = {input.rank(), elements};
    } else if (op == "Compress") {
        const auto axis = axisOf(input.rank());
        out[0].shape = input.shape;
        if (!axis)
            out[0].shape = {elements};
    } else if (op == "Unique") {
        const auto axis = axisOf(input.rank());
        const std::int64_t slices = axis ? input.shape[*axis] : elements;
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (k == 0)
                out[k].shape = axis ? input.shape : std::vector<std::int64_t>{elements};
            else
                out[k].shape = {slices};
        }
    } else if (op == "StringNormalizer") {
        // Stop words leave at most every string ([C] or [1, C]); none left is one "".
        out[0].shape = input.shape;
        if (elements == 0 && !out[0].shape.empty())
            out[0].shape.back() = 1;
    } else if (op == "NonMaxSuppression" && inputs.size() >= 2) {
        // Every (batch, class) pair selects at most every box.
        out[0].shape = {inputs[1].elementCount(), 3};
    }
}

namespace {

/// The output shape of Einsum `equation` ("bij,bjk->bik", spaces allowed, "..." for broadcast
/// axes, no "->" for the implicit output: the letters used once, in alphabetical order) on
/// inputs of `inputs`' shapes.
Result<std::vector<std::int64_t>> einsumShape(std::string equation,
                                              const std::vector<TensorType>& inputs) {
    const auto fail = [&](const std::string& why) {
        return SourceError::sentence("the equation '" + equation + "' " + why);
    };
    equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
    const std::size_t arrow = equation.find("->");
    const std::string lhs = equation.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (const char c : lhs) {
        if (c == ',')
            terms.emplace_back();
        else
            terms.back() += c;
    }
    if (terms.size() != inputs.size())
        return fail("names " + std::to_string(terms.size()) + " inputs, and there are " +
                    std::to_string(inputs.size()));
    std::map<char, std::int64_t> sizes;
    std::map<char, int> uses;
    std::vector<std::int64_t> ellipsis; // broadcast, right-aligned
    for (std::size_t t = 0; t < terms.size(); ++t) {
        std::string term = terms[t];
        const std::size_t dots = term.find("...");
        const bool hasDots = dots != std::string::npos;
        if (hasDots)
            term.erase(dots, 3);
        const std::vector<std::int64_t>& shape = inputs[t].shape;
        if (term.size() > shape.size() || (!hasDots && term.size() != shape.size()))
            return fail("does not fit input " + std::to_string(t) + " of rank " +
                        std::to_string(shape.size()));
        const std::size_t broadcast = shape.size() - term.size();
        const std::size_t at = hasDots ? dots : term.size();
        for (std::size_t k = 0; k < term.size(); ++k) {
            const char letter = term[k];
            if (!std::isalpha(static_cast<unsigned char>(letter)))
                return fail(std::string("has '") + letter + "'");
            const std::int64_t size = shape[k < at ? k : k + broadcast];
            auto [it, fresh] = sizes.emplace(letter, size);
            if (!fresh && it->second != size) {
                if (it->second != 1 && size != 1)
                    return fail(std::string("gives ") + letter + " sizes " +
                                std::to_string(it->second) + " and " + std::to_string(size));
                it->second = std::max(it->second, size);
            }
            ++uses[letter];
        }
        if (broadcast > ellipsis.size())
            ellipsis.insert(ellipsis.begin(), broadcast - ellipsis.size(), 1);
        for (std::size_t k = 0; k < broadcast; ++k) {
            std::int64_t& out = ellipsis[ellipsis.size() - broadcast + k];
            const std::int64_t size = shape[at + k];
            if (out == 1)
                out = size;
            else if (size != 1 && size != out)
                return fail("broadcasts " + std::to_string(out) + " with " + std::to_string(size));
        }
    }
    std::string rhs;
    if (arrow != std::string::npos) {
        rhs = equation.substr(arrow + 2);
    } else {
        rhs = ellipsis.empty() ? "" : "...";
        for (const auto& [letter, count] : uses) {
            if (count == 1)
                rhs += letter;
        }
    }
    std::vector<std::int64_t> shape;
    for (std::size_t k = 0; k < rhs.size(); ++k) {
        if (rhs.compare(k, 3, "...") == 0) {
            shape.insert(shape.end(), ellipsis.begin(), ellipsis.end());
            k += 2;
            continue;
        }
        const auto it = sizes.find(rhs[k]);
        if (it == sizes.end())
            return fail(std::string("gives the output ") + rhs[k] + ", which no input has");
        shape.push_back(it->second);
    }
    return shape;
}

} // namespace

Result<std::vector<TensorType>> onnxRunTimeTypes(const Node& node,
                                                 const std::vector<TensorType>& inputs,
                                                 const std::vector<const TensorData*>& values,
                                                 int opset) {
    auto fail = [&](std::string why) {
        return SourceError{"", 0, 0,
                           node.op->name + " node '" + node.name + "': " + std::move(why)};
    };
    if (node.op->hasBodies)
        return fail("control flow whose inputs' shapes are known only at run time is not "
                    "supported yet");
    onnx::ModelProto model;
    model.set_ir_version(8);
    auto* set = model.add_opset_import();
    set->set_domain("");
    set->set_version(opset > 0 ? opset : 13);
    onnx::GraphProto* graph = model.mutable_graph();
    onnx::NodeProto* proto = graph->add_node();
    const auto [domain, type] = onnxDomainAndType(node.op->name);
    proto->set_op_type(type);
    if (!domain.empty()) { // a contrib operator (io/ContribSchemas.cpp)
        proto->set_domain(domain);
        auto* contrib = model.add_opset_import();
        contrib->set_domain(domain);
        contrib->set_version(1);
    }
    const auto positions = node.attrs.getInts(kInputPositionsAttr, {});
    for (std::size_t k = 0; k < inputs.size(); ++k) {
        if (positions && k < positions->size()) {
            while (proto->input_size() < (*positions)[k])
                proto->add_input(std::string());
        }
        const std::string name = "in" + std::to_string(k);
        proto->add_input(name);
        setOnnxType(graph->add_input(), name, inputs[k]);
        if (k < values.size() && values[k]) {
            onnx::TensorProto* tensor = graph->add_initializer();
            tensor->set_name(name);
            tensor->set_data_type(onnxElementType(inputs[k].dtype));
            for (std::int64_t d : inputs[k].shape)
                tensor->add_dims(d);
            setOnnxTensorData(tensor, inputs[k].dtype, values[k]->data(), values[k]->size());
        }
    }
    for (std::size_t k = 0; k < node.outputs.size(); ++k)
        proto->add_output("out" + std::to_string(k));
    setOnnxAttributes(proto, node.attrs);
    try {
        onnx::ShapeInferenceOptions options(/*check_type=*/false, /*strict_mode=*/1,
                                            /*data_prop=*/true);
        onnx::shape_inference::InferShapes(model, onnxSchemas(), options);
    } catch (const std::exception& error) {
        std::string text = error.what();
        if (const std::size_t end = text.find('\n'); end != std::string::npos)
            text.resize(end);
        return fail("ONNX shape inference at run time failed: " + text);
    }
    std::vector<TensorType> outputs(node.outputs.size());
    std::vector<bool> known(node.outputs.size(), false);
    for (const onnx::ValueInfoProto& info : graph->value_info()) {
        if (info.name().rfind("out", 0) != 0)
            continue;
        const std::size_t k = std::stoul(info.name().substr(3));
        if (k >= outputs.size() || !info.type().has_tensor_type())
            continue;
        const auto& tensor = info.type().tensor_type();
        const auto dtype = dtypeFromOnnx(tensor.elem_type());
        outputs[k].dtype = dtype ? *dtype : node.outputs[k].dtype;
        if (!tensor.has_shape())
            continue;
        bool complete = true;
        for (const auto& dim : tensor.shape().dim()) {
            complete = complete && dim.has_dim_value();
            outputs[k].shape.push_back(dim.has_dim_value() ? dim.dim_value() : 0);
        }
        known[k] = complete;
    }
    if (dataDependentOutputs(node.op->name)) {
        boundSelectionOutputs(node.op->name, node.attrs, inputs, &outputs);
        return outputs;
    }
    // ONNX 1.12 gives Einsum's rank alone: its shape from the equation.
    if (node.op->name == "Einsum" && outputs.size() == 1 && !known[0]) {
        auto shape = einsumShape(node.attrs.getString("equation", "").value_or(""), inputs);
        if (!shape)
            return fail(shape.error().message);
        outputs[0].shape = shape.take();
        outputs[0].dtype = inputs.empty() ? node.outputs[0].dtype : inputs[0].dtype;
        known[0] = true;
    }
    // ONNX 1.12's STFT inference ignores onesided: the shape as the spec gives it.
    if (node.op->name == "STFT" && outputs.size() == 1 && inputs.size() >= 2 &&
        inputs[0].rank() == 3) {
        // The input at ONNX position `p` (an absent window leaves a gap).
        const auto at = [&](std::int64_t p) -> std::optional<std::size_t> {
            if (!positions || positions->empty())
                return p < static_cast<std::int64_t>(inputs.size())
                           ? std::optional<std::size_t>(static_cast<std::size_t>(p))
                           : std::nullopt;
            for (std::size_t k = 0; k < positions->size() && k < inputs.size(); ++k) {
                if ((*positions)[k] == p)
                    return k;
            }
            return std::nullopt;
        };
        const auto scalar = [&](std::int64_t p) -> std::optional<double> {
            const auto k = at(p);
            if (!k || *k >= values.size() || !values[*k])
                return std::nullopt;
            return decodeScalar(inputs[*k].dtype, values[*k]->bytes());
        };
        const auto step = scalar(1);
        std::optional<double> length = scalar(3);
        if (const auto window = at(2); !length && window && inputs[*window].rank() == 1)
            length = static_cast<double>(inputs[*window].shape[0]);
        const std::int64_t signal = inputs[0].shape[1];
        if (!step || *step <= 0 || !length || *length <= 0 || *length > static_cast<double>(signal))
            return fail("frame_step and the window or frame_length must be positive and fit the "
                        "signal of " +
                        std::to_string(signal));
        const bool onesided = node.attrs.getInt("onesided", 1).value_or(1) != 0;
        const auto size = static_cast<std::int64_t>(*length);
        outputs[0].shape = {
            inputs[0].shape[0],
            static_cast<std::int64_t>((static_cast<double>(signal) - *length) / *step) + 1,
            onesided ? size / 2 + 1 : size, 2};
        outputs[0].dtype = inputs[0].dtype;
        known[0] = true;
    }
    for (std::size_t k = 0; k < outputs.size(); ++k) {
        if (!known[k])
            return fail("ONNX shape inference cannot find the shape of output " +
                        std::to_string(k) + " from inputs of " +
                        (inputs.empty()
                             ? std::string("no type")
                             : inputs[0].toShortString() + (inputs.size() > 1 ? ", ..." : "")));
    }
    return outputs;
}

void installOnnxShapeFunctions() {
    static std::once_flag once;
    std::call_once(once, [] {
        setDialectShapeFunctions(OpDialect::Onnx, {onnxRunTimeTypes, onnxInputSetsShapes});
    });
}

} // namespace placer
