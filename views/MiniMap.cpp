// The overview in the canvas's corner, and moving the canvas from it.
#include "views/MiniMap.h"

#include "views/GraphScene.h"

#include <QGraphicsView>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>

#include <algorithm>

namespace placer::views {

MiniMap::MiniMap(QGraphicsView* main) : QWidget(main), m_main(main), m_redraw(new QTimer(this)) {
    setObjectName(QStringLiteral("minimap"));
    m_redraw->setSingleShot(true);
    m_redraw->setInterval(30);
    connect(m_redraw, &QTimer::timeout, this, [this] {
        m_stale = true;
        refresh();
    });
    setFixedSize(160, 220);
    setCursor(Qt::PointingHandCursor);
    for (QScrollBar* bar : {main->horizontalScrollBar(), main->verticalScrollBar()})
        connect(bar, &QScrollBar::valueChanged, this, &MiniMap::refresh);
    if (GraphScene* graph = scene())
        connect(graph, &GraphScene::overviewChanged, this, &MiniMap::invalidate);
}

GraphScene* MiniMap::scene() const {
    return qobject_cast<GraphScene*>(m_main->scene());
}

void MiniMap::invalidate() {
    if (m_image.isNull()) {
        m_stale = true; // nothing shown yet: made at the first paint
        refresh();
        return;
    }
    m_redraw->start();
}

void MiniMap::refresh() {
    GraphScene* graph = scene();
    if (!graph || !graph->hasItems()) {
        hide();
        return;
    }
    // The scene's rectangle is its items' bounds, set when they are laid out: no pass over them.
    const QRectF all = graph->sceneRect();
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    // Shown where it helps: the canvas shows less than half of the graph. A graph seen nearly
    // whole needs no map over its nodes.
    const QRectF seen = visible.intersected(all);
    const bool needed =
        !all.isEmpty() && seen.width() * seen.height() < kShownBelow * all.width() * all.height();
    setVisible(needed);
    if (!needed)
        return;
    // Tall graphs get a tall map, wide ones a wide map; never more than a third of the canvas
    // across or down.
    const qreal aspect = all.width() / std::max<qreal>(all.height(), 1);
    QSize size =
        aspect < 0.73 ? QSize(140, 240) : QSize(240, std::max(60, static_cast<int>(240 / aspect)));
    const qreal room = std::min({1.0, m_main->viewport()->width() / 3.0 / size.width(),
                                 m_main->viewport()->height() / 3.0 / size.height()});
    size = QSize(std::max(48, static_cast<int>(size.width() * room)),
                 std::max(48, static_cast<int>(size.height() * room)));
    if (size != this->size() || all != m_shown)
        m_stale = true;
    setFixedSize(size);
    move(m_main->viewport()->width() - width() - 8, 8);
    // Fit the whole scene, aspect kept, centred, 3 pixels in from the frame.
    const QRectF inner = QRectF(rect()).adjusted(3, 3, -3, -3);
    const qreal scale = std::min(inner.width() / all.width(), inner.height() / all.height());
    const QPointF offset = inner.center() - all.center() * scale;
    m_shown = all;
    m_toWidget = QTransform(scale, 0, 0, scale, offset.x(), offset.y());
    update();
}

void MiniMap::paintEvent(QPaintEvent*) {
    GraphScene* graph = scene();
    if (!graph)
        return;
    const qreal ratio = devicePixelRatioF();
    if (m_stale || m_image.size() != size() * ratio) {
        m_image = QImage(size() * ratio, QImage::Format_ARGB32_Premultiplied);
        m_image.setDevicePixelRatio(ratio);
        m_image.fill(QColor(255, 255, 255, 235));
        graph->paintOverview(&m_image, m_toWidget * QTransform::fromScale(ratio, ratio));
        m_stale = false;
    }
    QPainter painter(this);
    painter.drawImage(QPointF(0, 0), m_image);
    painter.setPen(QColor(0x80, 0x80, 0x80));
    painter.drawRect(QRectF(rect()).adjusted(0.5, 0.5, -0.5, -0.5));
    // The part of the graph the canvas shows, at least a few pixels across.
    const QRectF visible = m_main->mapToScene(m_main->viewport()->rect()).boundingRect();
    QRectF outline = m_toWidget.mapRect(visible).intersected(QRectF(rect()));
    if (outline.width() < 4)
        outline.adjust(-2, 0, 2, 0);
    if (outline.height() < 4)
        outline.adjust(0, -2, 0, 2);
    painter.setPen(QPen(QColor(0x10, 0x50, 0xc0), 1));
    painter.setBrush(QColor(0x10, 0x50, 0xc0, 40));
    painter.drawRect(outline);
}

void MiniMap::mousePressEvent(QMouseEvent* event) {
    m_main->centerOn(toScene(event->position()));
    refresh();
}

void MiniMap::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton) {
        m_main->centerOn(toScene(event->position()));
        refresh();
    }
}

void MiniMap::wheelEvent(QWheelEvent* event) {
    event->ignore(); // the overview does not zoom
}

} // namespace placer::views
