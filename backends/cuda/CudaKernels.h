// CUDA kernels for every operator the CPU backend runs: cuBLAS for matrix products, cuDNN for
// convolution (algorithm found once per shape) and softmax, the functors of
// kernels/ElementFunctors.h for the rest. Shapes and library descriptors are fixed when a kernel is
// prepared; running it only launches on the device's compute stream.
#pragma once

#include "ir/OpSemantics.h"
#include "kernels/Kernel.h"

#include <memory>
#include <string>
#include <vector>

namespace placer::cuda {

class CudaDevice;

/// A kernel for `spec` on `device`, or a sentence saying why there is none. Runs on the
/// device's worker.
Result<std::unique_ptr<Kernel>> makeCudaKernel(const KernelSpec& spec, CudaDevice& device);

/// The kernel families the CUDA backend has kernels for (it must be every family whose
/// kernelCapability has CUDA types; tst_cuda checks).
std::vector<KernelFamily> cudaKernelFamilies();

} // namespace placer::cuda
