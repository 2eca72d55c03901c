// cuBLAS and cuDNN are opened when a GPU device first calls them (backends/cuda/LazyLibraries.cpp),
// not linked: planning, and running on CPUs, never load them.
#pragma once

#include <string>

namespace placer::cuda {

/// Why cuBLAS or cuDNN could not be opened (the loader's words), or empty.
std::string lazyLibraryError();
/// Why cuBLAS cannot be used (it did not open, lacks a function this build calls, or has another
/// major version than this build was compiled against), or empty. Opens it.
std::string cublasLibraryProblem();
/// The same for cuDNN, whose CUDA major version must also be this build's.
std::string cudnnLibraryProblem();

} // namespace placer::cuda
