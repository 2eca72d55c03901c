// Launching the shared element functors on a CUDA stream, with errors named by kernel.
#include "backends/cuda/Launch.h"

#include "kernels/SignalFunctors.h"
#include "kernels/TrainingFunctors.h"

#include <stdexcept>

#include <algorithm>
#include <cstdint>

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

/// Clears the thread's last error before a launch: whatever failed earlier was reported where
/// it failed (backends/cuda/CudaError.h), and must not be taken for this launch's failure.
void clearStale() {
    cudaGetLastError();
}

/// The launch's own failure, naming the kernel (its functor's type).
void check(const char* what) {
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess)
        throw std::runtime_error(std::string("launching ") + what + " failed: " +
                                 cudaGetErrorName(error) + " (" + cudaGetErrorString(error) + ")");
}

} // namespace

template <typename Op> void launchElements(const Op& op, i64 n, cudaStream_t stream) {
    if (n <= 0)
        return;
    const i64 blocks = std::min<i64>((n + kThreads - 1) / kThreads, kMaxBlocks);
    clearStale();
    elementKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(op, n);
    check(__PRETTY_FUNCTION__);
}

template <typename Op> void launchRows(const Op& op, i64 rows, cudaStream_t stream) {
    if (rows <= 0)
        return;
    const i64 warps = kThreads / 32;
    const i64 blocks = std::min<i64>((rows + warps - 1) / warps, kMaxBlocks);
    clearStale();
    rowKernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(op, rows);
    check(__PRETTY_FUNCTION__);
}

namespace {

/// The binary function, compiled in (F) or chosen at run time (the generic instance).
template <int F> struct Binary {
    BinaryFn fn;
    __device__ float operator()(float x, float y) const {
        return applyBinary<float>(F < 0 ? fn : static_cast<BinaryFn>(F), x, y);
    }
};
template <int F> struct UnaryOp {
    UnaryFn fn;
    float a, b;
    __device__ float operator()(float x) const {
        return applyUnary<float>(F < 0 ? fn : static_cast<UnaryFn>(F), x, a, b);
    }
};

__device__ inline float at(const ContiguousOperand& o, i64 i, i64 n) {
    return o.period == 1 ? o.data[0] : o.data[o.period == n ? i : i % o.period];
}
__device__ inline float4 at4(const ContiguousOperand& o, i64 chunk, i64 n) {
    if (o.period == 1) {
        const float v = o.data[0];
        return make_float4(v, v, v, v);
    }
    return reinterpret_cast<const float4*>(o.data)[o.period == n ? chunk : chunk % (o.period / 4)];
}

template <typename Op>
__global__ void binaryContiguous(Op op, ContiguousOperand a, ContiguousOperand b, float* out,
                                 i64 n) {
    const i64 stride = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = op(at(a, i, n), at(b, i, n));
}

template <typename Op>
__global__ void binaryContiguous4(Op op, ContiguousOperand a, ContiguousOperand b, float* out,
                                  i64 n) {
    const i64 chunks = n / 4;
    const i64 stride = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 c = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
        const float4 x = at4(a, c, n), y = at4(b, c, n);
        reinterpret_cast<float4*>(out)[c] =
            make_float4(op(x.x, y.x), op(x.y, y.y), op(x.z, y.z), op(x.w, y.w));
    }
}

template <typename Op> __global__ void unaryContiguous(Op op, const float* x, float* y, i64 n) {
    const i64 stride = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        y[i] = op(x[i]);
}

template <typename Op> __global__ void unaryContiguous4(Op op, const float* x, float* y, i64 n) {
    const i64 chunks = n / 4;
    const i64 stride = static_cast<i64>(blockDim.x) * gridDim.x;
    for (i64 c = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; c < chunks; c += stride) {
        const float4 v = reinterpret_cast<const float4*>(x)[c];
        reinterpret_cast<float4*>(y)[c] = make_float4(op(v.x), op(v.y), op(v.z), op(v.w));
    }
}

bool aligned16(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

/// Four elements a thread: whole float4s, and every operand's period a multiple of four.
bool byFours(ContiguousOperand a, ContiguousOperand b, const float* out, i64 n) {
    const auto fits = [n](ContiguousOperand o) {
        return o.period == 1 || (aligned16(o.data) && (o.period == n || o.period % 4 == 0));
    };
    return n % 4 == 0 && aligned16(out) && fits(a) && fits(b);
}

unsigned blocksFor(i64 threads) {
    return static_cast<unsigned>(std::min<i64>((threads + kThreads - 1) / kThreads, kMaxBlocks));
}

template <typename Op>
void launchBinary(Op op, ContiguousOperand a, ContiguousOperand b, float* out, i64 n,
                  cudaStream_t stream) {
    clearStale();
    if (byFours(a, b, out, n))
        binaryContiguous4<<<blocksFor(n / 4), kThreads, 0, stream>>>(op, a, b, out, n);
    else
        binaryContiguous<<<blocksFor(n), kThreads, 0, stream>>>(op, a, b, out, n);
    check(__PRETTY_FUNCTION__);
}

template <typename Op> void launchUnary(Op op, const float* x, float* y, i64 n, cudaStream_t s) {
    clearStale();
    if (n % 4 == 0 && aligned16(x) && aligned16(y))
        unaryContiguous4<<<blocksFor(n / 4), kThreads, 0, s>>>(op, x, y, n);
    else
        unaryContiguous<<<blocksFor(n), kThreads, 0, s>>>(op, x, y, n);
    check(__PRETTY_FUNCTION__);
}

} // namespace

void launchBinaryContiguous(BinaryFn fn, ContiguousOperand a, ContiguousOperand b, float* out,
                            i64 n, cudaStream_t stream) {
    if (n <= 0)
        return;
    switch (fn) {
    case BinaryFn::Add:
        return launchBinary(Binary<static_cast<int>(BinaryFn::Add)>{fn}, a, b, out, n, stream);
    case BinaryFn::Sub:
        return launchBinary(Binary<static_cast<int>(BinaryFn::Sub)>{fn}, a, b, out, n, stream);
    case BinaryFn::Mul:
        return launchBinary(Binary<static_cast<int>(BinaryFn::Mul)>{fn}, a, b, out, n, stream);
    case BinaryFn::Div:
        return launchBinary(Binary<static_cast<int>(BinaryFn::Div)>{fn}, a, b, out, n, stream);
    case BinaryFn::Max:
        return launchBinary(Binary<static_cast<int>(BinaryFn::Max)>{fn}, a, b, out, n, stream);
    default:
        return launchBinary(Binary<-1>{fn}, a, b, out, n, stream);
    }
}

void launchUnaryContiguous(const UnaryF32& op, i64 n, cudaStream_t stream) {
    if (n <= 0)
        return;
    if (op.fn == UnaryFn::Relu)
        return launchUnary(UnaryOp<static_cast<int>(UnaryFn::Relu)>{op.fn, op.a, op.b}, op.x, op.y,
                           n, stream);
    launchUnary(UnaryOp<-1>{op.fn, op.a, op.b}, op.x, op.y, n, stream);
}

namespace {

__device__ double rowInitial(RowReduction fn) {
    return fn == RowReduction::Max ? -INFINITY : fn == RowReduction::Min ? INFINITY : 0.0;
}

/// Combines two partial results (Reduce's warp combination).
__device__ double rowCombine(RowReduction fn, double a, double b) {
    switch (fn) {
    case RowReduction::Max:
        return b > a ? b : a;
    case RowReduction::Min:
        return b < a ? b : a;
    default:
        return a + b;
    }
}

/// Folds one element into a partial result (Reduce's per-element step): its square or its
/// magnitude for the norms, then combined.
__device__ double rowFold(RowReduction fn, double acc, double v) {
    if (fn == RowReduction::SumSquare || fn == RowReduction::L2)
        v = v * v;
    else if (fn == RowReduction::L1)
        v = v < 0 ? -v : v;
    return rowCombine(fn, acc, v);
}

__device__ double warpCombine(RowReduction fn, double v) {
    for (int offset = 16; offset > 0; offset /= 2)
        v = rowCombine(fn, v, __shfl_down_sync(0xffffffffu, v, offset));
    return v;
}

__global__ void contiguousRowReduceKernel(const float* x, float* y, i64 rows, i64 count,
                                          RowReduction fn) {
    __shared__ double partial[32];
    const int lane = static_cast<int>(threadIdx.x & 31), warp = static_cast<int>(threadIdx.x / 32);
    const int warps = static_cast<int>(blockDim.x / 32);
    for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
        const float* p = x + row * count;
        double acc = rowInitial(fn);
        // Four independent loads in flight a thread, so that a long row is not one load's
        // latency after another.
        i64 i = threadIdx.x;
        const i64 step = blockDim.x;
        for (; i + 3 * step < count; i += 4 * step) {
            const double a = p[i], b = p[i + step], c = p[i + 2 * step], d = p[i + 3 * step];
            acc = rowFold(fn, rowFold(fn, rowFold(fn, rowFold(fn, acc, a), b), c), d);
        }
        for (; i < count; i += step)
            acc = rowFold(fn, acc, p[i]);
        acc = warpCombine(fn, acc);
        if (lane == 0)
            partial[warp] = acc;
        __syncthreads();
        if (warp == 0) {
            acc = lane < warps ? partial[lane] : rowInitial(fn);
            acc = warpCombine(fn, acc);
            if (lane == 0) {
                if (fn == RowReduction::Mean)
                    acc /= static_cast<double>(count);
                else if (fn == RowReduction::L2)
                    acc = sqrt(acc);
                y[row] = static_cast<float>(acc);
            }
        }
        __syncthreads(); // partial is the next row's
    }
}

} // namespace

void launchContiguousRowReduce(const float* x, float* y, i64 rows, i64 count, RowReduction fn,
                               cudaStream_t stream) {
    if (rows <= 0)
        return;
    const int threads = count >= 8192 ? 512 : count >= 2048 ? 256 : 128;
    const i64 blocks = std::min<i64>(rows, kMaxBlocks);
    clearStale();
    contiguousRowReduceKernel<<<static_cast<unsigned>(blocks), threads, 0, stream>>>(x, y, rows,
                                                                                     count, fn);
    check("contiguousRowReduceKernel");
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
// The indexing and layout functors (kernels/IndexingPlan.h).
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
template void launchRows(const RmsNorm&, i64, cudaStream_t);
template void launchRows(const GroupQueryAttention&, i64, cudaStream_t);
template void launchElements(const RotaryEmbedding&, i64, cudaStream_t);
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
template void launchElements(const BlockQuantMatmul&, i64, cudaStream_t);
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
