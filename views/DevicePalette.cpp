// The device palette's chips, and dragging one onto the canvas.
#include "views/DevicePalette.h"

#include "views/GraphView.h"

#include <QApplication>
#include <QDrag>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QMimeData>
#include <QMouseEvent>
#include <QPainter>
#include <QVBoxLayout>

namespace placer::views {

DeviceChip::DeviceChip(const QString& device, const QColor& colour, const QString& details,
                       QWidget* parent)
    : QFrame(parent), m_device(device) {
    setObjectName(QStringLiteral("chip-") + device);
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QPalette palette = this->palette();
    palette.setColor(QPalette::Window, colour);
    palette.setColor(QPalette::WindowText, Qt::black);
    setPalette(palette);
    setCursor(Qt::OpenHandCursor);
    setAcceptDrops(true);
    setToolTip(tr("Drag onto a node, or onto a selected node to place the whole selection, "
                  "to run it on %1")
                   .arg(device));
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 4);
    layout->setSpacing(0);
    auto* name = new QLabel(QStringLiteral("<b>%1</b>").arg(device.toHtmlEscaped()), this);
    m_info = new QLabel(details, this);
    QFont small = m_info->font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    m_info->setFont(small);
    layout->addWidget(name);
    layout->addWidget(m_info);
}

void DeviceChip::setDetails(const QString& details) {
    if (m_info->text() != details)
        m_info->setText(details);
}

void DeviceChip::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasFormat(kNodesMimeType))
        event->acceptProposedAction();
}

void DeviceChip::dropEvent(QDropEvent* event) {
    if (!event->mimeData()->hasFormat(kNodesMimeType))
        return;
    event->acceptProposedAction();
    emit nodesDropped(m_device, decodeNodes(event->mimeData()->data(kNodesMimeType)));
}

void DeviceChip::mousePressEvent(QMouseEvent* event) {
    if (event->button() == Qt::LeftButton)
        m_pressAt = event->position().toPoint();
    QFrame::mousePressEvent(event);
}

void DeviceChip::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton) ||
        (event->position().toPoint() - m_pressAt).manhattanLength() <
            QApplication::startDragDistance())
        return QFrame::mouseMoveEvent(event);
    auto* mime = new QMimeData;
    mime->setData(kDeviceMimeType, m_device.toUtf8());
    mime->setText(m_device);
    auto* drag = new QDrag(this);
    drag->setMimeData(mime);
    drag->setPixmap(grab());
    drag->setHotSpot(event->position().toPoint());
    drag->exec(Qt::CopyAction);
}

DevicePalette::DevicePalette(PlacementDocument* document, QWidget* parent)
    : QWidget(parent), m_document(document) {
    new QVBoxLayout(this);
    auto regroup = [this] {
        m_groups.clear();
        m_runDetails.clear();
        rebuild();
    };
    connect(document, &PlacementDocument::modelReset, this, regroup);
    connect(document, &PlacementDocument::devicesChanged, this, regroup);
    connect(document, &PlacementDocument::planChanged, this, &DevicePalette::rebuild);
    // A large graph's memory plan comes with its deferred prediction.
    connect(document, &PlacementDocument::predictionChanged, this, &DevicePalette::rebuild);
    rebuild();
}

void DevicePalette::setGroups(std::vector<std::pair<QString, QStringList>> groups) {
    m_groups = std::move(groups);
    m_chips.clear(); // laid out anew, under the headings
    rebuild();
}

DeviceChip* DevicePalette::chip(const QString& device) const {
    return findChild<DeviceChip*>(QStringLiteral("chip-") + device);
}

std::vector<QString> DevicePalette::details() const {
    const DeviceSet& devices = m_document->devices();
    const Plan& plan = m_document->plan();
    // Nodes per device, in one pass: a split node runs on each of its region's devices.
    std::vector<int> nodes(static_cast<std::size_t>(devices.size()), 0);
    for (std::size_t i = 0; i < plan.devices.size(); ++i) {
        if (const SplitRegion* split = plan.splitOf(NodeId(static_cast<std::uint32_t>(i)))) {
            for (const Shard& shard : split->shards)
                if (shard.device.valid() && shard.device.index < devices.size())
                    ++nodes[static_cast<std::size_t>(shard.device.index)];
            continue;
        }
        if (plan.devices[i].valid() && plan.devices[i].index < devices.size())
            ++nodes[static_cast<std::size_t>(plan.devices[i].index)];
    }
    std::vector<QString> result;
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        QStringList roles;
        if (devices.defaultDevice() == DeviceId(d))
            roles << tr("default");
        if (devices.hostDevice() == DeviceId(d))
            roles << tr("host");
        // A large graph's memory plan may follow with its prediction: "…" until it does.
        QString peak = QStringLiteral("…");
        if (static_cast<std::size_t>(d) < plan.memory.devices.size())
            peak = QString::fromStdString(
                formatBytes(plan.memory.devices[static_cast<std::size_t>(d)].peakBytes));
        QString text = QString::fromStdString(std::string(deviceKindName(device.kind)));
        if (device.computeType != DType::Float32) // its precision policy
            text += QStringLiteral(" ") + QString::fromUtf8(dtypeName(device.computeType).data());
        if (!roles.isEmpty())
            text += QStringLiteral(" · ") + roles.join(QStringLiteral(", "));
        // What the last run did with it, on the same line: the chip keeps its height.
        if (static_cast<std::size_t>(d) < m_runDetails.size() &&
            !m_runDetails[static_cast<std::size_t>(d)].isEmpty())
            text += QStringLiteral(" · ") + m_runDetails[static_cast<std::size_t>(d)];
        text += QStringLiteral("\n") +
                tr("%n node(s)", nullptr, nodes[static_cast<std::size_t>(d)]) +
                QStringLiteral(" · ") + peak;
        if (device.memoryCapacity)
            text +=
                QStringLiteral(" / ") + QString::fromStdString(formatBytes(*device.memoryCapacity));
        result.push_back(text);
    }
    return result;
}

void DevicePalette::setRunDetails(std::vector<QString> lines) {
    m_runDetails = std::move(lines);
    rebuild();
}

void DevicePalette::rebuild() {
    const DeviceSet& devices = m_document->devices();
    if (m_runDetails.size() != static_cast<std::size_t>(devices.size()))
        m_runDetails.clear(); // another device set than the run's
    const std::vector<QString> texts = details();
    // The same devices in the same colours (a re-plan): only what the chips say changes.
    bool same = m_chips.size() == static_cast<std::size_t>(devices.size()) &&
                m_grouped == !m_groups.empty();
    for (int d = 0; same && d < devices.size(); ++d) {
        const DeviceChip* chip = m_chips[static_cast<std::size_t>(d)];
        same = chip->device() == QString::fromStdString(devices[DeviceId(d)].name) &&
               chip->colour() == m_document->deviceColor(DeviceId(d));
    }
    if (same) {
        for (std::size_t d = 0; d < m_chips.size(); ++d)
            m_chips[d]->setDetails(texts[d]);
        return;
    }
    m_chips.clear();
    QLayout* layout = this->layout();
    while (QLayoutItem* item = layout->takeAt(0)) {
        // Later: a drop onto the canvas re-plans while the chip's drag is still on the stack.
        if (QWidget* widget = item->widget()) {
            widget->hide();
            widget->setObjectName(QString());
            widget->deleteLater();
        }
        delete item;
    }
    for (int d = 0; d < devices.size(); ++d) {
        auto* chip = new DeviceChip(QString::fromStdString(devices[DeviceId(d)].name),
                                    m_document->deviceColor(DeviceId(d)),
                                    texts[static_cast<std::size_t>(d)], this);
        connect(chip, &DeviceChip::nodesDropped, this, &DevicePalette::nodesDropped);
        m_chips.push_back(chip);
    }
    // Under each group's heading, its devices in the device set's order; the rest after.
    std::vector<bool> placed(m_chips.size(), false);
    for (const auto& [heading, members] : m_groups) {
        auto* label = new QLabel(QStringLiteral("<b>%1</b>").arg(heading.toHtmlEscaped()), this);
        label->setObjectName(QStringLiteral("deviceGroup"));
        label->setProperty("group", heading);
        layout->addWidget(label);
        for (std::size_t d = 0; d < m_chips.size(); ++d) {
            if (!placed[d] && members.contains(m_chips[d]->device())) {
                layout->addWidget(m_chips[d]);
                placed[d] = true;
            }
        }
    }
    for (std::size_t d = 0; d < m_chips.size(); ++d) {
        if (!placed[d])
            layout->addWidget(m_chips[d]);
    }
    m_grouped = !m_groups.empty();
    static_cast<QVBoxLayout*>(layout)->addStretch(1);
}

} // namespace placer::views
