// Runs of plans as the workspace keeps them, built and compared in one place for the CLI
// (`placer run --save-run`, `placer plans diff`) and the GUI (runs of a saved plan, Compare), so
// both record the same mapping and machine and compare runs alike.
#pragma once

#include "io/RunReport.h"
#include "store/PlanStore.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace placer::store {

/// The record of a finished run: each virtual device with the physical device it ran on
/// ("cpu=cpu, gpu=vcpu1", from the executor's streams), the machine ("2 cores"), the measured
/// iterations, the median latency and the JSON run report. `run` must have a graph, devices,
/// an executor and a result.
RunRecord runRecord(const RunReportInput& run);

/// The last runs of two saved plans side by side.
struct RunComparison {
    RunRecord a, b;
    /// The nodes timed in both runs with the change of their median time in ms (b minus a),
    /// largest change first (ties by name).
    std::vector<std::pair<std::string, double>> nodeChanges;
};

/// Compares the last runs of plans `a` and `b`: std::nullopt when either has no run yet, an
/// error when a plan is missing or the workspace cannot be read.
Result<std::optional<RunComparison>> compareLastRuns(PlanStore& store, const std::string& a,
                                                     const std::string& b);

} // namespace placer::store
