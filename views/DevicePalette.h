// The device palette: one chip per virtual device (colour, name, kind, role, memory), dragged
// onto nodes to pin them there.
#pragma once

#include "views/PlacementDocument.h"

#include <QFrame>
#include <QWidget>

#include <utility>
#include <vector>

class QLabel;

namespace placer::views {

/// One device: drag it onto a node (or a selection) to pin there.
class DeviceChip : public QFrame {
    Q_OBJECT

public:
    DeviceChip(const QString& device, const QColor& colour, const QString& details,
               QWidget* parent = nullptr);
    const QString& device() const { return m_device; }
    QColor colour() const { return palette().color(QPalette::Window); }
    void setDetails(const QString& details);

signals:
    /// Nodes dragged from the canvas were dropped on this chip.
    void nodesDropped(const QString& device, const std::vector<NodeId>& nodes);

protected:
    void dragEnterEvent(QDragEnterEvent*) override;
    void dropEvent(QDropEvent*) override;
    void mousePressEvent(QMouseEvent*) override;
    void mouseMoveEvent(QMouseEvent*) override;

private:
    QString m_device;
    QLabel* m_info;
    QPoint m_pressAt;
};

class DevicePalette : public QWidget {
    Q_OBJECT

public:
    explicit DevicePalette(PlacementDocument* document, QWidget* parent = nullptr);
    DeviceChip* chip(const QString& device) const;
    /// Groups the chips under headings, in the order the groups are given: each device's group
    /// ("vm · rank 1", the host and rank a run on hosts put it on). Devices in no group come
    /// last; none given: no headings. A new model or device set clears them.
    void setGroups(std::vector<std::pair<QString, QStringList>> groups);
    const std::vector<std::pair<QString, QStringList>>& groups() const { return m_groups; }
    /// What the last run did with each device, said on each chip after its kind and roles
    /// ("vcpu2 on core 1, 3 % busy · failed at 5"); empty strings for none. A new model or
    /// device set clears them.
    void setRunDetails(std::vector<QString> lines);
    const std::vector<QString>& runDetails() const { return m_runDetails; }

signals:
    /// Nodes were dropped on the chip of `device`.
    void nodesDropped(const QString& device, const std::vector<NodeId>& nodes);

public slots:
    /// Rebuilds the chips from the document's device set and memory plan.
    void rebuild();

private:
    /// Per device: its kind, roles, nodes and memory, as a chip says them.
    std::vector<QString> details() const;

    PlacementDocument* m_document;
    std::vector<DeviceChip*> m_chips;
    std::vector<std::pair<QString, QStringList>> m_groups;
    std::vector<QString> m_runDetails;
    bool m_grouped = false; ///< the chips are laid out under m_groups' headings
};

} // namespace placer::views
