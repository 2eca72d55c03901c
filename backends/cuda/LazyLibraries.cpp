// cuBLAS and cuDNN, opened on first use rather than linked. Linking them costs every run of the
// programs some 210 MB of resident memory (cuBLAS's loader touches its whole library) and the
// time to load them, even to plan a model or run it on CPUs; now only a process that creates a
// GPU device pays. Each function here has the library's own signature, finds the library's
// function once, and forwards to it; where the library cannot be opened it returns the library's
// "not initialised" status, and the device that asked reports why (lazyLibraryError()).
#include "backends/cuda/LazyLibraries.h"

#include "backends/cuda/CudaChecks.h"

#include <cublas_v2.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <mutex>
#include <string>
#include <vector>

namespace placer::cuda {
namespace {

struct Library {
    const char* soname;
    const char* buildPath; ///< where the build found it, tried when the soname is not found
    std::once_flag once;
    void* handle = nullptr;
    std::string error;
    std::mutex mutex;
    std::vector<std::string> missing; ///< functions this build calls that the library lacks
};

#define PLACER_STRINGIFY_(x) #x
#define PLACER_STRINGIFY(x) PLACER_STRINGIFY_(x)

Library& cublasLibrary() {
    static Library library{"libcublas.so." PLACER_STRINGIFY(CUBLAS_VER_MAJOR), PLACER_CUBLAS_PATH};
    return library;
}

Library& cudnnLibrary() {
    static Library library{"libcudnn.so." PLACER_STRINGIFY(CUDNN_MAJOR), PLACER_CUDNN_PATH};
    return library;
}

/// Opens `library` once (by soname, else where the build found it); whether it is open.
bool open(Library& library) {
    std::call_once(library.once, [&] {
        library.handle = ::dlopen(library.soname, RTLD_NOW | RTLD_LOCAL);
        if (!library.handle) {
            const std::string first = ::dlerror();
            library.handle = ::dlopen(library.buildPath, RTLD_NOW | RTLD_LOCAL);
            if (!library.handle)
                library.error = first;
        }
    });
    return library.handle != nullptr;
}

void* symbol(Library& library, const char* name) {
    if (!open(library))
        return nullptr;
    void* function = ::dlsym(library.handle, name);
    if (!function) {
        std::lock_guard lock(library.mutex);
        library.missing.emplace_back(name);
    }
    return function;
}

/// Why `library` cannot be used so far: it did not open, or lacks functions that were asked for.
std::string openProblem(Library& library) {
    if (!open(library))
        return library.error;
    std::lock_guard lock(library.mutex);
    std::string out;
    for (const std::string& name : library.missing)
        out += (out.empty() ? std::string(library.soname) + " has no " : ", ") + name;
    return out;
}

template <typename Fn> Fn lookup(Library& library, const char* name) {
    return reinterpret_cast<Fn>(symbol(library, name));
}

} // namespace

std::string cublasLibraryProblem() {
    if (std::string why = openProblem(cublasLibrary()); !why.empty())
        return why;
    int major = 0, minor = 0;
    if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
        cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS)
        return "cannot read the version of " + std::string(cublasLibrary().soname);
    return libraryVersionProblem("cuBLAS", major, minor, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR);
}

std::string cudnnLibraryProblem() {
    if (std::string why = openProblem(cudnnLibrary()); !why.empty())
        return why;
    // cudnnGetVersion is MAJOR * 10000 + MINOR * 100 + PATCH from cuDNN 9 on.
    const std::size_t version = cudnnGetVersion();
    const int major = static_cast<int>(version / 10000),
              minor = static_cast<int>(version / 100 % 100);
    if (std::string why = libraryVersionProblem("cuDNN", major, minor, CUDNN_MAJOR, CUDNN_MINOR);
        !why.empty())
        return why;
    // cuDNN built for another CUDA major version loads that version's libraries.
    const int cudart = static_cast<int>(cudnnGetCudartVersion());
    if (cudart / 1000 != CUDART_VERSION / 1000)
        return "cuDNN " + std::to_string(major) + "." + std::to_string(minor) +
               " was built for CUDA " + std::to_string(cudart / 1000) + ", this build for CUDA " +
               std::to_string(CUDART_VERSION / 1000);
    return {};
}

std::string lazyLibraryError() {
    std::string out;
    for (Library* library : {&cublasLibrary(), &cudnnLibrary()}) {
        if (!library->error.empty())
            out += (out.empty() ? "" : "; ") + library->error;
    }
    return out;
}

} // namespace placer::cuda

using placer::cuda::cublasLibrary;
using placer::cuda::cudnnLibrary;
using placer::cuda::lookup;

// Each forwarder: the API's name (a macro for the _v2 symbol where cuBLAS has one), its library,
// what it returns when the library is missing, and its parameters and arguments.
#define PLACER_FORWARD(library, missing, name, params, args)                                       \
    auto name params->decltype(name args) {                                                        \
        static const auto function = lookup<decltype(&name)>(library(), PLACER_STRINGIFY(name));   \
        if (!function)                                                                             \
            return missing;                                                                        \
        return function args;                                                                      \
    }

extern "C" {

PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasCreate,
               (cublasHandle_t * handle), (handle))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasDestroy, (cublasHandle_t handle),
               (handle))
PLACER_FORWARD(cublasLibrary, "cuBLAS is not available", cublasGetStatusString,
               (cublasStatus_t status), (status))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasGetProperty,
               (libraryPropertyType type, int* value), (type, value))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasSetWorkspace,
               (cublasHandle_t handle, void* workspace, size_t bytes), (handle, workspace, bytes))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasSetStream,
               (cublasHandle_t handle, cudaStream_t stream), (handle, stream))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasSgemm,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
                const float* beta, float* C, int ldc),
               (handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc))
PLACER_FORWARD(cublasLibrary, CUBLAS_STATUS_NOT_INITIALIZED, cublasSgemmStridedBatched,
               (cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m,
                int n, int k, const float* alpha, const float* A, int lda, long long int strideA,
                const float* B, int ldb, long long int strideB, const float* beta, float* C,
                int ldc, long long int strideC, int batchCount),
               (handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
                ldc, strideC, batchCount))

PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnCreate, (cudnnHandle_t * handle),
               (handle))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnDestroy, (cudnnHandle_t handle),
               (handle))
PLACER_FORWARD(cudnnLibrary, 0, cudnnGetVersion, (), ())
PLACER_FORWARD(cudnnLibrary, 0, cudnnGetCudartVersion, (), ())
PLACER_FORWARD(cudnnLibrary, "cuDNN is not available", cudnnGetErrorString, (cudnnStatus_t status),
               (status))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetStream,
               (cudnnHandle_t handle, cudaStream_t stream), (handle, stream))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnCreateTensorDescriptor,
               (cudnnTensorDescriptor_t * desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnDestroyTensorDescriptor,
               (cudnnTensorDescriptor_t desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetTensorNdDescriptor,
               (cudnnTensorDescriptor_t desc, cudnnDataType_t dataType, int nbDims,
                const int dimA[], const int strideA[]),
               (desc, dataType, nbDims, dimA, strideA))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnAddTensor,
               (cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t aDesc,
                const void* A, const void* beta, const cudnnTensorDescriptor_t cDesc, void* C),
               (handle, alpha, aDesc, A, beta, cDesc, C))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSoftmaxForward,
               (cudnnHandle_t handle, cudnnSoftmaxAlgorithm_t algo, cudnnSoftmaxMode_t mode,
                const void* alpha, const cudnnTensorDescriptor_t xDesc, const void* x,
                const void* beta, const cudnnTensorDescriptor_t yDesc, void* y),
               (handle, algo, mode, alpha, xDesc, x, beta, yDesc, y))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnCreateFilterDescriptor,
               (cudnnFilterDescriptor_t * desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnDestroyFilterDescriptor,
               (cudnnFilterDescriptor_t desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetFilterNdDescriptor,
               (cudnnFilterDescriptor_t desc, cudnnDataType_t dataType, cudnnTensorFormat_t format,
                int nbDims, const int filterDimA[]),
               (desc, dataType, format, nbDims, filterDimA))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnCreateConvolutionDescriptor,
               (cudnnConvolutionDescriptor_t * desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnDestroyConvolutionDescriptor,
               (cudnnConvolutionDescriptor_t desc), (desc))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetConvolutionNdDescriptor,
               (cudnnConvolutionDescriptor_t desc, int arrayLength, const int padA[],
                const int filterStrideA[], const int dilationA[], cudnnConvolutionMode_t mode,
                cudnnDataType_t computeType),
               (desc, arrayLength, padA, filterStrideA, dilationA, mode, computeType))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetConvolutionGroupCount,
               (cudnnConvolutionDescriptor_t desc, int groupCount), (desc, groupCount))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnSetConvolutionMathType,
               (cudnnConvolutionDescriptor_t desc, cudnnMathType_t mathType), (desc, mathType))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnFindConvolutionForwardAlgorithm,
               (cudnnHandle_t handle, const cudnnTensorDescriptor_t xDesc,
                const cudnnFilterDescriptor_t wDesc, const cudnnConvolutionDescriptor_t convDesc,
                const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
                int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults),
               (handle, xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount,
                perfResults))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnConvolutionForward,
               (cudnnHandle_t handle, const void* alpha, const cudnnTensorDescriptor_t xDesc,
                const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
                const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo,
                void* workSpace, size_t workSpaceSizeInBytes, const void* beta,
                const cudnnTensorDescriptor_t yDesc, void* y),
               (handle, alpha, xDesc, x, wDesc, w, convDesc, algo, workSpace, workSpaceSizeInBytes,
                beta, yDesc, y))

PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendCreateDescriptor,
               (cudnnBackendDescriptorType_t descriptorType, cudnnBackendDescriptor_t* descriptor),
               (descriptorType, descriptor))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendDestroyDescriptor,
               (cudnnBackendDescriptor_t descriptor), (descriptor))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendFinalize,
               (cudnnBackendDescriptor_t descriptor), (descriptor))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendSetAttribute,
               (cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t attributeName,
                cudnnBackendAttributeType_t attributeType, int64_t elementCount,
                const void* arrayOfElements),
               (descriptor, attributeName, attributeType, elementCount, arrayOfElements))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendGetAttribute,
               (cudnnBackendDescriptor_t const descriptor,
                cudnnBackendAttributeName_t attributeName,
                cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
                int64_t* elementCount, void* arrayOfElements),
               (descriptor, attributeName, attributeType, requestedElementCount, elementCount,
                arrayOfElements))
PLACER_FORWARD(cudnnLibrary, CUDNN_STATUS_NOT_INITIALIZED, cudnnBackendExecute,
               (cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan,
                cudnnBackendDescriptor_t variantPack),
               (handle, executionPlan, variantPack))

} // extern "C"
