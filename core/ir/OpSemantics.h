// What an operator computes, as the backends see it: its kernel family and, for the element-wise
// families, which function. Every op name, Relay's and ONNX's alike, is declared once with its
// family (ShapeFunctions.cpp, OnnxOps.cpp); "exp", "fast_exp" and ONNX's "Exp" are one family and
// one function, so a backend writes one kernel for all three. Backends register one kernel factory
// per family (kernels/KernelTable.h), and what a device kind can run is declared here per family.
//
// This header is plain C++ with no dependencies beyond <cstdint>: the element functors
// (kernels/ElementFunctors.h) include it, and nvcc compiles those.
#pragma once

#include <cstdint>
#include <vector>

namespace placer {

/// One kernel per family per backend. `None` is for the roles the executor handles itself
/// (parameters, constants, device copies) and for ops no backend can run.
enum class KernelFamily : std::uint8_t {
    None,
    Copy,      ///< output = input bytes (identity, reshape, squeeze, flatten, dropout)
    Fill,      ///< every element one value (zeros_like, ones_like, ConstantOfShape)
    Cast,      ///< element type conversion
    Unary,     ///< y = f(x), UnaryFn
    Binary,    ///< y = a f b with broadcasting, BinaryFn; ONNX's variadic forms fold
    Where,     ///< y = cond ? a : b with broadcasting
    Reduce,    ///< over some axes, ReduceFn
    Transpose, ///< permuted axes
    Concat,
    Split,
    Slice,
    Gather,
    Pad,
    Expand,
    Tile,
    Range,
    Shape, ///< a tensor's shape or size, read on the host
    Conv,
    Matmul, ///< dense, matmul, batch_matmul, Gemm, MatMul
    Pool,   ///< max, average, global and adaptive pooling
    BatchNorm,
    LayerNorm,
    Softmax,   ///< softmax and log-softmax
    Selection, ///< NonZero, Compress, Unique, NonMaxSuppression: extents the data decides
    // The indexing and layout families: shared functors (kernels/IndexingPlan.h).
    GatherElements,
    ScatterElements,
    GatherND,
    ScatterND,
    OneHot,
    Trilu,
    CumSum,
    Hardmax,
    SpaceDepth, ///< DepthToSpace and SpaceToDepth
    Resize,
    ConvTranspose,
    TopK,
    Lrn,
    EyeLike,
    InstanceNorm,
    Quantize, ///< QuantizeLinear and DequantizeLinear
    Mean,
    ReverseSequence,
    GridSample,
    Einsum,
    Recurrent, ///< RNN, GRU and LSTM
    MaxUnpool,
    Det,
    QuantizedMatmul,     ///< MatMulInteger and QLinearMatMul
    QuantizedConv,       ///< ConvInteger and QLinearConv
    BlockQuantMatmul,    ///< com.microsoft MatMulNBits: weights in blocks of 2-, 4- or 8-bit codes
    RmsNorm,             ///< (Skip)SimplifiedLayerNormalization: ONNX Runtime's RMSNorm
    GroupQueryAttention, ///< com.microsoft GroupQueryAttention: attention with a KV cache
    Rotary,              ///< com.microsoft RotaryEmbedding
    RoiAlign,
    Dft,
    Stft,
    MelWeightMatrix,
    TfIdf,     ///< TfIdfVectorizer
    Optimizer, ///< ai.onnx.preview.training's Adagrad, Momentum and Adam
    Random,    ///< RandomUniform/Normal(Like), Bernoulli, Multinomial: seeded, reproducible
};
inline constexpr int kKernelFamilyCount = static_cast<int>(KernelFamily::Random) + 1;

/// Whether a family's kernels are the shared functors of kernels/IndexingPlan.h.
constexpr bool isIndexingFamily(KernelFamily family) {
    return family >= KernelFamily::GatherElements && family <= KernelFamily::Random;
}
/// Every family of the shared indexing functors, in order: what each backend's kernel table
/// registers its indexing kernel for.
inline std::vector<KernelFamily> indexingFamilies() {
    std::vector<KernelFamily> families;
    for (int f = 0; f < kKernelFamilyCount; ++f) {
        if (isIndexingFamily(static_cast<KernelFamily>(f)))
            families.push_back(static_cast<KernelFamily>(f));
    }
    return families;
}

// The element-wise functions, declared once in ir/ElementFunctions.def (what each is, its
// operators in ONNX and Relay).
enum class UnaryFn : std::uint8_t {
#define PLACER_UNARY_FN(Fn, name, onnx, relay) Fn,
#include "ir/ElementFunctions.def"
};
enum class BinaryFn : std::uint8_t {
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind) Fn,
#include "ir/ElementFunctions.def"
};
enum class ReduceFn : std::uint8_t {
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) Fn,
#include "ir/ElementFunctions.def"
};
inline constexpr int kUnaryFnCount = 0
#define PLACER_UNARY_FN(Fn, name, onnx, relay) +1
#include "ir/ElementFunctions.def"
    ;
inline constexpr int kBinaryFnCount = 0
#define PLACER_BINARY_FN(Fn, name, onnx, relay, relayKind) +1
#include "ir/ElementFunctions.def"
    ;
inline constexpr int kReduceFnCount = 0
#define PLACER_REDUCE_FN(Fn, name, onnx, relay) +1
#include "ir/ElementFunctions.def"
    ;

/// An op's kernel: its family, and the function for Unary, Binary and Reduce (0 otherwise).
struct OpKernel {
    KernelFamily family = KernelFamily::None;
    std::uint8_t fn = 0;

    constexpr OpKernel() = default;
    constexpr OpKernel(KernelFamily f) : family(f) {} // NOLINT: a family alone is an OpKernel
    constexpr OpKernel(UnaryFn f) : family(KernelFamily::Unary), fn(static_cast<std::uint8_t>(f)) {}
    constexpr OpKernel(BinaryFn f)
        : family(KernelFamily::Binary), fn(static_cast<std::uint8_t>(f)) {}
    constexpr OpKernel(ReduceFn f)
        : family(KernelFamily::Reduce), fn(static_cast<std::uint8_t>(f)) {}

    constexpr UnaryFn unary() const { return static_cast<UnaryFn>(fn); }
    constexpr BinaryFn binary() const { return static_cast<BinaryFn>(fn); }
    constexpr ReduceFn reduce() const { return static_cast<ReduceFn>(fn); }
    constexpr bool operator==(const OpKernel& other) const {
        return family == other.family && fn == other.fn;
    }
};

/// "unary", "conv", ...: for messages and listings.
const char* kernelFamilyName(KernelFamily family);
/// "exp", "add", "sum", ...
const char* unaryFnName(UnaryFn fn);
const char* binaryFnName(BinaryFn fn);
const char* reduceFnName(ReduceFn fn);

} // namespace placer
