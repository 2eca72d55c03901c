// An NVIDIA GPU as a placer Device: memory through a caching allocator, a compute stream and a
// copy stream (the executor's two lanes), pinned staging buffers for host copies, peer copies
// between GPUs, CUDA events for dependencies and for timing. Its worker thread only issues work.
#pragma once

#include "backends/cuda/CachingAllocator.h"
#include "backends/cuda/HostCopier.h"
#include "device/Device.h"
#include "kernels/KernelErrorWord.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace placer {
class WorkQueue;
}

namespace placer::cuda {

/// A cached cuDNN convolution algorithm with its workspace size.
struct ConvAlgorithm {
    cudnnConvolutionFwdAlgo_t algorithm{};
    std::size_t workspace = 0;
    /// A pointwise convolution run as cuBLAS matrix products instead (faster for it here).
    bool gemm = false;
    /// Else, where not empty: one of cuDNN's graph engines, its configuration as text
    /// (backends/cuda/ConvEngines.h), run instead of `algorithm`.
    std::string engine;
};

class CudaDevice final : public Device {
public:
    /// Creates the device's streams, handles and staging buffers; the error says why not.
    static Result<std::unique_ptr<CudaDevice>> create(int ordinal);
    ~CudaDevice() override;

    const std::string& name() const override { return m_name; }
    DeviceKind kind() const override { return DeviceKind::Cuda; }
    std::string description() const override { return m_description; }
    int ordinal() const { return m_ordinal; }

    Result<std::byte*> allocate(std::int64_t) override;
    void free(std::byte*) override;
    std::int64_t bytesInUse() const override;
    std::int64_t peakBytes() const override;
    void resetPeak() override;
    /// The GPU's free memory plus what the caching allocator keeps free.
    std::int64_t allocatableBytes() const override;
    CachingAllocator::Stats allocatorStats() const { return m_allocator->stats(); }

    void copyIn(std::byte* dst, const void* src, std::int64_t bytes) override;
    void copyOut(void* dst, const std::byte* src, std::int64_t bytes) override;
    void copyPeer(std::byte* dst, Device& source, const std::byte* src,
                  std::int64_t bytes) override;
    bool hostAccessible() const override { return false; }
    bool pinHost(std::byte* data, std::int64_t bytes) override;
    void unpinHost(std::byte* data) override;

    Result<std::unique_ptr<Kernel>> prepare(const KernelSpec& spec) override;
    void finishLane() override;

    void enqueue(std::function<void()> task) override;
    void synchronize() override;
    std::unique_ptr<Event> createEvent() override;
    double now() const override;

    int laneCount() const override { return 2; }
    int laneFor(WorkKind kind) const override { return kind == WorkKind::Compute ? 0 : 1; }
    void setLane(int lane) override { m_lane = lane; }
    void waitFor(const Event& event, std::uint32_t epoch) override;
    bool timesAsynchronously() const override { return true; }
    void reserveMarks(int count) override;
    void resetMarks() override;
    int mark() override;
    double markTime(int marker) const override;
    std::string takeAsyncError() override;

    // For the kernels.
    cudaStream_t computeStream() const { return m_streams[0]; }
    cudaStream_t currentStream() const { return m_streams[m_lane]; }
    cublasHandle_t cublas() const { return m_cublas; }
    /// Null where cuDNN could not be loaded: the kernels that need it say so (cudnnMissing()).
    cudnnHandle_t cudnn() const { return m_cudnn; }
    /// What a measured algorithm choice is valid for: the GPU, its architecture and cuDNN's
    /// version ("NVIDIA_H200/sm_90/cudnn91300").
    const std::string& algorithmKey() const { return m_algorithmKey; }
    /// Why this device has no cuDNN, or empty.
    const std::string& cudnnMissing() const { return m_cudnnMissing; }
    /// Device memory for convolution workspaces, shared by every convolution of this device
    /// (they run one after another on the compute stream), grown to the largest need; a smaller
    /// block it replaces is freed when the device is. Counted in bytesInUse.
    Result<std::byte*> convWorkspace(std::int64_t bytes);
    /// The fixed workspace budget of a convolution's algorithm: the same on every machine, so
    /// that the choice, and with it the output's bits, does not depend on what else holds memory.
    static constexpr std::int64_t kConvWorkspaceBudget = std::int64_t{256} << 20;
    /// The shared functors' scratch, and room for the convolution workspace to grow to its
    /// budget when `specs` hold a convolution (the old one stays while earlier work may read it).
    std::int64_t kernelMemoryBytes(const std::vector<KernelSpec>& specs) const override;
    std::int64_t convWorkspaceBytes() const { return m_workspaceBytes; }
    std::byte* convWorkspacePointer() const { return m_workspace; }
    /// The caching allocator, for what must give its cached blocks back before a library
    /// allocates on its own (cuDNN's algorithm search).
    CachingAllocator& allocator() { return *m_allocator; }
    /// Keeps a failure found outside a kernel (a failed event record) for takeAsyncError.
    void noteAsyncError(const std::string& what);
    /// The device word kernels report data-dependent failures in, and the id that names a
    /// kernel in it ("gather '%3'").
    long long* errorWord() const { return m_errorWord; }
    long long registerErrorSource(std::string name);
    /// Convolution algorithms found so far, by shape.
    std::map<std::string, ConvAlgorithm>& convAlgorithms() { return m_convAlgorithms; }

private:
    explicit CudaDevice(int ordinal);
    std::optional<SourceError> init();
    /// Peer access to GPU `other`, enabled the first time a copy needs it.
    void enablePeerAccess(int other);
    /// Host memory to device memory on `stream` through the pinned staging buffers.
    void stagedCopyIn(std::byte* dst, const void* src, std::int64_t bytes, cudaStream_t stream);

    int m_ordinal;
    std::string m_name;
    std::string m_description;
    cudaStream_t m_streams[2] = {nullptr, nullptr}; ///< compute, copy
    cudaStream_t m_outStream = nullptr;             ///< copies out, from any thread
    std::mutex m_outMutex;
    int m_lane = 0;
    std::unique_ptr<CachingAllocator> m_allocator;
    cublasHandle_t m_cublas = nullptr;
    cudnnHandle_t m_cudnn = nullptr;

    struct Staging {
        void* host = nullptr;
        cudaEvent_t done = nullptr; ///< the copy reading it finished
    };
    std::vector<Staging> m_staging; ///< for copies in, round robin
    std::size_t m_nextStaging = 0;
    Staging m_outStaging;
    /// Fills and drains the staging buffers, over a few threads on a large machine.
    std::unique_ptr<HostCopier> m_copier;

    std::vector<cudaEvent_t> m_marks;
    std::size_t m_nextMark = 0;
    cudaEvent_t m_origin = nullptr;
    double m_originHost = 0;

    long long* m_errorWord = nullptr;
    KernelErrorWord m_errorWordProtocol; ///< the kernels that may set m_errorWord
    mutable std::mutex m_asyncMutex;
    std::string m_asyncError; ///< the first failure a synchronisation saw
    std::map<std::string, ConvAlgorithm> m_convAlgorithms;
    std::string m_cudnnMissing;
    std::string m_algorithmKey;
    void* m_cublasWorkspace = nullptr;
    std::byte* m_workspace = nullptr;
    std::int64_t m_workspaceBytes = 0;
    std::vector<std::byte*> m_retiredWorkspaces; ///< smaller ones, perhaps still in use
    std::vector<int> m_peers;                    ///< GPUs peer access was enabled to
    std::mutex m_peerMutex;
    std::unique_ptr<WorkQueue> m_worker; ///< last: stops first
};

/// The staging buffer size: copies larger than this are pipelined through several buffers.
inline constexpr std::int64_t kStagingBytes = 8 << 20;
inline constexpr int kStagingBuffers = 4;
/// Host storages smaller than this are not pinned: staging costs them little, and pinning works
/// on whole pages that small allocations share.
inline constexpr std::int64_t kPinMinBytes = 1 << 20;
/// cuBLAS's workspace (cublasSetWorkspace), from the caching allocator.
inline constexpr std::int64_t kCublasWorkspaceBytes = 32 << 20;

} // namespace placer::cuda
