#include "views/GraphScene.h"

#include "views/CopyBadgeItem.h"
#include "views/EdgeItem.h"
#include "views/NodeItem.h"

#include <QGraphicsView>
#include <QSignalBlocker>

#include <algorithm>
#include <cmath>

namespace placer::views {

namespace {

/// Edges skipping more levels than this are drawn after the layout (in graphs above kSmallGraph).
constexpr int kLongEdgeLevels = 6;
constexpr std::size_t kSmallGraph = 150;

} // namespace

GraphScene::GraphScene(PlacementDocument* document, QObject* parent)
    : QGraphicsScene(parent), m_document(document) {
    connect(document, &PlacementDocument::planChanged, this, &GraphScene::refreshPlan);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::highlightSelection);
    setBackgroundBrush(QColor(0xfb, 0xfb, 0xfb));
}

LayoutRequest GraphScene::layoutRequest() {
    clearItems(); // the items belong to the previous graph
    const Graph& graph = m_document->graph();
    LayoutRequest request;
    m_drawn.clear();
    m_edgeValues.clear();
    m_layoutIndex.assign(graph.size(), -1);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.isConstant())
            continue;
        m_layoutIndex[i] = static_cast<int>(m_drawn.size());
        m_drawn.push_back(NodeId(i));
        request.nodeSizes.push_back(NodeItem::sizeFor(QString::fromStdString(node.op->name),
                                                      QString::fromStdString(node.name)));
    }
    // Depth = longest path from an input. Edges that skip many levels (DenseNet's concats,
    // residual and attention skips) dominate dot's time; they are left out of the layout and
    // drawn afterwards, unless they are all a node has.
    std::vector<int> depth(m_drawn.size(), 0);
    for (std::size_t i = 0; i < m_drawn.size(); ++i) {
        for (const ValueRef input : graph.node(m_drawn[i]).inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from >= 0)
                depth[i] = std::max(depth[i], depth[static_cast<std::size_t>(from)] + 1);
        }
    }
    m_laidOutEdge.clear();
    for (NodeId id : m_drawn) {
        const Node& node = graph.node(id);
        const int to = m_layoutIndex[id.index];
        int shortInputs = 0;
        for (const ValueRef input : node.inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from >= 0 &&
                (depth[static_cast<std::size_t>(from)] == 0 ||
                 depth[static_cast<std::size_t>(to)] - depth[static_cast<std::size_t>(from)] <=
                     kLongEdgeLevels))
                ++shortInputs;
        }
        for (const ValueRef input : node.inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from < 0)
                continue;
            // Edges out of sources (inputs, ops on weights only) stay: they place the source
            // next to its consumer.
            const bool isLong =
                depth[static_cast<std::size_t>(from)] > 0 &&
                depth[static_cast<std::size_t>(to)] - depth[static_cast<std::size_t>(from)] >
                    kLongEdgeLevels;
            m_edgeValues.emplace_back(input, id);
            if (isLong && shortInputs > 0 && m_drawn.size() > kSmallGraph) {
                m_laidOutEdge.push_back(-1);
                continue;
            }
            m_laidOutEdge.push_back(static_cast<int>(request.edges.size()));
            request.edges.emplace_back(from, to);
        }
    }
    request.boundEffort = m_drawn.size() > 400;
    return request;
}

GraphScene::~GraphScene() {
    // Items die before the scene's members: no selection signals while they go.
    const QSignalBlocker blocker(this);
    clear();
}

void GraphScene::clearItems() {
    m_nodeItems.clear();
    m_edges.clear();
    m_badges.clear();
    {
        const QSignalBlocker blocker(this);
        clear();
    }
    emit selectionChanged();
}

void GraphScene::applyLayout(const LayoutResult& layout) {
    if (!layout.error.isEmpty() || layout.nodeCenters.size() != m_drawn.size() ||
        m_laidOutEdge.size() != m_edgeValues.size()) {
        applySimpleLayout();
        return;
    }
    // Edges left out of the layout: a curve from the producer's bottom to the consumer's top,
    // bowed sideways so it does not run through the nodes between them.
    std::vector<QPainterPath> paths;
    for (std::size_t e = 0; e < m_edgeValues.size(); ++e) {
        const int laidOut = m_laidOutEdge[e];
        if (laidOut >= 0 && static_cast<std::size_t>(laidOut) < layout.edgePaths.size()) {
            paths.push_back(layout.edgePaths[static_cast<std::size_t>(laidOut)]);
            continue;
        }
        const QPointF from = layout.nodeCenters[static_cast<std::size_t>(
            m_layoutIndex[m_edgeValues[e].first.node.index])];
        const QPointF to =
            layout
                .nodeCenters[static_cast<std::size_t>(m_layoutIndex[m_edgeValues[e].second.index])];
        const QPointF start = from + QPointF(0, 18), end = to - QPointF(0, 18);
        const qreal bow = 90 + 0.08 * std::abs(end.y() - start.y());
        const qreal side = (e % 2 == 0) ? 1 : -1;
        QPainterPath path(start);
        path.cubicTo(start + QPointF(side * bow, 40), end + QPointF(side * bow, -40), end);
        paths.push_back(path);
    }
    if (!m_nodeItems.empty() && m_edges.size() == paths.size()) {
        // The quick layout's items are already there: move them, do not rebuild.
        for (std::size_t i = 0; i < m_drawn.size(); ++i)
            m_nodeItems[m_drawn[i].index]->setPos(layout.nodeCenters[i]);
        for (std::size_t e = 0; e < paths.size(); ++e)
            m_edges[e]->setPath(paths[e]);
        setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
        refreshPlan();
        return;
    }
    buildItems(layout.nodeCenters, paths);
}

void GraphScene::applySimpleLayout() {
    // Rank = longest path from a source; nodes of a rank side by side.
    const Graph& graph = m_document->graph();
    std::vector<int> rank(m_drawn.size(), 0);
    for (std::size_t e = 0; e < m_edgeValues.size(); ++e) {
        const int from = m_layoutIndex[m_edgeValues[e].first.node.index];
        const int to = m_layoutIndex[m_edgeValues[e].second.index];
        rank[static_cast<std::size_t>(to)] =
            std::max(rank[static_cast<std::size_t>(to)], rank[static_cast<std::size_t>(from)] + 1);
    }
    std::vector<int> column(m_drawn.size(), 0);
    std::vector<int> used(m_drawn.size() + 1, 0);
    for (std::size_t i = 0; i < m_drawn.size(); ++i)
        column[i] = used[static_cast<std::size_t>(rank[i])]++;
    std::vector<QPointF> centers;
    for (std::size_t i = 0; i < m_drawn.size(); ++i)
        centers.emplace_back(column[i] * 200.0, rank[i] * 80.0);
    std::vector<QPainterPath> paths;
    for (const auto& [value, consumer] : m_edgeValues) {
        QPainterPath path(centers[static_cast<std::size_t>(m_layoutIndex[value.node.index])] +
                          QPointF(0, 18));
        path.lineTo(centers[static_cast<std::size_t>(m_layoutIndex[consumer.index])] -
                    QPointF(0, 18));
        paths.push_back(path);
    }
    (void)graph;
    buildItems(centers, paths);
}

void GraphScene::buildItems(const std::vector<QPointF>& centers,
                            const std::vector<QPainterPath>& paths) {
    clearItems();
    const Graph& graph = m_document->graph();
    m_nodeItems.assign(graph.size(), nullptr);
    for (std::size_t i = 0; i < m_drawn.size(); ++i) {
        const Node& node = graph.node(m_drawn[i]);
        const QString op = QString::fromStdString(node.op->name);
        const QString name = QString::fromStdString(node.name);
        auto* item = new NodeItem(m_drawn[i], op, name, NodeItem::sizeFor(op, name));
        item->setPos(centers[i]);
        QString tip = op + QStringLiteral(" ") + name;
        for (const TensorType& output : node.outputs)
            tip += QStringLiteral("\n→ ") + QString::fromStdString(output.toShortString());
        item->setToolTip(tip);
        addItem(item);
        m_nodeItems[m_drawn[i].index] = item;
    }
    for (std::size_t e = 0; e < m_edgeValues.size(); ++e) {
        const auto& [value, consumer] = m_edgeValues[e];
        const TensorType& type = graph.type(value);
        const QString tip =
            QString::fromStdString(graph.valueName(value) + ": " + type.toShortString() + " (" +
                                   formatBytes(type.bytes()) + ")");
        auto* edge = new EdgeItem(value, consumer, paths[e], type.bytes(), tip);
        addItem(edge);
        m_edges.push_back(edge);
    }
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
    refreshPlan();
}

NodeItem* GraphScene::nodeItem(NodeId node) const {
    return node.index < m_nodeItems.size() ? m_nodeItems[node.index] : nullptr;
}

std::vector<NodeId> GraphScene::selectedNodes() const {
    std::vector<NodeId> nodes;
    for (QGraphicsItem* item : selectedItems()) {
        if (auto* node = qgraphicsitem_cast<NodeItem*>(item))
            nodes.push_back(node->node());
    }
    std::sort(nodes.begin(), nodes.end(), [](NodeId a, NodeId b) { return a.index < b.index; });
    return nodes;
}

void GraphScene::refreshPlan() {
    if (m_nodeItems.empty())
        return;
    const Graph& graph = m_document->graph();
    const Plan& plan = m_document->plan();
    std::vector<bool> conflicted(graph.size(), false);
    for (const Conflict& conflict : plan.conflicts) {
        for (NodeId node : conflict.nodes)
            if (node.index < conflicted.size())
                conflicted[node.index] = true;
    }
    std::vector<bool> replicated(graph.size(), false);
    for (const Replica& replica : plan.replicas)
        replicated[replica.value.node.index] = true;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        NodeItem* item = m_nodeItems[i];
        if (!item)
            continue;
        const Node& node = graph.nodes()[i];
        bool readsReplica = false;
        for (const ValueRef input : node.inputs)
            readsReplica = readsReplica || (replicated[input.node.index] &&
                                            plan.devices[input.node.index] != plan.devices[i]);
        const int pin = node.pin.kind == PinKind::None    ? 0
                        : node.pin.kind == PinKind::Plain ? 1
                                                          : 2;
        item->setPlacement(m_document->deviceColor(plan.devices[i]), pin, conflicted[i],
                           readsReplica);
    }
    for (CopyBadgeItem* badge : m_badges) {
        removeItem(badge);
        delete badge;
    }
    m_badges.clear();
    const DeviceSet& devices = m_document->devices();
    for (std::size_t c = 0; c < plan.copies.size(); ++c) {
        const CopyPlan& copy = plan.copies[c];
        if (copy.isExplicit)
            continue;
        const QString text =
            QString::fromStdString(devices[copy.from].name + " → " + devices[copy.to].name + ", " +
                                   formatBytes(copy.bytes));
        auto place = [&](NodeId consumer, QPointF at) {
            auto* badge = new CopyBadgeItem(static_cast<int>(c), consumer, text,
                                            m_document->deviceColor(copy.from),
                                            m_document->deviceColor(copy.to));
            badge->setPos(at);
            addItem(badge);
            m_badges.push_back(badge);
        };
        bool placed = false;
        for (NodeId consumer : copy.consumers) {
            for (EdgeItem* edge : m_edges) {
                if (edge->value() == copy.value && edge->consumer() == consumer) {
                    place(consumer, edge->path().pointAtPercent(0.5));
                    placed = true;
                }
            }
            if (!placed && nodeItem(consumer)) {
                NodeItem* item = nodeItem(consumer);
                place(consumer, item->pos() - QPointF(0, item->boundingRect().height() / 2 + 10));
                placed = true;
            }
        }
        if (!placed && nodeItem(copy.value.node)) {
            NodeItem* item = nodeItem(copy.value.node);
            place(copy.value.node,
                  item->pos() + QPointF(0, item->boundingRect().height() / 2 + 12));
        }
    }
}

void GraphScene::highlightSelection() {
    std::vector<bool> selected(m_nodeItems.size(), false);
    for (NodeId node : selectedNodes())
        selected[node.index] = true;
    std::vector<bool> neighbour(m_nodeItems.size(), false);
    for (EdgeItem* edge : m_edges) {
        const bool touches = selected[edge->value().node.index] || selected[edge->consumer().index];
        edge->setHighlighted(touches);
        if (touches) {
            neighbour[edge->value().node.index] = true;
            neighbour[edge->consumer().index] = true;
        }
    }
    for (std::size_t i = 0; i < m_nodeItems.size(); ++i) {
        if (m_nodeItems[i])
            m_nodeItems[i]->setHighlighted(neighbour[i] && !selected[i]);
    }
}

void GraphScene::setNodeTimes(const std::vector<double>& millisPerNode) {
    double total = 0, most = 0;
    for (double t : millisPerNode) {
        total += std::max(0.0, t);
        most = std::max(most, t);
    }
    for (std::size_t i = 0; i < m_nodeItems.size(); ++i) {
        if (!m_nodeItems[i])
            continue;
        const double t = i < millisPerNode.size() ? millisPerNode[i] : -1;
        m_nodeItems[i]->setTiming(t, most > 0 && t > 0 ? t / most : 0);
    }
    (void)total;
}

void GraphScene::setCopyTimes(const std::vector<double>& millisPerCopy) {
    for (CopyBadgeItem* badge : m_badges) {
        const auto c = static_cast<std::size_t>(badge->copyIndex());
        QString time;
        if (c < millisPerCopy.size() && millisPerCopy[c] >= 0)
            time = millisPerCopy[c] < 1
                       ? QString::number(millisPerCopy[c] * 1000, 'f', 1) + QStringLiteral(" µs")
                       : QString::number(millisPerCopy[c], 'f', 2) + QStringLiteral(" ms");
        badge->setTiming(time);
    }
}

} // namespace placer::views
