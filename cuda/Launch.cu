// Launching the shared element functors on a CUDA stream, with errors named by kernel.
#include "cuda/Launch.h"

#include "runtime/SignalFunctors.h"
#include "runtime/TrainingFunctors.h"

#include <stdexcept>

#include <algorithm>

namespace placer::cuda {

namespace {

template <typename Op> __global__ void elementKernel(Op op, i64 n) {
    const i64 stride = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        op(i);
}

template <typename Op> __global__ void rowKernel(Op op, i64 rows) {
    const int lane = static_cast<int>(threadIdx.x & 31);
    const i64 warpsPerBlock = blockDim.x / 32;
    const i64 stride = warpsPerBlock * gridDim.x;
    for (i64 row = static_cast<i64>(blockIdx.x) * warpsPerBlock + threadIdx.x / 32; row < rows;
         row += stride)
        op(row, lane, 32);
}

__global__ void probeKernel() {}

constexpr int kThreads = 256;
constexpr i64 kMaxBlocks = 65535;

void check(const char* what) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        throw std::runtime_error(
            std::string("launching ") + what + " failed: " + cudaGetErrorName(error) + " (" +
            cudaGetErrorString(error) + ") at " + __FILE__ + ":" + std::to_string(__LINE__));
}

} // namespace

template <typename Op> void launchElements(const Op& op, i64 n, cudaStream_t stream) {
    if (n <= 0)
        return;
    const i64 blocks = std::min<i64>((n + kThreads - 1) / kThreads, kMaxBlocks);
    elementKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(op, n);
    check(__PRETTY_FUNCTION__);
}

template <typename Op> void launchRows(const Op& op, i64 rows, cudaStream_t stream) {
    if (rows <= 0)
        return;
    const i64 warps = kThreads / 32;
    const i64 blocks = std::min<i64>((rows + warps - 1) / warps, kMaxBlocks);
    rowKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(op, rows);
    check(__PRETTY_FUNCTION__);
}

bool kernelsRunOn(int ordinal, std::string* why) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(ordinal);
    cudaFuncAttributes attributes;
    const cudaError_t error = cudaFuncGetAttributes(&attributes, probeKernel);
    cudaSetDevice(previous);
    if (error == cudaSuccess)
        return true;
    cudaGetLastError();
    *why = std::string(cudaGetErrorString(error)) + " (this build has kernels for sm " +
           builtArchitectures() + ")";
    return false;
}

std::string builtArchitectures() {
    return PLACER_CUDA_ARCHITECTURES;
}

template void launchElements(const StridedCopy&, i64, cudaStream_t);
template void launchElements(const Fill&, i64, cudaStream_t);
template void launchElements(const Cast&, i64, cudaStream_t);
template void launchElements(const Range&, i64, cudaStream_t);
template void launchElements(const Gather&, i64, cudaStream_t);
template void launchElements(const Pad&, i64, cudaStream_t);
template void launchElements(const UnaryF32&, i64, cudaStream_t);
template void launchElements(const UnaryAny&, i64, cudaStream_t);
template void launchElements(const BinaryF32&, i64, cudaStream_t);
template void launchElements(const BinaryAny&, i64, cudaStream_t);
template void launchElements(const Where&, i64, cudaStream_t);
template void launchElements(const BatchNorm&, i64, cudaStream_t);
template void launchElements(const Pool&, i64, cudaStream_t);
template void launchRows(const LayerNorm&, i64, cudaStream_t);
template void launchRows(const Reduce&, i64, cudaStream_t);
// The indexing and layout functors (runtime/IndexingPlan.h).
template void launchElements(const CopyInput&, i64, cudaStream_t);
template void launchElements(const StridedView&, i64, cudaStream_t);
template void launchElements(const GatherElements&, i64, cudaStream_t);
template void launchElements(const ScatterElements&, i64, cudaStream_t);
template void launchElements(const GatherND&, i64, cudaStream_t);
template void launchElements(const ScatterND&, i64, cudaStream_t);
template void launchElements(const OneHot&, i64, cudaStream_t);
template void launchElements(const Trilu&, i64, cudaStream_t);
template void launchElements(const CumSum&, i64, cudaStream_t);
template void launchElements(const Hardmax&, i64, cudaStream_t);
template void launchElements(const TopK&, i64, cudaStream_t);
template void launchElements(const Resize&, i64, cudaStream_t);
template void launchElements(const ConvTranspose&, i64, cudaStream_t);
template void launchElements(const Lrn&, i64, cudaStream_t);
template void launchElements(const EyeLike&, i64, cudaStream_t);
template void launchRows(const InstanceNorm&, i64, cudaStream_t);
template void launchElements(const Quantize&, i64, cudaStream_t);
template void launchElements(const Mean&, i64, cudaStream_t);
template void launchElements(const ReverseSequence&, i64, cudaStream_t);
template void launchElements(const GridSample&, i64, cudaStream_t);
template void launchElements(const Einsum&, i64, cudaStream_t);
template void launchElements(const Recurrent&, i64, cudaStream_t);
template void launchElements(const ZeroOutput&, i64, cudaStream_t);
template void launchElements(const MaxUnpool&, i64, cudaStream_t);
template void launchElements(const Det&, i64, cudaStream_t);
template void launchElements(const QuantizedMatmul&, i64, cudaStream_t);
template void launchElements(const QuantizedConv&, i64, cudaStream_t);
template void launchElements(const RoiAlign&, i64, cudaStream_t);
template void launchElements(const PoolAny&, i64, cudaStream_t);
template void launchElements(const Dft&, i64, cudaStream_t);
template void launchElements(const Stft&, i64, cudaStream_t);
template void launchElements(const MelWeightMatrix&, i64, cudaStream_t);
template void launchElements(const TfIdf&, i64, cudaStream_t);
template void launchElements(const Optimizer&, i64, cudaStream_t);
template void launchElements(const Dropout&, i64, cudaStream_t);
template void launchElements(const BatchNormTraining&, i64, cudaStream_t);
template void launchElements(const Random&, i64, cudaStream_t);

} // namespace placer::cuda
