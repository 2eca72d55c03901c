// Split across devices: which devices share the selected ops' batch, and in what proportion; or,
// to shard them, which devices share their weights and values inside each op.
// The dialog previews what the planner will make of it (the rows each device gets, or why the
// region cannot be split as asked) before anything changes.
#pragma once

#include "views/PlacementDocument.h"

#include <QDialog>

#include <vector>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QSpinBox;

namespace placer::gui {

class SplitDialog : public QDialog {
    Q_OBJECT

public:
    /// `nodes`: the selection to split; `tensor`: to shard inside its ops (--shard) rather
    /// than on the batch.
    SplitDialog(const views::PlacementDocument* document, std::vector<NodeId> nodes,
                QWidget* parent = nullptr, bool tensor = false);

    /// The devices checked, in device order, each with its share.
    std::vector<SplitShare> shards() const;
    /// The device's check box and share (objects named "device:NAME" and "share:NAME").
    QCheckBox* deviceBox(int device) const { return m_boxes[static_cast<std::size_t>(device)]; }
    QSpinBox* shareBox(int device) const { return m_shares[static_cast<std::size_t>(device)]; }
    QLabel* preview() const { return m_preview; }

private:
    void refresh();

    const views::PlacementDocument* m_document;
    std::vector<NodeId> m_nodes;
    bool m_tensor = false;
    std::vector<QCheckBox*> m_boxes;
    std::vector<QSpinBox*> m_shares;
    QLabel* m_preview;
    QDialogButtonBox* m_buttons;
};

} // namespace placer::gui
