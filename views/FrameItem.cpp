// Painting an open group's frame and its title.
#include "views/FrameItem.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace placer::views {

FrameItem::FrameItem(int index, QString scope, int members, QRectF rect)
    : m_index(index), m_scope(std::move(scope)), m_members(members), m_rect(rect) {
    setZValue(-1); // under the split frames, edges and nodes
    setToolTip(QObject::tr("%1: %n node(s), open (double-click its title to collapse it)", nullptr,
                           members)
                   .arg(m_scope));
}

QString FrameItem::titleText(const QString& scope, int members) {
    return scope + QStringLiteral("  ·  ") + QObject::tr("%n node(s)", nullptr, members);
}

QSizeF FrameItem::titleSize(const QString& scope, int members) {
    QFont bold = QApplication::font();
    bold.setBold(true);
    const QFontMetricsF metrics(bold);
    return QSizeF(std::min<qreal>(metrics.horizontalAdvance(titleText(scope, members)) + 12, 480),
                  metrics.height() + 6);
}

QRectF FrameItem::titleRect() const {
    const QSizeF title = titleSize(m_scope, m_members);
    return QRectF(m_rect.left(), m_rect.top(), m_rect.width(), title.height() + 6);
}

QRectF FrameItem::boundingRect() const {
    return m_rect.adjusted(-2, -2, 2, 2);
}

void FrameItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    painter->setPen(QPen(QColor(0x8a, 0x96, 0xa8), 1.2, Qt::DashLine));
    painter->setBrush(QColor(0xf4, 0xf7, 0xfb));
    painter->drawRoundedRect(m_rect, 9, 9);
    const QRectF title = titleRect();
    painter->setPen(Qt::NoPen);
    painter->setBrush(QColor(0xe2, 0xe8, 0xf1));
    painter->drawRoundedRect(title.adjusted(1, 1, -1, 0), 8, 8);
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.35)
        return;
    QFont bold = QApplication::font();
    bold.setBold(true);
    painter->setFont(bold);
    painter->setPen(QColor(0x30, 0x3a, 0x48));
    const QRectF text = title.adjusted(8, 0, -8, 0);
    painter->drawText(text, Qt::AlignLeft | Qt::AlignVCenter,
                      QFontMetricsF(bold).elidedText(titleText(m_scope, m_members), Qt::ElideMiddle,
                                                     text.width()));
}

} // namespace placer::views
