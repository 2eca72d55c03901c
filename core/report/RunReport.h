// The run report (JSON and a readable summary) and the Chrome trace of a run.
#pragma once

#include "io/Json.h"
#include "report/RunOutcome.h"

#include <optional>
#include <string>
#include <vector>

namespace placer {

/// A split region's times in a run: each shard's kernels (the median iteration's sum), and the
/// region's span in the traced iteration, from its first kernel or split to its last concat.
struct SplitRunTimes {
    std::string name;
    double spanMicros = 0;
    std::vector<double> shardMicros; ///< per shard
};
std::vector<SplitRunTimes> splitRunTimes(const RunOutcome& input);

/// A stream's figures (PlanOptions::streamBatches): the median iteration ran every batch, which
/// makes its items per second; per batch of the traced iteration, the span from its first
/// kernel to its last and when its last kernel ended, from the iteration's start; and what the
/// plan predicted for the stream (0: no prediction).
struct StreamRunTimes {
    std::int32_t batches = 0;
    std::int64_t batch = 0;        ///< rows of one batch
    std::int32_t microBatches = 1; ///< per batch
    double medianMicros = 0, predictedMicros = 0;
    double itemsPerSecond = 0;
    std::vector<double> spanMicros, doneMicros; ///< per batch
    /// The median of the batches' spans: a batch's latency in the stream.
    double batchMicros = 0;
};
std::optional<StreamRunTimes> streamRunTimes(const RunOutcome& input);

/// The median time of each node (by NodeId index) and each planned copy (by index into the
/// plan's copies) over a run's iterations, in ms; -1 where nothing ran.
struct MedianTimes {
    std::vector<double> nodeMillis;
    std::vector<double> copyMillis;
};
MedianTimes medianTimes(const Program& program, const RunResult& result, std::size_t nodeCount,
                        std::size_t copyCount);

/// The times of a run of an optimised graph (`graph` planned by `plan`, passes/PassManager.h) per
/// node and per copy of the user's graph and plan, what the canvas shows. `origin[i]` is the
/// user's node that node i computes; an inserted node (a layout change) has none, and its time
/// goes to the user's node whose value it changes.
MedianTimes userMedianTimes(const MedianTimes& ran, const Graph& graph, const Plan& plan,
                            const std::vector<NodeId>& origin, std::size_t userNodes,
                            const Plan& userPlan);

/// A plan's predicted times (plan/Plan.h Prediction) set against a run of it.
struct PredictionCheck {
    double predictedMs = 0, measuredMs = 0; ///< latency; measured: the median iteration
    struct NodeTimes {
        std::string name;
        double predictedMs, measuredMs;
    };
    /// The user's ops timed in the run (a fused group's time is on its lead op).
    std::vector<NodeTimes> nodes;
    double medianNodeError = 0; ///< |predicted - measured| / measured, the median over nodes
    /// Per virtual device: its busy time (its kernels and the copies into it), and its idle
    /// time, the latency less that: a pipeline's bubble. Measured: medians over iterations (of
    /// each iteration's idle time, not the median latency less the median busy time).
    struct DeviceTimes {
        std::string name;
        double predictedBusyMs, measuredBusyMs;
        double predictedIdleMs, measuredIdleMs;
    };
    std::vector<DeviceTimes> devices;

    /// predicted_ms, measured_ms, median_node_error, nodes, devices.
    Json toJson() const;
    /// "predicted against measured: ...", each device's busy and idle time, and the five ops
    /// that differ most.
    std::string summary() const;
};
/// `userPlan` must have a prediction; `times` are the user's nodes' (userMedianTimes); each
/// device's busy and idle time come from the program that ran.
PredictionCheck checkPrediction(const Graph& userGraph, const Plan& userPlan,
                                const DeviceSet& devices, const Program& program,
                                const RunResult& result, const MedianTimes& times);

/// The median times of a run per node and copy of the user's graph and plan: what the canvas
/// shows, the cost table keeps and the prediction is checked against.
MedianTimes userMedianTimes(const RunOutcome& outcome);
/// The run set against its plan's prediction, when the plan has one.
std::optional<PredictionCheck> checkPrediction(const RunOutcome& outcome);

/// What an idle stretch of the traced iteration waited for: "%7 (nn.conv2d) on gpu [vcpu1]",
/// "copy %7@cpu gpu -> cpu", "input %x", or, with nothing to wait for, "nothing: done" (at the
/// end) and "the run's start".
std::string idleReason(const RunOutcome& input, const IdleStretch& stretch);

/// The sizes `input` ran at: the values of the dimensions the model's inputs name, and the
/// shapes its kernels found (the last iteration's), by node name and output.
RanSizes ranSizes(const RunOutcome& input);

/// latency_ms, iterations, warmup, devices, nodes, copies, outputs, reference_check.
Json runReportJson(const RunOutcome& input);
/// A run's re-placements and failed devices (RunOutcome::events) as the report's "events".
Json runEventsJson(const std::vector<RunEvent>& events);
/// Every node's and copy's median time as CSV, in program order:
/// kind,name,op,device,from,bytes,median_ms (text fields quoted).
std::string runTimingsCsv(const RunOutcome& input);
/// The same for people: latency, per-device busy time and memory, the slowest nodes, copies.
std::string runSummary(const RunOutcome& input);
/// Chrome Trace Event JSON of the last iteration: a process per physical device, a compute
/// thread and a thread per copy source, complete events with node/op/device/shapes, flows from
/// producer to copy to consumer, and a memory counter per device.
Json chromeTrace(const RunOutcome& input);

} // namespace placer
