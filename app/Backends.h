// The device backends this build has beyond core's own CPUs, registered by each program's main()
// before it makes a DeviceRegistry (core never names them).
#pragma once

#include "runtime/ConstantEvaluation.h"

#if PLACER_HAVE_CUDA
#include "cuda/CudaBackend.h"
#endif

namespace placer::app {

/// Also makes the CPU kernels the readers' constant evaluator (folding at load).
inline void registerBuiltBackends() {
    installConstantFolding();
#if PLACER_HAVE_CUDA
    cuda::registerCudaBackend();
#endif
}

} // namespace placer::app
