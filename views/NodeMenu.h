// The canvas's context menu and its find: what a right click on a node or group offers (pin the
// selection to a device, clear its pins, collapse or expand name scopes, fit), and stepping
// through the nodes whose name, op or attributes match a text.
#pragma once

#include "ir/Ids.h"

#include <QPoint>
#include <QString>

#include <functional>
#include <vector>

namespace placer::views {

class GraphScene;
class GraphView;
class LayoutController;
class PlacementDocument;

struct NodeMenuActions {
    std::function<void(const QString& device, const std::vector<NodeId>& nodes)> pin;
    std::function<void()> clearPins;
    std::function<void()> split;   ///< Split Across Devices… for the selection
    std::function<void()> unsplit; ///< removes the regions holding the selection
};

/// Shows the menu for the node or group under `position` (in view coordinates), selecting it
/// first unless it is part of the selection. Nothing there: no menu.
void showNodeMenu(GraphView* view, GraphScene* scene, const PlacementDocument& document,
                  LayoutController* layout, const QPoint& position, const NodeMenuActions& actions);

/// Steps through the drawn nodes, those inside collapsed groups included (showing one opens its
/// groups), that match a text (name, op, or NAME=VALUE of an attribute,
/// case-insensitive), showing each in the view.
class NodeFinder {
public:
    NodeFinder(const PlacementDocument* document, GraphScene* scene, GraphView* view)
        : m_document(document), m_scene(scene), m_view(view) {}
    /// Shows the next (or previous) match after the last one; false when nothing matches.
    bool next(const QString& text, bool backwards = false);
    /// Starts over from the first node (the text changed).
    void reset() { m_cursor = -1; }

private:
    const PlacementDocument* m_document;
    GraphScene* m_scene;
    GraphView* m_view;
    int m_cursor = -1;
};

} // namespace placer::views
