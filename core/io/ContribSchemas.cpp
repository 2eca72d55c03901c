// ONNX Runtime's com.microsoft operators that placer runs, registered with ONNX's schema registry
// (io/OnnxProto.h onnxSchemas): ONNX's checker and shape inference then type them, and every
// node after them, as they do standard operators. Their semantics are ONNX Runtime's
// (docs/ContribOperators.md); the type and shape rules here are written from them.
#include "io/OnnxProto.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

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
    });
    return onnx::OpSchemaRegistry::Instance();
}

} // namespace placer
