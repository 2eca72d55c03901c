// ONNX Runtime's attention operators for language models, planned as IndexingPlan.cpp plans the
// rest: GroupQueryAttention (its cache written, then each query row attended) and
// RotaryEmbedding (kernels/LayerFunctors.h). Their semantics are ONNX Runtime's CPU kernels'
// (docs/user/formats.md says what runs).
#include "kernels/IndexingSteps.h"

#include "kernels/OpGeometry.h"

#include <cmath>

namespace placer::indexing {

namespace {

std::string dimsText(const Dims& dims) {
    std::string text = "[";
    for (std::size_t d = 0; d < dims.size(); ++d)
        text += (d ? ", " : "") + std::to_string(dims[d]);
    return text + "]";
}

/// The rotation of heads of `head` elements by the caches at ONNX inputs `cosAt` and `sinAt`
/// ([positions, rotary dim / 2]); `rotaryDim` 0 takes the caches' width. An error says why the
/// caches do not fit.
std::optional<std::string> readRotation(const KernelSpec& spec, int cosAt, int sinAt,
                                        std::int64_t head, std::int64_t rotaryDim,
                                        Rotation* rotation) {
    rotation->cos = geometry::inputAt(spec, cosAt);
    rotation->sin = geometry::inputAt(spec, sinAt);
    if (rotation->cos < 0 || rotation->sin < 0)
        return std::string("rotary positions need cos_cache and sin_cache");
    const Dims& cos = shapeOf(spec, static_cast<std::size_t>(rotation->cos));
    const Dims& sin = shapeOf(spec, static_cast<std::size_t>(rotation->sin));
    if (cos.size() != 2 || cos != sin)
        return "cos_cache " + dimsText(cos) + " and sin_cache " + dimsText(sin) +
               " must be the same [positions, rotary dim / 2]";
    rotation->positions = cos[0];
    rotation->rotaryDim = rotaryDim > 0 ? rotaryDim : 2 * cos[1];
    if (rotation->rotaryDim != 2 * cos[1] || rotation->rotaryDim > head)
        return "the caches rotate " + std::to_string(2 * cos[1]) + " elements of heads of " +
               std::to_string(head) +
               (rotaryDim > 0 ? " (rotary_embedding_dim " + std::to_string(rotaryDim) + ")" : "");
    rotation->trig = elemOf(spec.inputs[static_cast<std::size_t>(rotation->cos)].dtype);
    return std::nullopt;
}

} // namespace

Plan groupQueryAttention(const KernelSpec& spec) {
    GroupQueryAttention op;
    const int query = geometry::inputAt(spec, 0);
    op.key = geometry::inputAt(spec, 1);
    op.value = geometry::inputAt(spec, 2);
    op.pastKey = geometry::inputAt(spec, 3);
    op.pastValue = geometry::inputAt(spec, 4);
    op.seqlens = geometry::inputAt(spec, 5);
    op.total = geometry::inputAt(spec, 6);
    if (query != 0 || op.seqlens < 0 || op.total < 0)
        return planError(spec, "needs the query, seqlens_k and total_sequence_length");
    static const char* const unsupported[] = {"position_ids", "attention_bias", "head_sink"};
    for (int position = 9; position < 12; ++position) {
        if (geometry::inputAt(spec, position) >= 0)
            return planError(spec, std::string("its ") + unsupported[position - 9] +
                                       " input is not supported");
    }
    if (intAttr(spec, "qk_output", 0) != 0)
        return planError(spec, "qk_output is not supported");
    op.heads = intAttr(spec, "num_heads", 0);
    op.kvHeads = intAttr(spec, "kv_num_heads", 0);
    if (op.heads <= 0 || op.kvHeads <= 0 || op.heads % op.kvHeads != 0)
        return planError(spec, "num_heads " + std::to_string(op.heads) +
                                   " must be a positive multiple of kv_num_heads " +
                                   std::to_string(op.kvHeads));
    const Dims& q = shapeOf(spec, 0);
    if (q.size() != 3)
        return planError(spec, "the query must be [batch, sequence, hidden], not " + dimsText(q));
    op.packed = op.key < 0;
    if (op.packed != (op.value < 0))
        return planError(spec, "the key and the value come together, or both packed in the query");
    const std::int64_t width = op.packed ? op.heads + 2 * op.kvHeads : op.heads;
    if (q[2] % width != 0)
        return planError(spec, "the query's " + std::to_string(q[2]) + " values are not " +
                                   std::to_string(width) + " heads");
    op.batch = q[0];
    op.seq = q[1];
    op.head = q[2] / width;
    const Dims kv = {op.batch, op.seq, op.kvHeads * op.head};
    if (!op.packed) {
        for (const int input : {op.key, op.value}) {
            if (shapeOf(spec, static_cast<std::size_t>(input)) != kv)
                return planError(spec,
                                 "the key and the value must be " + dimsText(kv) + ", not " +
                                     dimsText(shapeOf(spec, static_cast<std::size_t>(input))));
        }
    }
    op.hasPast = op.pastKey >= 0 && op.pastValue >= 0;
    if ((op.pastKey >= 0) != (op.pastValue >= 0))
        return planError(spec, "past_key and past_value come together");
    if (op.hasPast) {
        const Dims& past = shapeOf(spec, static_cast<std::size_t>(op.pastKey));
        if (past.size() != 4 || past[0] != op.batch || past[1] != op.kvHeads ||
            past[3] != op.head || shapeOf(spec, static_cast<std::size_t>(op.pastValue)) != past)
            return planError(spec, "the past must be [" + std::to_string(op.batch) + ", " +
                                       std::to_string(op.kvHeads) + ", length, " +
                                       std::to_string(op.head) + "], not " + dimsText(past));
        op.pastLength = past[2];
    }
    if (spec.outputs.size() < 3)
        return planError(spec, "needs the output, present_key and present_value");
    const Dims& present = spec.outputs[1].shape;
    if (present.size() != 4 || present[0] != op.batch || present[1] != op.kvHeads ||
        present[3] != op.head || spec.outputs[2].shape != present)
        return planError(spec, "the present cache must be [" + std::to_string(op.batch) + ", " +
                                   std::to_string(op.kvHeads) + ", length, " +
                                   std::to_string(op.head) + "], not " + dimsText(present));
    op.presentLength = present[2];
    if (op.presentLength < op.pastLength)
        return planError(spec, "the present cache " + dimsText(present) +
                                   " is shorter than the past's " + std::to_string(op.pastLength));
    for (const int input : {op.seqlens, op.total}) {
        if (spec.inputs[static_cast<std::size_t>(input)].dtype != DType::Int32)
            return planError(spec, "seqlens_k and total_sequence_length must be int32");
    }
    if (spec.inputs[static_cast<std::size_t>(op.seqlens)].elementCount() != op.batch ||
        spec.inputs[static_cast<std::size_t>(op.total)].elementCount() != 1)
        return planError(spec, "seqlens_k must have one length per batch and "
                               "total_sequence_length one value");
    op.elem = elemOf(spec.inputs[0].dtype);
    op.lengthElem = Elem::I32;
    op.rotary = intAttr(spec, "do_rotary", 0) != 0;
    if (op.rotary) {
        op.rotation.interleaved = intAttr(spec, "rotary_interleaved", 0) != 0;
        if (auto problem = readRotation(spec, 7, 8, op.head, 0, &op.rotation))
            return planError(spec, *problem);
    }
    const double scale = spec.node->attrs.getFloat("scale", 0).value_or(0);
    op.scale = scale != 0 ? scale : 1.0 / std::sqrt(static_cast<double>(op.head));
    op.softcap = spec.node->attrs.getFloat("softcap", 0).value_or(0);
    op.smooth = intAttr(spec, "smooth_softmax", 0) != 0;
    op.window = intAttr(spec, "local_window_size", -1);
    GroupQueryAttention attend = op;
    attend.stage = 1;
    std::vector<IndexingStep> steps;
    if (op.batch * op.kvHeads * op.presentLength > 0)
        steps.push_back(IndexingStep{op, op.batch * op.kvHeads * op.presentLength, true});
    if (op.batch * op.heads * op.seq > 0)
        steps.push_back(IndexingStep{attend, op.batch * op.heads * op.seq, true});
    return steps;
}

Plan rotaryEmbedding(const KernelSpec& spec) {
    if (spec.inputs.size() < 4)
        return planError(spec, "needs the input, position_ids, cos_cache and sin_cache");
    if (intAttr(spec, "is_packed_batching", 0) != 0)
        return planError(spec, "packed batching is not supported");
    RotaryEmbedding op;
    const Dims& in = shapeOf(spec, 0);
    const Dims& cos = shapeOf(spec, 2);
    if (cos.size() != 2)
        return planError(spec,
                         "cos_cache must be [positions, rotary dim / 2], not " + dimsText(cos));
    const std::int64_t rotaryDim = intAttr(spec, "rotary_embedding_dim", 0);
    std::int64_t heads = intAttr(spec, "num_heads", 0);
    if (in.size() == 4) {
        op.headsFirst = true;
        op.heads = in[1];
        op.seq = in[2];
        op.head = in[3];
    } else if (in.size() == 3) {
        op.seq = in[1];
        if (heads <= 0) {
            const std::int64_t head = rotaryDim > 0 ? rotaryDim : 2 * cos[1];
            heads = head > 0 && in[2] % head == 0 ? in[2] / head : 0;
        }
        if (heads <= 0 || in[2] % heads != 0)
            return planError(spec, "the input's " + std::to_string(in[2]) +
                                       " values do not split into heads (num_heads " +
                                       std::to_string(heads) + ")");
        op.heads = heads;
        op.head = in[2] / heads;
    } else {
        return planError(spec, "the input must be [batch, sequence, hidden] or [batch, heads, "
                               "sequence, head], not " +
                                   dimsText(in));
    }
    op.rotation.interleaved = intAttr(spec, "interleaved", 0) != 0;
    if (auto problem = readRotation(spec, 2, 3, op.head, rotaryDim, &op.rotation))
        return planError(spec, *problem);
    const TensorType& positions = spec.inputs[1];
    op.positionElem = elemOf(positions.dtype);
    const std::int64_t batch = in[0];
    op.scalarOffset =
        positions.elementCount() == 1 && !(batch == 1 && op.seq == 1 && positions.rank() == 2);
    if (!op.scalarOffset && positions.shape != Dims{batch, op.seq})
        return planError(spec, "position_ids must be [" + std::to_string(batch) + ", " +
                                   std::to_string(op.seq) + "] or one offset, not " +
                                   dimsText(positions.shape));
    op.elem = elemOf(spec.inputs[0].dtype);
    const std::int64_t count = spec.inputs[0].elementCount();
    if (count == 0)
        return std::vector<IndexingStep>{};
    return std::vector{elements(op, count)};
}

} // namespace placer::indexing
