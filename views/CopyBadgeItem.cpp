// Painting an inserted copy as a badge on its edge, with its time after a run.
#include "views/CopyBadgeItem.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace placer::views {

namespace {

QFont badgeFont() {
    QFont font = QApplication::font();
    font.setPointSizeF(font.pointSizeF() * 0.8);
    return font;
}

} // namespace

CopyBadgeItem::CopyBadgeItem(int copyIndex, NodeId consumer, QString text, QColor from, QColor to)
    : m_copyIndex(copyIndex), m_consumer(consumer), m_text(std::move(text)), m_from(from),
      m_to(to) {
    setFlags(ItemIsSelectable);
    setZValue(3);
    setToolTip(QObject::tr("device copy %1").arg(m_text));
}

void CopyBadgeItem::setTiming(const QString& time) {
    prepareGeometryChange();
    m_time = time;
    update();
}

QRectF CopyBadgeItem::boundingRect() const {
    const QFontMetricsF metrics(badgeFont());
    const QString label = m_time.isEmpty() ? m_text : m_text + QStringLiteral(" · ") + m_time;
    const qreal width = metrics.horizontalAdvance(label) + 14;
    const qreal height = metrics.height() + 6;
    return QRectF(-width / 2, -height / 2, width, height);
}

void CopyBadgeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.3) {
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0x20, 0x20, 0x20));
        painter->drawEllipse(QPointF(0, 0), 4, 4);
        return;
    }
    const QRectF box = boundingRect();
    QLinearGradient gradient(box.topLeft(), box.topRight());
    gradient.setColorAt(0, m_from);
    gradient.setColorAt(1, m_to);
    painter->setBrush(gradient);
    painter->setPen(QPen(isSelected() ? QColor(0x10, 0x50, 0xc0) : QColor(0x20, 0x20, 0x20),
                         isSelected() ? 2 : 1));
    painter->drawRoundedRect(box, box.height() / 2, box.height() / 2);
    painter->setFont(badgeFont());
    painter->setPen(Qt::black);
    const QString label = m_time.isEmpty() ? m_text : m_text + QStringLiteral(" · ") + m_time;
    painter->drawText(box, Qt::AlignCenter, label);
}

} // namespace placer::views
