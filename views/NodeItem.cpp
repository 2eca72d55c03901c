// Painting an operator: device colour, name, pin marker, conflict outline, run time.
#include "views/NodeItem.h"

#include <QApplication>
#include <QCoreApplication>
#include <QFontMetricsF>
#include <QPainter>
#include <QStyleOptionGraphicsItem>

namespace placer::views {

namespace {

QFont opFont() {
    QFont font = QApplication::font();
    font.setBold(true);
    return font;
}

} // namespace

NodeItem::NodeItem(NodeId node, QString op, QString name, QSizeF size)
    : m_node(node), m_op(std::move(op)), m_name(std::move(name)), m_size(size) {
    setFlags(ItemIsSelectable);
    setAcceptHoverEvents(true);
    setToolTip(m_op + QStringLiteral(" ") + m_name);
    setZValue(2);
}

QSizeF NodeItem::sizeFor(const QString& op, const QString& name) {
    const QFontMetricsF bold(opFont());
    const QFontMetricsF plain(QApplication::font());
    const qreal width = std::max(bold.horizontalAdvance(op), plain.horizontalAdvance(name)) + 24;
    return QSizeF(std::clamp<qreal>(width, 60, 260), bold.height() + plain.height() + 12);
}

QRectF NodeItem::boundingRect() const {
    // Room for the outline, the card a collapsed body draws behind the node, and the label
    // under it (a run's time, or what it was fused into).
    return QRectF(-m_size.width() / 2 - 24, -m_size.height() / 2 - 4, m_size.width() + 48,
                  m_size.height() + 22);
}

QPainterPath NodeItem::shape() const {
    // What a click or a rubber band hits: the box, not the label under it.
    QPainterPath path;
    path.addRoundedRect(
        QRectF(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height()), 6, 6);
    return path;
}

void NodeItem::setShards(std::vector<std::pair<QColor, qint64>> shards) {
    if (shards == m_shards)
        return;
    m_shards = std::move(shards);
    update();
}

void NodeItem::setPlacement(QColor fill, int pin, bool conflict, bool readsReplica) {
    if (fill == m_fill && pin == m_pin && conflict == m_conflict && readsReplica == m_readsReplica)
        return;
    m_fill = fill;
    m_pin = pin;
    m_conflict = conflict;
    m_readsReplica = readsReplica;
    update();
}

void NodeItem::setHighlighted(bool highlighted) {
    if (highlighted != m_highlighted) {
        m_highlighted = highlighted;
        update();
    }
}

void NodeItem::setTiming(double millis, double heat) {
    if (millis == m_millis && heat == m_heat)
        return; // every re-plan clears the times: nothing to repaint where there were none
    m_millis = millis;
    m_heat = heat;
    update();
}

void NodeItem::setFusion(const QString& fusedInto, int members) {
    if (fusedInto != m_fusedInto || members != m_fusedMembers) {
        m_fusedInto = fusedInto;
        m_fusedMembers = members;
        update();
    }
}

void NodeItem::setCollapsedBody(int ops) {
    if (ops != m_bodyOps) {
        m_bodyOps = ops;
        update();
    }
}

void NodeItem::paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget*) {
    const QRectF box(-m_size.width() / 2, -m_size.height() / 2, m_size.width(), m_size.height());
    const qreal lod = option->levelOfDetailFromTransform(painter->worldTransform());
    const QColor fill = m_fill;
    if (lod < 0.35 && m_shards.empty() && m_bodyOps == 0 && !m_conflict && !isSelected() &&
        !m_highlighted && m_pin == 0 && m_millis < 0) {
        // Zoomed far out, nothing to mark: a plain box, as a thousand of them are on screen.
        painter->fillRect(box, QColor(0x40, 0x40, 0x40));
        painter->fillRect(box.adjusted(1.5, 1.5, -1.5, -1.5), fill);
        return;
    }
    if (m_bodyOps > 0) {
        // A collapsed body: a second card behind the node, as a closed folder of ops.
        painter->setPen(QPen(QColor(0x40, 0x40, 0x40), 1));
        painter->setBrush(fill.darker(115));
        painter->drawRoundedRect(box.translated(3.5, 3.5), 6, 6);
    }
    QPen pen(m_conflict ? QColor(0xd0, 0x1c, 0x1c) : QColor(0x40, 0x40, 0x40));
    pen.setWidthF(m_conflict ? 3 : (isSelected() ? 2.5 : 1));
    if (isSelected() && !m_conflict)
        pen.setColor(QColor(0x10, 0x50, 0xc0));
    if (m_highlighted && !isSelected())
        pen.setColor(QColor(0x10, 0x90, 0xc0)), pen.setWidthF(2);
    painter->setPen(pen);
    painter->setBrush(fill);
    painter->drawRoundedRect(box, 6, 6);
    if (!m_shards.empty()) {
        // A split node: each shard's device colour across the node, as wide as its rows.
        qint64 rows = 0;
        for (const auto& shard : m_shards)
            rows += shard.second;
        QPainterPath clip;
        clip.addRoundedRect(box.adjusted(1, 1, -1, -1), 5, 5);
        painter->save();
        painter->setClipPath(clip);
        painter->setPen(Qt::NoPen);
        qreal x = box.left();
        for (const auto& [colour, count] : m_shards) {
            const qreal width = rows > 0 ? box.width() * static_cast<qreal>(count) / rows : 0;
            painter->setBrush(colour);
            painter->drawRect(QRectF(x, box.top(), width, box.height()));
            x += width;
        }
        painter->restore();
        // The split mark: parallel lanes at the top-left corner.
        painter->setPen(QPen(QColor(0x30, 0x30, 0x30), 1.2));
        for (int k = 0; k < 3; ++k)
            painter->drawLine(QPointF(box.left() + 4, box.top() + 4 + k * 3),
                              QPointF(box.left() + 12, box.top() + 4 + k * 3));
    }
    if (m_millis >= 0 && m_heat > 0) {
        // Heat: a strip along the bottom, longer and redder for the slower nodes; the fill
        // keeps the device colour.
        const QRectF strip(box.left() + 3, box.bottom() - 5, (box.width() - 6) * m_heat, 3.5);
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor::fromHsvF(0.12 * (1 - m_heat), 0.9, 0.9));
        painter->drawRect(strip);
    }
    if (lod < 0.35)
        return; // zoomed far out: boxes only
    painter->setPen(Qt::black);
    const QFont bold = opFont();
    const QFontMetricsF boldMetrics(bold);
    painter->setFont(bold);
    const QRectF top(box.left() + 4, box.top() + 5, box.width() - 8, boldMetrics.height());
    const QString title = m_bodyOps > 0 ? m_op + QStringLiteral(" \u25B8 %1").arg(m_bodyOps) : m_op;
    painter->drawText(top, Qt::AlignCenter,
                      boldMetrics.elidedText(title, Qt::ElideRight, top.width()));
    painter->setFont(QApplication::font());
    const QFontMetricsF plain(QApplication::font());
    const QRectF bottom(box.left() + 4, top.bottom() + 1, box.width() - 8, plain.height());
    painter->drawText(bottom, Qt::AlignCenter,
                      plain.elidedText(m_name, Qt::ElideMiddle, bottom.width()));
    if (m_pin != 0) {
        // A pin: a dark dot at the top-right corner; a fixed pin has a ring around it.
        const QPointF at(box.right() - 6, box.top() + 6);
        painter->setPen(Qt::NoPen);
        painter->setBrush(QColor(0x30, 0x30, 0x30));
        painter->drawEllipse(at, 3.5, 3.5);
        if (m_pin == 2) {
            painter->setBrush(Qt::NoBrush);
            painter->setPen(QPen(QColor(0x30, 0x30, 0x30), 1.2));
            painter->drawEllipse(at, 6, 6);
        }
    }
    if (m_readsReplica) {
        painter->setPen(QColor(0x30, 0x30, 0x30));
        QFont small = QApplication::font();
        small.setPointSizeF(small.pointSizeF() * 0.75);
        painter->setFont(small);
        painter->drawText(QRectF(box.left() + 3, box.top() + 1, 14, 12), Qt::AlignCenter,
                          QStringLiteral("R"));
    }
    QFont small = QApplication::font();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    const QRectF below(box.left() - 20, box.bottom() + 1, box.width() + 40, 14);
    if (m_millis >= 0) {
        painter->setFont(small);
        painter->setPen(QColor(0x20, 0x20, 0x20));
        QString time = m_millis < 1
                           ? QString::number(m_millis * 1000, 'f', 1) + QStringLiteral(" µs")
                           : QString::number(m_millis, 'f', 2) + QStringLiteral(" ms");
        // A fused kernel's time is the whole group's.
        if (m_fusedMembers > 0)
            time += QCoreApplication::translate("NodeItem", " (fused, %n more)", nullptr,
                                                m_fusedMembers);
        painter->drawText(below, Qt::AlignCenter, time);
    } else if (!m_fusedInto.isEmpty()) {
        // No time of its own: it ran inside the head's kernel, which the dashed frame says too.
        painter->setPen(QPen(QColor(0x50, 0x50, 0x50), 1, Qt::DashLine));
        painter->setBrush(Qt::NoBrush);
        painter->drawRoundedRect(box.adjusted(-3, -3, 3, 3), 8, 8);
        small.setItalic(true);
        painter->setFont(small);
        painter->setPen(QColor(0x40, 0x40, 0x40));
        const QString text = QCoreApplication::translate("NodeItem", "fused into %1")
                                 .arg(QFontMetricsF(small).elidedText(m_fusedInto, Qt::ElideMiddle,
                                                                      below.width() * 0.6));
        painter->drawText(below, Qt::AlignCenter, text);
    }
}

} // namespace placer::views
