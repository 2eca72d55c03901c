// What an operator's attributes and shapes mean for its kernel, read once for every backend:
// convolution and pooling windows, matrix products, normalisations and softmax. The CPU and CUDA
// kernels build their primitives from these.
#pragma once

#include "kernels/ElementFunctors.h"
#include "kernels/Kernel.h"
#include "kernels/LayerFunctors.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace placer::geometry {

using Dims = std::vector<std::int64_t>;
/// Why an op's attributes cannot be used, or nothing when they can.
using Problem = std::optional<std::string>;

/// Spatial window parameters shared by convolution and pooling. padR is made consistent with
/// the output shape the model declares (ceil mode, SAME padding).
struct Window {
    Dims kernel, strides, dilation, padL, padR;
};
Problem readWindow(const KernelSpec& spec, const Dims& in, const Dims& out, Dims kernel,
                   Window* window);

struct Convolution {
    Window window;
    std::int64_t groups = 1;
    bool hasBias = false;
};
Problem readConvolution(const KernelSpec& spec, Convolution* conv);

/// One operand of a matrix product: batch dims and a rows x cols matrix, maybe stored transposed.
struct MatrixOperand {
    Dims batch;
    std::int64_t rows = 0, cols = 0;
    bool transposed = false; ///< stored as cols x rows
    std::int64_t matrixSize() const { return rows * cols; }
};

/// C[b] = alpha * A[b] x B[b] (+ beta * bias) with numpy batch broadcasting.
struct MatrixProduct {
    MatrixOperand a, b;
    Dims outBatch;
    std::int64_t batches = 1, m = 0, n = 0, k = 0;
    float alpha = 1, beta = 1;
    int biasInput = -1; ///< Gemm's C, broadcast to [m, n]
};
Problem readMatrixProduct(const KernelSpec& spec, MatrixProduct* product);

struct Pooling {
    bool isMax = false;
    bool includePadding = false; ///< average over the padded window
    bool adaptive = false;       ///< windows differ in size (input not a multiple of output)
    Window window;
};
Problem readPooling(const KernelSpec& spec, Pooling* pooling);

/// Batch and layer normalisation as [outer, channels, inner] views of the input.
struct Normalization {
    std::int64_t outer = 1, channels = 1, inner = 1;
    float epsilon = 1e-5f;
    bool scale = true, center = true;
    int axis = 1;
};
Problem readBatchNorm(const KernelSpec& spec, Normalization* norm);
Problem readLayerNorm(const KernelSpec& spec, Normalization* norm);

/// Softmax over the middle of an [outer, channels, inner] view.
struct Softmax {
    std::int64_t outer = 1, channels = 1, inner = 1;
    bool log = false;
};
Problem readSoftmax(const KernelSpec& spec, Softmax* softmax);

/// MatMulNBits (com.microsoft): A's rows times B's N rows of K codes of `bits` bits, in blocks of
/// blockSize along K (the last one padded), each block with a scale and a zero point.
struct BlockQuant : functors::BlockQuantLayout {
    std::int64_t rows = 0; ///< A's rows (its leading dimensions folded)
};
/// Reads and checks the attributes and operands; a problem names the sizes that disagree.
Problem readBlockQuant(const KernelSpec& spec, BlockQuant* quant);

/// Concat's and Split's axis, normalised against the rank of the op's concatenated value (the
/// output of a Concat, the input of a Split); for a Split, its outputs must add up to the input
/// along it.
Problem readConcatAxis(const KernelSpec& spec, int* axis);
Problem readSplitAxis(const KernelSpec& spec, int* axis);

/// Tile as a strided read: the output seen as (repeat, extent) pairs, the input read with
/// stride 0 along each repeat. `shape` and `strides` (in elements of the input) have twice the
/// rank.
Problem readTile(const KernelSpec& spec, Dims* shape, Dims* strides);

/// Gather (ONNX's, and Relay's take): along `axis` of the data, or over all of it flattened
/// (Relay's take without an axis); `dim` the gathered extent, `inner` the elements after it,
/// `count` the indices; out-of-range indices clip (Relay's default), wrap, or fail (ONNX).
struct Gather {
    bool flat = false;
    int axis = 0;
    std::int64_t outer = 1, dim = 0, inner = 1, count = 0;
    enum class Mode { Clip, Wrap, Fail } mode = Mode::Fail;
};
Problem readGather(const KernelSpec& spec, Gather* gather);
/// An integer list from an input: the constant's values if it is one, else nothing.
std::optional<Dims> constantInts(const KernelSpec& spec, std::size_t input);

/// Why a Copy-family op cannot run as a copy (training-mode Dropout), or nothing.
Problem checkCopy(const KernelSpec& spec);

/// Where ONNX input `position` is among the kernel's inputs, or -1 when the node leaves it out
/// (optional inputs before a given one are left out by an empty name).
int inputAt(const KernelSpec& spec, int position);

/// The function a Binary op computes: its declared one, except ONNX Mod with fmod=0 (the
/// remainder takes the divisor's sign).
BinaryFn binaryFunction(const KernelSpec& spec);

/// ONNX Clip's min and max inputs that are not constants, read at run time: their input indices
/// (-1 where the bound is a constant or absent).
std::pair<int, int> clipInputs(const KernelSpec& spec);

/// The scalar parameters of the unary function of the op's family: LeakyRelu's alpha,
/// HardSigmoid's alpha and beta, Clip's bounds (Relay's a_min/a_max; ONNX's min/max attributes
/// before opset 11 and constant scalar inputs after). *a and *b are 0 for the others.
Problem readUnaryParameters(const KernelSpec& spec, double* a, double* b);
/// An element-wise unary op as both backends read it.
struct Unary {
    UnaryFn fn{};
    double a = 0, b = 0; ///< readUnaryParameters
    DType dtype{}, outType{};
    bool predicate = false;       ///< IsNaN, IsInf: a Bool output
    int aInput = -1, bInput = -1; ///< Clip's bounds read at run time (clipInputs)
    bool runtimeBounds() const { return aInput >= 0 || bInput >= 0; }
};
/// The unary op of `spec`: its function, parameters and types (the output is Bool for a
/// predicate, else the input's type).
Problem readUnary(const KernelSpec& spec, Unary* unary);
/// The value a Fill-family op writes: ones_like 1, zeros_like 0, ConstantOfShape its `value`.
double fillValue(const KernelSpec& spec);
/// Input `i` of a Binary-family op as broadcasting sees it: its own shape, except nn.bias_add's
/// bias, which is laid along `axis` of the data.
Dims binaryOperandShape(const KernelSpec& spec, std::size_t i);
/// For the broadcasting families (Binary, Where, Expand, Mean): an operand that does not
/// broadcast to the output (numpy rules), which those kernels would index past its end. Shapes
/// come from the model and may disagree where its types do.
Problem checkBroadcast(const KernelSpec& spec);

/// Transpose as a strided view: the input strides (in elements) of each output dimension.
/// A transpose's permutation, every axis made non-negative.
Problem readTransposePerm(const KernelSpec& spec, Dims* perm);
Problem readTranspose(const KernelSpec& spec, Dims* strides);
/// A slice as a strided view of the input: the first element and the strides.
Problem readSlice(const KernelSpec& spec, std::int64_t* base, Dims* strides);
/// A reduction: the input shape with reduced dimensions set to 1, and elements per output.
Problem readReduction(const KernelSpec& spec, Dims* kept, std::int64_t* count);
/// The reduction as the Reduce functor runs it (everything but its data pointers); *rows is the
/// number of output elements, one functor row each.
Problem readReduceFunctor(const KernelSpec& spec, functors::Reduce* op, std::int64_t* rows);

/// Pad: the padding before each dimension (the output shape says what follows) and the mode
/// ("constant", "edge" or "reflect").
Problem readPad(const KernelSpec& spec, Dims* before, std::string* mode);

/// Row-major offsets (in batch units) of each output batch index into the operands' batches.
std::vector<std::pair<std::int64_t, std::int64_t>> batchOffsets(const Dims& a, const Dims& b,
                                                                const Dims& out);
Dims broadcastShapes(const Dims& a, const Dims& b);

} // namespace placer::geometry
