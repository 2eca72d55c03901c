// Pipeline stages chosen by cost (PlanOptions::microBatches in auto mode): the tasks of a
// PlacementProblem, in its topological order, cut into contiguous stages, each on its own device,
// so that M micro-batches flowing through them finish soonest.
//
// The stage model (GPipe's, with copies): a micro-batch costs each task its fixed overhead
// (problem.taskOverheadMicros: launch and dispatch) and 1/M of the rest of its time; stage k
// computes for c_k and receives its inputs from earlier stages in x_k (one copy per value, its
// bytes / M over the link). The first micro-batch passes every stage, and each later one leaves
// the slowest device's work behind it:
//
//     latency = sum_k (c_k + x_k) + (M - 1) max_d busy_d + the run's fixed overhead
//
// where busy_d sums the stages on resource d (problem.resourceOf: devices that share one take
// turns; chosen stages use one resource each). Copies are delays, not work of a device, as in
// simulate().
//
// The choice is dynamic programming over cut positions, as PipeDream's planner and Alpa's stage
// slicing do: states (devices used, last device, position), each keeping the Pareto front of
// (sum of stage times and copies, slowest stage) so that the objective, which mixes a sum and a
// maximum, is exact. Every position between two tasks is a candidate cut while the work allows
// (PipelineStages::exact) and at most 1,024 of them; larger graphs are cut at evenly spaced
// positions. Links are taken as
// the one from the previous stage's device: exact where all links are alike, as between vcpus.
#pragma once

#include "plan/AutoPlacer.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace placer {

struct PipelineStage {
    std::size_t begin = 0, end = 0; ///< tasks [begin, end)
    int device = -1;
    double computeMicros = 0; ///< per micro-batch
    double copyInMicros = 0;  ///< per micro-batch, the copies into the stage
};

struct PipelineStages {
    std::vector<int> assignment; ///< per task
    std::vector<PipelineStage> stages;
    double latencyMicros = 0; ///< the stage model's latency of the whole batch
    /// Every cut position was considered and no Pareto front was cut short: the optimum of the
    /// stage model over contiguous stages on distinct resources.
    bool exact = true;
    std::size_t positions = 0; ///< candidate cut positions considered (tasks + 1 when exact)
};

/// The stage model's latency of any assignment (a device per task): stages are the maximal runs
/// of one device in task order (instant tasks join the run around them), a device may hold
/// several. `stages`, when given, receives them.
/// With `batches` > 1, a stream (PlanOptions::streamBatches): that many batches back to back, each
/// in `microBatches`, and the latency is the whole stream's.
double pipelinedLatency(const PlacementProblem& problem, const std::vector<int>& assignment,
                        int microBatches, std::vector<PipelineStage>* stages = nullptr,
                        int batches = 1);

/// The bytes a stage of tasks [begin, end) needs on its device with M micro-batches: the
/// constants its tasks read (each once) and twice its largest task output at micro-batch size.
std::int64_t stageMemoryBytes(const PlacementProblem& problem, std::size_t begin, std::size_t end,
                              int microBatches);

struct PipelineStageOptions {
    /// Bound on the search's work (state transitions); the cut positions shrink to fit it.
    double work = 2e7;
    /// Pareto entries kept per state.
    std::size_t frontLimit = 48;
    /// A stream's batches, each in the micro-batches given (pipelinedLatency).
    int batches = 1;
};

/// The contiguous stages on distinct resources that minimise the stage model's latency within
/// the devices' capacities (problem.capacity; < 0 unlimited), honouring fixed tasks and tasks a
/// device cannot run; nullopt when no such stages exist.
std::optional<PipelineStages> choosePipelineStages(const PlacementProblem& problem,
                                                   int microBatches,
                                                   const PipelineStageOptions& options = {});

} // namespace placer
