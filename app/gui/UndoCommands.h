// Undoable edits of the placement: pins on a set of nodes, the planner mode, the rules. Each
// stores ids and values, never item pointers; one user gesture is one command.
#pragma once

#include "views/PlacementDocument.h"

#include <QUndoCommand>

#include <memory>
#include <vector>

namespace placer::gui {

class SetPinsCommand : public QUndoCommand {
public:
    SetPinsCommand(views::PlacementDocument* document, std::vector<NodeId> nodes, Pin pin,
                   const QString& text);
    void undo() override;
    void redo() override;

private:
    views::PlacementDocument* m_document;
    std::vector<NodeId> m_nodes;
    std::vector<Pin> m_before;
    std::vector<Pin> m_after;
};

class SetModeCommand : public QUndoCommand {
public:
    SetModeCommand(views::PlacementDocument* document, PlanMode mode);
    void undo() override;
    void redo() override;

private:
    views::PlacementDocument* m_document;
    PlanMode m_before;
    PlanMode m_after;
};

/// A pipeline's count: the plan's micro-batches (PlanOptions::microBatches) or the batches a run
/// streams (PlanOptions::streamBatches); steps of one spin box in a row merge.
class SetPipelineCountCommand : public QUndoCommand {
public:
    enum class Count { MicroBatches, StreamBatches };
    SetPipelineCountCommand(views::PlacementDocument* document, Count which, int count);
    void undo() override;
    void redo() override;
    int id() const override { return m_which == Count::MicroBatches ? 4001 : 4002; }
    bool mergeWith(const QUndoCommand* other) override;

private:
    std::int32_t& field(PlanOptions& options) const {
        return m_which == Count::MicroBatches ? options.microBatches : options.streamBatches;
    }
    void set(int count);
    /// "Pipeline in 4 micro-batches", "Stream 3 batches", "Stop pipelining", "Stop streaming".
    QString describe(int count) const;
    views::PlacementDocument* m_document;
    Count m_which;
    int m_before;
    int m_after;
};

class SetRulesCommand : public QUndoCommand {
public:
    SetRulesCommand(views::PlacementDocument* document, std::vector<OpRule> rules,
                    std::string fallback);
    void undo() override;
    void redo() override;

private:
    views::PlacementDocument* m_document;
    std::vector<OpRule> m_beforeRules, m_afterRules;
    std::string m_beforeFallback, m_afterFallback;
};

/// A device-set edit (add, remove, rename, kind, colour, memory, roles, mapping) with the pins
/// and rules it touched.
/// Replaces the split regions (PlanOptions::splits) in one step.
class SetSplitsCommand : public QUndoCommand {
public:
    SetSplitsCommand(views::PlacementDocument* document, std::vector<SplitRequest> splits,
                     const QString& text);
    void undo() override;
    void redo() override;

private:
    views::PlacementDocument* m_document;
    std::vector<SplitRequest> m_before;
    std::vector<SplitRequest> m_after;
};

/// The pattern a --split request names `nodes` by: '*' when they are every op of the graph,
/// else their names joined by '|'.
std::string splitPattern(const Graph& graph, const std::vector<NodeId>& nodes);

/// A command splitting the ops among `nodes` across `shards` (on the batch, or inside the ops
/// when `tensor`): a new region, which replaces the regions any of them was in. Null when
/// `nodes` holds no op.
std::unique_ptr<SetSplitsCommand> splitCommand(views::PlacementDocument* document,
                                               const std::vector<NodeId>& nodes,
                                               std::vector<SplitShare> shards, bool tensor = false);
/// A command removing the regions that hold any of `nodes`; null when none does.
std::unique_ptr<SetSplitsCommand> unsplitCommand(views::PlacementDocument* document,
                                                 const std::vector<NodeId>& nodes);

class SetDevicesCommand : public QUndoCommand {
public:
    SetDevicesCommand(views::PlacementDocument* document, views::DeviceSnapshot after);
    void undo() override;
    void redo() override;

private:
    views::PlacementDocument* m_document;
    views::DeviceSnapshot m_before;
    views::DeviceSnapshot m_after;
};

/// Pins `nodes` to the device named `device` ("Pin %3 to gpu", "Pin 4 nodes to gpu"); null when
/// there is no such device or no node.
std::unique_ptr<SetPinsCommand> pinCommand(views::PlacementDocument* document,
                                           const QString& device, const std::vector<NodeId>& nodes);
/// Clears the pins of those of `nodes` that have one; null when none has.
std::unique_ptr<SetPinsCommand> clearPinsCommand(views::PlacementDocument* document,
                                                 const std::vector<NodeId>& nodes);

} // namespace placer::gui
