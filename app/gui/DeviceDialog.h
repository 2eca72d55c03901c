// The device editor: add, remove and rename virtual devices; their kind, colour, memory
// capacity and the physical device each runs on; which is the default and which the host.
#pragma once

#include "views/PlacementDocument.h"

#include <QDialog>

class QComboBox;
class QTableWidget;

namespace placer::gui {

class DeviceDialog : public QDialog {
    Q_OBJECT

public:
    DeviceDialog(const views::PlacementDocument* document, QWidget* parent = nullptr);

    /// The edited devices as a document snapshot, or std::nullopt with a sentence in *error.
    std::optional<views::DeviceSnapshot> result(QString* error) const;

    QTableWidget* table() const { return m_table; }
    QComboBox* defaultDevice() const { return m_default; }
    QComboBox* hostDevice() const { return m_host; }
    void addRow(const QString& name, DeviceKind kind, const QString& memory,
                const QString& physical, const QColor& colour, int from);

public slots:
    void addDevice();
    void removeSelected();
    void accept() override;

private:
    void refreshRoleChoices();

    const views::PlacementDocument* m_document;
    QTableWidget* m_table;
    QComboBox* m_default;
    QComboBox* m_host;
};

} // namespace placer::gui
