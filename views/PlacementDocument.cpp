// The loaded graph and its plan, re-planned on every edit (views/PlacementDocument.h).
#include "views/PlacementDocument.h"

#include "report/DotWriter.h"

#include <QElapsedTimer>

namespace placer::views {

PlacementDocument::PlacementDocument(QObject* parent, std::shared_ptr<Session> session)
    : QObject(parent), m_session(session ? std::move(session) : std::make_shared<Session>()),
      m_workspace(std::make_unique<PlanWorkspace>()), m_predictionTimer(new QTimer(this)) {
    m_predictionTimer->setSingleShot(true);
    connect(m_predictionTimer, &QTimer::timeout, this, &PlacementDocument::settlePrediction);
}

PlacementDocument::~PlacementDocument() = default;

bool PlacementDocument::open(const QString& path, QString* error,
                             const std::optional<DeviceSet>& devices,
                             const InputShapes& inputShapes) {
    ModelSource source;
    source.path = path.toStdString();
    source.inputShapes = inputShapes;
    auto loaded = loadSource(source, devices);
    if (!loaded) {
        *error = QString::fromStdString(loaded.error().toString());
        return false;
    }
    setModel(loaded.take(), path, inputShapes);
    return true;
}

bool PlacementDocument::openText(const std::string& text, const QString& name, QString* error) {
    ModelSource source;
    source.path = name.toStdString();
    source.text = text;
    auto loaded = m_session->load(source);
    if (!loaded) {
        *error = QString::fromStdString(loaded.error().toString());
        return false;
    }
    setModel(loaded.take(), name);
    return true;
}

void PlacementDocument::setModel(LoadedModel model, const QString& path, InputShapes inputShapes) {
    m_model = std::move(model);
    m_path = path;
    m_inputShapes = std::move(inputShapes);
    m_ranSizes = RanSizes{};
    m_warnings.clear();
    for (const std::string& warning : m_model.warnings)
        m_warnings.push_back(QString::fromStdString(warning));
    m_options = PlanOptions{};
    m_workspace = std::make_unique<PlanWorkspace>();
    m_colours.assign(static_cast<std::size_t>(m_model.devices.size()), QColor());
    m_physical.assign(static_cast<std::size_t>(m_model.devices.size()), std::string());
    replan();
    emit modelReset();
    emit planChanged();
}

void PlacementDocument::setPins(const std::vector<NodeId>& nodes, const std::vector<Pin>& pins) {
    for (std::size_t i = 0; i < nodes.size() && i < pins.size(); ++i)
        m_model.graph.setPin(nodes[i], pins[i]);
    replan();
    emit planChanged();
}

void PlacementDocument::setMode(PlanMode mode) {
    if (m_options.mode == mode)
        return;
    m_options.mode = mode;
    replan();
    emit planChanged();
}

void PlacementDocument::setOptions(PlanOptions options) {
    m_options = std::move(options);
    replan();
    emit planChanged();
}

void PlacementDocument::setRules(std::vector<OpRule> rules, std::string fallback) {
    m_options.rules = std::move(rules);
    m_options.fallbackDevice = std::move(fallback);
    replan();
    emit planChanged();
}

void PlacementDocument::setSplits(std::vector<SplitRequest> splits) {
    m_options.splits = std::move(splits);
    replan();
    emit planChanged();
}

void PlacementDocument::setCostSource(CostSource source) {
    m_costSource = std::move(source);
    m_options.costs.reset();
    replan();
    emit planChanged();
}

void PlacementDocument::replan() {
    if (m_costSource &&
        (!m_options.costs || m_costsStale || m_costDevices != m_model.devices.devices())) {
        m_options.costs = m_costSource(m_model.devices);
        m_costDevices = m_model.devices.devices();
        m_costsStale = false;
    }
    QElapsedTimer timer;
    timer.start();
    m_predictionTimer->stop();
    m_predictionPending = m_options.costs && m_options.mode != PlanMode::Auto &&
                          m_model.graph.size() > kDeferredPrediction;
    if (m_predictionPending) {
        // Without costs the planner places the same and predicts nothing (settlePrediction).
        // The memory plan follows with the prediction too, unless a device has a capacity the
        // plan must be checked against now.
        PlanOptions placing = m_options;
        placing.costs.reset();
        placing.planMemory = false;
        for (const VirtualDevice& device : m_model.devices.devices())
            placing.planMemory = placing.planMemory || device.memoryCapacity.has_value();
        // The old plan's arrays make the new one's (PlanWorkspace::recycle).
        m_plan = m_session->replan(m_model, placing, *m_workspace, std::move(m_plan));
        m_predictionTimer->start(0);
    } else {
        m_plan = m_session->replan(m_model, m_options, *m_workspace, std::move(m_plan));
    }
    m_lastPlanMillis = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

void PlacementDocument::settlePrediction() {
    if (!m_predictionPending)
        return;
    m_predictionPending = false;
    m_predictionTimer->stop();
    // The same plan, with costs: placement is the same (not auto mode), and the prediction,
    // the sharded plan's included, comes with it.
    m_plan = m_session->replan(m_model, m_options, *m_workspace, std::move(m_plan));
    emit predictionChanged();
}

QColor PlacementDocument::deviceColor(DeviceId device) const {
    if (!device.valid())
        return QColor(0xe0, 0xe0, 0xe0);
    if (static_cast<std::size_t>(device.index) < m_colours.size() &&
        m_colours[device.index].isValid())
        return m_colours[device.index];
    return QColor(QString::fromStdString(placer::deviceColor(device)));
}

std::string PlacementDocument::physicalDevice(DeviceId device) const {
    return static_cast<std::size_t>(device.index) < m_physical.size() ? m_physical[device.index]
                                                                      : std::string();
}

DeviceSnapshot PlacementDocument::snapshot() const {
    DeviceSnapshot snapshot;
    snapshot.devices = m_model.devices;
    snapshot.colours = m_colours;
    snapshot.physical = m_physical;
    for (const Node& node : m_model.graph.nodes())
        snapshot.pins.push_back(node.pin);
    snapshot.rules = m_options.rules;
    snapshot.fallback = m_options.fallbackDevice;
    return snapshot;
}

void PlacementDocument::restore(const DeviceSnapshot& snapshot) {
    m_model.devices = snapshot.devices;
    m_colours = snapshot.colours;
    m_physical = snapshot.physical;
    for (std::uint32_t i = 0; i < m_model.graph.size() && i < snapshot.pins.size(); ++i) {
        m_model.graph.setPin(NodeId(i), snapshot.pins[i]);
        m_model.graph.setRejectedPins(NodeId(i), {});
    }
    m_options.rules = snapshot.rules;
    m_options.fallbackDevice = snapshot.fallback;
    m_workspace = std::make_unique<PlanWorkspace>();
    replan();
    emit devicesChanged();
    emit planChanged();
}

std::optional<DeviceSnapshot> PlacementDocument::withDevices(const DeviceSet& devices,
                                                             const std::vector<int>& from,
                                                             std::vector<QColor> colours,
                                                             std::vector<std::string> physical,
                                                             QString* error) const {
    const DeviceSet& old = m_model.devices;
    std::vector<int> to(static_cast<std::size_t>(old.size()), -1);
    for (std::size_t i = 0; i < from.size(); ++i) {
        if (from[i] >= 0)
            to[static_cast<std::size_t>(from[i])] = static_cast<int>(i);
    }
    auto mapped = [&](DeviceId id) {
        return id.valid() && to[id.index] >= 0 ? DeviceId(static_cast<std::uint32_t>(to[id.index]))
                                               : DeviceId();
    };
    for (const Node& node : m_model.graph.nodes()) {
        if (!node.isDeviceCopy())
            continue;
        for (DeviceId id : {node.copySource, node.copyDestination}) {
            if (id.valid() && !mapped(id).valid()) {
                *error = tr("'%1' cannot be removed: device_copy %2 in the model names it")
                             .arg(QString::fromStdString(old[id].name),
                                  QString::fromStdString(node.name));
                return std::nullopt;
            }
        }
    }
    for (const GraphOutput& output : m_model.graph.outputs()) {
        if (output.device.valid() && !mapped(output.device).valid()) {
            *error = tr("'%1' cannot be removed: a result of the model must be on it")
                         .arg(QString::fromStdString(old[output.device].name));
            return std::nullopt;
        }
    }
    // device_copy nodes and results keep their DeviceIds, so devices they name keep their
    // index: only a set whose surviving devices keep their order is accepted then.
    for (const Node& node : m_model.graph.nodes()) {
        for (DeviceId id : {node.copySource, node.copyDestination}) {
            if (node.isDeviceCopy() && id.valid() && mapped(id) != id) {
                *error = tr("devices named by device_copy nodes must keep their place in the list");
                return std::nullopt;
            }
        }
    }
    for (const GraphOutput& output : m_model.graph.outputs()) {
        if (output.device.valid() && mapped(output.device) != output.device) {
            *error = tr("devices that results must be on must keep their place in the list");
            return std::nullopt;
        }
    }
    DeviceSnapshot snapshot;
    snapshot.devices = devices;
    snapshot.colours = std::move(colours);
    snapshot.physical = std::move(physical);
    for (const Node& node : m_model.graph.nodes()) {
        Pin pin = node.pin;
        if (pin.active()) {
            pin.device = mapped(pin.device);
            if (!pin.device.valid())
                pin = Pin{};
        }
        snapshot.pins.push_back(pin);
    }
    for (const OpRule& rule : m_options.rules) {
        if (devices.find(rule.device))
            snapshot.rules.push_back(rule);
    }
    snapshot.fallback = devices.find(m_options.fallbackDevice) ? m_options.fallbackDevice : "";
    return snapshot;
}

QString PlacementDocument::explain(NodeId node) const {
    return QString::fromStdString(m_plan.explain(m_model.graph, m_model.devices, m_options, node));
}

} // namespace placer::views
