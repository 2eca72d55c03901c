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
