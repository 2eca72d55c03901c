// The canvas scene: items from the document and a layout, restyled on every plan.
#include "views/GraphScene.h"

#include "views/CopyBadgeItem.h"
#include "views/EdgeItem.h"
#include "views/FrameItem.h"
#include "views/GroupItem.h"
#include "views/NodeItem.h"

#include <QCoreApplication>
#include <QFontMetricsF>
#include <QGraphicsPathItem>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsView>
#include <QPainter>
#include <QPen>
#include <QSignalBlocker>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace placer::views {

namespace {

/// Edges skipping more levels than this are drawn after the layout (in graphs above kSmallGraph).
constexpr int kLongEdgeLevels = 6;
constexpr std::size_t kSmallGraph = 150;

/// A parent that draws nothing, for the items re-made on every plan (copy badges, split frames):
/// adding and removing top-level items costs Qt a pass over every top-level item (their sibling
/// indices), 150,000 of them at 50,000 nodes; a child costs a pass over its siblings only.
class LayerItem : public QGraphicsItem {
public:
    explicit LayerItem(qreal z) {
        setFlag(ItemHasNoContents);
        setZValue(z);
    }
    QRectF boundingRect() const override { return {}; }
    void paint(QPainter*, const QStyleOptionGraphicsItem*, QWidget*) override {}
};

} // namespace

GraphScene::GraphScene(PlacementDocument* document, QObject* parent)
    : QGraphicsScene(parent), m_document(document) {
    connect(document, &PlacementDocument::planChanged, this, &GraphScene::refreshPlan);
    connect(this, &QGraphicsScene::selectionChanged, this, &GraphScene::highlightSelection);
    setBackgroundBrush(QColor(0xfb, 0xfb, 0xfb));
    makeLayers();
}

void GraphScene::makeLayers() {
    // Badges above nodes and edges, split frames under them, their title tabs above everything.
    m_badgeLayer = new LayerItem(3);
    m_frameLayer = new LayerItem(0);
    m_tabLayer = new LayerItem(4);
    for (QGraphicsItem* layer : {m_badgeLayer, m_frameLayer, m_tabLayer})
        addItem(layer);
}

const ScopeTree& GraphScene::scopes() const {
    if (!m_scopes.isFor(m_document->graph()))
        m_scopes = ScopeTree(m_document->graph());
    return m_scopes;
}

void GraphScene::setCollapsed(std::set<std::string> scopes) {
    m_collapsed = std::move(scopes);
}

void GraphScene::setOpened(std::set<std::string> scopes) {
    m_opened = std::move(scopes);
}

std::vector<NodeId> GraphScene::frameMembers(int frame) const {
    return frame >= 0 && static_cast<std::size_t>(frame) < m_frameMembers.size()
               ? m_frameMembers[static_cast<std::size_t>(frame)]
               : std::vector<NodeId>{};
}

std::vector<NodeId> GraphScene::groupMembers(int unit) const {
    return unit >= 0 && static_cast<std::size_t>(unit) < m_groupMembers.size()
               ? m_groupMembers[static_cast<std::size_t>(unit)]
               : std::vector<NodeId>{};
}

LayoutRequest GraphScene::layoutRequest() {
    clearItems(); // the items belong to the previous graph
    const Graph& graph = m_document->graph();
    LayoutRequest request;
    m_drawn.clear();
    m_edgeValues.clear();
    m_groupScope.clear();
    m_groupMembers.clear();
    m_layoutIndex.assign(graph.size(), -1);
    // Units: nodes outside collapsed scopes, and one unit per collapsed scope (the outermost).
    std::map<std::string, int> groupUnit;
    // The outermost collapsed scope of a node, and how many drawn nodes each holds.
    const ScopeTree& tree = scopes();
    auto collapsedScope = [this, &tree](NodeId node) {
        for (const std::string& candidate : tree.of(node)) {
            if (m_collapsed.count(candidate))
                return candidate;
        }
        return std::string();
    };
    std::map<std::string, int> memberCount;
    if (!m_collapsed.empty()) {
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            if (!graph.nodes()[i].isConstant())
                ++memberCount[collapsedScope(NodeId(i))];
        }
    }
    // Constants are not drawn, nor is what is computed from constants only (the Identity or
    // Reshape of a weight): they are weights, shown in the properties of the nodes using them.
    std::vector<bool> hidden(graph.size(), false);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        bool fromConstants = !node.inputs.empty() && !node.isDeviceCopy();
        for (const ValueRef input : node.inputs)
            fromConstants = fromConstants && hidden[input.node.index];
        hidden[i] = node.isConstant() || fromConstants;
        if (hidden[i])
            continue;
        std::string scope = collapsedScope(NodeId(i));
        if (!scope.empty() && memberCount[scope] < 2)
            scope.clear(); // a group of one is just the node
        if (!scope.empty()) {
            auto [it, inserted] = groupUnit.emplace(scope, static_cast<int>(m_drawn.size()));
            if (inserted) {
                m_drawn.push_back(NodeId(i));
                m_groupScope.push_back(scope);
                m_groupMembers.emplace_back();
                request.nodeSizes.emplace_back(); // sized below, once the members are known
            }
            m_layoutIndex[i] = it->second;
            m_groupMembers[static_cast<std::size_t>(it->second)].push_back(NodeId(i));
            continue;
        }
        m_layoutIndex[i] = static_cast<int>(m_drawn.size());
        m_drawn.push_back(NodeId(i));
        m_groupScope.emplace_back();
        m_groupMembers.emplace_back();
        request.nodeSizes.push_back(NodeItem::sizeFor(QString::fromStdString(node.op->name),
                                                      QString::fromStdString(node.name)));
    }
    for (std::size_t u = 0; u < m_drawn.size(); ++u) {
        if (!m_groupScope[u].empty())
            request.nodeSizes[u] = GroupItem::sizeFor(QString::fromStdString(m_groupScope[u]),
                                                      static_cast<int>(m_groupMembers[u].size()));
    }
    // Open scopes: a frame each around what is drawn inside it (the scopes a unit is in, outside
    // the group it is drawn as, that were opened from their box).
    m_frameScope.clear();
    m_frameMembers.clear();
    if (!m_opened.empty()) {
        std::map<std::string, int> frameOf;
        request.nodeFrame.assign(m_drawn.size(), -1);
        for (std::size_t u = 0; u < m_drawn.size(); ++u) {
            int parent = -1;
            for (const std::string& scope : tree.of(m_drawn[u])) {
                if (scope == m_groupScope[u] || m_collapsed.count(scope))
                    break; // the unit's own group, or a group of one drawn as its node
                if (!m_opened.count(scope))
                    continue;
                auto [it, inserted] = frameOf.emplace(scope, static_cast<int>(m_frameScope.size()));
                if (inserted) {
                    m_frameScope.push_back(scope);
                    m_frameMembers.emplace_back();
                    request.frameParent.push_back(parent);
                }
                auto& members = m_frameMembers[static_cast<std::size_t>(it->second)];
                if (m_groupScope[u].empty())
                    members.push_back(m_drawn[u]);
                else
                    members.insert(members.end(), m_groupMembers[u].begin(),
                                   m_groupMembers[u].end());
                parent = it->second;
            }
            request.nodeFrame[u] = parent;
        }
        for (std::size_t f = 0; f < m_frameScope.size(); ++f)
            request.frameTitles.push_back(
                FrameItem::titleSize(QString::fromStdString(m_frameScope[f]),
                                     static_cast<int>(m_frameMembers[f].size())));
        if (m_frameScope.empty())
            request.nodeFrame.clear();
    }
    // Depth = longest path from an input. Edges that skip many levels (DenseNet's concats,
    // residual and attention skips) dominate dot's time; they are left out of the layout and
    // drawn afterwards, unless they are all a node has.
    std::vector<int> depth(m_drawn.size(), 0);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const int to = m_layoutIndex[i];
        if (to < 0)
            continue;
        for (const ValueRef input : graph.nodes()[i].inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from >= 0 && from != to)
                depth[static_cast<std::size_t>(to)] = std::max(
                    depth[static_cast<std::size_t>(to)], depth[static_cast<std::size_t>(from)] + 1);
        }
    }
    m_laidOutEdge.clear();
    std::set<std::tuple<int, int, std::uint64_t>> seen; // (from, to, value): one edge each
    auto isLong = [&](int from, int to) {
        return depth[static_cast<std::size_t>(from)] > 0 &&
               depth[static_cast<std::size_t>(to)] - depth[static_cast<std::size_t>(from)] >
                   kLongEdgeLevels;
    };
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const int to = m_layoutIndex[i];
        if (to < 0)
            continue;
        const Node& node = graph.nodes()[i];
        int shortInputs = 0;
        for (const ValueRef input : node.inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from >= 0 && from != to && !isLong(from, to))
                ++shortInputs;
        }
        for (const ValueRef input : node.inputs) {
            const int from = m_layoutIndex[input.node.index];
            if (from < 0 || from == to)
                continue;
            const std::uint64_t value = (std::uint64_t{input.node.index} << 16) | input.output;
            if (!seen.emplace(from, to, value).second)
                continue;
            m_edgeValues.emplace_back(input, NodeId(i));
            // Edges out of sources (inputs, ops on weights only) stay: they place the source
            // next to its consumer.
            if (isLong(from, to) && shortInputs > 0 && m_drawn.size() > kSmallGraph) {
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
    m_unitBoxes.clear();
    m_unitColours.clear();
    m_edgesOfValue.clear();
    m_unitItems.clear();
    m_edges.clear();
    m_badges.clear();
    m_copyBadges.clear();
    m_splitFrames.clear();
    m_splitTabs.clear();
    m_frameItems.clear();
    {
        const QSignalBlocker blocker(this);
        clear();
    }
    makeLayers();
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
    if (m_unitItems.size() == m_drawn.size() && m_edges.size() == paths.size() &&
        m_frameScope.empty() && m_frameItems.empty()) {
        // The quick layout's items are already there: move them, do not rebuild.
        for (std::size_t i = 0; i < m_drawn.size(); ++i) {
            m_unitItems[i]->setPos(layout.nodeCenters[i]);
            m_unitBoxes[i].moveCenter(layout.nodeCenters[i]);
        }
        for (std::size_t e = 0; e < paths.size(); ++e)
            m_edges[e]->setRoute(paths[e]);
        setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
        refreshPlan();
        return;
    }
    buildItems(layout.nodeCenters, paths, layout.frameRects);
}

void GraphScene::applySimpleLayout() {
    // Rank = longest path from a source; nodes of a rank side by side.
    std::vector<int> rank(m_drawn.size(), 0);
    for (std::size_t e = 0; e < m_edgeValues.size(); ++e) {
        const int from = m_layoutIndex[m_edgeValues[e].first.node.index];
        const int to = m_layoutIndex[m_edgeValues[e].second.index];
        rank[static_cast<std::size_t>(to)] =
            std::max(rank[static_cast<std::size_t>(to)], rank[static_cast<std::size_t>(from)] + 1);
    }
    std::vector<int> column(m_drawn.size(), 0);
    std::vector<int> used(static_cast<std::size_t>(*std::max_element(rank.begin(), rank.end())) + 1,
                          0);
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
    buildItems(centers, paths);
}

void GraphScene::buildItems(const std::vector<QPointF>& centers,
                            const std::vector<QPainterPath>& paths,
                            const std::vector<QRectF>& frames) {
    clearItems();
    for (std::size_t f = 0; f < frames.size() && f < m_frameScope.size(); ++f) {
        auto* frame = new FrameItem(static_cast<int>(f), QString::fromStdString(m_frameScope[f]),
                                    static_cast<int>(m_frameMembers[f].size()), frames[f]);
        addItem(frame);
        m_frameItems.push_back(frame);
    }
    const Graph& graph = m_document->graph();
    m_nodeItems.assign(graph.size(), nullptr);
    m_unitItems.assign(m_drawn.size(), nullptr);
    m_groupUnits.clear();
    m_nodeLooks.clear(); // new items: every look is set again
    m_unitBoxes.assign(m_drawn.size(), QRectF());
    m_unitColours.assign(m_drawn.size(), QColor(0xc0, 0xc0, 0xc0).rgba());
    for (std::size_t i = 0; i < m_drawn.size(); ++i) {
        if (!m_groupScope[i].empty()) {
            const QString scope = QString::fromStdString(m_groupScope[i]);
            const int members = static_cast<int>(m_groupMembers[i].size());
            auto* group = new GroupItem(static_cast<int>(i), scope, members,
                                        GroupItem::sizeFor(scope, members));
            group->setPos(centers[i]);
            m_unitBoxes[i] = QRectF(QPointF(), group->boxSize());
            m_unitBoxes[i].moveCenter(centers[i]);
            addItem(group);
            m_unitItems[i] = group;
            m_groupUnits.push_back(i);
            continue;
        }
        const Node& node = graph.node(m_drawn[i]);
        const QString op = QString::fromStdString(node.op->name);
        const QString name = QString::fromStdString(node.name);
        auto* item = new NodeItem(m_drawn[i], op, name, NodeItem::sizeFor(op, name));
        m_unitItems[i] = item;
        item->setPos(centers[i]);
        m_unitBoxes[i] = QRectF(QPointF(), item->boxSize());
        m_unitBoxes[i].moveCenter(centers[i]);
        QString tip = op + QStringLiteral(" ") + name;
        for (std::uint32_t k = 0; k < node.outputs.size(); ++k)
            tip += QStringLiteral("\n→ ") +
                   QString::fromStdString(
                       describeValueType(graph, ValueRef{m_drawn[i], k}, &m_document->ranSizes()));
        if (!node.subgraphs.empty()) {
            // Control flow is one op on one device: its bodies are drawn collapsed.
            item->setCollapsedBody(static_cast<int>(bodyNodeCount(node)));
            tip += QStringLiteral("\n") + tr("Runs as one op on its device; body collapsed:");
            for (const std::string& line : describeBodies(node))
                tip += QStringLiteral("\n  ") + QString::fromStdString(line);
        }
        item->setToolTip(tip);
        addItem(item);
        m_nodeItems[m_drawn[i].index] = item;
    }
    m_edgesOfValue.clear();
    for (std::size_t e = 0; e < m_edgeValues.size(); ++e) {
        const auto& [value, consumer] = m_edgeValues[e];
        m_edgesOfValue[valueKey(value)].push_back(static_cast<std::uint32_t>(e));
        const TensorType& type = graph.type(value);
        const QString tip =
            QString::fromStdString(graph.valueName(value) + ": " +
                                   describeValueType(graph, value, &m_document->ranSizes()));
        auto* edge = new EdgeItem(value, consumer, paths[e], type.bytes(), tip);
        addItem(edge);
        m_edges.push_back(edge);
    }
    setSceneRect(itemsBoundingRect().adjusted(-40, -40, 40, 40));
    refreshPlan();
    // A run's overlays belong to the plan, not to the layout: the new items show them too.
    if (m_timesShown) {
        m_timesShown = false;
        setNodeTimes(std::vector<double>(m_nodeMillis));
    }
    if (!m_copyMillis.empty())
        setCopyTimes(std::vector<double>(m_copyMillis));
    if (m_fusionShown) {
        m_fusionShown = false;
        setFusion(std::vector<NodeId>(m_fusedInto));
    }
}

void GraphScene::selectNodes(const std::vector<NodeId>& nodes) {
    for (const NodeId node : nodes) {
        if (NodeItem* item = nodeItem(node)) {
            item->setSelected(true);
        } else if (node.index < m_layoutIndex.size() && m_layoutIndex[node.index] >= 0) {
            const auto unit = static_cast<std::size_t>(m_layoutIndex[node.index]);
            if (unit < m_unitItems.size() && m_unitItems[unit])
                m_unitItems[unit]->setSelected(true);
        }
    }
}

NodeItem* GraphScene::nodeItem(NodeId node) const {
    return node.index < m_nodeItems.size() ? m_nodeItems[node.index] : nullptr;
}

std::vector<NodeId> GraphScene::selectedNodes() const {
    std::vector<NodeId> nodes;
    for (QGraphicsItem* item : selectedItems()) {
        if (auto* node = qgraphicsitem_cast<NodeItem*>(item))
            nodes.push_back(node->node());
        if (auto* group = qgraphicsitem_cast<GroupItem*>(item)) {
            const auto members = groupMembers(group->unit());
            nodes.insert(nodes.end(), members.begin(), members.end());
        }
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
    // Each node's look as a few bits: a re-plan of a large graph restyles only the nodes whose
    // look changed, unless the devices' colours did.
    std::vector<QColor> colours;
    for (int d = 0; d < m_document->devices().size(); ++d)
        colours.push_back(m_document->deviceColor(DeviceId(d)));
    const QColor unplaced = m_document->deviceColor(DeviceId());
    const bool recolour = colours != m_lastColours;
    m_lastColours = colours;
    m_nodeLooks.resize(graph.size(), 0);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        NodeItem* item = m_nodeItems[i];
        if (!item)
            continue;
        const Node& node = graph.nodes()[i];
        bool readsReplica = false;
        if (!plan.replicas.empty())
            for (const ValueRef input : node.inputs)
                readsReplica = readsReplica || (replicated[input.node.index] &&
                                                plan.devices[input.node.index] != plan.devices[i]);
        const int pin = node.pin.kind == PinKind::None    ? 0
                        : node.pin.kind == PinKind::Plain ? 1
                                                          : 2;
        const SplitRegion* split = plan.splits.empty() ? nullptr : plan.splitOf(NodeId(i));
        const std::uint64_t look =
            static_cast<std::uint64_t>(static_cast<std::uint32_t>(plan.devices[i].index + 1)) |
            std::uint64_t{static_cast<std::uint32_t>(pin)} << 32 |
            std::uint64_t{conflicted[i]} << 34 | std::uint64_t{readsReplica} << 35 |
            std::uint64_t{split != nullptr} << 36 | std::uint64_t{1} << 37;
        const bool hadShards = (m_nodeLooks[i] >> 36) & 1;
        if (!recolour && look == m_nodeLooks[i] && !split)
            continue;
        m_nodeLooks[i] = look;
        const DeviceId device = plan.devices[i];
        const QColor& colour = device.valid() && device.index < static_cast<int>(colours.size())
                                   ? colours[static_cast<std::size_t>(device.index)]
                                   : unplaced;
        m_unitColours[static_cast<std::size_t>(m_layoutIndex[i])] = colour.rgba();
        item->setPlacement(colour, pin, conflicted[i], readsReplica);
        if (!split && !hadShards)
            continue;
        std::vector<std::pair<QColor, qint64>> shards;
        if (split) {
            for (const Shard& shard : split->shards)
                shards.emplace_back(m_document->deviceColor(shard.device), shard.rows());
        }
        item->setShards(std::move(shards));
    }
    for (const std::size_t u : m_groupUnits) {
        auto* group = qgraphicsitem_cast<GroupItem*>(m_unitItems[u]);
        if (!group)
            continue;
        std::map<std::uint32_t, int> counts;
        int pins = 0;
        bool conflict = false;
        for (NodeId member : m_groupMembers[u]) {
            // Each member weighs 100 on its device; a split member shares that among its
            // devices by their rows of the batch.
            constexpr int kWeight = 100;
            if (const SplitRegion* split = plan.splitOf(member)) {
                for (const Shard& shard : split->shards)
                    counts[static_cast<std::uint32_t>(shard.device.index)] +=
                        static_cast<int>(kWeight * shard.rows() / split->batch);
            } else {
                counts[plan.devices[member.index].index] += kWeight;
            }
            pins += graph.node(member).pin.active() ? 1 : 0;
            conflict = conflict || conflicted[member.index];
        }
        std::vector<std::pair<QColor, int>> shares;
        int most = -1;
        for (const auto& [device, count] : counts) {
            shares.emplace_back(m_document->deviceColor(DeviceId(device)), count);
            if (count > most) { // the overview shows a group in its largest share's colour
                most = count;
                m_unitColours[u] = shares.back().first.rgba();
            }
        }
        group->setPlacement(std::move(shares), pins, conflict);
    }
    // Badges of copies the last plan had too (the same value, devices, reader, text and place)
    // stay: adding items to the scene costs more than the rest of a re-plan's restyle.
    std::map<BadgeKey, CopyBadgeItem*> previous;
    previous.swap(m_copyBadges);
    for (CopyBadgeItem* badge : m_badges)
        if (badge->copyIndex() < 0)
            delete badge; // a split's: drawSplits makes them again
    m_badges.clear();
    const DeviceSet& devices = m_document->devices();
    for (std::size_t c = 0; c < plan.copies.size(); ++c) {
        const CopyPlan& copy = plan.copies[c];
        if (copy.isExplicit)
            continue;
        const QString text =
            QString::fromStdString(devices[copy.from].name + " → " + devices[copy.to].name + ", ") +
            (!copy.symbolicSize.empty() ? QString::fromStdString(copy.symbolicSize)
             : copy.sizeAtRun           ? tr("size at run time")
                                        : QString::fromStdString(formatBytes(copy.bytes)));
        auto place = [&](NodeId consumer, QPointF at) {
            const QColor from = m_document->deviceColor(copy.from);
            const QColor to = m_document->deviceColor(copy.to);
            const BadgeKey key(text, from.rgba(), to.rgba(), consumer.index, at.x(), at.y());
            CopyBadgeItem* badge = nullptr;
            if (auto it = previous.find(key); it != previous.end()) {
                badge = it->second;
                previous.erase(it);
                badge->setCopyIndex(static_cast<int>(c));
                badge->setTiming(QString()); // a run's times belong to the plan it ran
            } else {
                badge = new CopyBadgeItem(static_cast<int>(c), consumer, text, from, to);
                badge->setPos(at);
                badge->setParentItem(m_badgeLayer);
            }
            m_copyBadges.emplace(key, badge);
            m_badges.push_back(badge);
        };
        bool placed = false;
        const auto drawnEdges = m_edgesOfValue.find(valueKey(copy.value));
        for (NodeId consumer : copy.consumers) {
            if (drawnEdges != m_edgesOfValue.end()) {
                for (const std::uint32_t e : drawnEdges->second) {
                    EdgeItem* edge = m_edges[e];
                    if (m_layoutIndex[edge->consumer().index] == m_layoutIndex[consumer.index]) {
                        place(consumer, edge->midpoint());
                        placed = true;
                    }
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
    for (const auto& [key, badge] : previous) // copies the new plan does not have
        delete badge;
    drawSplits();
    drawCasts();
    emit overviewChanged();
}

void GraphScene::paintOverview(QImage* image, const QTransform& toImage) const {
    if (m_unitBoxes.empty() || image->isNull())
        return;
    // Edges under the boxes, while they are few enough to be lines rather than a grey wash.
    constexpr std::size_t kMostEdges = 20000;
    if (m_edgeValues.size() <= kMostEdges) {
        std::vector<QLineF> lines;
        lines.reserve(m_edgeValues.size());
        for (const auto& [value, consumer] : m_edgeValues) {
            const int from = m_layoutIndex[value.node.index];
            const int to = m_layoutIndex[consumer.index];
            if (from >= 0 && to >= 0)
                lines.emplace_back(
                    toImage.map(m_unitBoxes[static_cast<std::size_t>(from)].center()),
                    toImage.map(m_unitBoxes[static_cast<std::size_t>(to)].center()));
        }
        QPainter painter(image);
        painter.resetTransform(); // lines are in pixels already, whatever the ratio
        painter.setPen(QPen(QColor(0x90, 0x90, 0x90, 160), 0));
        painter.drawLines(lines.data(), static_cast<int>(lines.size()));
    }
    // Boxes as pixels: at least one each, the device's colour, a darker rim when there is room.
    const int width = image->width(), height = image->height();
    auto* bits = reinterpret_cast<QRgb*>(image->bits());
    const qsizetype stride = image->bytesPerLine() / static_cast<qsizetype>(sizeof(QRgb));
    for (std::size_t u = 0; u < m_unitBoxes.size(); ++u) {
        const QRectF at = toImage.mapRect(m_unitBoxes[u]);
        const int x0 = std::clamp(static_cast<int>(std::floor(at.left())), 0, width - 1);
        const int y0 = std::clamp(static_cast<int>(std::floor(at.top())), 0, height - 1);
        const int x1 = std::clamp(static_cast<int>(std::ceil(at.right())) - 1, x0, width - 1);
        const int y1 = std::clamp(static_cast<int>(std::ceil(at.bottom())) - 1, y0, height - 1);
        const QRgb fill = m_unitColours[u];
        const bool rimmed = x1 - x0 >= 3 && y1 - y0 >= 3;
        const QRgb rim = rimmed ? QColor::fromRgba(fill).darker(160).rgba() : fill;
        for (int y = y0; y <= y1; ++y) {
            QRgb* row = bits + static_cast<qsizetype>(y) * stride;
            for (int x = x0; x <= x1; ++x)
                row[x] = rimmed && (x == x0 || x == x1 || y == y0 || y == y1) ? rim : fill;
        }
    }
}

void GraphScene::drawCasts() {
    // Each cast a precision policy needs, on the edge into its first reader (below a copy's
    // badge there), or by the node that makes a result given back in float32: "→ bfloat16 on b,
    // 64.0 KiB", in the colour of the device that converts.
    const Plan& plan = m_document->plan();
    const DeviceSet& devices = m_document->devices();
    for (const CastPlan& cast : plan.casts) {
        const QString text = QStringLiteral("→ %1 on %2, %3%4")
                                 .arg(QString::fromUtf8(dtypeName(cast.to).data()),
                                      QString::fromStdString(devices[cast.device].name),
                                      QString::fromStdString(formatBytes(cast.bytes)),
                                      cast.atLoad ? tr(", at load") : QString());
        const QColor colour = m_document->deviceColor(cast.device);
        QPointF at;
        NodeId reader = cast.consumers.empty() ? cast.value.node : cast.consumers.front();
        bool placed = false;
        if (!cast.consumers.empty()) {
            for (EdgeItem* edge : m_edges) {
                if (edge->value() == cast.value && edge->consumer() == reader) {
                    at = edge->midpoint();
                    placed = true;
                    break;
                }
            }
        }
        NodeItem* item = nodeItem(reader);
        if (!placed && !item)
            continue;
        if (!placed)
            at = item->pos() + QPointF(0, (cast.consumers.empty() ? 1 : -1) *
                                              (item->boundingRect().height() / 2 + 12));
        auto* badge = new CopyBadgeItem(-1, reader, text, colour, colour);
        // Beside a copy's badge on the same edge, not over it.
        for (const CopyBadgeItem* copy : m_badges) {
            if (copy->copyIndex() >= 0 && QLineF(copy->pos(), at).length() < 1)
                at += QPointF(
                    (copy->boundingRect().width() + badge->boundingRect().width()) / 2 + 4, 0);
        }
        QStringList readers;
        for (NodeId consumer : cast.consumers)
            readers << QString::fromStdString(m_document->graph().node(consumer).name);
        if (cast.toOutput)
            readers << tr("the graph's result");
        badge->setToolTip(
            tr("%1 converted from %2 to %3 on %4 for %5%6: %7 computes in %8")
                .arg(QString::fromStdString(m_document->graph().valueName(cast.value)),
                     QString::fromUtf8(dtypeName(cast.from).data()),
                     QString::fromUtf8(dtypeName(cast.to).data()),
                     QString::fromStdString(devices[cast.device].name), readers.join(", "),
                     cast.atLoad ? tr(", once as it is loaded") : QString(),
                     QString::fromStdString(
                         devices[cast.to == DType::Float32 ? plan.devices[cast.value.node.index]
                                                           : cast.device]
                             .name),
                     QString::fromUtf8(
                         dtypeName(cast.to == DType::Float32 ? cast.from : cast.to).data())));
        badge->setPos(at);
        badge->setParentItem(m_badgeLayer);
        m_badges.push_back(badge);
    }
}

void GraphScene::drawSplits() {
    for (auto* items : {&m_splitFrames, &m_splitTabs}) {
        for (QGraphicsItem* item : *items)
            delete item;
        items->clear();
    }
    const Graph& graph = m_document->graph();
    const Plan& plan = m_document->plan();
    const DeviceSet& devices = m_document->devices();
    for (const SplitRegion& region : plan.splits) {
        // Micro-batches cover the graph, each on the ops' own devices: nothing to frame.
        if (region.nodes.empty() || region.microBatched)
            continue;
        std::vector<bool> member(graph.size(), false);
        for (NodeId node : region.nodes)
            member[node.index] = true;
        // The frame: around the region's drawn nodes (or the groups holding them).
        QRectF bounds;
        for (NodeId node : region.nodes) {
            QGraphicsItem* item = nodeItem(node);
            for (std::size_t u = 0; !item && u < m_groupMembers.size(); ++u) {
                const auto& members = m_groupMembers[u];
                if (std::find(members.begin(), members.end(), node) != members.end())
                    item = m_unitItems[u];
            }
            if (item)
                bounds |= item->sceneBoundingRect();
        }
        if (bounds.isNull())
            continue;
        QStringList parts;
        for (const Shard& shard : region.shards) {
            if (region.tensor) // its share of every op's cut
                parts << QStringLiteral("%1 %2/%3")
                             .arg(QString::fromStdString(devices[shard.device].name))
                             .arg(shard.rows())
                             .arg(region.batch);
            else
                parts << QStringLiteral("%1 %2–%3")
                             .arg(QString::fromStdString(devices[shard.device].name))
                             .arg(shard.begin)
                             .arg(shard.end - 1);
        }
        if (region.tensor && !region.collectives.empty())
            parts.last() += QStringLiteral(" · %1 collectives").arg(region.collectives.size());
        const QString title = QString::fromStdString(region.name) + QStringLiteral(" · ") +
                              parts.join(QStringLiteral(" | "));
        bounds.adjust(-14, -16, 14, 14);
        QPainterPath outline;
        outline.addRoundedRect(bounds, 10, 10);
        auto* frame = new QGraphicsPathItem(outline);
        frame->setPen(QPen(QColor(0x55, 0x55, 0x75), 1.4, Qt::DashLine));
        frame->setBrush(QColor(0x60, 0x60, 0xa0, 18));
        frame->setZValue(0);
        frame->setToolTip(title);
        frame->setData(0, QString::fromStdString(region.name));
        // The title tab on the frame's top edge, above the nodes: the stacked device bar and
        // the rows each device runs.
        QFont font;
        font.setPointSizeF(font.pointSizeF() * 0.85);
        const qreal barWidth = 40;
        const QFontMetricsF metrics(font);
        const QRectF tabRect(bounds.left() + 10, bounds.top() - 9,
                             barWidth + 16 + metrics.horizontalAdvance(title), 18);
        QPainterPath tabPath;
        tabPath.addRoundedRect(tabRect, 5, 5);
        auto* tab = new QGraphicsPathItem(tabPath);
        tab->setPen(QPen(QColor(0x55, 0x55, 0x75), 1));
        tab->setBrush(QColor(0xff, 0xff, 0xff, 235));
        tab->setZValue(4);
        tab->setToolTip(title);
        auto* label = new QGraphicsSimpleTextItem(title, tab);
        label->setFont(font);
        label->setPos(tabRect.left() + barWidth + 10, tabRect.center().y() - metrics.height() / 2);
        qreal x = tabRect.left() + 5;
        for (const Shard& shard : region.shards) {
            const qreal width = barWidth * static_cast<qreal>(shard.rows()) /
                                static_cast<qreal>(std::max<std::int64_t>(region.batch, 1));
            auto* segment =
                new QGraphicsRectItem(QRectF(x, tabRect.center().y() - 5, width, 10), tab);
            segment->setBrush(m_document->deviceColor(shard.device));
            segment->setPen(QPen(QColor(0x40, 0x40, 0x40), 0.8));
            x += width;
        }
        tab->setParentItem(m_tabLayer);
        m_splitTabs.push_back(tab);
        frame->setParentItem(m_frameLayer);
        m_splitFrames.push_back(frame);
        // The inserted Split on each edge into the region, the Concat on each edge out of it.
        const QColor first = m_document->deviceColor(region.shards.front().device);
        const QColor last = m_document->deviceColor(region.shards.back().device);
        auto badge = [&](NodeId consumer, const QString& text, QPointF at, QColor a, QColor b) {
            auto* item = new CopyBadgeItem(-1, consumer, text, a, b);
            item->setPos(at);
            item->setParentItem(m_badgeLayer);
            m_badges.push_back(item);
        };
        if (region.tensor) {
            // Each collective on the edge into the reader that needed it: its kind and the
            // bytes the devices receive.
            std::set<std::pair<std::uint32_t, std::uint32_t>> drawn;
            for (const Collective& collective : region.collectives) {
                const QString text = QStringLiteral("%1 %2").arg(
                    QString::fromUtf8(collectiveName(collective.kind).data()),
                    QString::fromStdString(formatBytes(collective.bytes)));
                const auto key = std::pair(collective.value.node.index, collective.value.output);
                for (EdgeItem* edge : m_edges) {
                    if (edge->value() != collective.value ||
                        graph.node(edge->consumer()).name != collective.reason ||
                        !drawn.insert(key).second)
                        continue;
                    badge(edge->consumer(), text, edge->path().pointAtPercent(0.5), first, last);
                }
                NodeItem* item = nodeItem(collective.value.node);
                if (!drawn.count(key) && item) // an output of the graph
                    badge(collective.value.node, text,
                          item->pos() + QPointF(0, item->boundingRect().height() / 2 + 12), first,
                          last);
            }
            continue;
        }
        std::set<std::pair<std::uint32_t, std::uint32_t>> concatDrawn;
        for (EdgeItem* edge : m_edges) {
            const ValueRef value = edge->value();
            const bool in =
                member[edge->consumer().index] && !member[value.node.index] &&
                std::find(region.inputs.begin(), region.inputs.end(), value) != region.inputs.end();
            const bool out = member[value.node.index] && !member[edge->consumer().index];
            if (in)
                badge(edge->consumer(),
                      QCoreApplication::translate("GraphScene", "split ⇉ %1")
                          .arg(parts.join(QStringLiteral(", "))),
                      edge->path().pointAtPercent(0.7), first, last);
            if (out && concatDrawn.emplace(value.node.index, edge->consumer().index).second)
                badge(edge->consumer(), QCoreApplication::translate("GraphScene", "concat ⇇"),
                      edge->path().pointAtPercent(0.3), first, last);
        }
        for (const GraphOutput& output : graph.outputs()) {
            if (!member[output.value.node.index] || !nodeItem(output.value.node))
                continue;
            NodeItem* item = nodeItem(output.value.node);
            badge(output.value.node, QCoreApplication::translate("GraphScene", "concat ⇇"),
                  item->pos() + QPointF(0, item->boundingRect().height() / 2 + 12), first, last);
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
    if (millisPerNode.empty() && !m_timesShown)
        return; // every re-plan clears the times: nothing to do where none are shown
    m_timesShown = !millisPerNode.empty();
    m_nodeMillis = millisPerNode;
    if (millisPerNode.empty())
        m_copyMillis.clear(); // the copies' times went with the run's plan
    double most = 0;
    for (double t : millisPerNode)
        most = std::max(most, t);
    for (std::size_t i = 0; i < m_nodeItems.size(); ++i) {
        if (!m_nodeItems[i])
            continue;
        const double t = i < millisPerNode.size() ? millisPerNode[i] : -1;
        m_nodeItems[i]->setTiming(t, most > 0 && t > 0 ? t / most : 0);
    }
    // A closed group shows the time of everything inside it.
    for (const std::size_t u : m_groupUnits) {
        auto* group = qgraphicsitem_cast<GroupItem*>(m_unitItems[u]);
        if (!group)
            continue;
        double sum = 0;
        bool timed = false;
        for (const NodeId member : m_groupMembers[u]) {
            if (member.index < millisPerNode.size() && millisPerNode[member.index] >= 0) {
                sum += millisPerNode[member.index];
                timed = true;
            }
        }
        group->setTiming(timed ? sum : -1);
    }
}

void GraphScene::setFusion(const std::vector<NodeId>& fusedInto) {
    if (fusedInto.empty() && !m_fusionShown)
        return;
    m_fusionShown = !fusedInto.empty();
    m_fusedInto = fusedInto;
    std::vector<int> members(m_nodeItems.size(), 0);
    for (const NodeId head : fusedInto)
        if (head.valid() && head.index < members.size())
            ++members[head.index];
    for (std::size_t i = 0; i < m_nodeItems.size(); ++i) {
        if (!m_nodeItems[i])
            continue;
        const NodeId head = i < fusedInto.size() ? fusedInto[i] : NodeId();
        const bool known =
            head.valid() && head.index < m_nodeItems.size() && m_nodeItems[head.index];
        m_nodeItems[i]->setFusion(known ? m_nodeItems[head.index]->name() : QString(), members[i]);
    }
}

void GraphScene::setCopyTimes(const std::vector<double>& millisPerCopy) {
    m_copyMillis = millisPerCopy;
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
