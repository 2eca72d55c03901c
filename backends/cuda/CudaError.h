// CUDA, cuBLAS and cuDNN failures as values: the call, its error and where it was made. Kernels
// throw them as DeviceFailure (the executor turns that into the run's error); load-time code
// returns them as SourceError. Either clears the thread's last CUDA error, so that a later
// call's check does not report this one as its own. Nothing here aborts.
#pragma once

#include "kernels/Kernel.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

namespace placer::cuda {

inline std::string describe(cudaError_t error) {
    return std::string(cudaGetErrorName(error)) + " (" + cudaGetErrorString(error) + ")";
}
inline std::string describe(cublasStatus_t status) {
    return cublasGetStatusString(status);
}
inline std::string describe(cudnnStatus_t status) {
    return cudnnGetErrorString(status);
}
inline bool failed(cudaError_t error) {
    return error != cudaSuccess;
}
inline bool failed(cublasStatus_t status) {
    return status != CUBLAS_STATUS_SUCCESS;
}
inline bool failed(cudnnStatus_t status) {
    return status != CUDNN_STATUS_SUCCESS;
}

/// What a failed call says of its device (kernels/Kernel.h DeviceFailure): out of memory, the
/// device gone or unusable for the rest of the process, or an error of this call.
inline DeviceFailure::Kind failureKind(cudaError_t error) {
    switch (error) {
    case cudaErrorMemoryAllocation:
        return DeviceFailure::Kind::OutOfMemory;
    case cudaErrorNoDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorLaunchFailure:
    case cudaErrorIllegalAddress:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorUnknown:
        return DeviceFailure::Kind::Lost; // sticky: the context is unusable from now on
    default:
        return DeviceFailure::Kind::Error;
    }
}
inline DeviceFailure::Kind failureKind(cublasStatus_t status) {
    return status == CUBLAS_STATUS_ALLOC_FAILED ? DeviceFailure::Kind::OutOfMemory
                                                : DeviceFailure::Kind::Error;
}
inline DeviceFailure::Kind failureKind(cudnnStatus_t status) {
    return status == CUDNN_STATUS_ALLOC_FAILED ? DeviceFailure::Kind::OutOfMemory
                                               : DeviceFailure::Kind::Error;
}

/// "cudaMemcpyAsync(...) failed: cudaErrorInvalidValue (invalid argument) at CudaDevice.cpp:120"
template <typename Status>
std::string failure(const char* call, Status status, const char* file, int line) {
    std::string where = file;
    if (const auto slash = where.rfind('/'); slash != std::string::npos)
        where = where.substr(slash + 1);
    return std::string(call) + " failed: " + describe(status) + " at " + where + ":" +
           std::to_string(line);
}

} // namespace placer::cuda

/// Throws a DeviceFailure when `call` fails (inside kernels and copies, which run in the
/// executor): a run that can go on without the device does.
#define PLACER_CUDA_THROW(call)                                                                    \
    do {                                                                                           \
        const auto placerStatus_ = (call);                                                         \
        if (::placer::cuda::failed(placerStatus_)) {                                               \
            cudaGetLastError(); /* reported here: not the next call's error */                     \
            throw ::placer::DeviceFailure(                                                         \
                ::placer::cuda::failureKind(placerStatus_),                                        \
                ::placer::cuda::failure(#call, placerStatus_, __FILE__, __LINE__));                \
        }                                                                                          \
    } while (0)

/// Returns a SourceError from the enclosing function when `call` fails (load time).
#define PLACER_CUDA_RETURN(call)                                                                   \
    do {                                                                                           \
        const auto placerStatus_ = (call);                                                         \
        if (::placer::cuda::failed(placerStatus_)) {                                               \
            cudaGetLastError(); /* reported here: not the next call's error */                     \
            return ::placer::SourceError{                                                          \
                "", 0, 0, ::placer::cuda::failure(#call, placerStatus_, __FILE__, __LINE__)};      \
        }                                                                                          \
    } while (0)
