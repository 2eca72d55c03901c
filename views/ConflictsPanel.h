// The Conflicts and notes panel: the plan's conflicts with their suggested fixes (click one to
// go to its node), then the planner's notes, repainted whenever the plan changes.
#pragma once

#include "ir/Ids.h"

#include <QListWidget>

namespace placer::views {

class PlacementDocument;

class ConflictsPanel : public QListWidget {
    Q_OBJECT

public:
    explicit ConflictsPanel(PlacementDocument* document, QWidget* parent = nullptr);

public slots:
    void refresh();

signals:
    /// The user clicked a conflict about `node`.
    void nodeActivated(NodeId node);

private:
    PlacementDocument* m_document;
};

} // namespace placer::views
