// One operator on the canvas: a box filled with its device's colour, its op and name, a pin
// marker when pinned and a red outline when it is part of a conflict. Thin: an id and painting.
#pragma once

#include "ir/Ids.h"

#include <QColor>
#include <QGraphicsItem>
#include <QPainterPath>
#include <QString>

#include <utility>
#include <vector>

namespace placer::views {

class NodeItem : public QGraphicsItem {
public:
    enum { Type = UserType + 1 };

    NodeItem(NodeId node, QString op, QString name, QSizeF size);

    int type() const override { return Type; }
    NodeId node() const { return m_node; }
    QString name() const { return m_name; }
    QRectF boundingRect() const override;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

    /// The look the plan gives it.
    void setPlacement(QColor fill, int pin, bool conflict, bool readsReplica);
    QColor fill() const { return m_fill; }
    /// The box, without the room around it for outlines and labels.
    QSizeF boxSize() const { return m_size; }
    bool isPinned() const { return m_pin != 0; }
    bool isConflicted() const { return m_conflict; }
    void setHighlighted(bool highlighted);
    /// A split node (plan/Split.h): its shards' device colours and their rows of the batch,
    /// drawn as a stacked device bar across the node; empty for a node on one device.
    void setShards(std::vector<std::pair<QColor, qint64>> shards);
    const std::vector<std::pair<QColor, qint64>>& shards() const { return m_shards; }
    /// A run's time for this node, shown as a label and a heat tint (0..1); negative hides it.
    void setTiming(double millis, double heat);
    /// The time shown, in ms; negative when none is.
    double timingMillis() const { return m_millis; }
    /// A run computed this node inside another's fused kernel (passes/PassManager.h): the head's
    /// name, shown where the time would be; or, on a head, how many nodes it took in. Empty and
    /// 0 clear it.
    void setFusion(const QString& fusedInto, int members);
    QString fusedInto() const { return m_fusedInto; }
    int fusedMembers() const { return m_fusedMembers; }

    /// Control flow: the number of ops in its bodies, drawn collapsed behind it (0: none).
    void setCollapsedBody(int ops);
    int collapsedBody() const { return m_bodyOps; }

    /// The size a node with these labels needs.
    static QSizeF sizeFor(const QString& op, const QString& name);

private:
    NodeId m_node;
    QString m_op;
    QString m_name;
    QSizeF m_size;
    QColor m_fill = Qt::lightGray;
    int m_pin = 0; ///< 0 none, 1 plain, 2 fixed
    bool m_conflict = false;
    bool m_readsReplica = false;
    bool m_highlighted = false;
    double m_millis = -1;
    double m_heat = 0;
    int m_bodyOps = 0;
    QString m_fusedInto;
    int m_fusedMembers = 0;
    std::vector<std::pair<QColor, qint64>> m_shards;
};

} // namespace placer::views
