// The ONNX operators the engine understands (opsets 11-17), by their ONNX names, each with the
// kernel family that computes it. Their output types come from ONNX shape inference, so they have
// no shape function here; ONNX's checker validates their arity and attributes.
#include "ir/OpRegistry.h"

#include <utility>

namespace placer {

void registerOnnxOps(const std::function<void(OpDef)>& add) {
    using F = KernelFamily;
    // Control flow has no kernel family: its bodies run on its device with that device's
    // kernels (vm/ControlFlow.h).
    auto op = [&](const char* name, OpKernel kernel, bool hasBodies = false) {
        OpDef def;
        def.name = name;
        def.dialect = OpDialect::Onnx;
        def.minInputs = 0;
        def.maxInputs = -1;
        def.kernel = kernel;
        def.hostOnly = kernel.family == F::Shape;
        def.hasBodies = hasBodies;
        add(std::move(def));
    };
    const std::pair<const char*, OpKernel> ops[] = {
    // element-wise: the functions of ir/ElementFunctions.def that ONNX has, then aliases
#define PLACER_ONNX_ROW(onnx, fn) {onnx, fn},
#define PLACER_UNARY_FN(Fn, name, onnx, relay) PLACER_ONNX_ROW(onnx, UnaryFn::Fn)
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind) PLACER_ONNX_ROW(onnx, BinaryFn::Fn)
#include "ir/ElementFunctions.def"
        {"BitShift", BinaryFn::ShiftLeft},
        {"Sum", BinaryFn::Add},
        {"Where", F::Where},
        {"Cast", F::Cast},
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) PLACER_ONNX_ROW(onnx, ReduceFn::Fn)
#include "ir/ElementFunctions.def"
#undef PLACER_ONNX_ROW
        // data movement
        {"Identity", F::Copy},
        {"Dropout", F::Copy},
        {"Reshape", F::Copy},
        {"Flatten", F::Copy},
        {"Squeeze", F::Copy},
        {"Unsqueeze", F::Copy},
        {"ConstantOfShape", F::Fill},
        {"Transpose", F::Transpose},
        {"Concat", F::Concat},
        {"Split", F::Split},
        {"Slice", F::Slice},
        {"Gather", F::Gather},
        {"Pad", F::Pad},
        {"Expand", F::Expand},
        {"Tile", F::Tile},
        {"Range", F::Range},
        {"Shape", F::Shape},
        {"Size", F::Shape},
        // neural-network layers
        {"Conv", F::Conv},
        {"Gemm", F::Matmul},
        {"MatMul", F::Matmul},
        {"MaxPool", F::Pool},
        {"AveragePool", F::Pool},
        {"GlobalAveragePool", F::Pool},
        {"GlobalMaxPool", F::Pool},
        {"BatchNormalization", F::BatchNorm},
        {"LayerNormalization", F::LayerNorm},
        {"Softmax", F::Softmax},
        {"GatherElements", F::GatherElements},
        {"ScatterElements", F::ScatterElements},
        {"GatherND", F::GatherND},
        {"ScatterND", F::ScatterND},
        {"OneHot", F::OneHot},
        {"Trilu", F::Trilu},
        {"CumSum", F::CumSum},
        {"Hardmax", F::Hardmax},
        {"DepthToSpace", F::SpaceDepth},
        {"SpaceToDepth", F::SpaceDepth},
        {"Resize", F::Resize},
        {"ConvTranspose", F::ConvTranspose},
        {"TopK", F::TopK},
        {"LRN", F::Lrn},
        {"EyeLike", F::EyeLike},
        {"InstanceNormalization", F::InstanceNorm},
        {"QuantizeLinear", F::Quantize},
        {"DequantizeLinear", F::Quantize},
        {"Mean", F::Mean},
        {"ReverseSequence", F::ReverseSequence},
        {"GridSample", F::GridSample},
        {"Einsum", F::Einsum},
        {"RNN", F::Recurrent},
        {"GRU", F::Recurrent},
        {"LSTM", F::Recurrent},
        {"MaxUnpool", F::MaxUnpool},
        {"Det", F::Det},
        {"MatMulInteger", F::QuantizedMatmul},
        {"QLinearMatMul", F::QuantizedMatmul},
        {"ConvInteger", F::QuantizedConv},
        {"QLinearConv", F::QuantizedConv},
        {"LogSoftmax", F::Softmax},
        {"RoiAlign", F::RoiAlign},
        {"NonZero", F::Selection},
        {"Compress", F::Selection},
        {"Unique", F::Selection},
        {"NonMaxSuppression", F::Selection},
        {"StringNormalizer", F::Selection},
        {"DFT", F::Dft},
        {"STFT", F::Stft},
        {"MelWeightMatrix", F::MelWeightMatrix},
        {"TfIdfVectorizer", F::TfIdf},
        // ai.onnx.preview.training (the reader maps that domain's ops to these names)
        {"Adagrad", F::Optimizer},
        {"Momentum", F::Optimizer},
        {"Adam", F::Optimizer},
        {"RandomUniform", F::Random},
        {"RandomNormal", F::Random},
        {"RandomUniformLike", F::Random},
        {"RandomNormalLike", F::Random},
        {"Bernoulli", F::Random},
        {"Multinomial", F::Random},
        // ONNX Runtime's contrib operators (io/ContribSchemas.cpp), named with their domain
        {"com.microsoft.MatMulNBits", F::BlockQuantMatmul},
        {"com.microsoft.SkipSimplifiedLayerNormalization", F::RmsNorm},
        {"com.microsoft.GroupQueryAttention", F::GroupQueryAttention},
        {"com.microsoft.RotaryEmbedding", F::Rotary},
        // ONNX Runtime registers this one in ONNX's own domain
        {"SimplifiedLayerNormalization", F::RmsNorm},
    };
    for (const auto& [name, kernel] : ops) {
        if (*name) // a function ONNX has no operator for
            op(name, kernel);
    }
    for (const char* name : {"If", "Loop", "Scan"})
        op(name, F::None, /*hasBodies=*/true);
}

} // namespace placer
