// Runs the current plan in a worker thread: lowering, loading onto virtual CPUs (or mapped
// devices), warm-up, measured iterations with progress and cancel, and the single-device
// reference check. The outcome comes back through a queued signal.
#pragma once

#include "report/RunReport.h"
#include "plan/Plan.h"
#include "runtime/DeviceMapping.h"
#include "runtime/Executor.h"
#include "runtime/ReferenceRun.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>
#include <optional>

namespace placer::gui {

/// What a finished run leaves: its own copy of the graph and plan (the document may change while
/// it runs), the loaded executor (for kernel names and the program), and the measurements.
struct RunOutcome {
    /// The graph that ran: the user's, optimised for its devices after placement
    /// (passes/PassManager.h), and its plan.
    std::unique_ptr<Graph> graph;
    DeviceSet devices;
    Plan plan;
    /// The user's graph and plan, as the canvas shows them; origin[i] is the user's node that
    /// node i of `graph` computes (invalid for a node an optimisation inserted).
    std::unique_ptr<Graph> userGraph;
    Plan userPlan;
    std::vector<NodeId> origin;
    /// Per user node: the user node whose fused kernel computed it, or an invalid id.
    std::vector<NodeId> fusedInto;
    /// Per node of `graph`: its split region and shard, or -1 (empty when nothing is split).
    std::vector<std::int32_t> region, shard;
    std::vector<std::string> optimizations;
    PlanOptions planOptions;
    RunOptions options;
    std::unique_ptr<Executor> executor;
    RunResult result;
    std::optional<ReferenceCheck> reference;
    std::vector<std::string> physical; ///< per virtual device: where it ran
    QString error;
    bool cancelled = false;
};

/// What the run reports, traces, CSV and run records are made from (an outcome that ran).
RunReportInput runReportInput(const RunOutcome& outcome);

/// Median times per node and per copy of the user's graph and plan (what the canvas shows). A
/// node's time includes the layout changes an optimisation inserted after it.
MedianTimes userMedianTimes(const RunOutcome& outcome);

class RunController : public QObject {
    Q_OBJECT

public:
    explicit RunController(QObject* parent = nullptr);
    ~RunController() override;

    /// Starts a run of a copy of `graph` as `plan` places it. `physical[d]` names the physical
    /// device of virtual device d ("cpu", "vcpu2"); empty entries get the defaults.
    void start(const Graph& graph, const DeviceSet& devices, const Plan& plan, RunOptions options,
               std::vector<std::string> physical, const PlanOptions& planOptions = {});
    void cancel();
    bool isRunning() const;
    /// The last finished run, or null.
    std::shared_ptr<const RunOutcome> outcome() const { return m_outcome; }

signals:
    void progress(int done, int total);
    /// While the run loads: how many bytes of constants its devices hold so far (a mapped
    /// model's weights are read from disk then), in per mille of all.
    void loading(int perMille);
    void finished();

private:
    std::shared_ptr<RunOutcome> work(std::shared_ptr<RunOutcome> outcome);

    std::unique_ptr<DeviceRegistry> m_registry;
    QFutureWatcher<std::shared_ptr<RunOutcome>> m_watcher;
    std::shared_ptr<const RunOutcome> m_outcome;
    std::atomic<bool> m_cancel{false};
};

} // namespace placer::gui
