// ONNX Runtime's com.microsoft operators that placer runs, registered with ONNX's schema registry
// (io/OnnxProto.h onnxSchemas): ONNX's checker and shape inference then type them, and every
// node after them, as they do standard operators. Their semantics are ONNX Runtime's
// (docs/ContribOperators.md); the type and shape rules here are written from them.
#include "io/OnnxProto.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <cstring>
#include <mutex>

namespace placer {

namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;

/// MatMulNBits: Y = A x dequantize(B)^T (+ bias), B's rows blocks of `bits`-bit codes along K,
/// each block with a scale and a zero point.
OpSchema matMulNBits() {
    OpSchema schema;
    schema.SetName("MatMulNBits")
        .SetDomain(kContribDomain)
        .SinceVersion(1)
        .SetDoc("A times B dequantized block by block along K: ONNX Runtime's contrib operator.")
        .Attr("K", "the inner dimension", AttributeProto::INT)
        .Attr("N", "the output's last dimension", AttributeProto::INT)
        .Attr("bits", "bits of a code (2, 4 or 8)", AttributeProto::INT, static_cast<int64_t>(4))
        .Attr("block_size", "codes per block: a power of 2, at least 16", AttributeProto::INT)
        .Attr("accuracy_level", "the least accuracy of A's computation (0: any)",
              AttributeProto::INT, static_cast<int64_t>(0))
        .Input(0, "A", "the float input, [..., K]", "T1")
        .Input(1, "B", "codes, [N, blocks, block_size * bits / 8]", "T2")
        .Input(2, "scales", "per block, [N * blocks]", "T1")
        .Input(3, "zero_points", "per block, packed like B or of T1", "T3", OpSchema::Optional)
        .Input(4, "g_idx", "the block of each row of K (deprecated)", "T4", OpSchema::Optional)
        .Input(5, "bias", "[N]", "T1", OpSchema::Optional)
        .Output(0, "Y", "[..., N]", "T1")
        .TypeConstraint("T1", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"},
                        "the float types")
        .TypeConstraint("T2", {"tensor(uint8)", "tensor(int32)"}, "packed codes")
        .TypeConstraint("T3",
                        {"tensor(uint8)", "tensor(int32)", "tensor(float)", "tensor(float16)",
                         "tensor(bfloat16)"},
                        "zero points")
        .TypeConstraint("T4", {"tensor(int32)"}, "block indices")
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
            // B and the scales must hold N rows of K's blocks: said at load, naming the node.
            const auto* k = ctx.getAttribute("K");
            const auto* block = ctx.getAttribute("block_size");
            const auto* count = ctx.getAttribute("N");
            const auto* bitsAttr = ctx.getAttribute("bits");
            if (k && block && count && block->i() > 0) {
                const int64_t blocks = (k->i() + block->i() - 1) / block->i();
                const int64_t bits = bitsAttr ? bitsAttr->i() : 4;
                const auto elements = [&](size_t input) -> int64_t {
                    if (!onnx::hasInputShape(ctx, input))
                        return -1;
                    int64_t product = 1;
                    for (const auto& dim : onnx::getInputShape(ctx, input).dim()) {
                        if (!dim.has_dim_value())
                            return -1;
                        product *= dim.dim_value();
                    }
                    return product;
                };
                const int64_t codes = elements(1), scales = elements(2);
                if (codes >= 0 && codes != count->i() * blocks * (block->i() * bits / 8))
                    fail_shape_inference("MatMulNBits: B holds ", codes, " bytes, not N ",
                                         count->i(), " x ", blocks, " blocks of ", block->i(), " ",
                                         bits, "-bit codes along K ", k->i());
                if (scales >= 0 && scales != count->i() * blocks)
                    fail_shape_inference("MatMulNBits: its ", scales, " scales do not fit B's ",
                                         count->i() * blocks, " blocks (N ", count->i(), " x ",
                                         blocks, " blocks of ", block->i(), " along K ", k->i(),
                                         ")");
            }
            if (!onnx::hasInputShape(ctx, 0))
                return;
            const auto& a = onnx::getInputShape(ctx, 0);
            if (a.dim_size() < 1)
                fail_shape_inference("MatMulNBits: A must have a rank");
            const auto* n = ctx.getAttribute("N");
            if (!n)
                fail_shape_inference("MatMulNBits: attribute N is required");
            onnx::TensorShapeProto out;
            for (int d = 0; d + 1 < a.dim_size(); ++d)
                *out.add_dim() = a.dim(d);
            out.add_dim()->set_dim_value(n->i());
            onnx::updateOutputShape(ctx, 0, out);
        });
    return schema;
}

/// Output `output` as input 0: its element type and, when known, its shape.
void likeInput(InferenceContext& ctx, size_t output) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, output);
    if (onnx::hasInputShape(ctx, 0))
        onnx::propagateShapeFromInputToOutput(ctx, 0, output);
}

/// The shape of a normalisation's per-row outputs: the input's, 1 from `axis` on.
void perRowOutput(InferenceContext& ctx, size_t output, int64_t axis) {
    if (ctx.getNumOutputs() <= output || !onnx::hasInputShape(ctx, 0))
        return;
    ctx.getOutputType(output)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    const auto& in = onnx::getInputShape(ctx, 0);
    const int64_t rank = in.dim_size();
    if (axis < 0)
        axis += rank;
    onnx::TensorShapeProto out;
    for (int64_t d = 0; d < rank; ++d) {
        if (d < axis)
            *out.add_dim() = in.dim(static_cast<int>(d));
        else
            out.add_dim()->set_dim_value(1);
    }
    onnx::updateOutputShape(ctx, output, out);
}

/// SimplifiedLayerNormalization (ONNX Runtime registers it in ONNX's domain): RMSNorm over the
/// dimensions from `axis` on, times `scale`.
OpSchema simplifiedLayerNormalization() {
    OpSchema schema;
    schema.SetName("SimplifiedLayerNormalization")
        .SetDomain("")
        .SinceVersion(1)
        .SetDoc("x / sqrt(mean(x^2) + epsilon) * scale: ONNX Runtime's RMSNorm.")
        .Attr("axis", "the first normalised dimension", AttributeProto::INT,
              static_cast<int64_t>(-1))
        .Attr("epsilon", "added to the mean square", AttributeProto::FLOAT, 1e-5f)
        .Attr("stash_type", "the type the statistics are computed in", AttributeProto::INT,
              static_cast<int64_t>(1))
        .Input(0, "X", "the input", "T")
        .Input(1, "scale", "the normalised dimensions' scale", "V")
        .Output(0, "Y", "the output", "V")
        .Output(1, "inv_std_var", "1 / sqrt(mean(x^2) + epsilon) per row", "U", OpSchema::Optional)
        .TypeConstraint("T",
                        {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)"},
                        "the float types")
        .TypeConstraint("U", {"tensor(float)"}, "the statistics")
        .TypeConstraint("V",
                        {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)"},
                        "the float types")
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            likeInput(ctx, 0);
            const auto* axis = ctx.getAttribute("axis");
            perRowOutput(ctx, 1, axis ? axis->i() : -1);
        });
    return schema;
}

/// SkipSimplifiedLayerNormalization: RMSNorm of input + skip (+ bias) over the last dimension.
OpSchema skipSimplifiedLayerNormalization() {
    OpSchema schema;
    schema.SetName("SkipSimplifiedLayerNormalization")
        .SetDomain(kContribDomain)
        .SinceVersion(1)
        .SetDoc("RMSNorm of input + skip (+ bias): ONNX Runtime's contrib operator.")
        .Attr("epsilon", "added to the mean square", AttributeProto::FLOAT, 1e-5f)
        .Input(0, "input", "[..., hidden]", "T")
        .Input(1, "skip", "the input's shape, or broadcast over its leading rows", "T")
        .Input(2, "gamma", "[hidden]", "T")
        .Input(3, "bias", "[hidden]", "T", OpSchema::Optional)
        .Output(0, "output", "the input's shape", "T")
        .Output(1, "mean", "0 per row (nothing is subtracted)", "U", OpSchema::Optional)
        .Output(2, "inv_std_var", "1 / sqrt(mean(s^2) + epsilon) per row", "U", OpSchema::Optional)
        .Output(3, "input_skip_bias_sum", "input + skip (+ bias)", "T", OpSchema::Optional)
        .TypeConstraint("T",
                        {"tensor(float)", "tensor(float16)", "tensor(bfloat16)", "tensor(double)"},
                        "the float types")
        .TypeConstraint("U", {"tensor(float)"}, "the statistics")
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            likeInput(ctx, 0);
            perRowOutput(ctx, 1, -1);
            perRowOutput(ctx, 2, -1);
            if (ctx.getNumOutputs() > 3)
                likeInput(ctx, 3);
        });
    return schema;
}

/// Whether optional input `k` is given (an empty name is not).
bool given(InferenceContext& ctx, size_t k) {
    return k < ctx.getNumInputs() && ctx.getInputType(k) != nullptr;
}

/// A dimension's value, or -1 when it has none.
int64_t dimValue(const onnx::TensorShapeProto& shape, int d) {
    return d < shape.dim_size() && shape.dim(d).has_dim_value() ? shape.dim(d).dim_value() : -1;
}

/// GroupQueryAttention: causal attention of `num_heads` query heads over `kv_num_heads` key and
/// value heads, the cache passed in as past and out as present ([B, kv heads, length, H]), rotary
/// positions applied inside where asked.
OpSchema groupQueryAttention() {
    OpSchema schema;
    schema.SetName("GroupQueryAttention")
        .SetDomain(kContribDomain)
        .SinceVersion(1)
        .SetDoc("Grouped-query causal attention with a key/value cache: ONNX Runtime's contrib "
                "operator.")
        .Attr("num_heads", "query heads", AttributeProto::INT)
        .Attr("kv_num_heads", "key and value heads", AttributeProto::INT)
        .Attr("scale", "the scores' scale (0: 1 / sqrt(head size))", AttributeProto::FLOAT, 0.0f)
        .Attr("softcap", "scores capped as softcap * tanh(score / softcap) (0: none)",
              AttributeProto::FLOAT, 0.0f)
        .Attr("local_window_size", "keys a query sees before its own (-1: all)",
              AttributeProto::INT, static_cast<int64_t>(-1))
        .Attr("do_rotary", "rotate the query and key at their positions", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Attr("rotary_interleaved", "rotate interleaved pairs, not halves", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Attr("smooth_softmax", "an extra zero logit in the softmax", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Attr("qk_output", "which scores to output (0: none)", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Input(0, "query", "[B, S, heads * H], or query, key and value packed", "T")
        .Input(1, "key", "[B, S, kv heads * H]", "T", OpSchema::Optional)
        .Input(2, "value", "[B, S, kv heads * H]", "T", OpSchema::Optional)
        .Input(3, "past_key", "[B, kv heads, past length, H]", "T", OpSchema::Optional)
        .Input(4, "past_value", "[B, kv heads, past length, H]", "T", OpSchema::Optional)
        .Input(5, "seqlens_k", "per batch, its total length - 1", "M")
        .Input(6, "total_sequence_length", "the longest total length", "M")
        .Input(7, "cos_cache", "[positions, rotary dim / 2]", "T", OpSchema::Optional)
        .Input(8, "sin_cache", "[positions, rotary dim / 2]", "T", OpSchema::Optional)
        .Input(9, "position_ids", "per token", "tensor(int64)", OpSchema::Optional)
        .Input(10, "attention_bias", "added to the scores", "T", OpSchema::Optional)
        .Input(11, "head_sink", "per head", "T", OpSchema::Optional)
        .Output(0, "output", "[B, S, heads * H]", "T")
        .Output(1, "present_key", "[B, kv heads, present length, H]", "T")
        .Output(2, "present_value", "[B, kv heads, present length, H]", "T")
        .Output(3, "output_qk", "the scores", "T", OpSchema::Optional)
        .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"},
                        "the float types")
        .TypeConstraint("M", {"tensor(int32)"}, "lengths")
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
            for (size_t k = 0; k < 3; ++k)
                onnx::propagateElemTypeFromInputToOutput(ctx, 0, k);
            const auto* headsAttr = ctx.getAttribute("num_heads");
            const auto* kvAttr = ctx.getAttribute("kv_num_heads");
            if (!headsAttr || !kvAttr || headsAttr->i() <= 0 || kvAttr->i() <= 0)
                fail_shape_inference("GroupQueryAttention: num_heads and kv_num_heads must be "
                                     "positive");
            const int64_t heads = headsAttr->i(), kvHeads = kvAttr->i();
            if (heads % kvHeads != 0)
                fail_shape_inference("GroupQueryAttention: num_heads ", heads,
                                     " is not a multiple of kv_num_heads ", kvHeads);
            if (!onnx::hasInputShape(ctx, 0))
                return;
            const auto& query = onnx::getInputShape(ctx, 0);
            if (query.dim_size() != 3)
                fail_shape_inference("GroupQueryAttention: the query must be [batch, sequence, "
                                     "hidden], not of rank ",
                                     query.dim_size());
            const bool packed = !given(ctx, 1);
            const int64_t width = packed ? heads + 2 * kvHeads : heads;
            const int64_t hidden = dimValue(query, 2);
            int64_t head = -1;
            if (hidden >= 0) {
                if (hidden % width != 0)
                    fail_shape_inference("GroupQueryAttention: the query's ", hidden,
                                         " values are not ", width, " heads");
                head = hidden / width;
            }
            onnx::TensorShapeProto out;
            *out.add_dim() = query.dim(0);
            *out.add_dim() = query.dim(1);
            if (head >= 0)
                out.add_dim()->set_dim_value(heads * head);
            else
                out.add_dim();
            onnx::updateOutputShape(ctx, 0, out);
            // The present cache.
            if (given(ctx, 3) && onnx::hasInputShape(ctx, 3) &&
                onnx::getInputShape(ctx, 3).dim_size() != 4)
                fail_shape_inference("GroupQueryAttention: past_key must be [batch, kv heads, "
                                     "length, head], not of rank ",
                                     onnx::getInputShape(ctx, 3).dim_size());
            int64_t total = -1;
            if (const auto* data = ctx.getInputData(6)) {
                if (data->int32_data_size() == 1)
                    total = data->int32_data(0);
                else if (data->raw_data().size() == sizeof(int32_t)) {
                    int32_t value = 0;
                    std::memcpy(&value, data->raw_data().data(), sizeof value);
                    total = value;
                }
            }
            onnx::TensorShapeProto present;
            *present.add_dim() = query.dim(0);
            present.add_dim()->set_dim_value(kvHeads);
            // ONNX Runtime makes it max(past, total): the past's buffer when it is shared with
            // the present (GenAI's, at the maximum length), else the total. Read as the total,
            // which each step grows by its tokens, it follows the sizes linearly; a past buffer
            // longer than the total is refused at run time, naming it.
            if (total >= 0)
                present.add_dim()->set_dim_value(total);
            else
                present.add_dim();
            if (head >= 0)
                present.add_dim()->set_dim_value(head);
            else
                present.add_dim();
            onnx::updateOutputShape(ctx, 1, present);
            onnx::updateOutputShape(ctx, 2, present);
        });
    return schema;
}

/// RotaryEmbedding: each head of the input rotated at its position.
OpSchema rotaryEmbedding() {
    OpSchema schema;
    schema.SetName("RotaryEmbedding")
        .SetDomain(kContribDomain)
        .SinceVersion(1)
        .SetDoc("Rotary position embedding: ONNX Runtime's contrib operator.")
        .Attr("interleaved", "rotate interleaved pairs, not halves", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Attr("num_heads", "heads of a [B, S, hidden] input (0: from the caches)",
              AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("rotary_embedding_dim", "elements of a head rotated (0: the head)",
              AttributeProto::INT, static_cast<int64_t>(0))
        .Attr("scale", "unused by placer and ONNX Runtime's CPU kernel", AttributeProto::FLOAT,
              1.0f)
        .Attr("is_packed_batching", "packed sequences", AttributeProto::INT,
              static_cast<int64_t>(0))
        .Input(0, "input", "[B, S, hidden] or [B, heads, S, H]", "T")
        .Input(1, "position_ids", "[B, S], or [1]: an offset", "M")
        .Input(2, "cos_cache", "[positions, rotary dim / 2]", "T")
        .Input(3, "sin_cache", "[positions, rotary dim / 2]", "T")
        .Output(0, "output", "the input's shape", "T")
        .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"},
                        "the float types")
        .TypeConstraint("M", {"tensor(int64)"}, "positions")
        .TypeAndShapeInferenceFunction([](InferenceContext& ctx) { likeInput(ctx, 0); });
    return schema;
}

} // namespace

std::pair<std::string, std::string> onnxDomainAndType(const std::string& opName) {
    const std::size_t dot = opName.rfind('.');
    if (dot == std::string::npos)
        return {std::string(), opName};
    return {opName.substr(0, dot), opName.substr(dot + 1)};
}

const onnx::ISchemaRegistry* onnxSchemas() {
    static std::once_flag once;
    std::call_once(once, [] {
        auto& domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
        if (!domains.Map().count(kContribDomain))
            domains.AddDomainToVersion(kContribDomain, 1, 1);
        onnx::RegisterSchema(matMulNBits());
        onnx::RegisterSchema(skipSimplifiedLayerNormalization());
        onnx::RegisterSchema(simplifiedLayerNormalization());
        onnx::RegisterSchema(groupQueryAttention());
        onnx::RegisterSchema(rotaryEmbedding());
    });
    return onnx::OpSchemaRegistry::Instance();
}

} // namespace placer
