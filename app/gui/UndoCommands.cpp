#include "gui/UndoCommands.h"

#include <QCoreApplication>

namespace placer::gui {

SetPinsCommand::SetPinsCommand(views::PlacementDocument* document, std::vector<NodeId> nodes,
                               Pin pin, const QString& text)
    : m_document(document), m_nodes(std::move(nodes)) {
    setText(text);
    for (NodeId node : m_nodes) {
        m_before.push_back(document->pin(node));
        m_after.push_back(pin);
    }
}

void SetPinsCommand::undo() {
    m_document->setPins(m_nodes, m_before);
}

void SetPinsCommand::redo() {
    m_document->setPins(m_nodes, m_after);
}

SetModeCommand::SetModeCommand(views::PlacementDocument* document, PlanMode mode)
    : m_document(document), m_before(document->options().mode), m_after(mode) {
    setText(mode == PlanMode::Demand
                ? QCoreApplication::translate("placer::gui::MainWindow", "Planner mode: demand")
            : mode == PlanMode::Unify
                ? QCoreApplication::translate("placer::gui::MainWindow", "Planner mode: unify")
                : QCoreApplication::translate("placer::gui::MainWindow", "Auto-place"));
}

void SetModeCommand::undo() {
    m_document->setMode(m_before);
}

void SetModeCommand::redo() {
    m_document->setMode(m_after);
}

SetRulesCommand::SetRulesCommand(views::PlacementDocument* document, std::vector<OpRule> rules,
                                 std::string fallback)
    : m_document(document), m_beforeRules(document->options().rules),
      m_afterRules(std::move(rules)), m_beforeFallback(document->options().fallbackDevice),
      m_afterFallback(std::move(fallback)) {
    setText(QCoreApplication::translate("placer::gui::MainWindow", "Change rules"));
}

void SetRulesCommand::undo() {
    m_document->setRules(m_beforeRules, m_beforeFallback);
}

void SetRulesCommand::redo() {
    m_document->setRules(m_afterRules, m_afterFallback);
}

SetDevicesCommand::SetDevicesCommand(views::PlacementDocument* document,
                                     views::DeviceSnapshot after)
    : m_document(document), m_before(document->snapshot()), m_after(std::move(after)) {
    setText(QCoreApplication::translate("placer::gui::MainWindow", "Edit devices"));
}

void SetDevicesCommand::undo() {
    m_document->restore(m_before);
}

void SetDevicesCommand::redo() {
    m_document->restore(m_after);
}

std::unique_ptr<SetPinsCommand> pinCommand(views::PlacementDocument* document,
                                           const QString& device,
                                           const std::vector<NodeId>& nodes) {
    const auto id = document->devices().find(device.toStdString());
    if (!id || nodes.empty())
        return nullptr;
    const QString text =
        nodes.size() == 1
            ? QCoreApplication::translate("placer::gui::MainWindow", "Pin %1 to %2")
                  .arg(QString::fromStdString(document->graph().node(nodes[0]).name), device)
            : QCoreApplication::translate("placer::gui::MainWindow", "Pin %n node(s) to %1",
                                          nullptr, static_cast<int>(nodes.size()))
                  .arg(device);
    return std::make_unique<SetPinsCommand>(document, nodes, Pin{PinKind::Plain, *id, "gui"}, text);
}

std::unique_ptr<SetPinsCommand> clearPinsCommand(views::PlacementDocument* document,
                                                 const std::vector<NodeId>& nodes) {
    std::vector<NodeId> pinned;
    for (NodeId node : nodes) {
        if (document->pin(node).active())
            pinned.push_back(node);
    }
    if (pinned.empty())
        return nullptr;
    const QString text = QCoreApplication::translate("placer::gui::MainWindow", "Clear %n pin(s)",
                                                     nullptr, static_cast<int>(pinned.size()));
    return std::make_unique<SetPinsCommand>(document, std::move(pinned), Pin{}, text);
}

} // namespace placer::gui
