// An overview of the whole graph in a corner of the canvas, with the visible part outlined;
// clicking or dragging in it moves the canvas there. Shown only when the graph does not fit.
#pragma once

#include <QGraphicsView>

namespace placer::views {

class MiniMap : public QGraphicsView {
    Q_OBJECT

public:
    /// Follows `main`, whose scene it shows.
    explicit MiniMap(QGraphicsView* main);

public slots:
    /// Re-fits the overview and the outline (after zoom, scroll or a new layout).
    void refresh();

protected:
    void drawForeground(QPainter* painter, const QRectF& rect) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;

private:
    QGraphicsView* m_main;
};

} // namespace placer::views
