// Running a program on physical devices: storages and constants at load time, then runs in which
// every physical device works through its own instruction stream, waiting on events of other
// devices only where data or storage crosses between them.
#pragma once

#include "device/Device.h"
#include "ir/DimExpr.h"
#include "ir/HostTensor.h"
#include "ir/Result.h"
#include "vm/Bytecode.h"
#include "vm/FaultInjection.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace placer {

struct RunResult;

struct RunOptions {
    int warmup = 1;
    int iterations = 10;
    /// Told after each iteration, warm-up included, on the calling thread: how many are done, of
    /// how many.
    std::function<void(int done, int total)> progress;
    /// Asked before each iteration: true stops the run there (RunResult::cancelled).
    std::function<bool()> cancelled;
    /// Every rank runs this program (device/Ranks.h): the ranks start each iteration together,
    /// and a cancel on any rank stops every rank there. Off for a run of one rank's own (a
    /// reference), which must not wait for the others.
    bool acrossRanks = false;
    /// The sizes of the named dimensions at this run, for a program loaded to run at any sizes
    /// (Executor::load's sizesAtRun): its constants folded from the sizes are evaluated there.
    SymbolValues sizes;
    /// Faults and slowdowns made on purpose (vm/FaultInjection.h), by the number of the
    /// measured iteration: the first of this run is `firstIteration` (a run that continues
    /// another, re-placed or without a failed device, counts on from where that one stopped).
    std::vector<InjectedFault> faults;
    int firstIteration = 1;
    /// Told after each measured iteration, with what the run measured so far: true ends the run
    /// there (RunResult::stopped), its outputs those of that iteration.
    std::function<bool(const RunResult&)> afterIteration;
    /// A device that fails (kernels/Kernel.h DeviceFailure: out of memory, a device error, a
    /// device lost, an injected fault) ends the run with RunResult::fault and the iterations
    /// before, not with an error, so that the caller can run the rest without the device. The
    /// failed iteration is not counted, and the run has no outputs.
    bool faultsEndRun = false;
};

/// One timed instruction of the traced iteration.
struct TimedEvent {
    std::size_t instruction = 0; ///< index into Program::code
    int stream = 0;              ///< index into RunResult::streams
    double start = 0;            ///< device clock, microseconds
    double end = 0;
    int lane = 0; ///< the device's lane (a GPU's compute or copy stream)
};

/// Memory in use on a physical device at a moment of the traced iteration.
struct MemorySample {
    int stream = 0;
    double time = 0;
    std::int64_t bytes = 0;
};

/// A stretch of the traced iteration in which a device ran nothing, and why.
struct IdleStretch {
    int stream = 0;
    double start = 0; ///< host clock, microseconds
    double end = 0;
    /// The instruction the device waited for: the latest-ending dependency of the work it did
    /// next (on another device when it waited for one), or -1 when it had nothing left to do.
    std::int64_t waitedFor = -1;
};

struct StreamInfo {
    std::string physical;           ///< "vcpu1"
    int rank = 0;                   ///< the rank whose device it is (device/Ranks.h)
    std::vector<DeviceId> virtuals; ///< the virtual devices mapped to it
    std::vector<double> busyMicros; ///< per measured iteration
    /// Per measured iteration: how long it had ready work and ran nothing, its worker woken
    /// late or its core taken by another process (a host device's; 0 for a GPU's).
    std::vector<double> stalledMicros;
    std::int64_t peakBytes = 0;     ///< the arena's high-water mark over the runs
    std::int64_t livePeakBytes = 0; ///< the most bytes of live tensors at once
    int constantUploads = 0;        ///< constants uploaded at load time
};

/// A device that failed during a run (RunOptions::faultsEndRun).
struct DeviceFault {
    int stream = -1;                ///< index into RunResult::streams
    std::string physical;           ///< "vcpu2", "cuda:0"
    std::vector<DeviceId> virtuals; ///< the virtual devices mapped to it
    int iteration = 0;              ///< the measured iteration it failed in (RunOptions' count)
    std::string kind;               ///< "error", "out of memory", "lost"
    std::string message;
};

struct RunResult {
    std::vector<double> latencyMicros;            ///< per measured iteration
    std::vector<std::vector<double>> instrMicros; ///< per instruction: duration per iteration
    std::vector<StreamInfo> streams;
    std::vector<TimedEvent> trace;    ///< the last iteration
    std::vector<MemorySample> memory; ///< the last iteration
    std::vector<IdleStretch> idle;    ///< the last iteration, of at least kMinIdleMicros
    double traceOrigin = 0;           ///< start of the last iteration
    double traceEnd = 0;              ///< end of the last iteration
    std::vector<HostTensor> outputs;  ///< of the last iteration; none when none ran
    /// Per output: the rank that holds it (device/Ranks.h). Another rank's output is left
    /// without data here, for the session to gather.
    std::vector<int> outputRanks;
    /// RunOptions::cancelled stopped the run: the figures are those of the iterations before.
    bool cancelled = false;
    /// RunOptions::afterIteration ended the run before its last iteration.
    bool stopped = false;
    /// The device that failed and ended the run (RunOptions::faultsEndRun).
    std::optional<DeviceFault> fault;
    /// A shape found at run time, from the measured iteration `iteration` (0: the first) on.
    struct RanShape {
        int iteration = 0;
        std::vector<std::int64_t> shape;
        bool operator==(const RanShape&) const = default;
    };
    /// Per register whose shape is found at run time (vm/RunTimeShapes.h): its shape at
    /// the first measured iteration, then at each one where it changed.
    std::map<std::int32_t, std::vector<RanShape>> ranShapes;
};

/// Idle stretches shorter than this are the executor's own overhead and are not listed.
inline constexpr double kMinIdleMicros = 5;

struct Schedule;
class ConstantCache;

class Executor {
public:
    /// Allocates every storage, uploads constants (once per device instance) and prepares a
    /// kernel for every Invoke. `mapping[d]` is the physical device of virtual device d.
    /// Bytes of constants loaded so far, and in all: told after each constant the load copies
    /// (a mapped model's weights are read from disk then), from the loading thread.
    using LoadProgress = std::function<void(std::int64_t done, std::int64_t total)>;
    /// `constants`, when given, keeps constants on their devices from one load to the next
    /// (vm/ConstantCache.h): a weight packed or uploaded by an earlier load is not again.
    /// `sizesAtRun`: the program runs at any sizes of the dimensions its inputs name, as the
    /// Relay VM runs one: the inputs' shapes are the run's, every shape after them is found
    /// when its producer runs (kernels prepared per signature and kept), tensors that outgrow
    /// their planned storage take memory from the device's arena, and constants folded from
    /// the sizes are evaluated at RunOptions::sizes. Host devices only; an error says why not.
    static Result<std::unique_ptr<Executor>>
    load(const Graph& graph, const DeviceSet& devices, Program program,
         std::vector<Device*> mapping, int onnxOpset = 0, const LoadProgress& progress = {},
         std::shared_ptr<ConstantCache> constants = {}, bool sizesAtRun = false);
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    /// Runs `options.warmup` + `options.iterations` times on `inputs` (one per graph input, in
    /// Program::inputs order). A kernel failure or a tensor used outside its device's context
    /// stops the run with a sentence naming the tensor, its owner and the offender.
    Result<RunResult> run(const std::vector<HostTensor>& inputs, const RunOptions& options);

    const Program& program() const;
    /// The physical stream that runs instruction `k` (-1 for bookkeeping-free instructions).
    int streamOf(std::size_t instruction) const;
    /// The kernel implementation chosen for an Invoke ("onednn:convolution:jit:avx2"); for one
    /// prepared at run time, the last run's, as "run-time:plain:gather".
    std::string implementation(std::size_t instruction) const;
    /// The dependence graph and priorities the runs follow (vm/Schedule.h).
    const Schedule& schedule() const;

private:
    Executor();
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

} // namespace placer
