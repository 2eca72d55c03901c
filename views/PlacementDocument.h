// The Qt face of one loaded graph and its plan: the GUI's single source of truth. Widgets and the
// scene read from it and listen to its signals; edits go through it (via undo commands).
#pragma once

#include "session/Session.h"

#include <QColor>
#include <QObject>
#include <QString>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace placer::views {

/// Everything the device editor changes, for exact undo: the device set, each device's colour
/// and physical mapping, every node's pin, and the rules.
struct DeviceSnapshot {
    DeviceSet devices;
    std::vector<QColor> colours;
    std::vector<std::string> physical; ///< "" = the default mapping
    std::vector<Pin> pins;             ///< per node
    std::vector<OpRule> rules;
    std::string fallback;
};

class PlacementDocument : public QObject {
    Q_OBJECT

public:
    /// Reads and plans through `session` (core/session, as the CLI and Python do); without
    /// one, through a session of its own.
    explicit PlacementDocument(QObject* parent = nullptr,
                               std::shared_ptr<Session> session = nullptr);
    ~PlacementDocument() override;
    /// The session the document reads and plans through.
    Session& session() const { return *m_session; }

    /// Reads a Relay, JSON or ONNX file. On failure returns false with a sentence in *error and
    /// keeps the current graph.
    bool open(const QString& path, QString* error,
              const std::optional<DeviceSet>& devices = std::nullopt,
              const InputShapes& inputShapes = {});
    /// Reads a model from text (a bundled example); `name` is used in messages.
    bool openText(const std::string& text, const QString& name, QString* error);
    /// Takes a loaded model (for tests and `--screenshot`).
    void setModel(LoadedModel model, const QString& path, InputShapes inputShapes = {});

    bool isEmpty() const { return m_model.graph.size() == 0; }
    const QString& path() const { return m_path; }
    /// The shapes the model's open inputs were given when it was opened (--input-shape).
    const InputShapes& inputShapes() const { return m_inputShapes; }
    const Graph& graph() const { return m_model.graph; }
    const DeviceSet& devices() const { return m_model.devices; }
    const Plan& plan() const { return m_plan; }
    const PlanOptions& options() const { return m_options; }
    const std::vector<QString>& warnings() const { return m_warnings; }

    /// The pin of each node (what undo commands store and restore).
    Pin pin(NodeId node) const { return m_model.graph.node(node).pin; }
    /// Sets the pins of `nodes` (pins[i] for nodes[i]) and re-plans once.
    void setPins(const std::vector<NodeId>& nodes, const std::vector<Pin>& pins);
    void setMode(PlanMode mode);
    /// Every planner option at once (rules, fallback, mode, constants), with one re-plan.
    void setOptions(PlanOptions options);
    void setRules(std::vector<OpRule> rules, std::string fallback);
    /// Sets the split regions (PlanOptions::splits, plan/Split.h) and re-plans once.
    void setSplits(std::vector<SplitRequest> splits);
    /// Where the plan's costs come from (the machine's calibration and measured times): asked
    /// for a cost model whenever the devices change, so every plan predicts its schedule.
    using CostSource = std::function<std::shared_ptr<const CostModel>(const DeviceSet&)>;
    void setCostSource(CostSource source);
    /// The costs changed (a run measured its ops): the next plan asks the source again. The
    /// current plan stays as it is, so a run's timings still belong to it.
    void costsChanged() { m_costsStale = true; }
    /// The sizes the last run of this graph had, shown beside shapes that follow named
    /// dimensions or are found at run time; a new graph forgets them. The next plans cost at
    /// that run's sizes of the named dimensions (auto mode places by them, the prediction is at
    /// them); the current plan stays as it is, as with costsChanged.
    void setRanSizes(RanSizes sizes) {
        if (!m_model.graph.symbolValues.empty() && !sizes.symbols.empty())
            m_options.costAt = sizes.symbols;
        m_ranSizes = std::move(sizes);
    }
    const RanSizes& ranSizes() const { return m_ranSizes; }

    /// The colour of a device on the canvas and in the palette.
    QColor deviceColor(DeviceId device) const;
    /// Where a device runs in the GUI's runs ("" = cpu-kind on the host, others on vcpuN).
    std::string physicalDevice(DeviceId device) const;
    const std::vector<std::string>& physicalDevices() const { return m_physical; }

    DeviceSnapshot snapshot() const;
    /// Puts a snapshot back (undo/redo of device edits) and re-plans.
    void restore(const DeviceSnapshot& snapshot);
    /// A snapshot with the device set replaced: `from[i]` is the old index of new device i (-1
    /// for an added one). Pins to removed devices are dropped, rules naming them too. Fails with
    /// a sentence when the graph itself names a removed device (device_copy, result device).
    std::optional<DeviceSnapshot>
    withDevices(const DeviceSet& devices, const std::vector<int>& from, std::vector<QColor> colours,
                std::vector<std::string> physical, QString* error) const;
    /// Why `node` is on its device, as the planner explains it.
    QString explain(NodeId node) const;
    /// Milliseconds the last re-plan took.
    double lastPlanMillis() const { return m_lastPlanMillis; }

    /// Graphs of more nodes than this are predicted after their plan is shown: an edit
    /// re-plans and repaints at once, and the prediction (the timeline, the predicted latency,
    /// each node's predicted time) follows when the window is next idle, once for a burst of
    /// edits, with the memory plan where no device has a capacity to check. Auto mode places
    /// by the prediction, so it is never deferred.
    static constexpr std::size_t kDeferredPrediction = 20000;
    /// Whether the plan shown waits for its prediction (predictionChanged follows).
    bool predictionPending() const { return m_predictionPending; }
    /// Makes a pending prediction now: what needs the whole plan (a run, a save) calls this.
    void settlePrediction();

signals:
    /// A different graph (or device set) is loaded: rebuild the scene, lay out again.
    void modelReset();
    /// The plan changed (pins, rules, mode): repaint, no re-layout.
    void planChanged();
    /// The device set, colours or mappings changed (the plan follows with planChanged).
    void devicesChanged();
    /// A deferred prediction arrived (kDeferredPrediction): the plan is the same, and now has
    /// its prediction.
    void predictionChanged();

private:
    void replan();

    std::shared_ptr<Session> m_session;
    LoadedModel m_model;
    RanSizes m_ranSizes;
    QString m_path;
    InputShapes m_inputShapes;
    PlanOptions m_options;
    CostSource m_costSource;
    std::vector<VirtualDevice> m_costDevices; ///< the devices m_options.costs was made for
    bool m_costsStale = false;
    Plan m_plan;
    std::unique_ptr<PlanWorkspace> m_workspace;
    std::vector<QString> m_warnings;
    std::vector<QColor> m_colours;       ///< per device; invalid = the palette's
    std::vector<std::string> m_physical; ///< per device
    double m_lastPlanMillis = 0;
    bool m_predictionPending = false;
    QTimer* m_predictionTimer = nullptr;
};

} // namespace placer::views
