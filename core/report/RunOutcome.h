// What a finished run leaves: the one record of what ran, which the run report, the Chrome
// trace, the workspace's run records and every front end read. The session makes it
// (session/Session.h); nothing else copies its fields.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "passes/PassManager.h"
#include "plan/Plan.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace placer {

/// Something that changed where a run's work ran, between two of its iterations
/// (session/RunAdaptation.h): a re-placement after a device's measured speed drifted from what
/// the plan assumed (--adapt), or a device that failed and was left out.
struct RunEvent {
    enum class Kind : std::uint8_t { Replaced, DeviceFailed };
    Kind kind = Kind::Replaced;
    /// The measured iteration after which the new plan runs (RunOptions' count, from 1): the
    /// iteration a device failed in runs again, on the new plan.
    int iteration = 0;
    std::string device;  ///< the physical devices it is about ("vcpu2", "vcpu1, vcpu2")
    std::string reason;  ///< "b (vcpu2) 2.8x slower than assumed for 3 iterations"
    std::string moved;   ///< "37 ops moved to a", or "nothing moved"
    int nodesMoved = 0;  ///< of the user's graph
    double replanMs = 0; ///< planning, lowering and loading the new program
    /// The run's latency before and after, medians of the measured iterations (ms).
    double beforeMs = 0, afterMs = 0;
    /// "b 2.8x slower than assumed for 3 iterations: 37 ops moved to a"
    std::string text() const { return reason + ": " + moved; }
};

/// "replaced", "device-failed".
inline const char* runEventKindName(RunEvent::Kind kind) {
    return kind == RunEvent::Kind::Replaced ? "replaced" : "device-failed";
}

struct RunOutcome {
    /// The user's graph and plan as planned: what the canvas shows and the run report names.
    std::shared_ptr<const Graph> userGraph;
    Plan userPlan;
    PlanOptions planOptions;
    DeviceSet devices;
    /// What ran: the user's graph (sharded where the plan splits) rewritten by the passes for
    /// its physical devices, its plan, and per node the user's node it computes
    /// (passes/PassManager.h). Shared with the session's loaded program, which later runs of the
    /// same plan reuse (Session::run): never null.
    std::shared_ptr<const OptimizedGraph> ran = std::make_shared<const OptimizedGraph>();
    /// Per virtual device: the physical device it ran on ("cpu", "vcpu2", "cuda:0").
    std::vector<std::string> physical;
    /// Per virtual device: why it runs there, where the run chose by what the machine has free
    /// (--map auto, device/LoadMapping.h); empty otherwise.
    std::vector<std::string> mappingReasons;
    /// Re-placements and failed devices, in the order they happened; the plan, graph and
    /// executor above are the last one's (userPlan included), the latencies every iteration's.
    std::vector<RunEvent> events;
    /// The plan the run started with and its options, where events changed them: what the run
    /// is recorded against (the plan the user saved).
    std::optional<Plan> firstPlan;
    std::optional<PlanOptions> firstOptions;
    const Plan& startPlan() const { return firstPlan ? *firstPlan : userPlan; }
    const PlanOptions& startOptions() const { return firstOptions ? *firstOptions : planOptions; }
    /// Warm-up and measured iterations (without the callbacks).
    int warmup = 0, iterations = 0;
    /// Keeps the physical devices the executor runs on alive as long as it (the session's
    /// registry): declared before it, so destroyed after it.
    std::shared_ptr<const void> physicalDevices;
    /// The virtual CPUs leased for this run (DeviceRegistry::leaseVCpu), given back when the
    /// outcome goes, after its executor: declared before it.
    std::vector<std::shared_ptr<const void>> deviceLeases;
    /// The loaded program (kernel names, streams); null when the run failed before loading.
    /// Shared with the session, whose next run of the same plan runs it again: what a report
    /// reads of it (the program, streams, kernel names) is fixed at load.
    std::shared_ptr<Executor> executor;
    RunResult result;
    /// The outputs against the user's graph run unoptimised on one device, when it was run.
    std::optional<ReferenceCheck> reference;
    /// Per output: the .npy file it was written to, or empty.
    std::vector<std::string> outputFiles;
    /// The process's peak resident memory when the run ended, or 0 when not measured.
    std::int64_t hostPeakBytes = 0;
    /// Things the user should hear that did not stop the run (a device mapped elsewhere, the
    /// passes failing and the graph running unoptimised).
    std::vector<std::string> warnings;

    const Graph& graph() const { return ran->graph; }
    const Plan& plan() const { return ran->plan; }
    bool cancelled() const { return result.cancelled; }
};

} // namespace placer
