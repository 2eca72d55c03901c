// The GUI's runs (gui/RunController.h): a PlannedModel copied from the document, run by the
// session on a worker thread, its callbacks turned into queued signals.
#include "gui/RunController.h"

#include "session/Editing.h"

#include <QtConcurrent/QtConcurrentRun>

#include <chrono>

namespace placer::gui {

RunController::RunController(Session* session, QObject* parent)
    : QObject(parent), m_session(session) {
    connect(&m_watcher, &QFutureWatcher<Finished>::finished, this, [this] {
        std::tie(m_outcome, m_error) = m_watcher.result();
        emit finished();
    });
    connect(&m_generating, &QFutureWatcher<Generated>::finished, this, [this] {
        std::tie(m_generation, m_error) = m_generating.result();
        emit generated();
    });
}

RunController::~RunController() {
    m_cancel = true;
    m_watcher.waitForFinished();
    m_generating.waitForFinished();
}

bool RunController::isRunning() const {
    return m_watcher.isRunning() || m_generating.isRunning();
}

void RunController::startGeneration(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                                    const PlanOptions& planOptions,
                                    std::vector<std::string> physical,
                                    std::optional<ModelSource> source, GenerateRequest request) {
    if (isRunning())
        return;
    m_cancel = false;
    auto planned = std::make_shared<PlannedModel>(
        adoptPlan(LoadedModel{graph, devices, {}}, plan, planOptions, std::move(source)));
    physical.resize(static_cast<std::size_t>(devices.size()));
    for (int d = 0; d < devices.size(); ++d) {
        if (!physical[static_cast<std::size_t>(d)].empty())
            request.maps.push_back(
                {devices[DeviceId(d)].name, physical[static_cast<std::size_t>(d)]});
    }
    m_generating.setFuture(QtConcurrent::run([this, planned, request]() -> Generated {
        const auto started = std::chrono::steady_clock::now();
        auto first = started;
        const TokenCallback onToken = [&](std::int64_t token, int index) {
            const auto now = std::chrono::steady_clock::now();
            if (index == 0)
                first = now;
            const double seconds = std::chrono::duration<double>(now - first).count();
            const double perSecond = index > 0 && seconds > 0 ? index / seconds : 0;
            QMetaObject::invokeMethod(
                this,
                [this, token, index, perSecond] { emit this->token(token, index, perSecond); },
                Qt::QueuedConnection);
            return !m_cancel.load();
        };
        auto made = m_session->generate(planned, request, onToken);
        if (!made)
            return {nullptr, QString::fromStdString(made.error().message)};
        return {std::make_shared<const GenerationReport>(made.take()), QString()};
    }));
}

void RunController::cancel() {
    m_cancel = true;
}

void RunController::start(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                          const PlanOptions& planOptions, int warmup, int iterations,
                          std::vector<std::string> physical, Data data) {
    if (isRunning())
        return;
    m_cancel = false;
    // Planned again for other data: on these devices and with these options.
    auto planned = std::make_shared<PlannedModel>(
        adoptPlan(LoadedModel{graph, devices, {}}, plan, planOptions, std::move(data.source)));
    RunRequest request;
    request.inputs = std::move(data.inputs);
    request.warmup = warmup;
    request.iterations = iterations;
    request.adapt = data.adapt;
    request.mapByLoad = data.mapByLoad;
    // The physical devices the user chose; the others the session maps as placer run does
    // (device/DeviceMapping.h).
    physical.resize(static_cast<std::size_t>(devices.size()));
    for (int d = 0; d < devices.size(); ++d) {
        if (!physical[static_cast<std::size_t>(d)].empty())
            request.maps.push_back(
                {devices[DeviceId(d)].name, physical[static_cast<std::size_t>(d)]});
    }
    m_watcher.setFuture(
        QtConcurrent::run([this, planned, request] { return work(planned, std::move(request)); }));
}

RunController::Finished RunController::work(std::shared_ptr<const PlannedModel> planned,
                                            RunRequest request) {
    RunCallbacks callbacks;
    int reported = -1;
    callbacks.loading = [this, &reported](std::int64_t done, std::int64_t total) {
        const int perMille = total > 0 ? static_cast<int>(done * 1000 / total) : 1000;
        if (perMille == reported)
            return;
        reported = perMille;
        QMetaObject::invokeMethod(
            this, [this, perMille] { emit loading(perMille); }, Qt::QueuedConnection);
    };
    // At most 30 updates a second, and the last: a small model's iterations, thousands a
    // second, would otherwise wake the window to repaint its bar between them, on the cores the
    // run is timed on.
    callbacks.progress = [this, last = std::chrono::steady_clock::time_point()](int done,
                                                                                int total) mutable {
        const auto now = std::chrono::steady_clock::now();
        if (done < total && now - last < std::chrono::milliseconds(33))
            return;
        last = now;
        QMetaObject::invokeMethod(
            this, [this, done, total] { emit progress(done, total); }, Qt::QueuedConnection);
    };
    callbacks.cancelled = [this] { return m_cancel.load(); };
    auto ran = m_session->run(std::move(planned), request, callbacks);
    if (!ran)
        return {nullptr, QString::fromStdString(ran.error().message)};
    return {ran.take(), QString()};
}

} // namespace placer::gui
