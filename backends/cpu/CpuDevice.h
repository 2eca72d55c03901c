// The host CPU and virtual CPU contexts: each has one worker thread that runs its work in order,
// its own memory arena, and single-threaded kernels (threads=N gives its kernels N threads).
#pragma once

#include "device/Device.h"

#include <memory>
#include <mutex>
#include <vector>

namespace placer {

class WorkQueue;

/// The kernels' view of the context they run in (oneDNN engine and stream; CpuKernels.cpp).
struct CpuKernelContext;

class CpuDevice final : public Device {
public:
    /// `name` is "cpu" for the host or "vcpuN"; `threads` is what its kernels may use;
    /// `arenaCapacity` bounds its memory (0: only the host's memory bounds it).
    CpuDevice(std::string name, DeviceKind kind, int threads, std::int64_t arenaCapacity = 0);
    ~CpuDevice() override;

    const std::string& name() const override { return m_name; }
    DeviceKind kind() const override { return m_kind; }
    bool bindsHostConstants() const override { return m_kind == DeviceKind::Cpu; }
    std::string description() const override;
    int threads() const { return m_threads; }
    Status bindToCores(const std::vector<int>& cores) override;
    std::vector<int> boundCores() const override;

    Result<std::byte*> allocate(std::int64_t) override;
    void free(std::byte*) override;
    std::int64_t bytesInUse() const override;
    std::int64_t peakBytes() const override;
    void resetPeak() override;
    std::int64_t allocatableBytes() const override;
    std::int64_t arenaCapacity() const { return m_arenaCapacity; }

    void copyIn(std::byte* dst, const void* src, std::int64_t bytes) override;
    void copyOut(void* dst, const std::byte* src, std::int64_t bytes) override;
    void copyPeer(std::byte* dst, Device& source, const std::byte* src,
                  std::int64_t bytes) override;

    Result<std::unique_ptr<Kernel>> prepare(const KernelSpec& spec) override;
    std::string packedLayout(const KernelSpec& spec, std::size_t input) override;
    bool takesViews(const KernelSpec& spec) override;
    std::string loadPacked(std::byte* dst, const void* src, std::int64_t bytes,
                           const std::string& layout) override;

    void enqueue(std::function<void()> task) override;
    void synchronize() override;
    std::unique_ptr<Event> createEvent() override;
    double now() const override;

private:
    struct Arena;
    std::string m_name;
    DeviceKind m_kind;
    int m_threads;
    std::int64_t m_arenaCapacity;
    mutable std::mutex m_coresMutex;
    std::vector<int> m_cores; ///< bindToCores'
    std::unique_ptr<Arena> m_arena;
    std::unique_ptr<CpuKernelContext> m_kernelContext;
    std::unique_ptr<WorkQueue> m_worker; ///< last: stops first
};

} // namespace placer
