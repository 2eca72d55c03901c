// The Conflicts and notes panel, filled from the plan and clickable to the nodes involved.
#include "views/ConflictsPanel.h"

#include "views/PlacementDocument.h"

namespace placer::views {

ConflictsPanel::ConflictsPanel(PlacementDocument* document, QWidget* parent)
    : QListWidget(parent), m_document(document) {
    setWordWrap(true);
    connect(this, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
        const QVariant node = item->data(Qt::UserRole);
        if (node.isValid())
            emit nodeActivated(NodeId(node.toUInt()));
    });
    connect(m_document, &PlacementDocument::planChanged, this, &ConflictsPanel::refresh);
    refresh();
}

void ConflictsPanel::refresh() {
    clear();
    const Plan& plan = m_document->plan();
    for (const Conflict& conflict : plan.conflicts) {
        QString text = QString::fromStdString(conflict.message);
        if (!conflict.suggestion.empty())
            text += QStringLiteral("\n→ ") + QString::fromStdString(conflict.suggestion);
        auto* item = new QListWidgetItem(text, this);
        item->setForeground(QColor(0xb0, 0x10, 0x10));
        if (!conflict.nodes.empty())
            item->setData(Qt::UserRole, conflict.nodes.front().index);
    }
    if (plan.conflicts.empty())
        new QListWidgetItem(tr("No conflicts."), this);
    // Notes: what the planner decided that is worth knowing but is no conflict.
    for (const std::string& note : plan.notes) {
        auto* item = new QListWidgetItem(tr("Note: %1").arg(QString::fromStdString(note)), this);
        item->setForeground(QColor(0x20, 0x50, 0x90));
    }
}

} // namespace placer::views
