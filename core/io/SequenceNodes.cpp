// Lowering sequences (io/SequenceLowering.h): each operator that reads or makes a sequence, and the
// If and Loop bodies inlined or unrolled around them.
#include "io/SequenceLowering.h"

#include "io/OnnxProto.h"
#include "io/OnnxReader.h"
#include "ir/Scalar.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string_view>

namespace placer::sequences {

using onnx::GraphProto;
using onnx::NodeProto;

bool Lowering::unrollsForShapes(const NodeProto& node) const {
    const GraphProto* loopBody = body(node, "body");
    const bool asked = m_inputs.unrollLoops && node.output_size() > 0 &&
                       m_inputs.unrollLoops->count(node.output(0));
    if (!loopBody || node.input_size() < 2 || node.input(0).empty() ||
        !(asked || shapesFollowIteration(*loopBody)))
        return false;
    const auto trips = knownScalar(node.input(0));
    return trips && *trips > 0 && *trips <= kMaxUnrolled &&
           (node.input(1).empty() || knownScalar(node.input(1)));
}

bool Lowering::readsSequences(const NodeProto& node) const {
    for (int k = 0; k < node.input_size(); ++k)
        if (heldInput(node, k))
            return true;
    for (const auto& attr : node.attribute())
        if (attr.has_g() && usesSequences(attr.g()))
            return true;
    const std::vector<std::string> outer = onnxOuterNames(node);
    return std::any_of(outer.begin(), outer.end(),
                       [&](const std::string& name) { return m_held.count(name) > 0; });
}

bool Lowering::needsLowering(const NodeProto& node) const {
    if (!onnxStandardDomain(node))
        return false;
    return sequenceOps().count(node.op_type()) || readsSequences(node) ||
           (node.op_type() == "Loop" && unrollsForShapes(node));
}

Lowering::Failure Lowering::lowerNode(const NodeProto& node) {
    if (!needsLowering(node)) {
        emit(node);
        return std::nullopt;
    }
    const std::string& op = node.op_type();
    const std::string out = node.output_size() > 0 ? node.output(0) : std::string();
    if (op == "SequenceEmpty") {
        m_held[out] = Held{};
    } else if (op == "SequenceConstruct") {
        Held held;
        for (const std::string& input : node.input())
            held.elements.push_back(input);
        m_held[out] = std::move(held);
    } else if (op == "SequenceInsert") {
        const Held* sequence = nullptr;
        if (auto error = sequenceInput(node, 0, &sequence))
            return error;
        const auto n = static_cast<std::int64_t>(sequence->elements.size());
        std::int64_t at = n;
        if (node.input_size() > 2 && !node.input(2).empty())
            if (auto error = position(node, 2, n, true, &at))
                return error;
        Held held{false, true, true, sequence->elements};
        held.elements.insert(held.elements.begin() + at, node.input(1));
        m_held[out] = std::move(held);
    } else if (op == "SequenceErase") {
        const Held* sequence = nullptr;
        if (auto error = sequenceInput(node, 0, &sequence))
            return error;
        const auto n = static_cast<std::int64_t>(sequence->elements.size());
        if (n == 0)
            return describe(node) + ": the sequence is empty";
        std::int64_t at = n - 1;
        if (node.input_size() > 1 && !node.input(1).empty())
            if (auto error = position(node, 1, n, false, &at))
                return error;
        Held held{false, true, true, sequence->elements};
        held.elements.erase(held.elements.begin() + at);
        m_held[out] = std::move(held);
    } else if (op == "SequenceAt") {
        const Held* sequence = nullptr;
        if (auto error = sequenceInput(node, 0, &sequence))
            return error;
        std::int64_t at = 0;
        if (auto error =
                position(node, 1, static_cast<std::int64_t>(sequence->elements.size()), false, &at))
            return error;
        bind(out, sequence->elements[static_cast<std::size_t>(at)]);
    } else if (op == "SequenceLength") {
        const Held* sequence = nullptr;
        if (auto error = sequenceInput(node, 0, &sequence))
            return error;
        emitConstant(out, {static_cast<std::int64_t>(sequence->elements.size())}, {});
    } else if (op == "SplitToSequence") {
        return lowerSplit(node);
    } else if (op == "ConcatFromSequence") {
        return lowerConcat(node);
    } else if (op == "Optional") {
        Held held;
        held.optional = true;
        if (node.input_size() > 0 && !node.input(0).empty()) {
            if (const Held* inner = heldInput(node, 0)) {
                if (inner->optional)
                    return describe(node) + ": an optional of an optional is not supported";
                held.elements = inner->elements;
            } else {
                held.sequence = false;
                held.elements = {node.input(0)};
            }
        } else {
            held.present = false;
            const auto* type = attribute(node, "type");
            held.sequence = type && type->has_tp() && type->tp().has_sequence_type();
        }
        m_held[out] = std::move(held);
    } else if (op == "OptionalHasElement") {
        const Held* held = heldInput(node, 0);
        const bool has = node.input_size() > 0 && !node.input(0).empty() &&
                         (!held || !held->optional || held->present);
        emitConstant(out, {has ? 1 : 0}, {}, true);
    } else if (op == "OptionalGetElement") {
        const Held* held = heldInput(node, 0);
        if (!held) {
            bind(out, node.input(0));
        } else if (held->optional && !held->present) {
            return describe(node) + ": the optional '" + node.input(0) + "' holds no value";
        } else if (!held->sequence) {
            bind(out, held->elements.at(0));
        } else {
            Held sequence{false, true, true, held->elements};
            m_held[out] = std::move(sequence);
        }
    } else if (op == "Identity") {
        bind(out, node.input(0));
    } else if (op == "If") {
        return lowerIf(node);
    } else if (op == "Loop") {
        return lowerLoop(node);
    } else if (op == "SequenceMap") {
        return lowerMap(node);
    } else {
        for (int k = 0; k < node.input_size(); ++k) {
            if (heldInput(node, k))
                return describe(node) + " reads '" + node.input(k) + "', a sequence or " +
                       "optional, which only the sequence and optional operators may read";
        }
        return describe(node) + " has a body that uses sequences or optionals; only If, " +
               "Loop and SequenceMap bodies may";
    }
    for (const std::string& output : node.output())
        m_names.insert(output);
    return std::nullopt;
}

Lowering::Failure Lowering::inlineBody(const GraphProto& body,
                                       const std::vector<std::string>& bound,
                                       const std::string& prefix,
                                       std::vector<std::string>* outputs) {
    if (static_cast<int>(bound.size()) != body.input_size())
        return "the body '" + body.name() + "' has " + std::to_string(body.input_size()) +
               " inputs; it is given " + std::to_string(bound.size());
    std::map<std::string, std::string> renamed;
    for (int k = 0; k < body.input_size(); ++k)
        renamed[body.input(k).name()] = bound[static_cast<std::size_t>(k)];
    for (const onnx::TensorProto& tensor : body.initializer()) {
        onnx::TensorProto copy = tensor;
        copy.set_name(fresh(prefix + tensor.name()));
        renamed[tensor.name()] = copy.name();
        if (auto value = knownFromProto(copy))
            m_known[copy.name()] = *value;
        *m_model.mutable_graph()->add_initializer() = std::move(copy);
    }
    for (const NodeProto& original : body.node()) {
        NodeProto node = original;
        renameReads(&node, renamed);
        for (std::string& output : *node.mutable_output()) {
            if (output.empty())
                continue;
            const std::string name = fresh(prefix + output);
            renamed[output] = name;
            output = name;
        }
        node.set_name(prefix + (original.name().empty() ? original.op_type() : original.name()));
        if (auto error = lowerNode(node))
            return error;
    }
    outputs->clear();
    for (const auto& output : body.output()) {
        const auto it = renamed.find(output.name());
        outputs->push_back(it == renamed.end() ? output.name() : it->second);
    }
    return std::nullopt;
}

const GraphProto* Lowering::body(const NodeProto& node, const std::string& name) const {
    const auto* attr = attribute(node, name);
    return attr && attr->has_g() ? &attr->g() : nullptr;
}

std::string Lowering::prefixOf(const NodeProto& node) const {
    return (node.name().empty() ? (node.output_size() ? node.output(0) : node.op_type())
                                : node.name()) +
           "/";
}

Lowering::Failure Lowering::lowerIf(const NodeProto& node) {
    const auto condition = knownScalar(node.input(0));
    if (!condition)
        return notKnown(node, "the condition", node.input(0));
    const GraphProto* branch = body(node, *condition ? "then_branch" : "else_branch");
    if (!branch)
        return describe(node) + " has no branch";
    std::vector<std::string> outputs;
    if (auto error =
            inlineBody(*branch, {}, prefixOf(node) + (*condition ? "then/" : "else/"), &outputs))
        return describe(node) + ": " + *error;
    if (static_cast<int>(outputs.size()) != node.output_size())
        return describe(node) + ": its branch has " + std::to_string(outputs.size()) +
               " outputs; the node has " + std::to_string(node.output_size());
    for (int k = 0; k < node.output_size(); ++k)
        bind(node.output(k), outputs[static_cast<std::size_t>(k)]);
    return std::nullopt;
}

Lowering::Failure Lowering::lowerLoop(const NodeProto& node) {
    const GraphProto* loopBody = body(node, "body");
    if (!loopBody || node.input_size() < 2)
        return describe(node) + " has no body or too few inputs";
    const bool forSequences = readsSequences(node);
    std::optional<std::int64_t> trips;
    if (!node.input(0).empty()) {
        trips = knownScalar(node.input(0));
        if (!trips)
            return notKnown(node, "the trip count", node.input(0));
        // Refused before any iteration: each may copy the sequences it grows.
        if (*trips > kMaxUnrolled)
            return describe(node) + " is unrolled at load, and its trip count " +
                   std::to_string(*trips) + " is more than " + std::to_string(kMaxUnrolled) +
                   " iterations";
    }
    bool condition = true;
    if (!node.input(1).empty()) {
        const auto value = knownScalar(node.input(1));
        if (!value)
            return notKnown(node, "the condition", node.input(1));
        condition = *value != 0;
    }
    const int carried = node.input_size() - 2;
    const int scans = loopBody->output_size() - 1 - carried;
    if (scans < 0 || loopBody->input_size() != carried + 2)
        return describe(node) + ": its body's inputs and outputs do not fit its " +
               std::to_string(carried) + " carried values";
    std::vector<std::string> current(node.input().begin() + 2, node.input().end());
    std::vector<std::vector<std::string>> pieces(static_cast<std::size_t>(scans));
    const std::string prefix = prefixOf(node);
    std::int64_t iterations = 0;
    for (std::int64_t i = 0; condition && (!trips || i < *trips); ++i, ++iterations) {
        if (i >= kMaxUnrolled)
            return describe(node) + " is unrolled at load, and would run more than " +
                   std::to_string(kMaxUnrolled) + " iterations";
        if (m_out.size() > kMaxLoweredNodes)
            return describe(node) + " is unrolled at load, and would make more than " +
                   std::to_string(kMaxLoweredNodes) + " nodes";
        const std::string step = prefix + "iteration" + std::to_string(i) + "/";
        std::vector<std::string> bound;
        bound.push_back(emitConstant(fresh(step + "i"), {i}, {}));
        bound.push_back(emitConstant(fresh(step + "condition"), {1}, {}, true));
        bound.insert(bound.end(), current.begin(), current.end());
        std::vector<std::string> outputs;
        if (auto error = inlineBody(*loopBody, bound, step, &outputs))
            return describe(node) + ": " + *error;
        const auto next = knownScalar(outputs[0]);
        if (!next)
            return notKnown(node, "the condition its body computes,", outputs[0]);
        condition = *next != 0;
        for (int j = 0; j < carried; ++j)
            current[static_cast<std::size_t>(j)] = outputs[static_cast<std::size_t>(1 + j)];
        for (int s = 0; s < scans; ++s)
            pieces[static_cast<std::size_t>(s)].push_back(
                outputs[static_cast<std::size_t>(1 + carried + s)]);
    }
    if (!forSequences)
        m_warnings->push_back(describe(node) + " is unrolled at load for its " +
                              std::to_string(iterations) +
                              " iterations: its body's shapes change from one iteration to "
                              "the next, which a Loop run as one op cannot have");
    for (int j = 0; j < carried && j < node.output_size(); ++j)
        bind(node.output(j), current[static_cast<std::size_t>(j)]);
    for (int s = 0; s < scans && carried + s < node.output_size(); ++s) {
        const std::string& output = node.output(carried + s);
        if (output.empty())
            continue;
        const auto& parts = pieces[static_cast<std::size_t>(s)];
        if (parts.empty())
            return describe(node) + " runs no iteration, so its scan output '" + output +
                   "' has no element to take its shape from";
        if (std::any_of(parts.begin(), parts.end(),
                        [&](const std::string& part) { return m_held.count(part) > 0; }))
            return describe(node) + ": scan output '" + output + "' is a sequence";
        emitConcat(parts, 0, true, output);
    }
    return std::nullopt;
}

Lowering::Failure Lowering::lowerMap(const NodeProto& node) {
    const GraphProto* mapBody = body(node, "body");
    if (!mapBody)
        return describe(node) + " has no body";
    const Held* first = nullptr;
    if (auto error = sequenceInput(node, 0, &first))
        return error;
    const std::size_t n = first->elements.size();
    std::vector<std::vector<std::string>> results(static_cast<std::size_t>(node.output_size()));
    for (std::size_t i = 0; i < n; ++i) {
        if (m_out.size() > kMaxLoweredNodes)
            return describe(node) + " runs its body once per element, and would make more " +
                   "than " + std::to_string(kMaxLoweredNodes) + " nodes";
        std::vector<std::string> bound;
        for (int k = 0; k < node.input_size(); ++k) {
            const Held* held = heldInput(node, k);
            if (!held) {
                bound.push_back(node.input(k));
                continue;
            }
            if (!held->sequence || held->elements.size() != n)
                return describe(node) + ": input " + std::to_string(k) + " is not a " +
                       "sequence of " + std::to_string(n) + " elements, as input 0 is";
            bound.push_back(held->elements[i]);
        }
        std::vector<std::string> outputs;
        if (auto error = inlineBody(*mapBody, bound,
                                    prefixOf(node) + "element" + std::to_string(i) + "/", &outputs))
            return describe(node) + ": " + *error;
        if (outputs.size() != results.size())
            return describe(node) + ": its body has " + std::to_string(outputs.size()) +
                   " outputs; the node has " + std::to_string(results.size());
        for (std::size_t k = 0; k < outputs.size(); ++k)
            results[k].push_back(outputs[k]);
    }
    for (int k = 0; k < node.output_size(); ++k) {
        if (node.output(k).empty())
            continue;
        m_held[node.output(k)] = Held{false, true, true, results[static_cast<std::size_t>(k)]};
    }
    return std::nullopt;
}

std::map<std::string, std::vector<std::int64_t>>
Lowering::shapesOf(const std::set<std::string>& names) const {
    onnx::ModelProto model = m_model;
    GraphProto& graph = *model.mutable_graph();
    graph.clear_node();
    // What is known at load goes in as values (ONNX's inference does not fold a Slice's
    // bounds computed from an iteration number).
    for (const NodeProto& node : m_out) {
        const bool known = node.output_size() == 1 && node.op_type() != "Constant" &&
                           m_known.count(node.output(0));
        if (!known) {
            *graph.add_node() = node;
            continue;
        }
        const Known& value = m_known.at(node.output(0));
        onnx::TensorProto* tensor = graph.add_initializer();
        tensor->set_name(node.output(0));
        tensor->set_data_type(value.type);
        for (std::int64_t d : value.dims)
            tensor->add_dims(d);
        for (std::int64_t v : value.values) {
            if (value.type == onnx::TensorProto::INT64)
                tensor->add_int64_data(v);
            else
                tensor->add_int32_data(static_cast<std::int32_t>(v));
        }
    }
    graph.clear_value_info();
    graph.clear_output();
    for (auto& input : *graph.mutable_input()) {
        if (!input.type().has_tensor_type())
            continue;
        auto* shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
        if (m_inputs.inputShapes) {
            const auto given = m_inputs.inputShapes->find(input.name());
            if (given != m_inputs.inputShapes->end()) {
                shape->clear_dim();
                for (std::int64_t d : given->second)
                    shape->add_dim()->set_dim_value(d);
            }
        }
        for (auto& dim : *shape->mutable_dim())
            if (!dim.has_dim_value())
                dim.set_dim_value(1);
    }
    std::map<std::string, std::vector<std::int64_t>> shapes;
    try {
        onnx::ShapeInferenceOptions options(false, 0, true);
        onnx::shape_inference::InferShapes(model, onnxSchemas(), options);
    } catch (const std::exception&) {
        return shapes;
    }
    for (const auto& list : {&graph.value_info(), &graph.input()}) {
        for (const auto& info : *list) {
            if (!names.count(info.name()) || !info.type().has_tensor_type() ||
                !info.type().tensor_type().has_shape())
                continue;
            std::vector<std::int64_t> dims;
            for (const auto& dim : info.type().tensor_type().shape().dim())
                dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
            shapes[info.name()] = std::move(dims);
        }
    }
    return shapes;
}

Lowering::Failure Lowering::lowerSplit(const NodeProto& node) {
    const std::string& input = node.input(0);
    std::int64_t axis = intAttribute(node, "axis", 0);
    const bool keepDims = intAttribute(node, "keepdims", 1) != 0;
    std::vector<std::int64_t> sizes;
    bool squeeze = false;
    const bool splitGiven = node.input_size() > 1 && !node.input(1).empty();
    const Known* split = splitGiven ? known(node.input(1)) : nullptr;
    if (splitGiven && !split)
        return notKnown(node, "the split", node.input(1));
    if (split && !split->dims.empty()) {
        sizes = split->values;
    } else {
        const auto shapes = shapesOf({input});
        const auto found = shapes.find(input);
        const auto* shape = found == shapes.end() ? nullptr : &found->second;
        if (!shape || std::any_of(shape->begin(), shape->end(), [](auto d) { return d < 0; }))
            return describe(node) + ": the shape of '" + input + "' must be known at load";
        const auto rank = static_cast<std::int64_t>(shape->size());
        if (axis < -rank || axis >= rank)
            return describe(node) + ": axis " + std::to_string(axis) + " is outside rank " +
                   std::to_string(rank);
        if (axis < 0)
            axis += rank;
        const std::int64_t extent = (*shape)[static_cast<std::size_t>(axis)];
        const std::int64_t chunk = split ? split->values.at(0) : 1;
        if (chunk <= 0)
            return describe(node) + ": the split size must be positive";
        for (std::int64_t at = 0; at < extent; at += chunk)
            sizes.push_back(std::min(chunk, extent - at));
        squeeze = !split && !keepDims;
    }
    for (std::int64_t size : sizes) {
        if (size < 0)
            return describe(node) + ": a split size is negative";
    }
    NodeProto splitNode;
    splitNode.set_op_type("Split");
    splitNode.set_name(prefixOf(node) + "Split");
    splitNode.add_input(input);
    auto* axisAttr = splitNode.add_attribute();
    axisAttr->set_name("axis");
    axisAttr->set_type(onnx::AttributeProto::INT);
    axisAttr->set_i(axis);
    if (m_opset >= 13) {
        splitNode.add_input(addInitializer(prefixOf(node) + "sizes", sizes));
    } else {
        auto* attr = splitNode.add_attribute();
        attr->set_name("split");
        attr->set_type(onnx::AttributeProto::INTS);
        for (std::int64_t size : sizes)
            attr->add_ints(size);
    }
    Held held;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        const std::string part = fresh(node.output(0) + "_part" + std::to_string(k));
        splitNode.add_output(part);
        held.elements.push_back(part);
    }
    emit(std::move(splitNode));
    if (squeeze) {
        for (std::string& part : held.elements) {
            const std::string squeezed = fresh(part + "_squeezed");
            emitAxisOp("Squeeze", part, squeezed, axis);
            part = squeezed;
        }
    }
    m_held[node.output(0)] = std::move(held);
    return std::nullopt;
}

Lowering::Failure Lowering::lowerConcat(const NodeProto& node) {
    const Held* sequence = nullptr;
    if (auto error = sequenceInput(node, 0, &sequence))
        return error;
    if (sequence->elements.empty())
        return describe(node) + ": the sequence is empty, so the result has no shape";
    emitConcat(sequence->elements, intAttribute(node, "axis", 0),
               intAttribute(node, "new_axis", 0) != 0, node.output(0));
    return std::nullopt;
}

void Lowering::emitConcat(const std::vector<std::string>& parts, std::int64_t axis, bool newAxis,
                          const std::string& output) {
    NodeProto concat;
    concat.set_op_type("Concat");
    concat.set_name(output);
    auto* attr = concat.add_attribute();
    attr->set_name("axis");
    attr->set_type(onnx::AttributeProto::INT);
    attr->set_i(axis);
    for (const std::string& part : parts) {
        if (!newAxis) {
            concat.add_input(part);
            continue;
        }
        const std::string expanded = fresh(part + "_expanded");
        emitAxisOp("Unsqueeze", part, expanded, axis);
        concat.add_input(expanded);
    }
    concat.add_output(output);
    emit(std::move(concat));
}

} // namespace placer::sequences
