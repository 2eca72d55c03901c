// The ONNX operators the engine understands (opsets 11-17), by their ONNX names, with kernel
// capability per device kind. Their output types come from ONNX shape inference, so they have no
// shape function here; ONNX's checker validates their arity and attributes.
#include "ir/OpRegistry.h"

namespace placer {

void registerOnnxOps(const std::function<void(OpDef)>& add) {
    auto op = [&](const char* name, KernelCapability capability, bool hostOnly = false) {
        OpDef def;
        def.name = name;
        def.dialect = OpDialect::Onnx;
        def.minInputs = 0;
        def.maxInputs = -1;
        capability.applyTo(def);
        def.hostOnly = hostOnly;
        add(std::move(def));
    };
    for (const char* name : {"Conv",
                             "Gemm",
                             "MatMul",
                             "MaxPool",
                             "AveragePool",
                             "GlobalAveragePool",
                             "GlobalMaxPool",
                             "BatchNormalization",
                             "LayerNormalization",
                             "Softmax",
                             "LogSoftmax",
                             "Erf",
                             "HardSigmoid",
                             "HardSwish",
                             "Sigmoid",
                             "Tanh",
                             "Sqrt",
                             "Pow",
                             "Exp",
                             "Log",
                             "Reciprocal"})
        op(name, kFloatOnGpu);
    for (const char* name : {"Add", "Sub", "Mul", "Div", "Neg", "Abs", "Relu", "LeakyRelu", "Clip",
                             "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "Min", "Max"})
        op(name, kNumericOnGpu);
    for (const char* name :
         {"Concat", "Flatten", "Reshape",         "Transpose", "Squeeze", "Unsqueeze",
          "Slice",  "Gather",  "Identity",        "Pad",       "Expand",  "Where",
          "Equal",  "Less",    "Greater",         "Not",       "And",     "Or",
          "Cast",   "Dropout", "ConstantOfShape", "Split",     "Tile",    "Range"})
        op(name, kRunsEverywhere);
    op("Shape", kHostOnly, true);
    op("Size", kHostOnly, true);
}

} // namespace placer
