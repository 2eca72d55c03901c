// Physical devices: the memory, copies, kernels, work queue and clock a run needs. Which devices
// a machine has is the registry's business (device/DeviceRegistry.h).
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Result.h"
#include "kernels/Kernel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// What an instruction asks of its device, for devices that run kinds of work on different lanes.
enum class WorkKind : std::uint8_t {
    Compute, ///< a kernel
    CopyIn,  ///< host memory or another device's memory into this device's
};

/// A point in a device's in-order work stream. The device records it after the work before it;
/// another device's work waits for it. Reusable across runs: `epoch` numbers the run.
class Event {
public:
    virtual ~Event() = default;
    /// Marks the event reached for run `epoch`, stamped with the device clock.
    virtual void record(std::uint32_t epoch) = 0;
    /// Blocks the calling worker until the event was recorded for run `epoch` or later.
    virtual void wait(std::uint32_t epoch) const = 0;
    /// Whether wait(epoch) would return at once: the work before the record is done (a GPU's
    /// too). Never blocks; a failed GPU wait reads as reached, and wait() then throws.
    virtual bool reached(std::uint32_t epoch) const = 0;
    /// The device-clock time of the last record, in microseconds.
    virtual double timestamp() const = 0;
};

class Device {
public:
    virtual ~Device() = default;

    /// The physical name: "cpu", "vcpu2", "cuda:0".
    virtual const std::string& name() const = 0;
    /// What kind of device it is: the host cpu, a virtual CPU context, or a CUDA GPU (the kinds
    /// virtual devices have, ir/DeviceSet.h).
    virtual DeviceKind kind() const = 0;
    /// One line for `placer devices`: "virtual CPU context, 1 worker thread, own arena".
    virtual std::string description() const = 0;
    /// The rank whose device it is when it is another process's (device/Ranks.h), else -1.
    virtual int remoteRank() const { return -1; }
    /// Runs its work on these host cores from now on (a CPU device's worker and kernel
    /// threads; `{}`: wherever the system puts them), or why it cannot.
    virtual Status bindToCores(const std::vector<int>& cores) {
        (void)cores;
        return SourceError::sentence(name() + " cannot be bound to host cores");
    }
    /// The host cores it is bound to (bindToCores, vcpuN:cpus=LIST); empty when unbound.
    virtual std::vector<int> boundCores() const { return {}; }

    /// Device memory from the device's own arena, or why there is none.
    virtual Result<std::byte*> allocate(std::int64_t bytes) = 0;
    virtual void free(std::byte* data) = 0;
    /// Bytes allocated now, and the most since the last resetPeak().
    virtual std::int64_t bytesInUse() const = 0;
    virtual std::int64_t peakBytes() const = 0;
    virtual void resetPeak() = 0;
    /// How many more bytes allocate() can hand out now, for the check that refuses a plan too
    /// large for its devices before anything is allocated: a GPU's free memory; a CPU context's
    /// arena capacity left when it has one (vcpuN:mem=SIZE), otherwise the host's available
    /// memory. Devices whose memory is the host's (hostAccessible) also share that budget.
    virtual std::int64_t allocatableBytes() const = 0;

    /// Copies, run from this device's worker: host memory in, out to host memory, and from
    /// another device's memory into this one's.
    virtual void copyIn(std::byte* dst, const void* src, std::int64_t bytes) = 0;
    virtual void copyOut(void* dst, const std::byte* src, std::int64_t bytes) = 0;
    virtual void copyPeer(std::byte* dst, Device& source, const std::byte* src,
                          std::int64_t bytes) = 0;
    /// Whether the host can read and write this device's memory directly (a GPU's it cannot:
    /// a host device pulling from it calls its copyOut instead).
    virtual bool hostAccessible() const { return true; }
    /// Whether a constant already in host memory (a view of a mapped model file) is used where it
    /// lies rather than copied into this device's memory: the host CPU's device, whose memory is
    /// the host's. A virtual CPU keeps its own arena, as a separate device would.
    virtual bool bindsHostConstants() const { return false; }
    /// Host memory (a host device's storage) that this device copies from or into every run: a
    /// GPU pins it, so that those copies go straight to its DMA engine rather than through
    /// staging buffers. Whether it did; unpinHost, before the memory is freed, undoes it.
    virtual bool pinHost(std::byte* data, std::int64_t bytes) {
        (void)data;
        (void)bytes;
        return false;
    }
    virtual void unpinHost(std::byte* data) { (void)data; }

    /// A kernel for one node on this device, or why there is none. Made on the device's worker;
    /// called from any thread, that worker included (a kernel prepared at run time).
    virtual Result<std::unique_ptr<Kernel>> prepare(const KernelSpec& spec) = 0;

    /// The memory this device's kernels for `specs` take besides the program's storages, as
    /// the check before a run counts it (vm/MemoryCheck.h): by default the scratch of the
    /// shared functors (IndexingStep::scratchBytes); a GPU adds its convolution workspace.
    virtual std::int64_t kernelMemoryBytes(const std::vector<KernelSpec>& specs) const;

    /// Weight packing (passes/WeightPacking.h): the layout the kernel for `spec` wants its constant
    /// input `input` in, when that differs from the input's own and takes the same bytes, as
    /// text that kernel and loadPacked() read back; empty when it has none.
    virtual std::string packedLayout(const KernelSpec& spec, std::size_t input) {
        (void)spec;
        (void)input;
        return {};
    }
    /// Transpose elimination (passes/TransposeElimination.h): whether the kernel for `spec`, a
    /// matrix product with strided views (matmulViewOf), runs as fast as with dense operands.
    virtual bool takesViews(const KernelSpec& spec) {
        (void)spec;
        return false;
    }
    /// Loads a constant's own `bytes` at `src` into this device's `dst` in `layout` (from
    /// packedLayout()), instead of copying them: empty when done, else why not.
    virtual std::string loadPacked(std::byte* dst, const void* src, std::int64_t bytes,
                                   const std::string& layout) {
        (void)dst;
        (void)src;
        (void)bytes;
        (void)layout;
        return name() + " keeps constants in their own layout";
    }

    /// Runs `task` on the device's worker, after everything enqueued before it.
    virtual void enqueue(std::function<void()> task) = 0;
    /// Waits until everything enqueued so far has run.
    virtual void synchronize() = 0;
    virtual std::unique_ptr<Event> createEvent() = 0;

    /// Microseconds on the device clock. Host-clocked devices share one epoch (process start), so
    /// their timestamps are comparable.
    virtual double now() const = 0;

    // ---- Devices whose work runs asynchronously to their worker (a GPU). ----------------------
    // The worker only issues work into the device's lanes (a GPU's compute and copy streams);
    // each lane runs its work in order and lanes run concurrently. The executor picks the lane of
    // every instruction, orders work across lanes with events, and times work with markers that
    // resolve once the device has synchronized. Host devices have one lane and time at once.

    /// How many lanes the device has, and which one runs each kind of work.
    virtual int laneCount() const { return 1; }
    virtual int laneFor(WorkKind kind) const {
        (void)kind;
        return 0;
    }
    /// The lane that work issued from now on (kernels, copies, event records, waits, markers)
    /// goes to. Called from the device's worker only.
    virtual void setLane(int lane) { (void)lane; }
    /// Makes the current lane wait until `event` was recorded for run `epoch` (host devices
    /// block their worker; a GPU waits in its stream where it can).
    virtual void waitFor(const Event& event, std::uint32_t epoch) { event.wait(epoch); }
    /// Whether times come from markers (mark/markTime) rather than now().
    virtual bool timesAsynchronously() const { return false; }
    /// Starts a run's markers: earlier marker ids become invalid.
    virtual void resetMarks() {}
    /// Makes `count` marks ready before the first timed run, so that none is created inside one
    /// (a GPU's events); a device that times synchronously ignores it.
    virtual void reserveMarks(int count) { (void)count; }
    /// Records a marker in the current lane; its time is known after synchronize().
    virtual int mark() { return -1; }
    /// A marker's time in microseconds on the host clock (hostClockMicros), after synchronize().
    virtual double markTime(int marker) const {
        (void)marker;
        return 0;
    }
    /// From the worker: waits until the work issued into the current lane is done, so that the
    /// host may read what it wrote (a Loop reading its condition). Host devices run their work
    /// as it is issued.
    virtual void finishLane() {}
    /// A failure found after the fact in asynchronous work ("gather '%3': index 12 is out of
    /// range"), cleared by reading; empty when there was none. Read after synchronize().
    virtual std::string takeAsyncError() { return {}; }
};

/// Copies host memory into the device's from its worker and waits for it, off the worker (a
/// constant uploaded at load time). Why it failed, or empty.
std::string copyInAndWait(Device& device, std::byte* dst, const void* src, std::int64_t bytes);

/// Microseconds since process start on the host's monotonic clock (host-clocked devices use it).
double hostClockMicros();

/// The host memory that can still be allocated without swapping, in bytes: the kernel's
/// MemAvailable estimate where there is one, otherwise the free physical pages.
std::int64_t hostAvailableMemory();

/// The most resident memory this process has held so far, in bytes (its peak RSS: heap, the
/// model's mapped pages it touched, libraries), or 0 where the system does not say.
std::int64_t processPeakResidentBytes();

} // namespace placer
