// Runs the current plan through the session (core/session) in a worker thread, with progress
// and cancel; the outcome, or why there is none, comes back through a queued signal.
#pragma once

#include "report/RunOutcome.h"
#include "session/Session.h"

#include <QFutureWatcher>
#include <QObject>
#include <QString>

#include <atomic>
#include <memory>

namespace placer::gui {

/// What a run is given besides the plan (RunController::start): data for graph inputs by name (the
/// rest get seeded random data at their planned shapes), and the file the model was opened from, so
/// that data of other shapes, or other values where inputs set shapes, is planned for
/// (Session::run); without a file such data is refused with a sentence.
struct RunData {
    std::vector<std::pair<std::string, HostTensor>> inputs;
    std::optional<ModelSource> source;
    /// Re-place the work while the run goes (RunRequest::adapt).
    bool adapt = false;
    /// The devices `physical` leaves empty are mapped by what the machine has free now
    /// (--map auto): the window's default.
    bool mapByLoad = true;
};

class RunController : public QObject {
    Q_OBJECT

public:
    /// Runs with `session`'s devices; the session outlives the controller.
    explicit RunController(Session* session, QObject* parent = nullptr);
    ~RunController() override;

    using Data = RunData;

    /// Starts a run of a copy of `graph` as `plan` places it (the document may change while it
    /// runs). `physical[d]` names the physical device of virtual device d ("cpu", "vcpu2"); empty
    /// entries get the GUI's defaults: cpu-kind devices on the host, every other device on a
    /// virtual CPU of its own, the same one each run (vcpu<d+1>), so that runs compare, bound
    /// to the least busy core unless `data.mapByLoad` is off (device/LoadMapping.h).
    void start(const Graph& graph, const DeviceSet& devices, const Plan& plan,
               const PlanOptions& planOptions, int warmup, int iterations,
               std::vector<std::string> physical, Data data = {});
    /// Starts generating from a copy of `graph` as `plan` places it (session/Generate.h):
    /// token() tells each token as it is made, generated() the end. `physical` as for start().
    void startGeneration(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                         const PlanOptions& planOptions, std::vector<std::string> physical,
                         std::optional<ModelSource> source, GenerateRequest request);
    /// The last finished generation (null when it failed or none has finished).
    std::shared_ptr<const GenerationReport> generation() const { return m_generation; }
    void cancel();
    bool isRunning() const;
    /// The last finished run (null when it failed or none has finished), and why it failed.
    std::shared_ptr<const RunOutcome> outcome() const { return m_outcome; }
    const QString& error() const { return m_error; }

signals:
    void progress(int done, int total);
    /// While the run loads: how many bytes of constants its devices hold so far (a mapped
    /// model's weights are read from disk then), in per mille of all.
    void loading(int perMille);
    void finished();
    /// A generation made token `token`, the `index`-th new one, `perSecond` tokens a second so
    /// far after the prompt.
    void token(qint64 token, int index, double perSecond);
    void generated();

private:
    using Finished = std::pair<std::shared_ptr<const RunOutcome>, QString>;
    Finished work(std::shared_ptr<const PlannedModel> planned, RunRequest request);

    Session* m_session;
    using Generated = std::pair<std::shared_ptr<const GenerationReport>, QString>;
    QFutureWatcher<Finished> m_watcher;
    QFutureWatcher<Generated> m_generating;
    std::shared_ptr<const GenerationReport> m_generation;
    std::shared_ptr<const RunOutcome> m_outcome;
    QString m_error;
    std::atomic<bool> m_cancel{false};
};

} // namespace placer::gui
