// The planner-mode chooser of the tool bar.
#include "views/ModeBox.h"

#include "views/PlacementDocument.h"

namespace placer::views {

ModeBox::ModeBox(const PlacementDocument* document, QWidget* parent) : QComboBox(parent) {
    setObjectName(QStringLiteral("mode"));
    addItem(tr("demand"), static_cast<int>(PlanMode::Demand));
    addItem(tr("unify (TVM)"), static_cast<int>(PlanMode::Unify));
    addItem(tr("auto-place"), static_cast<int>(PlanMode::Auto));
    setToolTip(tr("demand: unpinned nodes go where their consumers are; unify: nodes joined by "
                  "hard edges share a device, as in TVM; auto-place: unpinned ops go where the "
                  "cost model predicts the shortest latency, pins and rules kept"));
    connect(this, &QComboBox::activated, this, [this, document](int index) {
        const auto mode = static_cast<PlanMode>(itemData(index).toInt());
        if (mode != document->options().mode)
            emit modeChosen(mode);
    });
    connect(document, &PlacementDocument::planChanged, this, [this, document] {
        setCurrentIndex(findData(static_cast<int>(document->options().mode)));
    });
}

} // namespace placer::views
