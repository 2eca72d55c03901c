// The canvas view's zoom, pan, fit, selection and drops.
#include "views/GraphView.h"

#include "views/CopyBadgeItem.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GroupItem.h"
#include "views/MiniMap.h"
#include "views/NodeItem.h"

#include <QApplication>
#include <QDrag>
#include <QGestureEvent>
#include <QMimeData>
#include <QPinchGesture>
#include <QScrollBar>
#include <QWheelEvent>

#include <cmath>

namespace placer::views {

GraphView::GraphView(GraphScene* scene, QWidget* parent)
    : QGraphicsView(scene, parent), m_scene(scene), m_miniMap(new MiniMap(this)) {
    setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    setDragMode(RubberBandDrag);
    setRubberBandSelectionMode(Qt::IntersectsItemShape);
    setTransformationAnchor(AnchorUnderMouse);
    setViewportUpdateMode(SmartViewportUpdate);
    // Every item sets the pen, brush and font it draws with (and restores what else it
    // changes): no painter state saved around each of the thousand items of a frame.
    setOptimizationFlag(DontSavePainterState);
    setAcceptDrops(true);
    viewport()->grabGesture(Qt::PinchGesture);
    setFocusPolicy(Qt::StrongFocus);
    // Selecting a copy badge shows, and selects, the node that reads the copy.
    connect(m_scene, &QGraphicsScene::selectionChanged, this, [this] {
        for (QGraphicsItem* item : m_scene->selectedItems()) {
            if (auto* badge = qgraphicsitem_cast<CopyBadgeItem*>(item)) {
                const NodeId consumer = badge->consumer();
                QMetaObject::invokeMethod(
                    this, [this, consumer] { showNode(consumer); }, Qt::QueuedConnection);
                return;
            }
        }
    });
}

void GraphView::scaleBy(double factor) {
    const double current = zoom();
    const double target = std::clamp(current * factor, 0.02, 8.0);
    scale(target / current, target / current);
    m_miniMap->refresh();
}

void GraphView::resizeEvent(QResizeEvent* event) {
    QGraphicsView::resizeEvent(event);
    m_miniMap->refresh();
}

void GraphView::scrollContentsBy(int dx, int dy) {
    QGraphicsView::scrollContentsBy(dx, dy);
    m_miniMap->refresh();
}

void GraphView::zoomIn() {
    scaleBy(1.25);
}

void GraphView::zoomOut() {
    scaleBy(0.8);
}

void GraphView::fitAll() {
    if (!scene())
        return;
    const QRectF all = scene()->itemsBoundingRect().adjusted(-20, -20, 20, 20);
    fitInView(all, Qt::KeepAspectRatio);
    if (zoom() > 1.5)
        scaleBy(1.5 / zoom()); // small graphs: do not blow them up
    if (zoom() < 0.3) {
        // Too small to read: fit the width instead, start at the top, and let the minimap
        // give the overview.
        const double width = viewport()->width() / all.width();
        scaleBy(std::clamp(width, 0.3, 0.8) / zoom());
        // Start where the graph starts: the topmost node, not the middle of the bounding box
        // (layouts of long graphs drift sideways).
        qreal x = all.center().x(), best = all.bottom();
        for (QGraphicsItem* item :
             scene()->items(QRectF(all.left(), all.top(), all.width(), 120))) {
            if (item->type() == NodeItem::Type && item->y() < best) {
                best = item->y();
                x = item->x();
            }
        }
        centerOn(
            QPointF(x, all.top() + mapToScene(viewport()->rect()).boundingRect().height() / 2));
    }
    m_miniMap->refresh();
}

void GraphView::fitSelection() {
    QRectF bounds;
    for (QGraphicsItem* item : scene()->selectedItems())
        bounds |= item->sceneBoundingRect();
    if (bounds.isNull())
        return fitAll();
    fitInView(bounds.adjusted(-60, -60, 60, 60), Qt::KeepAspectRatio);
    if (zoom() > 2)
        scaleBy(2 / zoom());
}

void GraphView::showNode(NodeId node) {
    NodeItem* item = m_scene->nodeItem(node);
    if (!item) {
        if (m_scene->inCollapsedGroup(node))
            emit revealRequested(node); // opened, laid out, then shown
        return;
    }
    m_scene->clearSelection();
    item->setSelected(true);
    if (zoom() < 0.6)
        scaleBy(0.8 / zoom());
    centerOn(item);
}

void GraphView::showArea(const QRectF& area) {
    const QRectF visible = mapToScene(viewport()->rect()).boundingRect();
    if (visible.width() >= area.width() && visible.height() >= area.height()) {
        centerOn(area.center());
        return;
    }
    if (zoom() < 0.6)
        scaleBy(0.8 / zoom());
    const QRectF seen = mapToScene(viewport()->rect()).boundingRect();
    // Its top, where its first nodes are (centred, as layouts centre their ranks).
    centerOn(QPointF(area.center().x(),
                     std::min(area.center().y(), area.top() + seen.height() / 2 - 40)));
}

void GraphView::mouseDoubleClickEvent(QMouseEvent* event) {
    for (QGraphicsItem* item : items(event->position().toPoint())) {
        if (item->type() == NodeItem::Type)
            break;
        if (auto* group = qgraphicsitem_cast<GroupItem*>(item)) {
            emit expandRequested(group->scope());
            return;
        }
        // The innermost frame under the pointer, on its title: closed again.
        auto* frame = qgraphicsitem_cast<FrameItem*>(item);
        if (frame && frame->titleRect().contains(mapToScene(event->position().toPoint()))) {
            emit collapseRequested(frame->scope());
            return;
        }
    }
    QGraphicsView::mouseDoubleClickEvent(event);
}

void GraphView::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    if (steps == 0)
        return QGraphicsView::wheelEvent(event);
    scaleBy(std::pow(1.15, steps));
    event->accept();
}

bool GraphView::viewportEvent(QEvent* event) {
    if (event->type() == QEvent::Gesture) {
        auto* gesture = static_cast<QGestureEvent*>(event);
        if (auto* pinch = static_cast<QPinchGesture*>(gesture->gesture(Qt::PinchGesture))) {
            scaleBy(pinch->scaleFactor());
            return true;
        }
    }
    return QGraphicsView::viewportEvent(event);
}

void GraphView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_Plus:
    case Qt::Key_Equal:
        zoomIn();
        return;
    case Qt::Key_Minus:
        zoomOut();
        return;
    case Qt::Key_Escape:
        m_scene->clearSelection();
        return;
    case Qt::Key_Space:
        if (!event->isAutoRepeat()) {
            m_spaceHeld = true;
            viewport()->setCursor(Qt::OpenHandCursor);
        }
        return;
    default:
        QGraphicsView::keyPressEvent(event);
    }
}

void GraphView::keyReleaseEvent(QKeyEvent* event) {
    if (event->key() == Qt::Key_Space && !event->isAutoRepeat()) {
        m_spaceHeld = false;
        viewport()->unsetCursor();
        return;
    }
    QGraphicsView::keyReleaseEvent(event);
}

std::vector<NodeId> decodeNodes(const QByteArray& data) {
    std::vector<NodeId> nodes;
    for (const QByteArray& part : data.split(',')) {
        bool ok = false;
        const uint index = part.toUInt(&ok);
        if (ok)
            nodes.push_back(NodeId(index));
    }
    return nodes;
}

void GraphView::startNodeDrag() {
    const std::vector<NodeId> nodes = m_scene->selectedNodes();
    if (nodes.empty())
        return;
    QByteArray data;
    for (NodeId node : nodes)
        data += QByteArray::number(node.index) + ',';
    auto* mime = new QMimeData;
    mime->setData(kNodesMimeType, data);
    auto* drag = new QDrag(this);
    drag->setMimeData(mime);
    drag->exec(Qt::CopyAction);
}

void GraphView::mousePressEvent(QMouseEvent* event) {
    m_pressAt = event->position().toPoint();
    m_pressedOnNode = false;
    for (QGraphicsItem* item : items(m_pressAt))
        m_pressedOnNode =
            m_pressedOnNode || item->type() == NodeItem::Type || item->type() == GroupItem::Type;
    if (event->button() == Qt::MiddleButton || (event->button() == Qt::LeftButton && m_spaceHeld)) {
        m_panning = true;
        m_lastPan = event->position().toPoint();
        viewport()->setCursor(Qt::ClosedHandCursor);
        event->accept();
        return;
    }
    QGraphicsView::mousePressEvent(event);
}

void GraphView::mouseMoveEvent(QMouseEvent* event) {
    if (m_pressedOnNode && (event->buttons() & Qt::LeftButton) &&
        (event->position().toPoint() - m_pressAt).manhattanLength() >=
            QApplication::startDragDistance()) {
        // Dragging selected nodes: drop them on a device chip to place them there.
        m_pressedOnNode = false;
        startNodeDrag();
        return;
    }
    if (m_panning) {
        const QPoint delta = event->position().toPoint() - m_lastPan;
        m_lastPan = event->position().toPoint();
        horizontalScrollBar()->setValue(horizontalScrollBar()->value() - delta.x());
        verticalScrollBar()->setValue(verticalScrollBar()->value() - delta.y());
        event->accept();
        return;
    }
    QGraphicsView::mouseMoveEvent(event);
}

void GraphView::mouseReleaseEvent(QMouseEvent* event) {
    if (m_panning) {
        m_panning = false;
        viewport()->setCursor(m_spaceHeld ? Qt::OpenHandCursor : Qt::ArrowCursor);
        event->accept();
        return;
    }
    QGraphicsView::mouseReleaseEvent(event);
}

std::vector<NodeId> GraphView::dropTargets(const QPoint& position) const {
    for (QGraphicsItem* item : items(position)) {
        // An open group's frame, where no node of it is: everything inside it.
        if (auto* frame = qgraphicsitem_cast<FrameItem*>(item))
            return m_scene->frameMembers(frame->index());
        if (auto* group = qgraphicsitem_cast<GroupItem*>(item))
            return group->isSelected() ? m_scene->selectedNodes()
                                       : m_scene->groupMembers(group->unit());
        auto* node = qgraphicsitem_cast<NodeItem*>(item);
        if (!node)
            continue;
        if (node->isSelected())
            return m_scene->selectedNodes();
        return {node->node()};
    }
    return {};
}

void GraphView::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasFormat(kDeviceMimeType))
        event->acceptProposedAction();
    else
        event->ignore();
}

void GraphView::dragMoveEvent(QDragMoveEvent* event) {
    if (event->mimeData()->hasFormat(kDeviceMimeType) &&
        !dropTargets(event->position().toPoint()).empty())
        event->acceptProposedAction();
    else
        event->ignore();
}

void GraphView::dropEvent(QDropEvent* event) {
    if (!event->mimeData()->hasFormat(kDeviceMimeType))
        return event->ignore();
    const std::vector<NodeId> nodes = dropTargets(event->position().toPoint());
    if (nodes.empty())
        return event->ignore();
    event->acceptProposedAction();
    emit deviceDropped(QString::fromUtf8(event->mimeData()->data(kDeviceMimeType)), nodes);
}

} // namespace placer::views
