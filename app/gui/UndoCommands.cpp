// The undoable edits of the placement: pins, mode, rules, devices and splits.
#include "gui/UndoCommands.h"

#include <QCoreApplication>
#include <QStringList>

#include <algorithm>

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

SetPipelineCountCommand::SetPipelineCountCommand(views::PlacementDocument* document, Count which,
                                                 int count)
    : m_document(document), m_which(which), m_after(count) {
    PlanOptions options = document->options();
    m_before = std::max(1, field(options));
    setText(describe(count));
}

QString SetPipelineCountCommand::describe(int count) const {
    if (m_which == Count::MicroBatches)
        return count > 1
                   ? QCoreApplication::translate("placer::gui::MainWindow",
                                                 "Pipeline in %1 micro-batches")
                         .arg(count)
                   : QCoreApplication::translate("placer::gui::MainWindow", "Stop pipelining");
    return count > 1 ? QCoreApplication::translate("placer::gui::MainWindow", "Stream %1 batches")
                           .arg(count)
                     : QCoreApplication::translate("placer::gui::MainWindow", "Stop streaming");
}

void SetPipelineCountCommand::set(int count) {
    PlanOptions options = m_document->options();
    field(options) = count;
    m_document->setOptions(std::move(options));
}

void SetPipelineCountCommand::undo() {
    set(m_before);
}

void SetPipelineCountCommand::redo() {
    set(m_after);
}

bool SetPipelineCountCommand::mergeWith(const QUndoCommand* other) {
    if (other->id() != id())
        return false;
    m_after = static_cast<const SetPipelineCountCommand*>(other)->m_after;
    setText(describe(m_after));
    return true;
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

SetSplitsCommand::SetSplitsCommand(views::PlacementDocument* document,
                                   std::vector<SplitRequest> splits, const QString& text)
    : m_document(document), m_before(document->options().splits), m_after(std::move(splits)) {
    setText(text);
}

void SetSplitsCommand::undo() {
    m_document->setSplits(m_before);
}

void SetSplitsCommand::redo() {
    m_document->setSplits(m_after);
}

std::string splitPattern(const Graph& graph, const std::vector<NodeId>& nodes) {
    std::vector<bool> chosen(graph.size(), false);
    for (NodeId node : nodes)
        chosen[node.index] = true;
    bool all = true;
    std::string names;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.role() != OpRole::Compute)
            continue;
        all = all && chosen[i];
        if (chosen[i])
            names += (names.empty() ? "" : "|") + node.name;
    }
    return all ? std::string("*") : names;
}

namespace {

/// The requests whose regions hold none of `nodes`.
std::vector<SplitRequest> splitsWithout(const views::PlacementDocument& document,
                                        const std::vector<NodeId>& nodes) {
    const Plan& plan = document.plan();
    std::vector<bool> touched(document.options().splits.size(), false);
    for (NodeId node : nodes) {
        const SplitRegion* split = plan.splitOf(node);
        if (split && static_cast<std::size_t>(split->request) < touched.size())
            touched[static_cast<std::size_t>(split->request)] = true;
    }
    std::vector<SplitRequest> kept;
    for (std::size_t r = 0; r < touched.size(); ++r) {
        if (!touched[r])
            kept.push_back(document.options().splits[r]);
    }
    return kept;
}

} // namespace

std::unique_ptr<SetSplitsCommand> splitCommand(views::PlacementDocument* document,
                                               const std::vector<NodeId>& nodes,
                                               std::vector<SplitShare> shards, bool tensor) {
    std::vector<NodeId> ops;
    for (NodeId node : nodes) {
        if (document->graph().node(node).role() == OpRole::Compute)
            ops.push_back(node);
    }
    if (ops.empty() || shards.size() < 2)
        return nullptr;
    std::vector<SplitRequest> splits = splitsWithout(*document, ops);
    splits.push_back(SplitRequest{splitPattern(document->graph(), ops), shards});
    splits.back().tensor = tensor;
    QStringList devices;
    for (const SplitShare& shard : shards)
        devices << QString::fromStdString(shard.device);
    const int count = static_cast<int>(ops.size());
    const QString text =
        (tensor ? QCoreApplication::translate("placer::gui::MainWindow", "Shard %n op(s) across %1",
                                              nullptr, count)
                : QCoreApplication::translate("placer::gui::MainWindow", "Split %n op(s) across %1",
                                              nullptr, count))
            .arg(devices.join(QStringLiteral(", ")));
    return std::make_unique<SetSplitsCommand>(document, std::move(splits), text);
}

std::unique_ptr<SetSplitsCommand> unsplitCommand(views::PlacementDocument* document,
                                                 const std::vector<NodeId>& nodes) {
    std::vector<SplitRequest> kept = splitsWithout(*document, nodes);
    if (kept.size() == document->options().splits.size())
        return nullptr;
    return std::make_unique<SetSplitsCommand>(
        document, std::move(kept),
        QCoreApplication::translate("placer::gui::MainWindow", "Remove split"));
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
    const int count = static_cast<int>(nodes.size()); // a plain count, which lupdate reads
    const QString text =
        nodes.size() == 1
            ? QCoreApplication::translate("placer::gui::MainWindow", "Pin %1 to %2")
                  .arg(QString::fromStdString(document->graph().node(nodes[0]).name), device)
            : QCoreApplication::translate("placer::gui::MainWindow", "Pin %n node(s) to %1",
                                          nullptr, count)
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
    // A plain count: lupdate does not read a plural whose count is a cast (template brackets).
    const int count = static_cast<int>(pinned.size());
    const QString text =
        QCoreApplication::translate("placer::gui::MainWindow", "Clear %n pin(s)", nullptr, count);
    return std::make_unique<SetPinsCommand>(document, std::move(pinned), Pin{}, text);
}

} // namespace placer::gui
