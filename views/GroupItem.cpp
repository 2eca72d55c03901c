// Painting a collapsed name scope: its device bar, pins and conflicts.
#include "views/GroupItem.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace placer::views {

GroupItem::GroupItem(int unit, QString scope, int members, QSizeF size)
    : m_unit(unit), m_scope(std::move(scope)), m_members(members), m_size(size) {
    setFlags(ItemIsSelectable);
    setZValue(2);
    setToolTip(
        QObject::tr("%1: %n node(s), collapsed (double-click or the context menu expands it)",
                    nullptr, members)
            .arg(m_scope));
}

QSizeF GroupItem::sizeFor(const QString& scope, int /*members: the width is for any count*/) {
    QFont bold = QApplication::font();
    bold.setBold(true);
    const QFontMetricsF metrics(bold);
    const qreal width = std::max(metrics.horizontalAdvance(scope),
                                 QFontMetricsF(QApplication::font())
                                     .horizontalAdvance(QStringLiteral("0000 nodes, 00 pins"))) +
                        28;
    return QSizeF(std::clamp<qreal>(width, 90, 320), metrics.height() * 2 + 22);
}

QRectF GroupItem::boundingRect() const {
    return QRectF(-m_size.width() / 2 - 4, -m_size.height() / 2 - 4, m_size.width() + 8,
                  m_size.height() + 8);
}

void GroupItem::setPlacement(std::vector<std::pair<QColor, int>> shares, int pins, bool conflict) {
    m_shares = std::move(shares);
    m_pins = pins;
    m_conflict = conflict;
    update();
}

void GroupItem::setTiming(double millis) {
    if (millis != m_millis) {
        m_millis = millis;
        update();
    }
}

void GroupItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    // A stacked look: a second outline behind the box says "more inside".
    painter->setPen(QPen(QColor(0x70, 0x70, 0x70), 1));
    painter->setBrush(QColor(0xf0, 0xf0, 0xf0));
    painter->drawRoundedRect(box.translated(3, 3), 7, 7);
    QPen pen(m_conflict ? QColor(0xd0, 0x1c, 0x1c) : QColor(0x40, 0x40, 0x40));
    pen.setWidthF(m_conflict ? 3 : (isSelected() ? 2.5 : 1.2));
    if (isSelected() && !m_conflict)
        pen.setColor(QColor(0x10, 0x50, 0xc0));
    painter->setPen(pen);
    painter->setBrush(Qt::white);
    painter->drawRoundedRect(box, 7, 7);
    // The device bar: each device's share of the nodes inside.
    int total = 0;
    for (const auto& [colour, count] : m_shares)
        total += count;
    const QRectF bar(box.left() + 6, box.bottom() - 12, box.width() - 12, 7);
    qreal x = bar.left();
    painter->setPen(Qt::NoPen);
    for (const auto& [colour, count] : m_shares) {
        const qreal width = total > 0 ? bar.width() * count / total : 0;
        painter->setBrush(colour.darker(105));
        painter->drawRect(QRectF(x, bar.top(), width, bar.height()));
        x += width;
    }
    if (option->levelOfDetailFromTransform(painter->worldTransform()) < 0.35)
        return;
    QFont bold = QApplication::font();
    bold.setBold(true);
    painter->setFont(bold);
    painter->setPen(Qt::black);
    const QFontMetricsF metrics(bold);
    const QRectF title(box.left() + 6, box.top() + 4, box.width() - 12, metrics.height());
    painter->drawText(title, Qt::AlignCenter,
                      metrics.elidedText(m_scope, Qt::ElideMiddle, title.width()));
    painter->setFont(QApplication::font());
    QString detail = QObject::tr("%n node(s)", nullptr, m_members);
    if (m_pins > 0)
        detail += QStringLiteral(", ") + QObject::tr("%n pin(s)", nullptr, m_pins);
    if (m_millis >= 0) // a run's time for everything inside
        detail += QStringLiteral(" · ") + QString::number(m_millis, 'f', 2) + QStringLiteral(" ms");
    const QRectF line(box.left() + 6, title.bottom(), box.width() - 12, metrics.height());
    painter->drawText(
        line, Qt::AlignCenter,
        QFontMetricsF(QApplication::font()).elidedText(detail, Qt::ElideMiddle, line.width()));
}

} // namespace placer::views
