// A GPU as a placer Device: memory, streams, events, staging, kernels and timing.
#include "backends/cuda/CudaDevice.h"

#include "device/EpochCounter.h"

#include "backends/cuda/CudaError.h"
#include "backends/cuda/CudaKernels.h"
#include "backends/cuda/LazyLibraries.h"
#include "device/WorkQueue.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

namespace placer::cuda {

namespace {

/// Host memory pinned through pinHost, process-wide (pinning is portable across GPUs): the base
/// address and how many pinHost calls hold it.
struct PinnedHost {
    std::mutex mutex;
    std::map<std::byte*, int> holders;
};
PinnedHost& pinnedHost() {
    static PinnedHost pinned;
    return pinned;
}

/// Whether the driver knows `pointer` as pinned host memory.
bool isPinned(const void* pointer) {
    cudaPointerAttributes attributes{};
    if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
        cudaGetLastError(); // plain pageable memory on older drivers: not a failure
        return false;
    }
    return attributes.type == cudaMemoryTypeHost;
}

/// A point in one of the GPU's streams. The host side counts runs (so a host device can wait
/// for it, and another GPU knows it was issued); the GPU side is a CUDA event. Host threads
/// that wait on it select its GPU first (as PyTorch's device guard does): an event belongs to
/// its device's context, and a thread's current device may be another, or unusable.
class CudaEvent final : public Event {
public:
    CudaEvent(CudaDevice* device, cudaEvent_t event) : m_device(device), m_event(event) {}
    ~CudaEvent() override {
        cudaSetDevice(m_device->ordinal());
        cudaEventDestroy(m_event);
    }

    void record(std::uint32_t epoch) override {
        const cudaStream_t stream = m_device->currentStream();
        const cudaError_t status = cudaEventRecord(m_event, stream);
        if (status != cudaSuccess) {
            cudaGetLastError();
            // A consumer would wait on the previous record and race with this run's work: the
            // work is finished before the record is published, and the run fails.
            cudaStreamSynchronize(stream);
            cudaGetLastError();
            m_device->noteAsyncError(failure("cudaEventRecord", status, __FILE__, __LINE__));
        }
        m_epoch.publish(epoch);
    }
    /// Waits until the record was issued for `epoch`, without waiting for the GPU.
    void waitIssued(std::uint32_t epoch) const { m_epoch.waitFor(epoch); }
    void wait(std::uint32_t epoch) const override {
        waitIssued(epoch);
        cudaSetDevice(m_device->ordinal());
        // A host device waits for the GPU; a fault there is this wait's error too.
        PLACER_CUDA_THROW(cudaEventSynchronize(m_event));
    }
    bool reached(std::uint32_t epoch) const override {
        if (!m_epoch.reached(epoch))
            return false; // not even issued
        cudaSetDevice(m_device->ordinal());
        const cudaError_t status = cudaEventQuery(m_event);
        if (status != cudaSuccess)
            cudaGetLastError(); // not ready, or a fault the device's synchronisation reports
        return status != cudaErrorNotReady;
    }
    double timestamp() const override { return hostClockMicros(); }
    cudaEvent_t event() const { return m_event; }

private:
    CudaDevice* m_device;
    cudaEvent_t m_event;
    EpochCounter m_epoch;
};

std::string formatGiB(std::size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
    return text;
}

} // namespace

CudaDevice::CudaDevice(int ordinal)
    : m_ordinal(ordinal), m_name("cuda:" + std::to_string(ordinal)) {
    m_worker = std::make_unique<WorkQueue>([ordinal] { cudaSetDevice(ordinal); });
}

Result<std::unique_ptr<CudaDevice>> CudaDevice::create(int ordinal) {
    std::unique_ptr<CudaDevice> device(new CudaDevice(ordinal));
    std::optional<SourceError> error;
    device->enqueue([&] { error = device->init(); });
    device->synchronize();
    if (error)
        return SourceError{"", 0, 0, device->m_name + ": " + error->message};
    return device;
}

std::optional<SourceError> CudaDevice::init() {
    const int ordinal = m_ordinal;
    // Since CUDA 12 selecting a device creates its context, which can fail (an exclusive or
    // prohibited compute mode, MIG, no memory): then nothing may run here, least of all on the
    // device the thread had before.
    if (const cudaError_t status = cudaSetDevice(ordinal); status != cudaSuccess) {
        cudaGetLastError();
        return SourceError::sentence("cannot use this GPU: cudaSetDevice(" +
                                     std::to_string(ordinal) + ") failed: " + describe(status));
    }
    m_allocator = std::make_unique<CachingAllocator>(
        [ordinal](std::int64_t bytes, std::string* error) -> void* {
            void* block = nullptr;
            cudaSetDevice(ordinal);
            const cudaError_t status = cudaMalloc(&block, static_cast<std::size_t>(bytes));
            if (status != cudaSuccess) {
                cudaGetLastError();
                std::size_t freeBytes = 0, total = 0;
                cudaMemGetInfo(&freeBytes, &total);
                *error = "out of memory allocating " + formatBytes(bytes) + " (" +
                         formatBytes(static_cast<std::int64_t>(freeBytes)) + " free of " +
                         formatBytes(static_cast<std::int64_t>(total)) + "): " + describe(status);
                return nullptr;
            }
            return block;
        },
        [ordinal](void* block) {
            cudaSetDevice(ordinal);
            cudaFree(block);
        });
    cudaDeviceProp props{};
    PLACER_CUDA_RETURN(cudaGetDeviceProperties(&props, ordinal));
    int driver = 0;
    cudaDriverGetVersion(&driver);
    m_description = std::string(props.name) + ", sm_" + std::to_string(props.major) +
                    std::to_string(props.minor) + ", " + std::to_string(props.multiProcessorCount) +
                    " SMs, " + formatGiB(props.totalGlobalMem) + ", driver " +
                    std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
                    "; compute and copy streams, caching allocator";
    for (cudaStream_t& stream : m_streams)
        PLACER_CUDA_RETURN(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    PLACER_CUDA_RETURN(cudaStreamCreateWithFlags(&m_outStream, cudaStreamNonBlocking));
    // cuBLAS and cuDNN are opened now, by their first call (backends/cuda/LazyLibraries.h), and
    // checked against the versions this build was compiled for. Without cuBLAS the GPU runs nothing
    // useful; without cuDNN it runs everything but convolutions and softmax, which say why.
    if (const cublasStatus_t status = cublasCreate(&m_cublas); status != CUBLAS_STATUS_SUCCESS) {
        m_cublas = nullptr;
        const std::string why = cublasLibraryProblem();
        return SourceError::sentence("cannot load cuBLAS: " +
                                     (why.empty() ? describe(status) : why));
    }
    if (const std::string why = cublasLibraryProblem(); !why.empty())
        return SourceError::sentence("cannot use cuBLAS: " + why);
    PLACER_CUDA_RETURN(cublasSetStream(m_cublas, m_streams[0]));
    if (const cudnnStatus_t status = cudnnCreate(&m_cudnn); status != CUDNN_STATUS_SUCCESS) {
        m_cudnn = nullptr;
        const std::string why = cudnnLibraryProblem();
        m_cudnnMissing = why.empty() ? describe(status) : why;
    } else if (std::string why = cudnnLibraryProblem(); !why.empty()) {
        cudnnDestroy(m_cudnn);
        m_cudnn = nullptr;
        m_cudnnMissing = std::move(why);
    } else {
        PLACER_CUDA_RETURN(cudnnSetStream(m_cudnn, m_streams[0]));
    }
    if (!m_cudnnMissing.empty())
        m_description += "; no cuDNN, so no convolutions or softmax here (" + m_cudnnMissing + ")";
    m_algorithmKey = std::string(props.name) + "/sm_" + std::to_string(props.major) +
                     std::to_string(props.minor) + "/cudnn" + std::to_string(cudnnGetVersion());
    std::replace(m_algorithmKey.begin(), m_algorithmKey.end(), ' ', '_');
    // cuBLAS's workspace from the caching allocator, so that cuBLAS never allocates on its own
    // beside the cache (which would keep what it needs); 32 MiB, as NVIDIA advises for Hopper.
    {
        std::string why;
        void* workspace = m_allocator->allocate(kCublasWorkspaceBytes, &why);
        if (!workspace)
            return SourceError::sentence("cannot allocate cuBLAS's workspace: " + why);
        m_cublasWorkspace = workspace;
        PLACER_CUDA_RETURN(cublasSetWorkspace(m_cublas, workspace, kCublasWorkspaceBytes));
    }
    m_staging.resize(kStagingBuffers);
    // Blocking-sync events: a host thread waiting for a staging buffer or the timing origin
    // sleeps rather than spins on a core the CPU devices of a mixed plan need.
    for (Staging& staging : m_staging) {
        PLACER_CUDA_RETURN(cudaHostAlloc(&staging.host, kStagingBytes, cudaHostAllocDefault));
        PLACER_CUDA_RETURN(cudaEventCreateWithFlags(&staging.done, cudaEventDisableTiming |
                                                                       cudaEventBlockingSync));
    }
    PLACER_CUDA_RETURN(cudaHostAlloc(&m_outStaging.host, kStagingBytes, cudaHostAllocDefault));
    m_copier =
        std::make_unique<HostCopier>(HostCopier::helpersFor(std::thread::hardware_concurrency()));
    PLACER_CUDA_RETURN(cudaEventCreateWithFlags(&m_origin, cudaEventBlockingSync));
    PLACER_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&m_errorWord), 4 * sizeof(long long)));
    PLACER_CUDA_RETURN(cudaMemsetAsync(m_errorWord, 0, 4 * sizeof(long long), m_streams[0]));
    PLACER_CUDA_RETURN(cudaStreamSynchronize(m_streams[0]));
    // Peer access is enabled per pair when a copy first needs it (enablePeerAccess): enabling
    // it to every GPU would create a context, some 0.3-0.5 GB, on GPUs the plan never uses.
    return std::nullopt;
}

void CudaDevice::enablePeerAccess(int other) {
    std::lock_guard lock(m_peerMutex);
    if (std::find(m_peers.begin(), m_peers.end(), other) != m_peers.end())
        return;
    m_peers.push_back(other);
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, m_ordinal, other) != cudaSuccess || !can) {
        cudaGetLastError(); // copies go through the host, which cudaMemcpyPeerAsync does itself
        return;
    }
    if (cudaDeviceEnablePeerAccess(other, 0) != cudaSuccess)
        cudaGetLastError(); // already enabled
}

Result<std::byte*> CudaDevice::convWorkspace(std::int64_t bytes) {
    if (bytes <= m_workspaceBytes)
        return m_workspace;
    auto block = allocate(bytes);
    if (!block)
        return block.error();
    // Kernels issued earlier may still read the smaller one: it lives as long as the device.
    if (m_workspace)
        m_retiredWorkspaces.push_back(m_workspace);
    m_workspace = block.value();
    m_workspaceBytes = bytes;
    return m_workspace;
}

std::int64_t CudaDevice::kernelMemoryBytes(const std::vector<KernelSpec>& specs) const {
    std::int64_t bytes = Device::kernelMemoryBytes(specs);
    const bool convolutions = std::any_of(specs.begin(), specs.end(), [](const KernelSpec& spec) {
        return spec.node && spec.node->op && spec.node->op->kernel.family == KernelFamily::Conv;
    });
    if (convolutions && m_workspaceBytes < kConvWorkspaceBudget)
        bytes += kConvWorkspaceBudget;
    return bytes;
}

void CudaDevice::noteAsyncError(const std::string& what) {
    std::lock_guard lock(m_asyncMutex);
    if (m_asyncError.empty())
        m_asyncError = m_name + ": " + what;
}

CudaDevice::~CudaDevice() {
    synchronize();
    enqueue([this] {
        for (cudaEvent_t event : m_marks)
            cudaEventDestroy(event);
        for (Staging& staging : m_staging) {
            cudaFreeHost(staging.host);
            cudaEventDestroy(staging.done);
        }
        if (m_outStaging.host)
            cudaFreeHost(m_outStaging.host);
        if (m_origin)
            cudaEventDestroy(m_origin);
        if (m_errorWord)
            cudaFree(m_errorWord);
        for (std::byte* block : m_retiredWorkspaces)
            m_allocator->free(block);
        if (m_workspace)
            m_allocator->free(m_workspace);
        if (m_cublasWorkspace)
            m_allocator->free(m_cublasWorkspace);
        if (m_cudnn)
            cudnnDestroy(m_cudnn);
        if (m_cublas)
            cublasDestroy(m_cublas);
        m_allocator.reset();
        for (cudaStream_t stream : m_streams) {
            if (stream)
                cudaStreamDestroy(stream);
        }
        if (m_outStream)
            cudaStreamDestroy(m_outStream);
    });
    m_worker.reset();
}

Result<std::byte*> CudaDevice::allocate(std::int64_t bytes) {
    std::string why;
    void* block = m_allocator->allocate(bytes, &why);
    if (!block)
        return SourceError::sentence(m_name + ": " + why);
    return static_cast<std::byte*>(block);
}

void CudaDevice::free(std::byte* data) {
    m_allocator->free(data);
}

std::int64_t CudaDevice::bytesInUse() const {
    return m_allocator->stats().inUse;
}

std::int64_t CudaDevice::peakBytes() const {
    return m_allocator->stats().peak;
}

void CudaDevice::resetPeak() {
    m_allocator->resetPeak();
}

std::int64_t CudaDevice::allocatableBytes() const {
    std::size_t freeBytes = 0, total = 0;
    cudaSetDevice(m_ordinal);
    if (cudaMemGetInfo(&freeBytes, &total) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return static_cast<std::int64_t>(freeBytes) + m_allocator->stats().cached;
}

void CudaDevice::stagedCopyIn(std::byte* dst, const void* src, std::int64_t bytes,
                              cudaStream_t stream) {
    // Memory the host already pinned goes straight to the DMA engine.
    if (isPinned(src)) {
        PLACER_CUDA_THROW(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes),
                                          cudaMemcpyHostToDevice, stream));
        return;
    }
    // Pageable memory: through the staging buffers, the host filling one while the DMA engine
    // drains another.
    const auto* from = static_cast<const std::byte*>(src);
    for (std::int64_t offset = 0; offset < bytes; offset += kStagingBytes) {
        const std::int64_t n = std::min(kStagingBytes, bytes - offset);
        Staging& staging = m_staging[m_nextStaging];
        m_nextStaging = (m_nextStaging + 1) % m_staging.size();
        PLACER_CUDA_THROW(cudaEventSynchronize(staging.done));
        m_copier->copy(staging.host, from + offset, static_cast<std::size_t>(n));
        PLACER_CUDA_THROW(cudaMemcpyAsync(dst + offset, staging.host, static_cast<std::size_t>(n),
                                          cudaMemcpyHostToDevice, stream));
        PLACER_CUDA_THROW(cudaEventRecord(staging.done, stream));
    }
}

void CudaDevice::copyIn(std::byte* dst, const void* src, std::int64_t bytes) {
    stagedCopyIn(dst, src, bytes, currentStream());
}

void CudaDevice::copyOut(void* dst, const std::byte* src, std::int64_t bytes) {
    // From any thread (a host device pulling a result): its own stream and staging buffer.
    std::lock_guard lock(m_outMutex);
    cudaSetDevice(m_ordinal);
    if (isPinned(dst)) {
        PLACER_CUDA_THROW(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes),
                                          cudaMemcpyDeviceToHost, m_outStream));
        PLACER_CUDA_THROW(cudaStreamSynchronize(m_outStream));
        return;
    }
    auto* to = static_cast<std::byte*>(dst);
    for (std::int64_t offset = 0; offset < bytes; offset += kStagingBytes) {
        const std::int64_t n = std::min(kStagingBytes, bytes - offset);
        PLACER_CUDA_THROW(cudaMemcpyAsync(m_outStaging.host, src + offset,
                                          static_cast<std::size_t>(n), cudaMemcpyDeviceToHost,
                                          m_outStream));
        PLACER_CUDA_THROW(cudaStreamSynchronize(m_outStream));
        m_copier->copy(to + offset, m_outStaging.host, static_cast<std::size_t>(n));
    }
}

bool CudaDevice::pinHost(std::byte* data, std::int64_t bytes) {
    if (!data || bytes < kPinMinBytes)
        return false;
    PinnedHost& pinned = pinnedHost();
    std::lock_guard lock(pinned.mutex);
    if (auto it = pinned.holders.find(data); it != pinned.holders.end()) {
        ++it->second;
        return true;
    }
    cudaSetDevice(m_ordinal);
    // Failing to pin (memory limits, a range already pinned by someone else) only means the
    // copies keep going through the staging buffers.
    if (cudaHostRegister(data, static_cast<std::size_t>(bytes), cudaHostRegisterPortable) !=
        cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    pinned.holders.emplace(data, 1);
    return true;
}

void CudaDevice::unpinHost(std::byte* data) {
    PinnedHost& pinned = pinnedHost();
    std::lock_guard lock(pinned.mutex);
    const auto it = pinned.holders.find(data);
    if (it == pinned.holders.end() || --it->second > 0)
        return;
    pinned.holders.erase(it);
    cudaSetDevice(m_ordinal);
    if (cudaHostUnregister(data) != cudaSuccess)
        cudaGetLastError();
}

void CudaDevice::copyPeer(std::byte* dst, Device& source, const std::byte* src,
                          std::int64_t bytes) {
    const cudaStream_t stream = currentStream();
    if (source.hostAccessible()) {
        stagedCopyIn(dst, src, bytes, stream);
        return;
    }
    if (auto* gpu = dynamic_cast<CudaDevice*>(&source)) {
        if (gpu->ordinal() == m_ordinal) {
            PLACER_CUDA_THROW(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes),
                                              cudaMemcpyDeviceToDevice, stream));
            return;
        }
        enablePeerAccess(gpu->ordinal());
        PLACER_CUDA_THROW(cudaMemcpyPeerAsync(dst, m_ordinal, src, gpu->ordinal(),
                                              static_cast<std::size_t>(bytes), stream));
        return;
    }
    // Another kind of device memory: through the host.
    std::vector<std::byte> host(static_cast<std::size_t>(bytes));
    source.copyOut(host.data(), src, bytes);
    stagedCopyIn(dst, host.data(), bytes, stream);
    PLACER_CUDA_THROW(cudaStreamSynchronize(stream));
}

void CudaDevice::finishLane() {
    PLACER_CUDA_THROW(cudaStreamSynchronize(currentStream()));
}

Result<std::unique_ptr<Kernel>> CudaDevice::prepare(const KernelSpec& spec) {
    std::optional<Result<std::unique_ptr<Kernel>>> kernel;
    auto make = [&] {
        try {
            kernel.emplace(makeCudaKernel(spec, *this));
        } catch (const std::exception& e) {
            kernel.emplace(SourceError{"", 0, 0, e.what()});
        }
    };
    // On the worker itself (a kernel prepared at run time, for shapes found then): at once.
    if (m_worker->onWorker()) {
        make();
        return std::move(*kernel);
    }
    enqueue(make);
    synchronize();
    return std::move(*kernel);
}

void CudaDevice::enqueue(std::function<void()> task) {
    m_worker->enqueue(std::move(task));
}

void CudaDevice::synchronize() {
    m_worker->drain();
    cudaSetDevice(m_ordinal); // from any thread
    for (cudaStream_t stream : m_streams) {
        if (!stream)
            continue;
        // An asynchronous failure (a kernel's fault, a failed copy) surfaces here; it is kept
        // for takeAsyncError, whichever thread synchronised.
        const cudaError_t status = cudaStreamSynchronize(stream);
        if (status != cudaSuccess) {
            std::lock_guard lock(m_asyncMutex);
            if (m_asyncError.empty())
                m_asyncError = m_name + ": " + describe(status);
        }
    }
}

std::unique_ptr<Event> CudaDevice::createEvent() {
    cudaEvent_t event = nullptr;
    cudaSetDevice(m_ordinal);
    cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    return std::make_unique<CudaEvent>(this, event);
}

double CudaDevice::now() const {
    return hostClockMicros();
}

void CudaDevice::waitFor(const Event& event, std::uint32_t epoch) {
    if (const auto* gpuEvent = dynamic_cast<const CudaEvent*>(&event)) {
        // GPU to GPU (another lane, or another GPU): the stream waits, the worker does not.
        gpuEvent->waitIssued(epoch);
        PLACER_CUDA_THROW(cudaStreamWaitEvent(currentStream(), gpuEvent->event(), 0));
        return;
    }
    event.wait(epoch); // a host device's work: the worker waits before issuing more
}

void CudaDevice::resetMarks() {
    m_nextMark = 0;
    // The origin: a record on the idle compute stream, between the host's stamps before the
    // record and after it completed; the midpoint, so that GPU times are not biased late
    // against the CPUs' by the synchronisation's wake-up.
    const double before = hostClockMicros();
    const cudaError_t status = cudaEventRecord(m_origin, m_streams[0]);
    if (status != cudaSuccess || cudaEventSynchronize(m_origin) != cudaSuccess) {
        cudaGetLastError();
        noteAsyncError(failure("cudaEventRecord", status, __FILE__, __LINE__) +
                       " (the timing origin)");
    }
    m_originHost = (before + hostClockMicros()) / 2;
}

void CudaDevice::reserveMarks(int count) {
    cudaSetDevice(m_ordinal);
    while (m_marks.size() < static_cast<std::size_t>(std::max(0, count))) {
        cudaEvent_t event = nullptr;
        if (cudaEventCreate(&event) != cudaSuccess) {
            cudaGetLastError();
            return; // mark() tries again, and a failure there is the run's error
        }
        m_marks.push_back(event);
    }
}

int CudaDevice::mark() {
    if (m_nextMark == m_marks.size()) {
        cudaEvent_t event = nullptr;
        if (const cudaError_t status = cudaEventCreate(&event); status != cudaSuccess) {
            cudaGetLastError();
            noteAsyncError(failure("cudaEventCreate", status, __FILE__, __LINE__));
        }
        m_marks.push_back(event);
    }
    if (const cudaError_t status = cudaEventRecord(m_marks[m_nextMark], currentStream());
        status != cudaSuccess) {
        cudaGetLastError();
        noteAsyncError(failure("cudaEventRecord", status, __FILE__, __LINE__) + " (a timing mark)");
    }
    return static_cast<int>(m_nextMark++);
}

double CudaDevice::markTime(int marker) const {
    float ms = 0;
    if (marker < 0 || static_cast<std::size_t>(marker) >= m_nextMark)
        return m_originHost;
    const cudaError_t status =
        cudaEventElapsedTime(&ms, m_origin, m_marks[static_cast<std::size_t>(marker)]);
    if (status != cudaSuccess) {
        // A time that is not there is an error of the run, not a zero.
        cudaGetLastError();
        const_cast<CudaDevice*>(this)->noteAsyncError(
            failure("cudaEventElapsedTime", status, __FILE__, __LINE__));
        return m_originHost;
    }
    return m_originHost + static_cast<double>(ms) * 1000.0;
}

long long CudaDevice::registerErrorSource(std::string name) {
    return m_errorWordProtocol.registerSource(std::move(name));
}

std::string CudaDevice::takeAsyncError() {
    // A failed launch or copy surfaces at the next synchronisation.
    std::string failure;
    {
        std::lock_guard lock(m_asyncMutex);
        failure = std::exchange(m_asyncError, std::string());
    }
    cudaSetDevice(m_ordinal);
    // This thread's last error is no one's now: whatever failed was reported where it failed.
    cudaGetLastError();
    // The kernels' error word, read and cleared in the compute stream's order (the kernels that
    // set it ran there).
    const cudaStream_t stream = m_streams[0];
    KernelErrorWord::Access access;
    access.read = [&](long long* word) {
        if (cudaMemcpyAsync(word, m_errorWord, 4 * sizeof(long long), cudaMemcpyDeviceToHost,
                            stream) == cudaSuccess &&
            cudaStreamSynchronize(stream) == cudaSuccess)
            return true;
        cudaGetLastError();
        return false;
    };
    access.clear = [&] {
        if (cudaMemsetAsync(m_errorWord, 0, 4 * sizeof(long long), stream) == cudaSuccess &&
            cudaStreamSynchronize(stream) == cudaSuccess)
            return true;
        cudaGetLastError();
        return false;
    };
    return m_errorWordProtocol.take(std::move(failure), m_name, access);
}

} // namespace placer::cuda
