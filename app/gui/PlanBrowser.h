// The plan browser: the workspace's saved plans (name, graph, devices, copies, bytes, last run
// latency) with open, rename, duplicate, delete and compare.
#pragma once

#include "store/PlanStore.h"

#include <QWidget>

class QTableWidget;
class QLabel;

namespace placer::gui {

class PlanBrowser : public QWidget {
    Q_OBJECT

public:
    explicit PlanBrowser(QWidget* parent = nullptr);

    /// Shows the plans of `store` (null: none open, with the reason in `message`).
    void setStore(store::PlanStore* store, const QString& message = QString());
    QTableWidget* table() const { return m_table; }
    /// The names of the selected plans, in table order.
    QStringList selectedNames() const;
    /// Selects the row of `name` (after a save or an open).
    void select(const QString& name);

public slots:
    void refresh();

signals:
    void openRequested(const QString& name);
    void renameRequested(const QString& name);
    void duplicateRequested(const QString& name);
    void deleteRequested(const QString& name);
    void compareRequested(const QString& a, const QString& b);

private:
    store::PlanStore* m_store = nullptr;
    QTableWidget* m_table;
    QLabel* m_status;
};

} // namespace placer::gui
