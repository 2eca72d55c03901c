// CPU kernels for every operator the readers support: oneDNN for convolution, matrix products,
// pooling, normalisation, softmax, reductions and the element-wise ops it covers; plain code for
// data movement and the rest.
#pragma once

#include "ir/OpSemantics.h"
#include "runtime/Kernel.h"

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

/// A kernel for `spec` on a CPU context, or a sentence saying why there is none.
Result<std::unique_ptr<Kernel>> makeCpuKernel(const KernelSpec& spec, CpuKernelContext& context);

/// The kernel families the CPU backend has kernels for (it must be every family whose
/// kernelCapability has CPU types; tst_kernels checks).
std::vector<KernelFamily> cpuKernelFamilies();

} // namespace placer
