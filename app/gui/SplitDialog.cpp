// The Split Across Devices dialog: devices and shares, with a preview of what the planner makes of
// them.
#include "gui/SplitDialog.h"

#include "gui/UndoCommands.h"
#include "session/Editing.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace placer::gui {

SplitDialog::SplitDialog(const views::PlacementDocument* document, std::vector<NodeId> nodes,
                         QWidget* parent, bool tensor)
    : QDialog(parent), m_document(document), m_nodes(std::move(nodes)), m_tensor(tensor) {
    setWindowTitle(tensor ? tr("Shard Across Devices") : tr("Split Across Devices"));
    int ops = 0;
    for (NodeId node : m_nodes)
        ops += document->graph().node(node).role() == OpRole::Compute ? 1 : 0;
    auto* layout = new QVBoxLayout(this);
    auto* intro = new QLabel(
        tensor ? tr("Cut the %n selected op(s) inside, across the devices: each holds its share "
                    "of the weights and computes its part, and collectives make values whole "
                    "where an op needs them so.",
                    nullptr, ops)
               : tr("Run the %n selected op(s) once per device, each device on its share of the "
                    "batch. The batch is split where the region starts and concatenated where "
                    "it ends.",
                    nullptr, ops));
    intro->setWordWrap(true);
    layout->addWidget(intro);
    auto* grid = new QGridLayout;
    grid->addWidget(new QLabel(tr("Device")), 0, 0);
    grid->addWidget(new QLabel(tr("Share")), 0, 1);
    const DeviceSet& devices = document->devices();
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        const QString name = QString::fromStdString(device.name);
        auto* box = new QCheckBox(QStringLiteral("%1 (%2)").arg(
            name, QString::fromUtf8(deviceKindName(device.kind).data())));
        box->setObjectName(QStringLiteral("device:") + name);
        box->setChecked(true);
        auto* share = new QSpinBox;
        share->setObjectName(QStringLiteral("share:") + name);
        share->setRange(1, 1000);
        share->setValue(1);
        share->setToolTip(tr("Relative share of the batch's rows"));
        grid->addWidget(box, d + 1, 0);
        grid->addWidget(share, d + 1, 1);
        m_boxes.push_back(box);
        m_shares.push_back(share);
        connect(box, &QCheckBox::toggled, this, [this, share](bool on) {
            share->setEnabled(on);
            refresh();
        });
        connect(share, &QSpinBox::valueChanged, this, &SplitDialog::refresh);
    }
    layout->addLayout(grid);
    m_preview = new QLabel;
    m_preview->setObjectName(QStringLiteral("preview"));
    m_preview->setWordWrap(true);
    m_preview->setMinimumWidth(360);
    layout->addWidget(m_preview);
    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tensor ? tr("Shard") : tr("Split"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    refresh();
}

std::vector<SplitShare> SplitDialog::shards() const {
    std::vector<SplitShare> shards;
    const DeviceSet& devices = m_document->devices();
    for (std::size_t d = 0; d < m_boxes.size(); ++d) {
        if (m_boxes[d]->isChecked())
            shards.push_back(SplitShare{devices[DeviceId(static_cast<std::int32_t>(d))].name,
                                        m_shares[d]->value()});
    }
    // Equal shares are written without them, as a user would type the request.
    bool even = true;
    for (const SplitShare& shard : shards)
        even = even && shard.share == shards.front().share;
    for (SplitShare& shard : shards)
        shard.share = even ? 0 : shard.share;
    return shards;
}

void SplitDialog::refresh() {
    const std::vector<SplitShare> chosen = shards();
    QPushButton* ok = m_buttons->button(QDialogButtonBox::Ok);
    if (chosen.size() < 2) {
        ok->setEnabled(false);
        m_preview->setText(tr("Choose two devices or more."));
        return;
    }
    ok->setEnabled(true);
    // What the planner will make of it: the same analysis the plan runs.
    const Graph& graph = m_document->graph();
    std::vector<NodeId> ops;
    for (NodeId node : m_nodes) {
        if (graph.node(node).role() == OpRole::Compute)
            ops.push_back(node);
    }
    SplitRequest request{splitPattern(graph, ops), chosen};
    request.tensor = m_tensor;
    const SplitAnalysis analysis = previewSplit(graph, m_document->devices(), request);
    const SplitRegion& region = analysis.regions.front();
    QString text;
    if (m_tensor && !region.nodes.empty()) {
        // How many ops each device computes a part of, and what the collectives move.
        int cut = 0;
        for (const TensorShardOp& op : region.ops)
            cut += !op.outputs.empty() && op.outputs[0].kind != Sharding::Kind::Replicate ? 1 : 0;
        std::int64_t bytes = 0;
        for (const Collective& collective : region.collectives)
            bytes += collective.bytes;
        text = tr("%1 of %n op(s) cut across the devices, the rest computed whole on each; "
                  "%2 collective(s) moving %3.",
                  nullptr, static_cast<int>(region.nodes.size()))
                   .arg(cut)
                   .arg(region.collectives.size())
                   .arg(QString::fromStdString(formatBytes(bytes)));
    } else if (!region.nodes.empty()) {
        QStringList rows;
        for (const Shard& shard : region.shards)
            rows << tr("%1: rows %2–%3")
                        .arg(QString::fromStdString(m_document->devices()[shard.device].name))
                        .arg(shard.begin)
                        .arg(shard.end - 1);
        text =
            tr("Batch of %1 across %n op(s): %2.", nullptr, static_cast<int>(region.nodes.size()))
                .arg(region.batch)
                .arg(rows.join(QStringLiteral(", ")));
    }
    if (!analysis.conflicts.empty()) {
        text += (text.isEmpty() ? QString() : QStringLiteral("\n")) +
                tr("%n conflict(s); the first: %1", nullptr,
                   static_cast<int>(analysis.conflicts.size()))
                    .arg(QString::fromStdString(analysis.conflicts.front().message));
    }
    m_preview->setText(text);
}

} // namespace placer::gui
