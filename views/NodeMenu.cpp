// The canvas's context menu and find.
#include "views/NodeMenu.h"

#include "ir/Attrs.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/LayoutController.h"
#include "views/NodeItem.h"
#include "views/PlacementDocument.h"

#include <QCoreApplication>
#include <QMenu>
#include <QStringList>

namespace placer::views {

void showNodeMenu(GraphView* view, GraphScene* scene, const PlacementDocument& document,
                  LayoutController* layout, const QPoint& position,
                  const NodeMenuActions& actions) {
    QGraphicsItem* clicked = nullptr;
    NodeItem* clickedNode = nullptr;
    GroupItem* clickedGroup = nullptr;
    for (QGraphicsItem* item : view->items(position)) {
        clickedNode = qgraphicsitem_cast<NodeItem*>(item);
        clickedGroup = qgraphicsitem_cast<GroupItem*>(item);
        if (clickedNode || clickedGroup) {
            clicked = item;
            break;
        }
    }
    if (!clicked) {
        // An open group's frame: it can be closed again.
        for (QGraphicsItem* item : view->items(position)) {
            if (auto* frame = qgraphicsitem_cast<FrameItem*>(item)) {
                const std::string scope = frame->scope().toStdString();
                QMenu menu(view);
                menu.addAction(
                    QCoreApplication::translate("NodeMenu", "Collapse %1").arg(frame->scope()),
                    view, [layout, scope] { layout->collapse(scope); });
                menu.exec(view->viewport()->mapToGlobal(position));
                return;
            }
        }
        return;
    }
    if (!clicked->isSelected()) {
        scene->clearSelection();
        clicked->setSelected(true);
    }
    const std::vector<NodeId> nodes = scene->selectedNodes();
    QMenu menu(view);
    QMenu* pinTo = menu.addMenu(QCoreApplication::translate("NodeMenu", "Pin to"));
    for (const VirtualDevice& device : document.devices().devices()) {
        const QString name = QString::fromStdString(device.name);
        pinTo->addAction(name, view, [&actions, name, nodes] { actions.pin(name, nodes); });
    }
    QAction* clear = menu.addAction(QCoreApplication::translate("NodeMenu", "Clear Pin"), view,
                                    [&actions] { actions.clearPins(); });
    bool anyPinned = false;
    for (NodeId node : nodes)
        anyPinned = anyPinned || document.pin(node).active();
    clear->setEnabled(anyPinned);
    if (actions.split) {
        menu.addAction(QCoreApplication::translate("NodeMenu", "Split Across Devices…"), view,
                       [&actions] { actions.split(); });
        bool anySplit = false;
        for (NodeId node : nodes)
            anySplit = anySplit || document.plan().splitOf(node);
        QAction* unsplit = menu.addAction(QCoreApplication::translate("NodeMenu", "Remove Split"),
                                          view, [&actions] { actions.unsplit(); });
        unsplit->setEnabled(anySplit && actions.unsplit);
    }
    menu.addSeparator();
    if (clickedGroup) {
        const QString scope = clickedGroup->scope();
        menu.addAction(QCoreApplication::translate("NodeMenu", "Expand %1").arg(scope), view,
                       [layout, scope] { layout->expand(scope.toStdString()); });
    } else {
        const auto scopes = scene->scopes().of(clickedNode->node());
        if (!scopes.empty()) {
            QMenu* collapse = menu.addMenu(QCoreApplication::translate("NodeMenu", "Collapse"));
            for (const std::string& scope : scopes)
                collapse->addAction(QString::fromStdString(scope), view,
                                    [layout, scope] { layout->collapse(scope); });
        }
    }
    menu.addAction(QCoreApplication::translate("NodeMenu", "Fit Selection"), view,
                   &GraphView::fitSelection);
    menu.exec(view->viewport()->mapToGlobal(position));
}

bool NodeFinder::next(const QString& text, bool backwards) {
    if (text.isEmpty())
        return false;
    const Graph& graph = m_document->graph();
    const int n = static_cast<int>(graph.size());
    auto matches = [&](const Node& node) {
        if (node.isConstant())
            return false;
        if (QString::fromStdString(node.name).contains(text, Qt::CaseInsensitive) ||
            QString::fromStdString(node.op->name).contains(text, Qt::CaseInsensitive))
            return true;
        for (const auto& [name, value] : node.attrs.entries()) {
            const QString attr = QString::fromStdString(name + "=" + formatAttrRelay(value));
            if (attr.contains(text, Qt::CaseInsensitive))
                return true;
        }
        return false;
    };
    for (int step = 1; step <= n; ++step) {
        const int i = ((m_cursor + (backwards ? -step : step)) % n + n) % n;
        const NodeId id(static_cast<std::uint32_t>(i));
        // Nodes inside collapsed groups too: showing one opens its groups.
        if (matches(graph.nodes()[static_cast<std::size_t>(i)]) &&
            (m_scene->nodeItem(id) || m_scene->inCollapsedGroup(id))) {
            m_cursor = i;
            m_view->showNode(id);
            return true;
        }
    }
    return false;
}

} // namespace placer::views
