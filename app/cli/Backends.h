// The device backends this build has beyond core's own CPUs, registered by each program's main()
// before it makes a DeviceRegistry (core never names them).
#pragma once

#if PLACER_HAVE_CUDA
#include "cuda/CudaBackend.h"
#endif

namespace placer::cli {

inline void registerBuiltBackends() {
#if PLACER_HAVE_CUDA
    cuda::registerCudaBackend();
#endif
}

} // namespace placer::cli
