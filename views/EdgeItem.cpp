// Painting a value's edge: its spline, thickness by size, and tooltip.
#include "views/EdgeItem.h"

#include <QPainter>
#include <QPainterPathStroker>
#include <QStyleOptionGraphicsItem>

#include <cmath>

namespace placer::views {

EdgeItem::EdgeItem(ValueRef value, NodeId consumer, const QPainterPath& path, std::int64_t bytes,
                   const QString& tooltip)
    : QGraphicsPathItem(path), m_value(value), m_consumer(consumer) {
    // 1 px for a few KiB, up to 6 px for hundreds of MiB.
    const double kib = std::max(1.0, static_cast<double>(bytes) / 1024.0);
    m_width = std::clamp(1.0 + std::log2(kib) / 3.0, 1.0, 6.0);
    setToolTip(tooltip);
    setAcceptHoverEvents(true);
    setZValue(1);
}

void EdgeItem::setHighlighted(bool highlighted) {
    if (highlighted != m_highlighted) {
        m_highlighted = highlighted;
        update();
    }
}

QPainterPath EdgeItem::shape() const {
    QPainterPathStroker stroker;
    stroker.setWidth(m_width + 6); // easier to hover
    return stroker.createStroke(path());
}

void EdgeItem::setRoute(const QPainterPath& path) {
    setPath(path);
    m_arrow.clear();
    m_midpoint.reset();
}

QPointF EdgeItem::midpoint() const {
    if (!m_midpoint)
        m_midpoint = path().pointAtPercent(0.5); // measures the curve's length: kept
    return *m_midpoint;
}

void EdgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QColor colour = m_highlighted ? QColor(0x10, 0x90, 0xc0) : QColor(0x70, 0x70, 0x70);
    painter->setBrush(Qt::NoBrush);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.35) {
        // Zoomed far out (as the nodes draw boxes only): a hairline, no arrow head, not
        // antialiased (hundreds of them are on screen; antialiasing doubles a frame's time).
        painter->setRenderHint(QPainter::Antialiasing, false);
        painter->setPen(QPen(colour, 0));
        painter->drawPath(path());
        painter->setRenderHint(QPainter::Antialiasing, true);
        return;
    }
    painter->setPen(
        QPen(colour, m_highlighted ? m_width + 1 : m_width, Qt::SolidLine, Qt::RoundCap));
    painter->drawPath(path());
    // Arrow head at the consumer's end.
    if (m_arrow.isEmpty()) {
        const QPointF tip = path().pointAtPercent(1.0);
        const qreal angle = path().angleAtPercent(0.98) * M_PI / 180.0;
        const qreal size = 6 + m_width;
        const QPointF back(tip.x() - size * std::cos(angle), tip.y() + size * std::sin(angle));
        const QPointF side(std::sin(angle) * size / 2.5, std::cos(angle) * size / 2.5);
        m_arrow = QPolygonF({tip, back + side, back - side});
    }
    painter->setBrush(colour);
    painter->setPen(Qt::NoPen);
    painter->drawPolygon(m_arrow);
}

} // namespace placer::views
