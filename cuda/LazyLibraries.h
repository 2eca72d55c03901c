// cuBLAS and cuDNN are opened when a GPU device first calls them (cuda/LazyLibraries.cpp), not
// linked: planning, and running on CPUs, never load them.
#pragma once

#include <string>

namespace placer::cuda {

/// Why cuBLAS or cuDNN could not be opened (the loader's words), or empty.
std::string lazyLibraryError();

} // namespace placer::cuda
