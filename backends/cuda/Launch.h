// Launching the functors of kernels/ElementFunctors.h on a CUDA stream (Launch.cu). Every launch
// checks for a launch error and throws a KernelError naming the kernel, file and line.
#pragma once

#include "kernels/ElementFunctors.h"
#include "kernels/IndexingFunctors.h"
#include "kernels/LayerFunctors.h"
#include "kernels/SignalFunctors.h"
#include "kernels/TrainingFunctors.h"

#include <cuda_runtime_api.h>

#include <string>

namespace placer::cuda {

using namespace placer::functors;

/// One thread per element, grid-strided.
template <typename Op> void launchElements(const Op& op, i64 n, cudaStream_t stream);
/// One warp per row.
template <typename Op> void launchRows(const Op& op, i64 rows, cudaStream_t stream);

/// A float32 operand of a contiguous element-wise kernel: its data repeats every `period`
/// elements of the output (the output's count: the whole tensor; a row's: a bias row broadcast
/// over the leading axes; 1: a scalar).
struct ContiguousOperand {
    const float* data = nullptr;
    i64 period = 1;
};
/// out[i] = fn(a[i % a.period], b[i % b.period]) over n elements, four a thread where the
/// pointers and periods allow; Add, Sub, Mul, Div and Max with the function compiled in. The
/// result equals BinaryF32's, element for element.
void launchBinaryContiguous(BinaryFn fn, ContiguousOperand a, ContiguousOperand b, float* out,
                            i64 n, cudaStream_t stream);
/// y[i] = fn(x[i]) (UnaryF32's arithmetic), four a thread where the pointers allow; Relu with the
/// function compiled in.
void launchUnaryContiguous(const UnaryF32& op, i64 n, cudaStream_t stream);

/// What launchContiguousRowReduce computes over a row (Reduce's arithmetic, in double).
enum class RowReduction { Sum, Mean, Max, Min, SumSquare, L1, L2 };
/// y[row] = the reduction of x[row * count, (row + 1) * count), one block a row: for rows long
/// enough that one warp a row (launchRows) would leave most of the GPU idle, such as a global
/// average pool over a 112x112 plane or a mean over BERT's 768 features.
void launchContiguousRowReduce(const float* x, float* y, i64 rows, i64 count, RowReduction fn,
                               cudaStream_t stream);

/// Whether this build has kernels the device can run (a build without its architecture cannot
/// launch anything there); *why says why not.
bool kernelsRunOn(int ordinal, std::string* why);
/// The architectures this build carries kernels for ("80, 90").
std::string builtArchitectures();

} // namespace placer::cuda
