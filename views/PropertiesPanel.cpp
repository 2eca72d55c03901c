// The Properties panel's text for the selection.
#include "views/PropertiesPanel.h"

#include "views/PlacementDocument.h"

#include <QStringList>
#include <QUrl>

namespace placer::views {

namespace {

QString html(const std::string& text) {
    return QString::fromStdString(text).toHtmlEscaped();
}

} // namespace

PropertiesPanel::PropertiesPanel(PlacementDocument* document, QWidget* parent)
    : QTextBrowser(parent), m_document(document) {
    setOpenLinks(false);
    connect(this, &QTextBrowser::anchorClicked, this, [this](const QUrl& url) {
        bool ok = false;
        const uint index = url.path().toUInt(&ok);
        if (url.scheme() == QStringLiteral("node") && ok && index < m_document->graph().size())
            emit nodeActivated(NodeId(index));
    });
    showNodes({});
}

void PropertiesPanel::showNodes(const std::vector<NodeId>& selected) {
    if (selected.size() != 1) {
        setHtml(selected.empty()
                    ? tr("<i>Select a node to see its properties and why it runs "
                         "where it does.</i>")
                    : tr("%n node(s) selected.", nullptr, static_cast<int>(selected.size())));
        return;
    }
    const NodeId id = selected.front();
    const Graph& graph = m_document->graph();
    const Node& node = graph.node(id);
    const DeviceSet& devices = m_document->devices();
    const Plan& plan = m_document->plan();
    QString text =
        QStringLiteral("<h3>%1 <small>%2</small></h3>").arg(html(node.name), html(node.op->name));
    const DeviceId device = plan.devices[id.index];
    if (const SplitRegion* split = plan.splitOf(id)) {
        // A split node: each shard, its rows, and the time the plan predicts for it.
        const SplitRegion& region = *split;
        QStringList names;
        for (const Shard& shard : region.shards)
            names << html(devices[shard.device].name);
        text += QStringLiteral("<p><b>%1</b> %2 (%3)</p>")
                    .arg(tr("Devices:"), names.join(QStringLiteral(" + ")), html(region.name));
        text += QStringLiteral("<p><b>%1</b><br>").arg(tr("Shards:"));
        const ShardedGraph* sharded = plan.sharded.get();
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            const Shard& shard = region.shards[s];
            QString line = region.tensor ? tr("%1: share %2 of %3")
                                               .arg(html(devices[shard.device].name))
                                               .arg(shard.rows())
                                               .arg(region.batch)
                                         : tr("%1: rows %2–%3 of %4")
                                               .arg(html(devices[shard.device].name))
                                               .arg(shard.begin)
                                               .arg(shard.end - 1)
                                               .arg(region.batch);
            for (std::size_t j = 0; sharded && j < sharded->origin.size(); ++j) {
                const auto& p = sharded->plan->prediction;
                if (sharded->origin[j] == id && sharded->shard[j] == static_cast<int>(s) && p &&
                    j < p->micros.size())
                    line += tr(", predicted %1").arg(html(formatMillis(p->micros[j])));
            }
            text += line + QStringLiteral("<br>");
        }
        text += QStringLiteral("</p>");
        // A sharded op: how its outputs are held and the rule that chose it.
        for (std::size_t k = 0; region.tensor && k < region.nodes.size(); ++k) {
            if (region.nodes[k] != id || k >= region.ops.size())
                continue;
            QStringList held;
            for (const Sharding& sharding : region.ops[k].outputs)
                held << QString::fromStdString(sharding.text());
            text += QStringLiteral("<p><b>%1</b> %2: %3</p>")
                        .arg(tr("Sharding:"), held.join(QStringLiteral(", ")).toHtmlEscaped(),
                             html(region.ops[k].why));
        }
    } else {
        text += QStringLiteral("<p><b>%1</b> %2</p>")
                    .arg(tr("Device:"), device.valid() ? html(devices[device].name) : tr("none"));
    }
    text += QStringLiteral("<p><b>%1</b> %2</p>")
                .arg(tr("Why:"), m_document->explain(id).toHtmlEscaped());
    // The nodes the device came from, each a link to it (inside a closed group too: it opens).
    const std::vector<NodeId> chain = plan.reasonChain(id);
    if (!chain.empty()) {
        constexpr std::size_t kShown = 6;
        QStringList links;
        for (std::size_t i = 0; i < chain.size(); ++i) {
            if (i == kShown - 1 && chain.size() > kShown) {
                links << tr("… %n more", nullptr, static_cast<int>(chain.size() - kShown));
                i = chain.size() - 1; // and the one that decided them all
            }
            links << QStringLiteral("<a href=\"node:%1\">%2</a>")
                         .arg(chain[i].index)
                         .arg(html(graph.node(chain[i]).name));
        }
        text += QStringLiteral("<p><b>%1</b> %2</p>")
                    .arg(tr("Decided by:"), links.join(QStringLiteral(" → ")));
    }
    if (node.pin.active())
        text += QStringLiteral("<p><b>%1</b> %2 (%3)</p>")
                    .arg(tr("Pinned:"), html(devices[node.pin.device].name), html(node.pin.origin));
    if (plan.prediction && id.index < plan.prediction->micros.size() &&
        node.role() == OpRole::Compute) {
        const Prediction& p = *plan.prediction;
        text += QStringLiteral("<p><b>%1</b> %2, %3 %4–%5 ms%6</p>")
                    .arg(tr("Predicted:"), html(formatMillis(p.micros[id.index])), tr("from"))
                    .arg(p.start[id.index] / 1000, 0, 'f', 3)
                    .arg(p.end[id.index] / 1000, 0, 'f', 3)
                    .arg(p.measured[id.index] ? tr(" (from earlier runs)")
                                              : tr(" (roofline estimate)"));
    }
    text += QStringLiteral("<p><b>%1</b><br>").arg(tr("Inputs:"));
    for (const ValueRef input : node.inputs)
        text += html(graph.valueName(input) + "  " +
                     describeValueType(graph, input, &m_document->ranSizes())) +
                QStringLiteral("<br>");
    text += QStringLiteral("</p><p><b>%1</b><br>").arg(tr("Outputs:"));
    for (std::uint32_t k = 0; k < node.outputs.size(); ++k)
        text += html(describeValueType(graph, ValueRef{id, k}, &m_document->ranSizes())) +
                QStringLiteral("<br>");
    text += QStringLiteral("</p>");
    if (!node.subgraphs.empty()) {
        text += QStringLiteral("<p><b>%1</b><br>")
                    .arg(tr("Bodies (collapsed; they run on this "
                            "node's device):"));
        for (const std::string& line : describeBodies(node))
            text += html(line) + QStringLiteral("<br>");
        text += QStringLiteral("</p>");
    }
    if (!node.attrs.empty()) {
        text += QStringLiteral("<p><b>%1</b><br>").arg(tr("Attributes:"));
        for (const auto& [name, value] : node.attrs.entries())
            text += html(name + " = " + formatAttrRelay(value)) + QStringLiteral("<br>");
        text += QStringLiteral("</p>");
    }
    setHtml(text);
}

} // namespace placer::views
