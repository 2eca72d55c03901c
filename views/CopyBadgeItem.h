// A device copy the plan inserts, drawn as a badge on the edge it sits on ("cpu → gpu, 140 B").
// The badge moves with plans; the layout never changes for it.
#pragma once

#include "ir/Ids.h"

#include <QGraphicsItem>
#include <QString>

namespace placer::views {

class CopyBadgeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 3 };

    CopyBadgeItem(int copyIndex, NodeId consumer, QString text, QColor from, QColor to);

    int type() const override { return Type; }
    int copyIndex() const { return m_copyIndex; }
    /// The same copy in a new plan (its index among the plan's copies changed).
    void setCopyIndex(int copyIndex) { m_copyIndex = copyIndex; }
    /// The node that reads the copy (selected when the badge is clicked).
    NodeId consumer() const { return m_consumer; }
    const QString& text() const { return m_text; }
    void setTiming(const QString& time);
    /// The time shown beside the bytes; empty when none is.
    const QString& timing() const { return m_time; }
    QRectF boundingRect() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    int m_copyIndex;
    NodeId m_consumer;
    QString m_text;
    QString m_time;
    QColor m_from;
    QColor m_to;
};

} // namespace placer::views
