#include "views/PlacementDocument.h"

#include "plan/Planner.h"

#include <QElapsedTimer>

namespace placer::views {

PlacementDocument::PlacementDocument(QObject* parent)
    : QObject(parent), m_workspace(std::make_unique<PlanWorkspace>()) {}

PlacementDocument::~PlacementDocument() = default;

bool PlacementDocument::open(const QString& path, QString* error,
                             const std::optional<DeviceSet>& devices) {
    auto loaded = loadModelFile(path.toStdString(), GraphFormat::Auto, devices);
    if (!loaded) {
        *error = QString::fromStdString(loaded.error().toString());
        return false;
    }
    setModel(loaded.take(), path);
    return true;
}

bool PlacementDocument::openText(const std::string& text, const QString& name, QString* error) {
    auto loaded = loadModelText(text, name.toStdString(), GraphFormat::Auto, std::nullopt);
    if (!loaded) {
        *error = QString::fromStdString(loaded.error().toString());
        return false;
    }
    setModel(loaded.take(), name);
    return true;
}

void PlacementDocument::setModel(LoadedModel model, const QString& path) {
    m_model = std::move(model);
    m_path = path;
    m_warnings.clear();
    for (const std::string& warning : m_model.warnings)
        m_warnings.push_back(QString::fromStdString(warning));
    m_options = PlanOptions{};
    m_workspace = std::make_unique<PlanWorkspace>();
    replan();
    emit modelReset();
    emit planChanged();
}

void PlacementDocument::setPins(const std::vector<NodeId>& nodes, const std::vector<Pin>& pins) {
    for (std::size_t i = 0; i < nodes.size() && i < pins.size(); ++i)
        m_model.graph.node(nodes[i]).pin = pins[i];
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

void PlacementDocument::setRules(std::vector<OpRule> rules, std::string fallback) {
    m_options.rules = std::move(rules);
    m_options.fallbackDevice = std::move(fallback);
    replan();
    emit planChanged();
}

void PlacementDocument::replan() {
    QElapsedTimer timer;
    timer.start();
    m_plan = planDevices(m_model.graph, m_model.devices, m_options, *m_workspace);
    m_lastPlanMillis = static_cast<double>(timer.nsecsElapsed()) / 1e6;
}

QColor PlacementDocument::deviceColor(DeviceId device) const {
    // A qualitative palette (Tableau 10), light enough for black text.
    static const QColor kPalette[] = {QColor(0x9e, 0xc5, 0xe8), QColor(0xa8, 0xd8, 0x8f),
                                      QColor(0xf7, 0xc0, 0x8a), QColor(0xd9, 0xb3, 0xe0),
                                      QColor(0xf4, 0xa6, 0xa6), QColor(0xb8, 0xe0, 0xd9),
                                      QColor(0xf2, 0xdc, 0x8f), QColor(0xd6, 0xc4, 0xb0)};
    if (!device.valid())
        return QColor(0xe0, 0xe0, 0xe0);
    return kPalette[device.index % (sizeof kPalette / sizeof kPalette[0])];
}

QString PlacementDocument::explain(NodeId node) const {
    return QString::fromStdString(m_plan.explain(m_model.graph, m_model.devices, m_options, node));
}

} // namespace placer::views
