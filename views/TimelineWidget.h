// The run timeline: one lane per physical device's compute, one per copy path and one for input
// uploads; each instruction a bar coloured by its virtual device, and hatched stretches where a
// device waited, named by what it waited for. Wheel zooms the time axis
// around the cursor, dragging pans, hovering names the node, its device and its time.
#pragma once

#include <QColor>
#include <QString>
#include <QWidget>

#include <functional>
#include <vector>

namespace placer::views {

struct TimelineBar {
    int lane = 0;
    double start = 0; ///< microseconds from the run's start
    double end = 0;
    QColor colour;
    QString label;     ///< drawn when the bar is wide enough; empty: TimelineData::name(key)
    QString tooltip;   ///< shown on hover; empty: TimelineData::describe(key)
    bool idle = false; ///< a stretch in which the device waited: drawn hatched, under the work
    int key = -1;      ///< what describe() is asked about (a node), for bars without a tooltip
};

/// A moment the whole timeline marks: a vertical line over every lane, its label at the top (a
/// run's re-placement or failed device, between two iterations).
struct TimelineMarker {
    double at = 0; ///< microseconds from the run's start
    QString label;
    QString tooltip;
    QColor colour = QColor(0xc0, 0x30, 0x30);
};

struct TimelineData {
    std::vector<QString> lanes;
    std::vector<TimelineBar> bars;
    std::vector<TimelineMarker> markers;
    double duration = 0; ///< microseconds
    /// The tooltip of a bar that has none, made when it is shown (tens of thousands of bars need
    /// not format theirs on every re-plan).
    std::function<QString(int key)> describe;
    QString tooltipOf(const TimelineBar& bar) const {
        return !bar.tooltip.isEmpty() || !describe || bar.key < 0 ? bar.tooltip : describe(bar.key);
    }
    /// The label of a bar that has none, made when it is drawn wide enough to show it.
    std::function<QString(int key)> name;
    QString labelOf(const TimelineBar& bar) const {
        return !bar.label.isEmpty() || !name || bar.key < 0 ? bar.label : name(bar.key);
    }
};

class TimelineWidget : public QWidget {
    Q_OBJECT

public:
    explicit TimelineWidget(QWidget* parent = nullptr);

    void setData(TimelineData data);
    const TimelineData& data() const { return m_data; }
    /// The bar under a widget position, or -1.
    int barAt(const QPoint& position) const;
    /// The marker within a few pixels of a widget position, or -1.
    int markerAt(const QPoint& position) const;
    /// Microseconds per pixel at the current zoom.
    double microsPerPixel() const { return m_microsPerPixel; }

public slots:
    void resetZoom();

protected:
    void paintEvent(QPaintEvent*) override;
    void wheelEvent(QWheelEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;
    bool event(QEvent*) override;
    QSize sizeHint() const override;
    void resizeEvent(QResizeEvent*) override;

private:
    double xOf(double micros) const;
    double timeAt(double x) const;
    QRectF barRect(const TimelineBar& bar) const;

    TimelineData m_data;
    double m_microsPerPixel = 1;
    double m_offset = 0; ///< microseconds at the left edge of the plot
    int m_dragX = -1;
    double m_dragOffset = 0;
};

} // namespace placer::views
