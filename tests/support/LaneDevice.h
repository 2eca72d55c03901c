// A test double for an asynchronous device: host memory, but like a GPU its worker only issues
// work into two lanes (compute and copy) that run on threads of their own, with random delays,
// and it times work with markers. Runs the executor's lane logic without a GPU.
#pragma once

#include "backends/cpu/CpuDevice.h"
#include "device/Device.h"
#include "device/EpochCounter.h"
#include "device/WorkQueue.h"
#include "kernels/KernelErrorWord.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

namespace placer::test {

class LaneDevice final : public Device {
public:
    explicit LaneDevice(std::string name)
        : m_name(std::move(name)), m_inner(m_name + "-kernels", DeviceKind::VCpu, 1) {}
    ~LaneDevice() override { synchronize(); }

    const std::string& name() const override { return m_name; }
    DeviceKind kind() const override { return DeviceKind::VCpu; }
    std::string description() const override { return "asynchronous test device"; }

    Result<std::byte*> allocate(std::int64_t bytes) override { return m_inner.allocate(bytes); }
    void free(std::byte* data) override { m_inner.free(data); }
    std::int64_t bytesInUse() const override { return m_inner.bytesInUse(); }
    std::int64_t peakBytes() const override { return m_inner.peakBytes(); }
    void resetPeak() override { m_inner.resetPeak(); }
    /// Like a GPU's free memory: `memory` bytes in all, less what is in use.
    std::int64_t allocatableBytes() const override { return memory - m_inner.bytesInUse(); }
    std::int64_t memory = std::int64_t{1} << 40;

    void copyIn(std::byte* dst, const void* src, std::int64_t bytes) override {
        if (failCopyIn)
            throw std::runtime_error(m_name + ": injected copy-in failure");
        issue([dst, src, bytes] { std::memcpy(dst, src, static_cast<std::size_t>(bytes)); });
    }
    /// Synchronous, from any thread: the caller waited for the event after the producer.
    void copyOut(void* dst, const std::byte* src, std::int64_t bytes) override {
        if (failCopyOut)
            throw std::runtime_error(m_name + ": injected copy-out failure");
        std::memcpy(dst, src, static_cast<std::size_t>(bytes));
    }
    void copyPeer(std::byte* dst, Device& source, const std::byte* src,
                  std::int64_t bytes) override {
        if (source.hostAccessible())
            issue([dst, src, bytes] { std::memcpy(dst, src, static_cast<std::size_t>(bytes)); });
        else
            issue([dst, &source, src, bytes] { source.copyOut(dst, src, bytes); });
    }
    bool hostAccessible() const override { return false; }
    /// Records what the executor pins, as a GPU would pin it.
    bool pinHost(std::byte* data, std::int64_t bytes) override {
        std::lock_guard lock(m_errorMutex);
        return pinned.emplace(data, bytes).second;
    }
    void unpinHost(std::byte* data) override {
        std::lock_guard lock(m_errorMutex);
        pinned.erase(data);
    }

    Result<std::unique_ptr<Kernel>> prepare(const KernelSpec& spec) override {
        auto kernel = m_inner.prepare(spec);
        if (!kernel)
            return kernel.error();
        return std::unique_ptr<Kernel>(std::make_unique<LaneKernel>(
            this, kernel.take(), spec.inputs.size(), spec.outputs.size()));
    }

    void enqueue(std::function<void()> task) override { m_worker.enqueue(std::move(task)); }
    void synchronize() override {
        m_worker.drain();
        for (auto& lane : m_lanes)
            lane.drain();
    }

    class LaneEvent final : public Event {
    public:
        explicit LaneEvent(LaneDevice* device) : m_device(device) {}
        void record(std::uint32_t epoch) override {
            m_device->issue([this, epoch] {
                m_time = hostClockMicros();
                m_epoch.publish(epoch);
            });
        }
        void wait(std::uint32_t epoch) const override { m_epoch.waitFor(epoch); }
        bool reached(std::uint32_t epoch) const override { return m_epoch.reached(epoch); }
        double timestamp() const override { return m_time; }

    private:
        LaneDevice* m_device;
        EpochCounter m_epoch;
        double m_time = 0;
    };
    std::unique_ptr<Event> createEvent() override { return std::make_unique<LaneEvent>(this); }
    double now() const override { return hostClockMicros(); }

    void finishLane() override { m_lanes[static_cast<std::size_t>(m_current)].drain(); }
    int laneCount() const override { return 2; }
    int laneFor(WorkKind kind) const override { return kind == WorkKind::Compute ? 0 : 1; }
    void setLane(int lane) override { m_current = lane; }
    void waitFor(const Event& event, std::uint32_t epoch) override {
        if (failWait)
            throw std::runtime_error(m_name + ": injected wait failure");
        ++waitsIssued;
        m_lanes[static_cast<std::size_t>(m_current)].enqueue(
            [&event, epoch] { event.wait(epoch); });
    }
    bool timesAsynchronously() const override { return true; }
    void resetMarks() override { m_marks.clear(); }
    /// Records what the executor asks for; marksUsed() says what a run then took.
    void reserveMarks(int count) override { reservedMarks = count; }
    std::size_t marksUsed() const { return m_marks.size(); }
    int reservedMarks = 0;
    int mark() override {
        m_marks.push_back(0);
        double* slot = &m_marks.back();
        m_lanes[static_cast<std::size_t>(m_current)].enqueue([slot] { *slot = hostClockMicros(); });
        return static_cast<int>(m_marks.size() - 1);
    }
    double markTime(int marker) const override { return m_marks[static_cast<std::size_t>(marker)]; }
    std::string takeAsyncError() override {
        std::string error;
        {
            std::lock_guard lock(m_errorMutex);
            std::swap(error, m_error);
        }
        // The kernels' error word, as a GPU's: read and cleared in the compute lane's order.
        KernelErrorWord::Access access;
        access.read = [this](long long* word) {
            if (failErrorWordRead)
                return false;
            m_lanes[0].enqueue(
                [this, word] { std::memcpy(word, m_errorWord, sizeof m_errorWord); });
            m_lanes[0].drain();
            return true;
        };
        access.clear = [this] {
            m_lanes[0].enqueue([this] { std::memset(m_errorWord, 0, sizeof m_errorWord); });
            m_lanes[0].drain();
            return true;
        };
        return m_errorWordProtocol.take(std::move(error), m_name, access);
    }

    /// The word kernels report data-dependent failures in (kernels/KernelErrorWord.h), in host
    /// memory written from the compute lane, as a GPU's is in device memory.
    long long* errorWord() { return m_errorWord; }
    long long registerErrorSource(std::string name) {
        return m_errorWordProtocol.registerSource(std::move(name));
    }
    /// Queues `work` on the compute lane, as a kernel launch (for tests of the lane protocol).
    void launch(std::function<void()> work) { m_lanes[0].enqueue(std::move(work)); }
    /// A failure found outside the kernels (a failed copy), as takeAsyncError reports it.
    void noteAsyncError(std::string error) {
        std::lock_guard lock(m_errorMutex);
        if (m_error.empty())
            m_error = std::move(error);
    }

    std::atomic<int> waitsIssued{0};
    std::map<std::byte*, std::int64_t> pinned; ///< host memory pinned now, and its size
    /// Faults to inject, as a GPU's failed copy or event wait would throw.
    std::atomic<bool> failCopyIn{false}, failCopyOut{false}, failWait{false},
        failErrorWordRead{false};

private:
    class LaneKernel final : public Kernel {
    public:
        LaneKernel(LaneDevice* device, std::unique_ptr<Kernel> kernel, std::size_t inputs,
                   std::size_t outputs)
            : m_device(device), m_kernel(std::move(kernel)), m_inputs(inputs), m_outputs(outputs) {}
        void run(const std::byte* const* inputs, std::byte* const* outputs) override {
            std::vector<const std::byte*> in(inputs, inputs + m_inputs);
            std::vector<std::byte*> out(outputs, outputs + m_outputs);
            Kernel* kernel = m_kernel.get();
            LaneDevice* device = m_device;
            device->m_lanes[0].enqueue([device, kernel, in, out] {
                delay();
                try {
                    kernel->run(in.data(), out.data());
                } catch (const std::exception& e) {
                    std::lock_guard lock(device->m_errorMutex);
                    if (device->m_error.empty())
                        device->m_error = e.what();
                }
            });
        }
        std::string implementation() const override { return "lane:" + m_kernel->implementation(); }
        // What the lane's run filled, read after the device is synchronised.
        bool boundsOutput(std::size_t k) const override { return m_kernel->boundsOutput(k); }
        const std::vector<std::vector<std::int64_t>>* ranShapes() const override {
            return m_kernel->ranShapes();
        }

    private:
        LaneDevice* m_device;
        std::unique_ptr<Kernel> m_kernel;
        std::size_t m_inputs, m_outputs;
    };

    /// A random pause of up to 40 µs, so lanes interleave differently every run.
    static void delay() {
        thread_local std::mt19937 rng(std::random_device{}());
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % 40));
    }
    void issue(std::function<void()> work) {
        m_lanes[static_cast<std::size_t>(m_current)].enqueue([work = std::move(work)] {
            delay();
            work();
        });
    }

    std::string m_name;
    CpuDevice m_inner;
    std::array<WorkQueue, 2> m_lanes;
    int m_current = 0;
    std::deque<double> m_marks;
    std::mutex m_errorMutex;
    std::string m_error;
    long long m_errorWord[4] = {};
    KernelErrorWord m_errorWordProtocol;
    WorkQueue m_worker; ///< last: stops first
};

} // namespace placer::test
