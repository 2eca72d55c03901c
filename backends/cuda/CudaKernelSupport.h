// What the CUDA backend's kernel files share (private to backends/cuda): kernels made from a
// function, errors naming the node, shapes as the functors take them, cuDNN descriptors owned
// by the kernel that uses them, and the algorithm cache of the convolutions measured here.
#pragma once

#include "backends/cuda/CudaChecks.h"
#include "backends/cuda/CudaDevice.h"
#include "backends/cuda/CudaError.h"
#include "backends/cuda/Launch.h"
#include "kernels/KernelSupport.h"
#include "kernels/OpGeometry.h"

#include <cudnn.h>

#include <memory>
#include <string>
#include <vector>

namespace placer::cuda::detail {

using namespace geometry;

using Body = FunctionKernel::Body;

using KernelResult = Result<std::unique_ptr<Kernel>>;

inline KernelResult makeKernel(std::string implementation, Body body) {
    return placer::makeKernel("cuda:" + implementation, std::move(body));
}

inline SourceError specError(const KernelSpec& spec, const std::string& message) {
    return SourceError{"", 0, 0,
                       "no CUDA kernel for " + spec.node->op->name + " node '" + spec.node->name +
                           "': " + message};
}

inline bool toShape(const Dims& dims, Shape* shape) {
    return toFunctorShape(dims, shape);
}

inline Strides toStrides(const Dims& strides) {
    return toFunctorStrides(strides);
}

inline bool allFloat32(const KernelSpec& spec) {
    for (const TensorType& t : spec.inputs)
        if (t.dtype != DType::Float32)
            return false;
    for (const TensorType& t : spec.outputs)
        if (t.dtype != DType::Float32)
            return false;
    return true;
}

inline const char* const kRankError = kFunctorRankError;

/// A cuDNN descriptor, destroyed with the kernel.
template <typename T, cudnnStatus_t (*Destroy)(T)> struct Descriptor {
    T handle = nullptr;
    ~Descriptor() {
        if (handle)
            Destroy(handle);
    }
};
using TensorDesc = Descriptor<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using FilterDesc = Descriptor<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using ConvDesc = Descriptor<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;

/// A cuDNN tensor of `extents` (padded to rank 4), dense; its extents and strides are ints, so
/// a tensor whose extents or strides an int cannot hold is refused, not wrapped.
inline Result<std::shared_ptr<TensorDesc>> tensorDesc(Dims extents) {
    while (extents.size() < 4)
        extents.push_back(1);
    Dims strides(extents.size(), 1);
    for (std::size_t i = extents.size() - 1; i-- > 0;)
        strides[i] = strides[i + 1] * extents[i + 1];
    if (auto overflow = intOverflow(extents, "an extent", "cuDNN"))
        return SourceError::sentence(*overflow);
    if (auto overflow = intOverflow(strides, "a stride", "cuDNN"))
        return SourceError::sentence(*overflow);
    const std::vector<int> dims(extents.begin(), extents.end());
    const std::vector<int> intStrides(strides.begin(), strides.end());
    auto desc = std::make_shared<TensorDesc>();
    PLACER_CUDA_RETURN(cudnnCreateTensorDescriptor(&desc->handle));
    PLACER_CUDA_RETURN(cudnnSetTensorNdDescriptor(desc->handle, CUDNN_DATA_FLOAT,
                                                  static_cast<int>(dims.size()), dims.data(),
                                                  intStrides.data()));
    return desc;
}

inline std::vector<int> intDims(const Dims& dims) {
    return std::vector<int>(dims.begin(), dims.end());
}

/// A kernel that does nothing: an op whose output is empty (cuDNN refuses empty descriptors).
inline KernelResult emptyKernel(const char* name) {
    return makeKernel(name, [](const std::byte* const*, std::byte* const*) {});
}

/// The convolution algorithms measured on this machine (backends/cuda/CudaChecks.h), in the user's
/// cache.
inline AlgorithmCache& algorithmCache() {
    static AlgorithmCache cache(cacheFilePath("cudnn-convolutions.txt"));
    return cache;
}

/// The convolution kernel (CudaConvolution.cpp): cuDNN's legacy algorithms, its graph engines
/// (ConvEngines.h) and, for pointwise convolutions, cuBLAS, timed on this device and the fastest
/// kept.
KernelResult convolutionKernel(const KernelSpec& spec, CudaDevice& device);

} // namespace placer::cuda::detail
