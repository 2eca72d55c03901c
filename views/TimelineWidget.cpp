// Painting the run timeline's lanes, bars and idle stretches, with zoom and pan.
#include "views/TimelineWidget.h"

#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <cmath>
#include <limits>

namespace placer::views {

namespace {

constexpr int kLabelWidth = 170;
constexpr int kLaneHeight = 22;
constexpr int kAxisHeight = 20;

/// A round tick spacing (1, 2 or 5 times a power of ten) near `target`.
double niceStep(double target) {
    const double power = std::pow(10.0, std::floor(std::log10(std::max(target, 1e-9))));
    for (double factor : {1.0, 2.0, 5.0, 10.0}) {
        if (factor * power >= target)
            return factor * power;
    }
    return 10 * power;
}

QString formatTime(double micros) {
    if (micros >= 1000)
        return QString::number(micros / 1000.0, 'g', 4) + QStringLiteral(" ms");
    return QString::number(micros, 'g', 4) + QStringLiteral(" µs");
}

} // namespace

TimelineWidget::TimelineWidget(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumHeight(kAxisHeight + 2 * kLaneHeight);
    setAutoFillBackground(true);
    QPalette palette = this->palette();
    palette.setColor(QPalette::Window, Qt::white);
    setPalette(palette);
}

QSize TimelineWidget::sizeHint() const {
    return QSize(800, kAxisHeight +
                          kLaneHeight * std::max<int>(2, static_cast<int>(m_data.lanes.size())) +
                          4);
}

void TimelineWidget::setData(TimelineData data) {
    m_data = std::move(data);
    setMinimumHeight(kAxisHeight +
                     kLaneHeight * std::max<int>(2, static_cast<int>(m_data.lanes.size())) + 4);
    resetZoom();
}

void TimelineWidget::resetZoom() {
    const double width = std::max(50, this->width() - kLabelWidth - 10);
    m_microsPerPixel = std::max(m_data.duration, 1.0) / width;
    m_offset = 0;
    update();
}

void TimelineWidget::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    if (m_offset == 0)
        resetZoom();
}

double TimelineWidget::xOf(double micros) const {
    return kLabelWidth + (micros - m_offset) / m_microsPerPixel;
}

double TimelineWidget::timeAt(double x) const {
    return m_offset + (x - kLabelWidth) * m_microsPerPixel;
}

QRectF TimelineWidget::barRect(const TimelineBar& bar) const {
    const double left = xOf(bar.start);
    const double width = std::max(1.0, (bar.end - bar.start) / m_microsPerPixel);
    return QRectF(left, kAxisHeight + bar.lane * kLaneHeight + 3, width, kLaneHeight - 6);
}

int TimelineWidget::barAt(const QPoint& position) const {
    for (std::size_t i = 0; i < m_data.bars.size(); ++i) {
        if (barRect(m_data.bars[i]).adjusted(-1, 0, 1, 0).contains(position))
            return static_cast<int>(i);
    }
    return -1;
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing, false);
    if (m_data.lanes.empty()) {
        painter.setPen(Qt::gray);
        painter.drawText(rect(), Qt::AlignCenter,
                         tr("Run the plan (Run ▸ Run) to see when each device works."));
        return;
    }
    // Lanes.
    for (std::size_t lane = 0; lane < m_data.lanes.size(); ++lane) {
        const QRect row(0, kAxisHeight + static_cast<int>(lane) * kLaneHeight, width(),
                        kLaneHeight);
        if (lane % 2 == 1)
            painter.fillRect(row, QColor(0xf4, 0xf4, 0xf4));
        painter.setPen(QColor(0x30, 0x30, 0x30));
        painter.drawText(
            row.adjusted(6, 0, -(width() - kLabelWidth) - 4, 0), Qt::AlignVCenter | Qt::AlignLeft,
            fontMetrics().elidedText(m_data.lanes[lane], Qt::ElideMiddle, kLabelWidth - 10));
    }
    // Time axis.
    const double step = niceStep(90 * m_microsPerPixel);
    painter.setPen(QColor(0x90, 0x90, 0x90));
    for (double t = std::floor(m_offset / step) * step; xOf(t) < width(); t += step) {
        const double x = xOf(t);
        if (x < kLabelWidth)
            continue;
        painter.drawLine(QPointF(x, kAxisHeight - 4), QPointF(x, height()));
        painter.drawText(QPointF(x + 3, kAxisHeight - 6), formatTime(t));
    }
    painter.setClipRect(QRect(kLabelWidth, kAxisHeight, width() - kLabelWidth, height()));
    // Bars under two pixels wide (tens of thousands of ops at a whole run's zoom): one column
    // of a lane's pixels is filled once, in the colour of the first bar there.
    std::vector<int> filledColumn(m_data.lanes.size(), std::numeric_limits<int>::min());
    for (const TimelineBar& bar : m_data.bars) {
        const QRectF r = barRect(bar);
        if (r.right() < kLabelWidth || r.left() > width())
            continue;
        if (!bar.idle && r.width() < 2 && bar.lane >= 0 &&
            static_cast<std::size_t>(bar.lane) < filledColumn.size()) {
            int& filled = filledColumn[static_cast<std::size_t>(bar.lane)];
            const int column = static_cast<int>(std::floor(r.left()));
            if (column <= filled)
                continue;
            filled = static_cast<int>(std::floor(r.right()));
            painter.fillRect(QRectF(column, r.top(), filled - column + 1, r.height()),
                             bar.colour.darker(115));
            continue;
        }
        if (bar.idle) {
            painter.fillRect(r, QBrush(QColor(0xb0, 0x40, 0x40, 0x70), Qt::BDiagPattern));
            painter.setPen(QColor(0xb0, 0x40, 0x40));
            painter.drawLine(r.topLeft(), r.bottomLeft());
            painter.drawLine(r.topRight(), r.bottomRight());
        } else {
            painter.fillRect(r, bar.colour);
            painter.setPen(bar.colour.darker(160));
            painter.drawRect(r);
        }
        if (r.width() > 40) {
            painter.setPen(bar.idle ? QColor(0x80, 0x20, 0x20) : QColor(Qt::black));
            painter.drawText(r.adjusted(3, 0, -2, 0), Qt::AlignVCenter | Qt::AlignLeft,
                             fontMetrics().elidedText(m_data.labelOf(bar), Qt::ElideRight,
                                                      static_cast<int>(r.width()) - 5));
        }
    }
    // Markers over everything: a dashed line down every lane, the label beside its top.
    painter.setClipRect(QRect(kLabelWidth, 0, width() - kLabelWidth, height()));
    for (std::size_t m = 0; m < m_data.markers.size(); ++m) {
        const TimelineMarker& marker = m_data.markers[m];
        const double x = xOf(marker.at);
        if (x < kLabelWidth || x > width())
            continue;
        painter.setPen(QPen(marker.colour, 2, Qt::DashLine));
        painter.drawLine(QPointF(x, 0), QPointF(x, height()));
        // Up to the next marker's line, or the widget's edge.
        double room = width() - x - 6;
        if (m + 1 < m_data.markers.size())
            room = std::min(room, xOf(m_data.markers[m + 1].at) - x - 6);
        if (room > 30) {
            const QString text =
                fontMetrics().elidedText(marker.label, Qt::ElideRight, static_cast<int>(room));
            const QRectF box(x + 3, 1, fontMetrics().horizontalAdvance(text) + 4,
                             fontMetrics().height());
            painter.fillRect(box, QColor(255, 255, 255, 220));
            painter.setPen(marker.colour.darker(130));
            painter.drawText(box.adjusted(2, 0, 0, 0), Qt::AlignVCenter | Qt::AlignLeft, text);
        }
    }
}

int TimelineWidget::markerAt(const QPoint& position) const {
    for (std::size_t m = 0; m < m_data.markers.size(); ++m) {
        if (std::abs(xOf(m_data.markers[m].at) - position.x()) <= 3)
            return static_cast<int>(m);
    }
    return -1;
}

void TimelineWidget::wheelEvent(QWheelEvent* event) {
    const double steps = event->angleDelta().y() / 120.0;
    const double anchor = timeAt(event->position().x());
    m_microsPerPixel = std::clamp(m_microsPerPixel / std::pow(1.25, steps), 1e-4, 1e9);
    m_offset = std::max(0.0, anchor - (event->position().x() - kLabelWidth) * m_microsPerPixel);
    update();
    event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
    m_dragX = static_cast<int>(event->position().x());
    m_dragOffset = m_offset;
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
    if (event->buttons() & Qt::LeftButton && m_dragX >= 0) {
        m_offset =
            std::max(0.0, m_dragOffset - (event->position().x() - m_dragX) * m_microsPerPixel);
        update();
    }
}

bool TimelineWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const int bar = barAt(help->pos());
        if (const int marker = markerAt(help->pos()); marker >= 0)
            QToolTip::showText(help->globalPos(),
                               m_data.markers[static_cast<std::size_t>(marker)].tooltip, this);
        else if (bar >= 0)
            QToolTip::showText(help->globalPos(),
                               m_data.tooltipOf(m_data.bars[static_cast<std::size_t>(bar)]), this);
        else
            QToolTip::hideText();
        return true;
    }
    return QWidget::event(event);
}

} // namespace placer::views
