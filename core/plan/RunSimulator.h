// A discrete-event simulator of the executor, for machines this one is not (`placer run
// --machine`, docs/user/machines.md). It runs the prediction's problem (plan/AutoPlacer.h: the
// same tasks, costs, fused groups, micro-batches and shards the planner predicts with) under
// its assignment, as the executor runs a program (vm/Schedule.h), with what the planner's list
// scheduling leaves out:
//  - a copy is work, not a delay: one transfer per value and destination device (its consumers
//    there share it). Into a device that runs asynchronously (a GPU) it takes the device's copy
//    lane, one at a time, and overlaps its compute; into a CPU device its worker does it, in
//    turn with its kernels;
//  - a transfer takes its link's latency, then moves its bytes at the link's bandwidth shared
//    with the transfers that run at the same time through the same port: each device sends
//    through one port and receives through another, and a transfer between two hosts also
//    takes each host's network port. Each goes at its link's rate divided by the number of
//    transfers on its busiest port (re-balanced at every start and end);
//  - the executor's priorities (plan/AutoPlacer.h executorPriorities), a task's release (a
//    constant copied in on every run) and the run's fixed time are as the prediction has them.
// Deterministic: ties go to the lower index.
#pragma once

#include "plan/AutoPlacer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace placer {

/// What the simulator knows of the devices beyond the problem, per device of the problem.
struct SimulatedMachine {
    /// Whether the device's work runs asynchronously to its worker (a GPU): copies into it then
    /// take its copy lane and overlap its compute. Empty: none does.
    std::vector<std::uint8_t> asynchronous;
    /// The host each device is on (a transfer between two hosts takes both hosts' network
    /// ports); empty or equal: one host.
    std::vector<int> host;
};

/// One transfer of a value to a device.
struct SimulatedTransfer {
    std::uint32_t source = 0; ///< the task whose output it moves
    int from = 0, to = 0;     ///< devices
    std::int64_t bytes = 0;
    double start = 0, end = 0;
    /// Its time had its link been its own (latency + bytes / bandwidth): end - start beyond
    /// that is contention.
    double alone = 0;
    bool betweenHosts = false;
};

struct SimulatedRun {
    std::vector<double> start, end; ///< per task
    std::vector<SimulatedTransfer> transfers;
    double makespan = 0; ///< the run's fixed time included
    /// Where the time went, summed over the run: the tasks' own time (their fixed per-task
    /// part apart), that part (launch and dispatch), the transfers as if each had its link,
    /// and what sharing links added to them.
    double computeMicros = 0, launchMicros = 0, copyMicros = 0, contentionMicros = 0;
    double runOverheadMicros = 0;
    /// Per device: the time its worker (or compute lane) was busy.
    std::vector<double> deviceBusyMicros;
};

/// Simulates `problem` under `assignment` on `machine` (see above).
SimulatedRun simulateRun(const PlacementProblem& problem, const std::vector<int>& assignment,
                         const SimulatedMachine& machine);

} // namespace placer
