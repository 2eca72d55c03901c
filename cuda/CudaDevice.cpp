// A GPU as a placer Device: memory, streams, events, staging, kernels and timing.
#include "cuda/CudaDevice.h"

#include "runtime/EpochCounter.h"

#include "cuda/CudaError.h"
#include "cuda/CudaKernels.h"
#include "cuda/LazyLibraries.h"
#include "runtime/WorkQueue.h"

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
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
/// for it, and another GPU knows it was issued); the GPU side is a CUDA event.
class CudaEvent final : public Event {
public:
    CudaEvent(CudaDevice* device, cudaEvent_t event) : m_device(device), m_event(event) {}
    ~CudaEvent() override { cudaEventDestroy(m_event); }

    void record(std::uint32_t epoch) override {
        cudaEventRecord(m_event, m_device->currentStream());
        m_epoch.publish(epoch);
    }
    /// Waits until the record was issued for `epoch`, without waiting for the GPU.
    void waitIssued(std::uint32_t epoch) const { m_epoch.waitFor(epoch); }
    void wait(std::uint32_t epoch) const override {
        waitIssued(epoch);
        // A host device waits for the GPU; a fault there is this wait's error too.
        PLACER_CUDA_THROW(cudaEventSynchronize(m_event));
    }
    bool reached(std::uint32_t epoch) const override {
        if (!m_epoch.reached(epoch))
            return false; // not even issued
        return cudaEventQuery(m_event) != cudaErrorNotReady;
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
    // cuBLAS and cuDNN are opened now, by their first call (cuda/LazyLibraries.h).
    if (cublasCreate(&m_cublas) != CUBLAS_STATUS_SUCCESS ||
        cudnnCreate(&m_cudnn) != CUDNN_STATUS_SUCCESS) {
        if (const std::string why = lazyLibraryError(); !why.empty())
            return SourceError::sentence(m_name + ": cannot load cuBLAS or cuDNN: " + why);
    }
    PLACER_CUDA_RETURN(m_cublas ? CUBLAS_STATUS_SUCCESS : cublasCreate(&m_cublas));
    PLACER_CUDA_RETURN(cublasSetStream(m_cublas, m_streams[0]));
    PLACER_CUDA_RETURN(m_cudnn ? CUDNN_STATUS_SUCCESS : cudnnCreate(&m_cudnn));
    PLACER_CUDA_RETURN(cudnnSetStream(m_cudnn, m_streams[0]));
    m_staging.resize(kStagingBuffers);
    for (Staging& staging : m_staging) {
        PLACER_CUDA_RETURN(cudaHostAlloc(&staging.host, kStagingBytes, cudaHostAllocDefault));
        PLACER_CUDA_RETURN(cudaEventCreateWithFlags(&staging.done, cudaEventDisableTiming));
    }
    PLACER_CUDA_RETURN(cudaHostAlloc(&m_outStaging.host, kStagingBytes, cudaHostAllocDefault));
    PLACER_CUDA_RETURN(cudaEventCreate(&m_origin));
    PLACER_CUDA_RETURN(cudaMalloc(reinterpret_cast<void**>(&m_errorWord), 4 * sizeof(long long)));
    PLACER_CUDA_RETURN(cudaMemset(m_errorWord, 0, 4 * sizeof(long long)));
    // Peer access to the other GPUs, where the machine has it.
    int count = 0;
    cudaGetDeviceCount(&count);
    for (int other = 0; other < count; ++other) {
        int can = 0;
        if (other != ordinal && cudaDeviceCanAccessPeer(&can, ordinal, other) == cudaSuccess &&
            can) {
            if (cudaDeviceEnablePeerAccess(other, 0) != cudaSuccess)
                cudaGetLastError(); // already enabled
        }
    }
    return std::nullopt;
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
        std::memcpy(staging.host, from + offset, static_cast<std::size_t>(n));
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
        std::memcpy(to + offset, m_outStaging.host, static_cast<std::size_t>(n));
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
        if (gpu->ordinal() == m_ordinal)
            PLACER_CUDA_THROW(cudaMemcpyAsync(dst, src, static_cast<std::size_t>(bytes),
                                              cudaMemcpyDeviceToDevice, stream));
        else
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
    cudaEventRecord(m_origin, m_streams[0]);
    cudaEventSynchronize(m_origin);
    m_originHost = hostClockMicros();
}

int CudaDevice::mark() {
    if (m_nextMark == m_marks.size()) {
        cudaEvent_t event = nullptr;
        cudaEventCreate(&event);
        m_marks.push_back(event);
    }
    cudaEventRecord(m_marks[m_nextMark], currentStream());
    return static_cast<int>(m_nextMark++);
}

double CudaDevice::markTime(int marker) const {
    float ms = 0;
    if (marker < 0 || static_cast<std::size_t>(marker) >= m_nextMark ||
        cudaEventElapsedTime(&ms, m_origin, m_marks[static_cast<std::size_t>(marker)]) !=
            cudaSuccess)
        return m_originHost;
    return m_originHost + static_cast<double>(ms) * 1000.0;
}

long long CudaDevice::registerErrorSource(std::string name) {
    m_checkErrors = true;
    m_errorSources.push_back(std::move(name));
    return static_cast<long long>(m_errorSources.size() - 1);
}

std::string CudaDevice::takeAsyncError() {
    // A failed launch or copy surfaces at the next synchronisation.
    {
        std::lock_guard lock(m_asyncMutex);
        if (!m_asyncError.empty())
            return std::exchange(m_asyncError, std::string());
    }
    cudaSetDevice(m_ordinal);
    const cudaError_t sticky = cudaGetLastError();
    if (sticky != cudaSuccess)
        return m_name + ": " + describe(sticky);
    if (!m_checkErrors)
        return {};
    long long word[4] = {};
    if (cudaMemcpy(word, m_errorWord, sizeof word, cudaMemcpyDeviceToHost) != cudaSuccess)
        return m_name + ": could not read the kernels' error word";
    if (word[0] == 0)
        return {};
    cudaMemset(m_errorWord, 0, sizeof word);
    const std::string source =
        word[1] >= 0 && static_cast<std::size_t>(word[1]) < m_errorSources.size()
            ? m_errorSources[static_cast<std::size_t>(word[1])]
            : std::string("a kernel");
    return "index " + std::to_string(word[2]) + " is out of range for an axis of length " +
           std::to_string(word[3]) + " in " + source + " (on " + m_name + ")";
}

} // namespace placer::cuda
