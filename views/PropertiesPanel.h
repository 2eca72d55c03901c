// The Properties panel: the selected node's device and why it runs there, its pin, inputs,
// outputs and attributes; a count when several nodes are selected.
#pragma once

#include "ir/Ids.h"

#include <QTextBrowser>

#include <vector>

namespace placer::views {

class PlacementDocument;

class PropertiesPanel : public QTextBrowser {
    Q_OBJECT

public:
    explicit PropertiesPanel(PlacementDocument* document, QWidget* parent = nullptr);

public slots:
    /// Shows `selected` (the canvas's selection) as the plan has it now.
    void showNodes(const std::vector<NodeId>& selected);

signals:
    /// A node named in the panel was clicked ("Decided by": the nodes the device came from).
    void nodeActivated(NodeId node);

private:
    PlacementDocument* m_document;
};

} // namespace placer::views
