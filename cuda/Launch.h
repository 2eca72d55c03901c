// Launching the functors of runtime/ElementFunctors.h on a CUDA stream (Launch.cu). Every launch
// checks for a launch error and throws a KernelError naming the kernel, file and line.
#pragma once

#include "runtime/ElementFunctors.h"
#include "runtime/IndexingFunctors.h"
#include "runtime/SignalFunctors.h"
#include "runtime/TrainingFunctors.h"

#include <cuda_runtime_api.h>

#include <string>

namespace placer::cuda {

using namespace placer::functors;

/// One thread per element, grid-strided.
template <typename Op> void launchElements(const Op& op, i64 n, cudaStream_t stream);
/// One warp per row.
template <typename Op> void launchRows(const Op& op, i64 rows, cudaStream_t stream);

/// Whether this build has kernels the device can run (a build without its architecture cannot
/// launch anything there); *why says why not.
bool kernelsRunOn(int ordinal, std::string* why);
/// The architectures this build carries kernels for ("80, 90").
std::string builtArchitectures();

} // namespace placer::cuda
