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
