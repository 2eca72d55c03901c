// Names of the kernel families and element functions, for messages and listings.
#include "ir/OpSemantics.h"

namespace placer {

const char* kernelFamilyName(KernelFamily family) {
    switch (family) {
    case KernelFamily::GatherElements:
        return "gather_elements";
    case KernelFamily::ScatterElements:
        return "scatter_elements";
    case KernelFamily::GatherND:
        return "gather_nd";
    case KernelFamily::ScatterND:
        return "scatter_nd";
    case KernelFamily::OneHot:
        return "one_hot";
    case KernelFamily::Trilu:
        return "trilu";
    case KernelFamily::CumSum:
        return "cumsum";
    case KernelFamily::Hardmax:
        return "hardmax";
    case KernelFamily::SpaceDepth:
        return "space_depth";
    case KernelFamily::Resize:
        return "resize";
    case KernelFamily::ConvTranspose:
        return "conv_transpose";
    case KernelFamily::TopK:
        return "topk";
    case KernelFamily::Lrn:
        return "lrn";
    case KernelFamily::EyeLike:
        return "eye_like";
    case KernelFamily::InstanceNorm:
        return "instance_norm";
    case KernelFamily::Quantize:
        return "quantize";
    case KernelFamily::Mean:
        return "mean";
    case KernelFamily::ReverseSequence:
        return "reverse_sequence";
    case KernelFamily::GridSample:
        return "grid_sample";
    case KernelFamily::Einsum:
        return "einsum";
    case KernelFamily::Recurrent:
        return "recurrent";
    case KernelFamily::MaxUnpool:
        return "max_unpool";
    case KernelFamily::Det:
        return "det";
    case KernelFamily::QuantizedMatmul:
        return "quantized_matmul";
    case KernelFamily::QuantizedConv:
        return "quantized_conv";
    case KernelFamily::RoiAlign:
        return "roi_align";
    case KernelFamily::Selection:
        return "selection";
    case KernelFamily::Dft:
        return "dft";
    case KernelFamily::Stft:
        return "stft";
    case KernelFamily::MelWeightMatrix:
        return "mel_weight_matrix";
    case KernelFamily::TfIdf:
        return "tfidf";
    case KernelFamily::Optimizer:
        return "optimizer";
    case KernelFamily::Random:
        return "random";
    case KernelFamily::BlockQuantMatmul:
        return "block_quant_matmul";
    case KernelFamily::RmsNorm:
        return "rms_norm";
    case KernelFamily::GroupQueryAttention:
        return "group_query_attention";
    case KernelFamily::Rotary:
        return "rotary";
    case KernelFamily::None:
        return "none";
    case KernelFamily::Copy:
        return "copy";
    case KernelFamily::Fill:
        return "fill";
    case KernelFamily::Cast:
        return "cast";
    case KernelFamily::Unary:
        return "unary";
    case KernelFamily::Binary:
        return "binary";
    case KernelFamily::Where:
        return "where";
    case KernelFamily::Reduce:
        return "reduce";
    case KernelFamily::Transpose:
        return "transpose";
    case KernelFamily::Concat:
        return "concat";
    case KernelFamily::Split:
        return "split";
    case KernelFamily::Slice:
        return "slice";
    case KernelFamily::Gather:
        return "gather";
    case KernelFamily::Pad:
        return "pad";
    case KernelFamily::Expand:
        return "expand";
    case KernelFamily::Tile:
        return "tile";
    case KernelFamily::Range:
        return "range";
    case KernelFamily::Shape:
        return "shape";
    case KernelFamily::Conv:
        return "conv";
    case KernelFamily::Matmul:
        return "matmul";
    case KernelFamily::Pool:
        return "pool";
    case KernelFamily::BatchNorm:
        return "batch_norm";
    case KernelFamily::LayerNorm:
        return "layer_norm";
    case KernelFamily::Softmax:
        return "softmax";
    }
    return "?";
}

const char* unaryFnName(UnaryFn fn) {
    static const char* const kNames[kUnaryFnCount] = {
#define PLACER_UNARY_FN(Fn, name, onnx, relay) name,
#include "ir/ElementFunctions.def"
    };
    return kNames[static_cast<int>(fn)];
}

const char* binaryFnName(BinaryFn fn) {
    static const char* const kNames[kBinaryFnCount] = {
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind) name,
#include "ir/ElementFunctions.def"
    };
    return kNames[static_cast<int>(fn)];
}

const char* reduceFnName(ReduceFn fn) {
    static const char* const kNames[kReduceFnCount] = {
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) name,
#include "ir/ElementFunctions.def"
    };
    return kNames[static_cast<int>(fn)];
}

} // namespace placer
