// The CUDA backend announces itself as the program starts: linked whole into every program that
// links placer_cuda (its CMakeLists.txt). Finding the GPUs waits until a registry asks.
#include "backends/cuda/CudaBackend.h"

namespace placer::cuda {
namespace {

[[maybe_unused]] const bool registered = [] {
    registerCudaBackend();
    return true;
}();

} // namespace
} // namespace placer::cuda
