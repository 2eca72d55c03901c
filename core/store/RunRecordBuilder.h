// The run of a plan as the workspace keeps it, built in one place for the CLI (`placer run
// --save-run`) and the GUI (runs of a saved plan), so both record the same mapping and machine.
#pragma once

#include "io/RunReport.h"
#include "store/PlanStore.h"

namespace placer::store {

/// The record of a finished run: each virtual device with the physical device it ran on
/// ("cpu=cpu, gpu=vcpu1", from the executor's streams), the machine ("2 cores"), the measured
/// iterations, the median latency and the JSON run report. `run` must have a graph, devices,
/// an executor and a result.
RunRecord runRecord(const RunReportInput& run);

} // namespace placer::store
