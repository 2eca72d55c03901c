// An overview of the whole graph in a corner of the canvas, with the visible part outlined;
// clicking or dragging in it moves the canvas there. Shown only when the graph does not fit.
//
// The overview is an image the scene paints from its units' boxes and colours
// (GraphScene::paintOverview), made again only when the plan or the layout changes; a scroll
// or a zoom of the canvas moves the outline over it. Painting the scene's items at the
// overview's scale instead costs a pass over every item on every frame (1.2 s a frame at
// 50,000 nodes).
#pragma once

#include <QImage>
#include <QTimer>
#include <QTransform>
#include <QWidget>

class QGraphicsView;

namespace placer::views {

class GraphScene;

class MiniMap : public QWidget {
    Q_OBJECT

public:
    /// Follows `main`, whose scene (a GraphScene) it shows.
    explicit MiniMap(QGraphicsView* main);

    /// Shown while the canvas shows less than this share of the graph's area.
    static constexpr double kShownBelow = 0.5;

    /// The scene position under a point of this widget.
    QPointF toScene(QPointF position) const { return m_toWidget.inverted().map(position); }
    /// The overview as last painted (null before its first paint).
    const QImage& overview() const { return m_image; }

public slots:
    /// Re-fits the overview and the outline (after zoom, scroll or a new layout).
    void refresh();
    /// The plan or the layout changed: the overview is made again shortly after (a burst of
    /// edits makes it once, and never within the edit's own repaint).
    void invalidate();

protected:
    void paintEvent(QPaintEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    void wheelEvent(QWheelEvent*) override;

private:
    GraphScene* scene() const;

    QGraphicsView* m_main;
    QRectF m_shown;        ///< the scene rectangle the overview shows
    QTransform m_toWidget; ///< scene -> this widget
    QImage m_image;
    bool m_stale = true;
    QTimer* m_redraw;
};

} // namespace placer::views
