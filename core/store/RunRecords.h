// Runs of plans as the workspace keeps them, built and compared in one place for the CLI
// (`placer run --save-run`, `placer plans diff`) and the GUI (runs of a saved plan, Compare), so
// both record the same mapping and machine and compare runs alike.
#pragma once

#include "io/Json.h"
#include "report/RunReport.h"
#include "store/PlanStore.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace placer::store {

/// The record of a finished run: each virtual device with the physical device it ran on
/// ("cpu=cpu, gpu=vcpu1", from the executor's streams), the machine ("2 cores"), the measured
/// iterations, the median latency and the JSON run report, with what the plan predicted beside
/// it (its report's "prediction", for placer plans diff and the GUI's Compare). `run` must have
/// an executor.
RunRecord runRecord(const RunOutcome& run);

/// What a run measured, as the cost table keeps it: the median of each of the user's compute
/// nodes that ran as a kernel of its own or led a fused group (its group's time), keyed by
/// CostModel::nodeKey and the cost class of the physical device its virtual device ran on
/// (`physical[d]`, "vcpu2", "cuda:0").
std::vector<MeasuredCost> measuredCosts(const Graph& graph, const Plan& plan,
                                        const std::vector<NodeId>& fusedInto,
                                        const std::vector<std::string>& physical,
                                        const MedianTimes& times);

/// What a run of a plan that splits measured of each shard (a pipeline's micro-batch, a split
/// region's part): each split node's shard timed on its own device, kept under the key of the
/// node at the shard's shapes in the sharded graph (a fused group's under its group's key
/// there), which the prediction of such a plan reads. Empty when the plan does not split.
std::vector<MeasuredCost> shardCosts(const RunOutcome& run);

/// A kept generation as JSON (placer plans show --emit json, Python's Workspace.show): when, where,
/// the prompt's and the new tokens' counts, time to first token and decode tokens/s; with
/// `withReport`, its whole report too.
Json generationRecordJson(const GenerationRecord& generation, bool withReport);

/// The last runs of two saved plans side by side.
struct RunComparison {
    RunRecord a, b;
    /// What each plan predicted for its run (placer run on a plan with a cost model), if it did.
    std::optional<double> predictedMsA, predictedMsB;
    /// The nodes timed in both runs with the change of their median time in ms (b minus a),
    /// largest change first (ties by name).
    std::vector<std::pair<std::string, double>> nodeChanges;
};

/// Compares the last runs of plans `a` and `b`: std::nullopt when either has no run yet, an
/// error when a plan is missing or the workspace cannot be read.
Result<std::optional<RunComparison>> compareLastRuns(PlanStore& store, const std::string& a,
                                                     const std::string& b);

} // namespace placer::store
