// The Plans panel: the workspace's saved plans in a table, and its actions on them.
#include "gui/PlanBrowser.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace placer::gui {

PlanBrowser::PlanBrowser(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_table = new QTableWidget(0, 7, this);
    m_table->setObjectName(QStringLiteral("plans"));
    m_table->setHorizontalHeaderLabels({tr("Plan"), tr("Graph"), tr("Devices"), tr("Copies"),
                                        tr("Copied"), tr("Last run"), tr("Updated")});
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);
    m_status = new QLabel(this);
    m_status->setWordWrap(true);
    layout->addWidget(m_status);
    auto* buttons = new QHBoxLayout;
    const std::pair<QString, QString> actions[] = {{tr("Open"), QStringLiteral("open")},
                                                   {tr("Rename…"), QStringLiteral("rename")},
                                                   {tr("Duplicate…"), QStringLiteral("duplicate")},
                                                   {tr("Delete…"), QStringLiteral("delete")},
                                                   {tr("Compare"), QStringLiteral("compare")}};
    for (const auto& [label, name] : actions) {
        auto* button = new QPushButton(label, this);
        button->setObjectName(QStringLiteral("plan-") + name);
        buttons->addWidget(button);
        connect(button, &QPushButton::clicked, this, [this, name = name] {
            const QStringList selected = selectedNames();
            if (name == QStringLiteral("compare")) {
                if (selected.size() == 2)
                    emit compareRequested(selected[0], selected[1]);
                else
                    m_status->setText(tr("Select two plans to compare them."));
                return;
            }
            if (selected.size() != 1) {
                m_status->setText(tr("Select one plan."));
                return;
            }
            if (name == QStringLiteral("open"))
                emit openRequested(selected[0]);
            else if (name == QStringLiteral("rename"))
                emit renameRequested(selected[0]);
            else if (name == QStringLiteral("duplicate"))
                emit duplicateRequested(selected[0]);
            else
                emit deleteRequested(selected[0]);
        });
    }
    layout->addLayout(buttons);
    connect(m_table, &QTableWidget::cellDoubleClicked, this,
            [this](int row, int) { emit openRequested(m_table->item(row, 0)->text()); });
}

void PlanBrowser::setStore(store::PlanStore* store, const QString& message) {
    m_store = store;
    m_status->setText(message);
    refresh();
}

void PlanBrowser::refresh() {
    m_table->setRowCount(0);
    if (!m_store)
        return;
    auto plans = m_store->listPlans();
    if (!plans) {
        m_status->setText(QString::fromStdString(plans.error().toString()));
        return;
    }
    for (const store::PlanSummary& plan : plans.value()) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        const QString lastRun =
            plan.lastRunMs < 0 ? QStringLiteral("—")
                               : QString::number(plan.lastRunMs, 'f', 3) + QStringLiteral(" ms");
        const QStringList cells = {QString::fromStdString(plan.name),
                                   QString::fromStdString(plan.graph),
                                   QString::fromStdString(plan.devices),
                                   QString::number(plan.copies),
                                   QString::fromStdString(formatBytes(plan.copiedBytes)),
                                   lastRun,
                                   QString::fromStdString(plan.updated)};
        for (int column = 0; column < cells.size(); ++column) {
            auto* item = new QTableWidgetItem(cells[column]);
            if (column == 0 && !plan.note.empty())
                item->setToolTip(QString::fromStdString(plan.note));
            m_table->setItem(row, column, item);
        }
    }
    m_table->resizeColumnsToContents();
}

QStringList PlanBrowser::selectedNames() const {
    QStringList names;
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (m_table->item(row, 0)->isSelected())
            names << m_table->item(row, 0)->text();
    }
    return names;
}

void PlanBrowser::select(const QString& name) {
    m_table->clearSelection();
    for (int row = 0; row < m_table->rowCount(); ++row) {
        if (m_table->item(row, 0)->text() == name)
            m_table->selectRow(row);
    }
}

} // namespace placer::gui
