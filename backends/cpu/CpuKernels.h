// CPU kernels for every operator the readers support: oneDNN for convolution, matrix products,
// pooling, normalisation, softmax, reductions and the element-wise ops it covers; plain code for
// data movement and the rest.
#pragma once

#include "ir/OpSemantics.h"
#include "kernels/Kernel.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <vector>

namespace placer {

struct CpuKernelContext {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    int threads = 1;
};

/// Sets the calling thread's OpenMP thread count for as long as it lives (0: leaves it), then
/// restores it. Kernels run outside a context's worker (constant folding at load) run under one
/// thread: a team of helper threads kept for the calling thread would make every context's
/// helpers sleep between kernels rather than wait for the next, since libgomp stops spinning
/// once it keeps more threads than there are cores.
class ScopedOmpThreads {
public:
    explicit ScopedOmpThreads(int threads);
    ~ScopedOmpThreads();
    ScopedOmpThreads(const ScopedOmpThreads&) = delete;
    ScopedOmpThreads& operator=(const ScopedOmpThreads&) = delete;

private:
    int m_before;
};

/// A kernel for `spec` on a CPU context, or a sentence saying why there is none.
Result<std::unique_ptr<Kernel>> makeCpuKernel(const KernelSpec& spec, CpuKernelContext& context);

/// Weight packing (passes/WeightPacking.h): the layout the kernel for `spec` would want its
/// constant input `input` in, when that differs from its own and takes the same bytes (a matrix
/// product's one weight matrix, in oneDNN's blocked layout); empty otherwise.
std::string packedLayoutFor(const KernelSpec& spec, std::size_t input, CpuKernelContext& context);

/// Transpose elimination (passes/TransposeElimination.h): whether the kernel for a matrix product
/// with strided views runs as fast as with dense operands (oneDNN keeps its implementation).
bool viewsKeepSpeedFor(const KernelSpec& spec, CpuKernelContext& context);

/// The kernel families the CPU backend has kernels for (it must be every family whose
/// kernelCapability has CPU types; tst_kernels checks).
std::vector<KernelFamily> cpuKernelFamilies();

} // namespace placer
