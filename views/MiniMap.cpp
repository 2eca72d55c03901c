// The overview in the canvas's corner, and moving the canvas from it.
#include "views/MiniMap.h"

#include <QMouseEvent>
#include <QScrollBar>

namespace placer::views {

MiniMap::MiniMap(QGraphicsView* main) : QGraphicsView(main->scene(), main), m_main(main) {
    setObjectName(QStringLiteral("minimap"));
    setInteractive(false);
    setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    setFrameShape(QFrame::Box);
    setRenderHints(QPainter::Antialiasing);
    setBackgroundBrush(QColor(255, 255, 255, 235));
    setFixedSize(160, 220);
    setCursor(Qt::PointingHandCursor);
    for (QScrollBar* bar : {main->horizontalScrollBar(), main->verticalScrollBar()})
        connect(bar, &QScrollBar::valueChanged, this, &MiniMap::refresh);
}

void MiniMap::refresh() {
    if (!scene())
        return;
    const QRectF all = scene()->itemsBoundingRect();
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    const bool needed = !all.isEmpty() && !visible.contains(all);
    setVisible(needed);
    if (!needed)
        return;
    // Tall graphs get a tall map, wide ones a wide map.
    const qreal aspect = all.width() / std::max<qreal>(all.height(), 1);
    setFixedSize(aspect < 0.73 ? QSize(140, 240)
                               : QSize(240, std::max(60, static_cast<int>(240 / aspect))));
    move(m_main->viewport()->width() - width() - 8, 8);
    fitInView(all, Qt::KeepAspectRatio);
    viewport()->update();
}

void MiniMap::drawForeground(QPainter* painter, const QRectF&) {
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    painter->setPen(QPen(QColor(0x10, 0x50, 0xc0), 0));
    painter->setBrush(QColor(0x10, 0x50, 0xc0, 40));
    painter->drawRect(visible);
}

void MiniMap::mousePressEvent(QMouseEvent* event) {
    m_main->centerOn(mapToScene(event->position().toPoint()));
    refresh();
}

void MiniMap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        m_main->centerOn(mapToScene(event->position().toPoint()));
        refresh();
    }
}

void MiniMap::wheelEvent(QWheelEvent* event) {
    event->ignore(); // the overview does not zoom
}

} // namespace placer::views
