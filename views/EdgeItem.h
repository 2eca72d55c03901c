// A value flowing from one node to another: a Graphviz spline whose thickness follows the
// tensor's size, with its shape on hover.
#pragma once

#include "ir/Ids.h"

#include <QGraphicsPathItem>
#include <QPolygonF>

#include <optional>

namespace placer::views {

class EdgeItem : public QGraphicsPathItem {
public:
    enum { Type = UserType + 2 };

    EdgeItem(ValueRef value, NodeId consumer, const QPainterPath& path, std::int64_t bytes,
             const QString& tooltip);

    int type() const override { return Type; }
    ValueRef value() const { return m_value; }
    NodeId consumer() const { return m_consumer; }
    void setHighlighted(bool highlighted);
    /// Moves the edge onto `path` (a new layout).
    void setRoute(const QPainterPath& path);
    /// The point halfway along the edge, where a copy's badge sits (kept per route).
    QPointF midpoint() const;
    QPainterPath shape() const override;
    void paint(QPainter* painter, const QStyleOptionGraphicsItem* option, QWidget* widget) override;

private:
    ValueRef m_value;
    NodeId m_consumer;
    qreal m_width;
    bool m_highlighted = false;
    /// The arrow head at the consumer's end, made at the first paint after a route is set
    /// (finding the curve's angle there measures its length: too slow for every frame).
    QPolygonF m_arrow;
    mutable std::optional<QPointF> m_midpoint;
};

} // namespace placer::views
