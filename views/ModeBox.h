// The planner-mode chooser of the tool bar: shows the document's mode and says when the user
// picks another (the window makes that an undoable edit).
#pragma once

#include "session/Session.h"

#include <QComboBox>

namespace placer::views {

class PlacementDocument;

class ModeBox : public QComboBox {
    Q_OBJECT

public:
    ModeBox(const PlacementDocument* document, QWidget* parent = nullptr);

signals:
    /// The user chose a mode other than the document's.
    void modeChosen(PlanMode mode);
};

} // namespace placer::views
