// The batch rules of the kernel families (ir/BatchRule.h).
#include "ir/BatchRule.h"

#include "ir/Axis.h"
#include "ir/OpSemantics.h"
#include "ir/Scalar.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace placer {

namespace batch {

/// The integers a constant node holds (any integer type), or std::nullopt.
std::optional<std::vector<std::int64_t>> constantInts(const Graph& graph, ValueRef value) {
    const Node& node = graph.node(value.node);
    if (!node.isConstant() || !node.data)
        return std::nullopt;
    const DType dtype = node.outputs[0].dtype;
    const auto size = static_cast<std::size_t>(dtypeSize(dtype));
    if (isFloatingPoint(dtype) || dtype == DType::Bool || node.data->size() % size != 0)
        return std::nullopt;
    const std::string_view bytes = node.data->bytes();
    std::vector<std::int64_t> values;
    for (std::size_t at = 0; at < bytes.size(); at += size) {
        const auto element = decodeScalar(dtype, bytes.substr(at, size));
        if (!element)
            return std::nullopt;
        values.push_back(static_cast<std::int64_t>(*element));
    }
    return values;
}

/// The value a chain of device copies moves (the value itself when it is no copy's): a plan's
/// inserted copies, applied to the graph, must not change what a region reads.
ValueRef throughCopies(const Graph& graph, ValueRef value) {
    for (std::size_t steps = 0; steps <= graph.size(); ++steps) {
        const Node& node = graph.node(value.node);
        if (!node.isDeviceCopy() || node.inputs.empty())
            return value;
        value = node.inputs[0];
    }
    return value;
}

/// Whether a value is a constant, or a copy of one.
bool isConstantValue(const Graph& graph, ValueRef value) {
    return graph.node(throughCopies(graph, value).node).isConstant();
}

/// Input `k` of the node when it is present (ONNX leaves optional inputs out at the end).
std::optional<ValueRef> inputAt(const Node& node, std::size_t k) {
    if (k >= node.ownInputs())
        return std::nullopt;
    return node.inputs[k];
}

/// An axis list from an attribute or, for newer ONNX opsets, a constant input.
std::optional<std::vector<std::int64_t>> axesOf(const Graph& graph, const Node& node,
                                                std::string_view attribute, std::size_t input) {
    if (node.attrs.has(attribute))
        return node.attrs.getInts(attribute, {});
    if (const auto value = inputAt(node, input))
        return constantInts(graph, *value);
    return std::vector<std::int64_t>{};
}

bool isOnnx(const Node& node) {
    return node.op->dialect == OpDialect::Onnx;
}

/// Where a node reads a shape whose first entry is the batch size, which each shard must read
/// as its own rows: an input index, or -1 (Relay writes it as an attribute: shapeAttribute).
int shapeInput(const Node& node) {
    const std::string& op = node.op->name;
    if (op == "Reshape" || op == "Expand")
        return 1;
    if (op == "Resize" && node.ownInputs() > 3)
        return 3;
    return -1;
}

const char* shapeAttribute(const Node& node) {
    return node.op->name == "reshape" ? "newshape" : nullptr;
}

/// Whether input `k` of `node` is data the op computes over row by row, rather than its
/// weights, statistics, or a shape: only data inputs may carry the batch from outside a region.
bool readsAsData(const Graph& graph, const Node& node, std::size_t k) {
    if (k >= node.ownInputs())
        return true; // a captured value of a body
    switch (node.op->kernel.family) {
    case KernelFamily::Binary:
    case KernelFamily::Unary:
    case KernelFamily::Where:
    case KernelFamily::Cast:
    case KernelFamily::Fill:
    case KernelFamily::Mean:
    case KernelFamily::Concat:
    case KernelFamily::Gather:
    case KernelFamily::GatherElements:
    case KernelFamily::GridSample:
        return true;
    case KernelFamily::Matmul:
    case KernelFamily::QuantizedMatmul:
        return k == 0 || (k == 1 && graph.type(node.inputs[1]).rank() >= 3);
    default:
        return k == 0;
    }
}

} // namespace batch

namespace {

using namespace batch;

std::int64_t product(const std::vector<std::int64_t>& dims, std::size_t from, std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to && i < dims.size(); ++i)
        p *= dims[i];
    return p;
}

/// Where a reshape from `in` to `out` puts the batch that `axis` of `in` carries: the output axis
/// whose extent holds it whole, with the same elements before it. std::nullopt when the batch is
/// spread over several output axes.
std::optional<BatchAxis> reshapedAxis(const std::vector<std::int64_t>& in, BatchAxis axis,
                                      const std::vector<std::int64_t>& out, std::int64_t batch) {
    // Row-major: the elements before each batch row, and the batch's row size.
    const std::int64_t before = product(in, 0, static_cast<std::size_t>(axis.axis)) * axis.outer;
    std::int64_t prefix = 1;
    for (std::size_t b = 0; b < out.size(); ++b) {
        if (prefix > before || out[b] <= 0)
            return std::nullopt;
        if (before % prefix == 0) {
            const std::int64_t outer = before / prefix;
            if (out[b] % (outer * batch) == 0)
                return BatchAxis{static_cast<std::int32_t>(b), outer, out[b] / (outer * batch)};
        }
        prefix *= out[b];
    }
    return std::nullopt;
}

/// What batchRule() knows of each kernel family; the results' extents are checked after.
struct FamilyRule {
    const Graph& graph;
    const Node& node;
    const std::vector<BatchAxis>& in;
    std::int64_t batch;
    BatchVerdict verdict;

    std::size_t inputs() const { return std::min(node.ownInputs(), in.size()); }
    bool batched(std::size_t k) const { return k < in.size() && in[k].batched(); }
    int rank(std::size_t k) const { return graph.type(node.inputs[k]).rank(); }
    const std::vector<std::int64_t>& shape(std::size_t k) const {
        return graph.type(node.inputs[k]).shape;
    }
    int axisAttr(std::int64_t fallback, int ofRank) const {
        return normalizeAxis(node.attrs.getInt("axis", fallback).value_or(fallback), ofRank);
    }

    BatchVerdict fail(std::string why) {
        verdict.why = std::move(why);
        return verdict;
    }
    /// Every output carries the batch as `axis` does.
    BatchVerdict all(BatchAxis axis) {
        verdict.outputs.assign(node.outputs.size(), axis);
        return verdict;
    }
    /// Only input 0 may carry the batch (the others are weights, statistics, a shape).
    std::optional<std::string> onlyFirst() const {
        for (std::size_t k = 1; k < inputs(); ++k) {
            if (batched(k))
                return "reads '" + graph.valueName(node.inputs[k]) +
                       "', which carries the batch, as a parameter (weights, a shape)";
        }
        if (!batched(0))
            return std::string("reads the batch only through a parameter (weights, a shape)");
        return std::nullopt;
    }
    /// onlyFirst(), and a target shape the op reads must be a constant: each shard's own is
    /// written in its place.
    std::optional<std::string> shapedData() const {
        if (auto why = onlyFirst())
            return why;
        if (const int k = shapeInput(node);
            k >= 0 && static_cast<std::size_t>(k) < inputs() &&
            !constantInts(graph, node.inputs[static_cast<std::size_t>(k)]))
            return std::string("reads its target shape from a computed value");
        return std::nullopt;
    }
    /// Inputs broadcast together: the batched ones must carry the batch on the same output axis
    /// the same way; the whole ones must not span that axis.
    BatchVerdict broadcast(std::size_t first, std::size_t last, int outRank) {
        std::optional<BatchAxis> at;
        for (std::size_t k = first; k < last && k < inputs(); ++k) {
            if (!batched(k))
                continue;
            BatchAxis aligned = in[k];
            aligned.axis += outRank - rank(k);
            if (at && !(*at == aligned))
                return fail("combines values that carry the batch on different axes");
            at = aligned;
        }
        if (!at)
            return fail("reads the batch only through a parameter");
        for (std::size_t k = first; k < last && k < inputs(); ++k) {
            const int position = at->axis - (outRank - rank(k));
            if (!batched(k) && position >= 0 && shape(k)[static_cast<std::size_t>(position)] != 1)
                return fail("reads '" + graph.valueName(node.inputs[k]) +
                            "' whole, yet it spans the batch axis (" +
                            std::to_string(shape(k)[static_cast<std::size_t>(position)]) +
                            " rows)");
        }
        return all(*at);
    }

    BatchVerdict matmul() {
        const std::string& op = node.op->name;
        const bool gemm = op == "Gemm";
        const bool dense = op == "nn.dense";
        const bool batchMatmul = op == "nn.batch_matmul";
        bool transA = false, transB = dense;
        if (gemm) {
            transA = node.attrs.getInt("transA", 0).value_or(0) != 0;
            transB = node.attrs.getInt("transB", 0).value_or(0) != 0;
        } else if (!isOnnx(node) && !dense) {
            transA = node.attrs.getBool("transpose_a", false).value_or(false);
            transB = node.attrs.getBool("transpose_b", batchMatmul).value_or(batchMatmul);
        }
        const std::size_t bIndex = op == "QLinearMatMul" ? 3 : 1;
        for (std::size_t k = 1; k < inputs(); ++k) {
            if (batched(k) && k != bIndex && !(gemm && k == 2))
                return fail("reads '" + graph.valueName(node.inputs[k]) +
                            "', which carries the batch, as a parameter");
        }
        const int ra = rank(0), rb = bIndex < inputs() ? rank(bIndex) : 0;
        const int out = node.outputs[0].rank();
        const bool a = batched(0), b = batched(bIndex);
        if (ra < 2 || rb < 1)
            return fail("multiplies vectors, contracting over the batch");
        const int rowsA = transA ? ra - 1 : ra - 2, contractA = transA ? ra - 2 : ra - 1;
        const int contractB = rb == 1 ? 0 : (transB ? rb - 1 : rb - 2);
        const int colsB = rb == 1 ? -1 : (transB ? rb - 2 : rb - 1);
        std::optional<BatchAxis> result;
        if (a) {
            const BatchAxis& axis = in[0];
            if (axis.axis == contractA)
                return fail("contracts over the batch axis of its first operand");
            if (axis.axis == rowsA) {
                if (b)
                    return fail("multiplies rows of the batch by a batched matrix");
                result = BatchAxis{rb == 1 ? out - 1 : out - 2, axis.outer, axis.inner};
            } else {
                result = BatchAxis{axis.axis + (out - ra), axis.outer, axis.inner};
            }
        }
        if (b) {
            const BatchAxis& axis = in[bIndex];
            if (axis.axis == contractB)
                return fail("contracts over the batch axis of its second operand");
            BatchAxis mine = axis.axis == colsB
                                 ? BatchAxis{out - 1, axis.outer, axis.inner}
                                 : BatchAxis{axis.axis + (out - rb), axis.outer, axis.inner};
            if (a && (axis.axis == colsB || !(mine == *result)))
                return fail("multiplies two values that carry the batch on different axes");
            result = mine;
        }
        if (!result)
            return fail("reads the batch only through a parameter");
        // The batch dimensions broadcast: an operand without the batch must not span them.
        for (std::size_t k : {std::size_t{0}, bIndex}) {
            if (k >= inputs() || batched(k))
                continue;
            const int position = result->axis - (out - rank(k));
            if (result->axis < out - 2 && position >= 0 &&
                shape(k)[static_cast<std::size_t>(position)] != 1)
                return fail("reads '" + graph.valueName(node.inputs[k]) +
                            "' whole, yet it spans the batch axis");
        }
        if (gemm && inputs() > 2) {
            // The bias broadcasts to the product: it carries the batch as the product does, or
            // does not span it.
            const int shift = out - rank(2);
            const bool fits =
                batched(2) ? BatchAxis{in[2].axis + shift, in[2].outer, in[2].inner} == *result
                           : result->axis - shift < 0 ||
                                 shape(2)[static_cast<std::size_t>(result->axis - shift)] == 1;
            if (!fits)
                return fail("adds '" + graph.valueName(node.inputs[2]) +
                            "', which does not carry the batch as the product does");
        }
        return all(*result);
    }

    BatchVerdict run() {
        const KernelFamily family = node.op->kernel.family;
        const int r = inputs() > 0 ? rank(0) : 0;
        const BatchAxis a = inputs() > 0 ? in[0] : BatchAxis{};
        switch (family) {
        case KernelFamily::Copy: {
            if (auto why = shapedData())
                return fail(*why);
            // Row-major: a reshape keeps the batch where the elements before it stay.
            const auto moved = reshapedAxis(shape(0), a, node.outputs[0].shape, batch);
            if (!moved)
                return fail("folds the batch axis into others");
            return all(*moved);
        }
        case KernelFamily::Cast:
        case KernelFamily::Unary:
        case KernelFamily::Fill:
        case KernelFamily::Binary:
        case KernelFamily::Where:
        case KernelFamily::Mean:
            return broadcast(0, inputs(), node.outputs[0].rank());
        case KernelFamily::Expand:
        case KernelFamily::Tile:
        case KernelFamily::Pad:
        case KernelFamily::Resize: {
            if (auto why = shapedData())
                return fail(*why);
            return all(BatchAxis{a.axis + (node.outputs[0].rank() - r), a.outer, a.inner});
        }
        case KernelFamily::Conv:
        case KernelFamily::ConvTranspose:
        case KernelFamily::QuantizedConv:
        case KernelFamily::Pool:
        case KernelFamily::Lrn:
        case KernelFamily::InstanceNorm:
        case KernelFamily::SpaceDepth:
        case KernelFamily::GridSample:
        case KernelFamily::BatchNorm: {
            if (family == KernelFamily::BatchNorm &&
                (node.attrs.getInt("training_mode", 0).value_or(0) != 0 ||
                 (isOnnx(node) && node.outputs.size() > 1)))
                return fail("is a BatchNormalization in training mode, whose statistics are "
                            "over the batch");
            if (family == KernelFamily::GridSample) {
                if (!batched(0) || !batched(1) || !(in[0] == in[1]) || a.axis != 0)
                    return fail("samples a grid that does not carry the batch as its input does");
            } else if (auto why = onlyFirst()) {
                return fail(*why);
            }
            if (a.axis != 0)
                return fail("works on images whose first axis is not the batch");
            all(a);
            // Relay's batch_norm also returns the moving mean and variance, which no row
            // changes: every shard has them whole.
            if (family == KernelFamily::BatchNorm)
                for (std::size_t k = 1; k < verdict.outputs.size(); ++k)
                    verdict.outputs[k] = BatchAxis{};
            return verdict;
        }
        case KernelFamily::LayerNorm: {
            if (auto why = onlyFirst())
                return fail(*why);
            if (a.axis >= axisAttr(-1, r))
                return fail("normalises over the batch axis");
            return all(a);
        }
        case KernelFamily::Softmax:
        case KernelFamily::Hardmax: {
            if (auto why = onlyFirst())
                return fail(*why);
            // Before opset 13, ONNX flattens every axis from `axis` on.
            const bool flattens = isOnnx(node) && graph.onnxOpset() < 13;
            const int axis = axisAttr(flattens ? 1 : -1, r);
            if (flattens ? a.axis >= axis : a.axis == axis)
                return fail(std::string(family == KernelFamily::Softmax ? "takes a softmax"
                                                                        : "takes a hardmax") +
                            " over the batch axis");
            return all(a);
        }
        case KernelFamily::Reduce: {
            if (auto why = onlyFirst())
                return fail(*why);
            const ReduceFn fn = node.op->kernel.reduce();
            std::vector<std::int64_t> axes;
            // ONNX keeps the reduced axes by default, Relay does not.
            const bool keep = isOnnx(node) ? node.attrs.getInt("keepdims", 1).value_or(1) != 0
                                           : node.attrs.getBool("keepdims", false).value_or(false);
            if (fn == ReduceFn::ArgMax || fn == ReduceFn::ArgMin) {
                axes = {node.attrs.getInt("axis", 0).value_or(0)};
            } else {
                const auto read = axesOf(graph, node, isOnnx(node) ? "axes" : "axis", 1);
                if (!read)
                    return fail("reduces over axes that are not constants");
                axes = *read;
                if (!isOnnx(node) && node.attrs.getBool("exclude", false).value_or(false)) {
                    std::vector<std::int64_t> complement;
                    for (int d = 0; d < r; ++d) {
                        if (std::none_of(axes.begin(), axes.end(),
                                         [&](auto x) { return normalizeAxis(x, r) == d; }))
                            complement.push_back(d);
                    }
                    axes = std::move(complement);
                }
                if (axes.empty() &&
                    !(isOnnx(node) &&
                      node.attrs.getInt("noop_with_empty_axes", 0).value_or(0) != 0)) {
                    for (int d = 0; d < r; ++d)
                        axes.push_back(d);
                }
            }
            int before = 0;
            for (std::int64_t x : axes) {
                const int d = normalizeAxis(x, r);
                if (d == a.axis)
                    return fail("reduces over the batch axis");
                before += d >= 0 && d < a.axis ? 1 : 0;
            }
            return all(BatchAxis{keep ? a.axis : a.axis - before, a.outer, a.inner});
        }
        case KernelFamily::Transpose: {
            if (auto why = onlyFirst())
                return fail(*why);
            auto perm = node.attrs.getInts(isOnnx(node) ? "perm" : "axes", {});
            if (!perm)
                return fail("transposes by an unreadable permutation");
            if (perm->empty()) {
                for (int d = r - 1; d >= 0; --d)
                    perm->push_back(d);
            }
            for (std::size_t j = 0; j < perm->size(); ++j) {
                if (normalizeAxis((*perm)[j], r) == a.axis)
                    return all(BatchAxis{static_cast<std::int32_t>(j), a.outer, a.inner});
            }
            return fail("transposes the batch axis away");
        }
        case KernelFamily::Concat: {
            const int axis = axisAttr(0, r);
            for (std::size_t k = 0; k < inputs(); ++k) {
                if (!batched(k))
                    return fail("concatenates '" + graph.valueName(node.inputs[k]) +
                                "', which does not carry the batch");
                if (!(in[k] == a))
                    return fail("concatenates values that carry the batch on different axes");
            }
            if (axis == a.axis)
                return fail("concatenates along the batch axis");
            return all(a);
        }
        case KernelFamily::Split: {
            if (auto why = onlyFirst())
                return fail(*why);
            if (axisAttr(0, r) == a.axis)
                return fail("splits along the batch axis");
            return all(a);
        }
        case KernelFamily::Slice: {
            if (auto why = onlyFirst())
                return fail(*why);
            // The batch's extent must come through whole (checked after), in order.
            std::optional<std::vector<std::int64_t>> axes, steps;
            if (isOnnx(node) && node.ownInputs() > 1) {
                const auto starts = constantInts(graph, node.inputs[1]);
                if (!starts)
                    return fail("slices with bounds that are not constants");
                axes = inputAt(node, 3) ? constantInts(graph, node.inputs[3])
                                        : std::optional<std::vector<std::int64_t>>();
                steps = inputAt(node, 4) ? constantInts(graph, node.inputs[4])
                                         : std::optional<std::vector<std::int64_t>>();
                if (!axes) {
                    if (inputAt(node, 3))
                        return fail("slices axes that are not constants");
                    axes = std::vector<std::int64_t>(starts->size());
                    std::iota(axes->begin(), axes->end(), 0);
                }
            } else {
                axes = node.attrs.getInts("axes", {});
                steps = node.attrs.getInts(isOnnx(node) ? "steps" : "strides", {});
                if (axes && axes->empty()) {
                    axes->resize(node.attrs.getInts(isOnnx(node) ? "starts" : "begin", {})
                                     .value_or(std::vector<std::int64_t>{})
                                     .size());
                    std::iota(axes->begin(), axes->end(), 0);
                }
            }
            for (std::size_t k = 0; axes && k < axes->size(); ++k) {
                if (normalizeAxis((*axes)[k], r) == a.axis && steps && k < steps->size() &&
                    (*steps)[k] != 1)
                    return fail("steps through the batch axis");
            }
            return all(a);
        }
        case KernelFamily::Gather: {
            const bool data = batched(0), indices = batched(1);
            if (!isOnnx(node) && node.attrs.getInt("axis", -1000).value_or(0) == -1000)
                return fail("gathers from the flattened value, batch and all");
            const int axis = axisAttr(0, r);
            if (data && indices)
                return fail("gathers from a batched value with batched indices");
            if (indices) {
                const BatchAxis& i = in[1];
                return all(BatchAxis{axis + i.axis, i.outer, i.inner});
            }
            if (axis == a.axis)
                return fail("gathers along the batch axis");
            return all(BatchAxis{a.axis < axis ? a.axis : a.axis + rank(1) - 1, a.outer, a.inner});
        }
        case KernelFamily::GatherElements:
        case KernelFamily::CumSum:
        case KernelFamily::TopK: {
            int axis = axisAttr(family == KernelFamily::TopK ? -1 : 0, r);
            if (family == KernelFamily::CumSum) {
                const auto values = inputs() > 1 ? constantInts(graph, node.inputs[1])
                                                 : std::optional<std::vector<std::int64_t>>();
                axis = values && values->size() == 1 ? normalizeAxis(values->front(), r) : a.axis;
            }
            if (family == KernelFamily::GatherElements) {
                if (!batched(0) || !batched(1) || !(in[0] == in[1]))
                    return fail("gathers elements with indices that do not carry the batch as "
                                "the data does");
            } else if (auto why = onlyFirst()) {
                return fail(*why);
            }
            if (axis == a.axis)
                return fail("works along the batch axis");
            return all(a);
        }
        case KernelFamily::Matmul:
        case KernelFamily::QuantizedMatmul:
            return matmul();
        case KernelFamily::Trilu:
        case KernelFamily::Det:
            if (auto why = onlyFirst())
                return fail(*why);
            if (a.axis >= r - 2)
                return fail("works on the matrix the batch is part of");
            return all(a);
        case KernelFamily::Quantize:
            if (auto why = onlyFirst())
                return fail(*why);
            if (inputs() > 1 && rank(1) == 1 && shape(1)[0] > 1 && axisAttr(1, r) == a.axis)
                return fail("quantizes per element of the batch axis");
            return all(a);
        default:
            return fail("(" + node.op->name +
                        ") is not known to treat the rows of the batch independently");
        }
    }
};

} // namespace

BatchVerdict batchRule(const Graph& graph, const Node& node, const std::vector<BatchAxis>& inputs,
                       std::int64_t batch) {
    if (!node.subgraphs.empty())
        return {"is control flow (" + node.op->name + "), whose bodies are not split", {}};
    if (node.op->kernel.family == KernelFamily::None)
        return {std::string("has no kernel"), {}};
    BatchVerdict verdict = FamilyRule{graph, node, inputs, batch, {}}.run();
    if (verdict.why)
        return verdict;
    // Each result that carries the batch must hold it whole on its axis.
    for (std::size_t k = 0; k < node.outputs.size() && k < verdict.outputs.size(); ++k) {
        const BatchAxis& axis = verdict.outputs[k];
        const TensorType& type = node.outputs[k];
        if (!axis.batched())
            continue;
        if (axis.axis >= type.rank() ||
            type.shape[static_cast<std::size_t>(axis.axis)] != axis.outer * batch * axis.inner) {
            std::string shape;
            for (std::int64_t d : type.shape)
                shape += (shape.empty() ? "" : "x") + std::to_string(d);
            return {"gives a result (" + (shape.empty() ? std::string("a scalar") : shape) +
                        ") that does not hold the batch of " + std::to_string(batch) +
                        " whole on an axis: it folds or moves the batch axis",
                    {}};
        }
    }
    return verdict;
}

} // namespace placer
