// The device editor's table, its checks, and the snapshot it hands back as one undoable edit.
#include "gui/DeviceDialog.h"

#include <QColorDialog>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace placer::gui {

namespace {

enum Column { Name, Kind, Memory, Physical, Colour, ColumnCount };
constexpr int kFromRole = Qt::UserRole + 1;

} // namespace

DeviceDialog::DeviceDialog(const views::PlacementDocument* document, QWidget* parent)
    : QDialog(parent), m_document(document) {
    setWindowTitle(tr("Devices"));
    setObjectName(QStringLiteral("deviceDialog"));
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(new QLabel(tr("Virtual devices are what plans name; each runs on a physical "
                                    "device when the plan runs (cpu, vcpuN, cuda:N)."),
                                 this));
    m_table = new QTableWidget(0, ColumnCount, this);
    m_table->setHorizontalHeaderLabels(
        {tr("Name"), tr("Kind"), tr("Memory capacity"), tr("Runs on"), tr("Colour")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    layout->addWidget(m_table);
    auto* buttons = new QHBoxLayout;
    auto* add = new QPushButton(tr("Add"), this);
    auto* remove = new QPushButton(tr("Remove"), this);
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    auto* form = new QFormLayout;
    m_default = new QComboBox(this);
    m_host = new QComboBox(this);
    form->addRow(tr("Default device (unconstrained work):"), m_default);
    form->addRow(tr("Host device (host-only ops):"), m_host);
    layout->addLayout(form);
    auto* box = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    layout->addWidget(box);
    connect(add, &QPushButton::clicked, this, &DeviceDialog::addDevice);
    connect(remove, &QPushButton::clicked, this, &DeviceDialog::removeSelected);
    connect(box, &QDialogButtonBox::accepted, this, &DeviceDialog::accept);
    connect(box, &QDialogButtonBox::rejected, this, &DeviceDialog::reject);
    connect(m_table, &QTableWidget::cellChanged, this, [this](int, int column) {
        if (column == Name)
            refreshRoleChoices();
    });
    connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int column) {
        if (column != Colour)
            return;
        QTableWidgetItem* item = m_table->item(row, Colour);
        const QColor colour = QColorDialog::getColor(item->background().color(), this);
        if (colour.isValid())
            item->setBackground(colour);
    });

    const DeviceSet& devices = document->devices();
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        addRow(QString::fromStdString(device.name), device.kind,
               device.memoryCapacity ? QString::fromStdString(formatBytes(*device.memoryCapacity))
                                     : QString(),
               QString::fromStdString(document->physicalDevice(DeviceId(d))),
               document->deviceColor(DeviceId(d)), d);
    }
    refreshRoleChoices();
    m_default->setCurrentIndex(static_cast<int>(devices.defaultDevice().index));
    m_host->setCurrentIndex(static_cast<int>(devices.hostDevice().index));
    resize(720, 420);
}

void DeviceDialog::addRow(const QString& name, DeviceKind kind, const QString& memory,
                          const QString& physical, const QColor& colour, int from) {
    const QSignalBlocker blocker(m_table);
    const int row = m_table->rowCount();
    m_table->insertRow(row);
    auto* nameItem = new QTableWidgetItem(name);
    nameItem->setData(kFromRole, from);
    m_table->setItem(row, Name, nameItem);
    auto* kinds = new QComboBox(m_table);
    for (DeviceKind k : {DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::VCpu})
        kinds->addItem(QString::fromStdString(std::string(deviceKindName(k))), static_cast<int>(k));
    kinds->setCurrentIndex(kinds->findData(static_cast<int>(kind)));
    m_table->setCellWidget(row, Kind, kinds);
    m_table->setItem(row, Memory, new QTableWidgetItem(memory));
    auto* runsOn = new QComboBox(m_table);
    runsOn->setEditable(true);
    runsOn->addItem(tr("(automatic)"), QString());
    for (const char* option : {"cpu", "vcpu1", "vcpu2", "vcpu3", "vcpu4", "cuda:0"})
        runsOn->addItem(QString::fromLatin1(option), QString::fromLatin1(option));
    if (!physical.isEmpty()) {
        const int index = runsOn->findData(physical);
        if (index >= 0)
            runsOn->setCurrentIndex(index);
        else
            runsOn->setEditText(physical);
    }
    m_table->setCellWidget(row, Physical, runsOn);
    auto* colourItem = new QTableWidgetItem(tr("double-click"));
    colourItem->setBackground(colour);
    colourItem->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable);
    m_table->setItem(row, Colour, colourItem);
}

void DeviceDialog::addDevice() {
    int n = m_table->rowCount() + 1;
    QString name;
    auto taken = [&](const QString& candidate) {
        for (int row = 0; row < m_table->rowCount(); ++row)
            if (m_table->item(row, Name)->text() == candidate)
                return true;
        return false;
    };
    do {
        name = QStringLiteral("vcpu%1").arg(n++);
    } while (taken(name));
    static const QColor kMore[] = {QColor(0xf7, 0xc0, 0x8a), QColor(0xd9, 0xb3, 0xe0),
                                   QColor(0xf4, 0xa6, 0xa6), QColor(0xb8, 0xe0, 0xd9)};
    addRow(name, DeviceKind::VCpu, QString(), QString(), kMore[m_table->rowCount() % 4], -1);
    refreshRoleChoices();
}

void DeviceDialog::removeSelected() {
    const int row = m_table->currentRow();
    if (row < 0 || m_table->rowCount() <= 1)
        return;
    m_table->removeRow(row);
    refreshRoleChoices();
}

void DeviceDialog::refreshRoleChoices() {
    for (QComboBox* box : {m_default, m_host}) {
        const int current = box->currentIndex();
        box->clear();
        for (int row = 0; row < m_table->rowCount(); ++row)
            box->addItem(m_table->item(row, Name)->text());
        box->setCurrentIndex(std::clamp(current, 0, m_table->rowCount() - 1));
    }
}

std::optional<views::DeviceSnapshot> DeviceDialog::result(QString* error) const {
    DeviceSet devices;
    std::vector<int> from;
    std::vector<QColor> colours;
    std::vector<std::string> physical;
    int ordinals[kDeviceKindCount] = {};
    for (int row = 0; row < m_table->rowCount(); ++row) {
        VirtualDevice device;
        device.name = m_table->item(row, Name)->text().trimmed().toStdString();
        if (device.name.empty() || device.name.find_first_of(":,= ") != std::string::npos) {
            *error =
                tr("row %1: a device needs a name without spaces, ':', ',' or '='").arg(row + 1);
            return std::nullopt;
        }
        if (devices.find(device.name)) {
            *error = tr("two devices are called '%1'").arg(QString::fromStdString(device.name));
            return std::nullopt;
        }
        const auto* kinds = qobject_cast<QComboBox*>(m_table->cellWidget(row, Kind));
        device.kind = static_cast<DeviceKind>(kinds->currentData().toInt());
        device.ordinal = ordinals[static_cast<int>(device.kind)]++;
        const QString memory = m_table->item(row, Memory)->text().trimmed();
        if (!memory.isEmpty()) {
            device.memoryCapacity = parseByteSize(memory.toStdString());
            if (!device.memoryCapacity) {
                *error = tr("'%1': memory capacity '%2' is not a size such as 8GiB or 512MB")
                             .arg(QString::fromStdString(device.name), memory);
                return std::nullopt;
            }
        }
        devices.add(device);
        from.push_back(m_table->item(row, Name)->data(kFromRole).toInt());
        colours.push_back(m_table->item(row, Colour)->background().color());
        const auto* runsOn = qobject_cast<QComboBox*>(m_table->cellWidget(row, Physical));
        const QString chosen =
            runsOn->currentIndex() > 0 ? runsOn->currentData().toString() : runsOn->currentText();
        physical.push_back(chosen == tr("(automatic)") ? std::string()
                                                       : chosen.trimmed().toStdString());
    }
    if (devices.empty()) {
        *error = tr("a plan needs at least one device");
        return std::nullopt;
    }
    devices.setDefaultDevice(
        DeviceId(static_cast<std::uint32_t>(std::max(0, m_default->currentIndex()))));
    devices.setHostDevice(
        DeviceId(static_cast<std::uint32_t>(std::max(0, m_host->currentIndex()))));
    return m_document->withDevices(devices, from, std::move(colours), std::move(physical), error);
}

void DeviceDialog::accept() {
    QString error;
    if (!result(&error)) {
        QMessageBox::warning(this, tr("Devices"), error);
        return;
    }
    QDialog::accept();
}

} // namespace placer::gui
