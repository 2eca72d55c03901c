// Running layouts in the background, the quick one first, and the collapsed groups.
#include "views/LayoutController.h"

#include "views/CompoundLayout.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/LayeredLayout.h"
#include "views/NodeItem.h"
#include "views/PlacementDocument.h"

#include <QProgressBar>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

#include <map>
#include <string_view>

namespace placer::views {

LayoutController::LayoutController(PlacementDocument* document, GraphScene* scene, GraphView* view,
                                   QWidget* parent)
    : QObject(parent), m_document(document), m_scene(scene), m_view(view),
      m_progress(new QProgressBar(parent)), m_cancel(new QPushButton(tr("Cancel layout"), parent)) {
    m_progress->setRange(0, 0);
    m_progress->setMaximumWidth(160);
    m_progress->setFormat(tr("laying out"));
    m_progress->hide();
    m_cancel->hide();
    connect(m_cancel, &QPushButton::clicked, this, &LayoutController::cancel);
    connect(&m_watcher, &QFutureWatcher<LayoutResult>::finished, this, &LayoutController::done);
    connect(m_document, &PlacementDocument::modelReset, this, &LayoutController::start);
    connect(m_view, &GraphView::expandRequested, this,
            [this](const QString& scope) { expand(scope.toStdString()); });
    connect(m_view, &GraphView::revealRequested, this, &LayoutController::reveal);
    connect(m_view, &GraphView::collapseRequested, this,
            [this](const QString& scope) { collapse(scope.toStdString()); });
}

LayoutController::~LayoutController() {
    m_watcher.waitForFinished();
}

void LayoutController::start() {
    // The same graph laid out again (a group opened or closed): its selection and the zoom are
    // kept.
    const bool sameGraph = m_path == m_document->path();
    m_keepSelected = sameGraph ? m_scene->selectedNodes() : std::vector<NodeId>{};
    if (!sameGraph) { // a new graph: its own groups
        m_path = m_document->path();
        m_reveal = NodeId();
        std::set<std::string> scopes = startingScopes(m_document->graph(), m_scene->scopes());
        if (!scopes.empty())
            emit message(tr("%n name scope(s) shown collapsed: double-click a group to open it; "
                            "Find opens the groups a node is in",
                            nullptr, static_cast<int>(scopes.size())),
                         10000);
        m_scene->setCollapsed(std::move(scopes));
        m_scene->setOpened({});
    }
    ++m_generation;
    const LayoutRequest request = m_scene->layoutRequest();
    m_progress->show();
    m_cancel->show();
    m_runningGeneration = m_generation;
    if (request.nodeSizes.size() > kQuickLayoutNodes && request.nodeSizes.size() <= kLayeredNodes) {
        // A large graph for dot: show a simple ranked layout at once, replaced by dot's.
        m_scene->applySimpleLayout();
        m_scene->selectNodes(m_keepSelected); // kept from here by done()
        if (!sameGraph)
            m_view->fitAll();
        emit message(tr("Showing a quick layout while Graphviz lays out %n node(s)…", nullptr,
                        static_cast<int>(request.nodeSizes.size())),
                     0);
    }
    m_watcher.setFuture(QtConcurrent::run([request] { return layoutFor(request); }));
}

LayoutResult LayoutController::layoutFor(const LayoutRequest& request) {
    auto flat = [](const LayoutRequest& level) {
        if (level.nodeSizes.size() > kLayeredNodes)
            return layeredLayout(level);
        return cachedLayout(level);
    };
    if (request.frameParent.empty())
        return flat(request);
    // Open groups: each laid out on its own and kept, so opening one lays out that group and
    // the levels around it only.
    static LevelCache cache;
    return compoundLayout(request, flat, &cache);
}

void LayoutController::layoutNow() {
    m_watcher.waitForFinished();
    ++m_generation;
    const std::vector<NodeId> selected =
        m_scene->hasItems() ? m_scene->selectedNodes() : std::move(m_keepSelected);
    m_keepSelected.clear();
    const QTransform zoom = m_view->transform();
    m_scene->applyLayout(layoutFor(m_scene->layoutRequest()));
    m_scene->selectNodes(selected);
    m_progress->hide();
    m_cancel->hide();
    if (QGraphicsItem* focus = focusItem()) {
        m_view->setTransform(zoom);
        m_view->showArea(focus->sceneBoundingRect());
    } else {
        m_view->fitAll();
    }
    showRevealed();
    emit finished();
}

void LayoutController::done() {
    const LayoutResult result = m_watcher.result();
    if (m_runningGeneration != m_generation)
        return; // a newer layout (or a cancel) superseded this one
    m_progress->hide();
    m_cancel->hide();
    const bool hadQuickLayout = m_scene->hasItems();
    // What was selected before, or what the user selected during the quick layout.
    std::vector<NodeId> selected =
        hadQuickLayout ? m_scene->selectedNodes() : std::move(m_keepSelected);
    m_keepSelected.clear();
    const QTransform zoom = m_view->transform();
    m_scene->applyLayout(result);
    m_scene->selectNodes(selected);
    QGraphicsItem* focus = focusItem();
    if (!focus && hadQuickLayout && !selected.empty())
        focus = m_scene->nodeItem(selected.front());
    if (focus) {
        m_view->setTransform(zoom);
        m_view->showArea(focus->sceneBoundingRect());
    } else {
        m_view->fitAll();
    }
    if (!result.error.isEmpty())
        emit message(tr("Layout failed (%1); showing a simple ranked layout").arg(result.error),
                     10000);
    else if (result.levels > 0)
        emit message(tr("Laid out in %1 s (%2 of %3 levels; the others were kept from before)")
                         .arg(result.seconds, 0, 'f', 2)
                         .arg(result.levelsLaidOut)
                         .arg(result.levels),
                     4000);
    else
        emit message(tr("Laid out in %1 s").arg(result.seconds, 0, 'f', 2), 4000);
    showRevealed();
    emit finished();
}

QGraphicsItem* LayoutController::focusItem() {
    // The frame of the group just opened, or the box of the one just closed: the view stays
    // where the user was, on it.
    const QString scope = QString::fromStdString(m_focusScope);
    m_focusScope.clear();
    if (scope.isEmpty())
        return nullptr;
    for (FrameItem* frame : m_scene->frames())
        if (frame->scope() == scope)
            return frame;
    for (QGraphicsItem* item : m_scene->items())
        if (auto* group = qgraphicsitem_cast<GroupItem*>(item); group && group->scope() == scope)
            return group;
    return nullptr;
}

void LayoutController::showRevealed() {
    const NodeId node = m_reveal;
    m_reveal = NodeId();
    if (node.valid() && m_scene->nodeItem(node))
        m_view->showNode(node);
}

void LayoutController::cancel() {
    // Graphviz cannot be interrupted: its result is dropped when it comes.
    ++m_generation;
    m_progress->hide();
    m_cancel->hide();
    m_scene->layoutRequest();
    m_scene->applySimpleLayout();
    m_view->fitAll();
    emit message(tr("Layout cancelled; showing a simple ranked layout"), 8000);
    emit finished();
}

void LayoutController::setCollapsedScopes(std::set<std::string> scopes) {
    setScopes(std::move(scopes), {});
}

void LayoutController::setScopes(std::set<std::string> collapsed, std::set<std::string> opened) {
    m_scene->setCollapsed(std::move(collapsed));
    m_scene->setOpened(std::move(opened));
    start();
}

void LayoutController::collapseAll() {
    setCollapsedScopes(m_scene->scopes().atDepth(1));
}

void LayoutController::collapse(const std::string& scope) {
    auto collapsed = m_scene->collapsed();
    auto opened = m_scene->opened();
    collapsed.insert(scope);
    m_focusScope = scope;
    // What was open inside it closes with it.
    for (auto it = opened.lower_bound(scope); it != opened.end() && it->starts_with(scope);)
        it = opened.erase(it);
    setScopes(std::move(collapsed), std::move(opened));
}

std::set<std::string> LayoutController::innerScopes(const std::string& scope) const {
    std::set<std::string> inner;
    for (const auto& [name, members] : m_scene->scopes().inner(scope))
        if (members >= 2)
            inner.insert(name);
    return inner;
}

void LayoutController::open(const std::string& scope, std::set<std::string>* collapsed,
                            std::set<std::string>* opened, const std::string& keepOpen) const {
    // Opened as Model Explorer opens a layer: a frame, the scopes inside it shown collapsed.
    if (!collapsed->erase(scope))
        return;
    opened->insert(scope);
    for (const std::string& inner : innerScopes(scope))
        if (inner != keepOpen && !opened->count(inner))
            collapsed->insert(inner);
}

void LayoutController::reveal(NodeId node) {
    if (!node.valid() || node.index >= m_document->graph().size() || m_scene->nodeItem(node))
        return;
    auto collapsed = m_scene->collapsed();
    auto opened = m_scene->opened();
    const auto scopes = m_scene->scopes().of(node);
    bool inGroup = false;
    for (const std::string& scope : scopes)
        inGroup = inGroup || collapsed.count(scope) > 0;
    if (!inGroup)
        return; // not in a group: not drawn at all (a constant)
    for (std::size_t i = 0; i < scopes.size(); ++i) {
        if (!collapsed.count(scopes[i]))
            continue;
        // The scopes inside close, but the next on the way to the node (opened in its turn if
        // it was collapsed already).
        open(scopes[i], &collapsed, &opened, i + 1 < scopes.size() ? scopes[i + 1] : "");
    }
    m_reveal = node;
    setScopes(std::move(collapsed), std::move(opened));
}

std::set<std::string> LayoutController::startingScopes(const Graph& graph) {
    return startingScopes(graph, ScopeTree(graph));
}

std::set<std::string> LayoutController::startingScopes(const Graph& graph, const ScopeTree& tree) {
    std::size_t drawn = 0;
    for (const Node& node : graph.nodes())
        drawn += node.isConstant() ? 0 : 1;
    if (drawn <= kCollapseAbove || tree.depth() == 0)
        return {};
    for (std::size_t depth = 1; depth <= tree.depth(); ++depth) {
        // The units at this depth: one per scope that deep, and each node in fewer scopes.
        std::size_t loose = 0;
        std::set<std::string> scopes = tree.atDepth(depth, &loose);
        if (scopes.size() + loose >= kLeastGroups)
            return scopes;
    }
    // No depth gives enough groups (everything in one or a few scopes, no deeper ones): a
    // handful of boxes would hide the graph, so it opens as it is.
    return {};
}

void LayoutController::expand(const std::string& scope) {
    auto collapsed = m_scene->collapsed();
    auto opened = m_scene->opened();
    open(scope, &collapsed, &opened, "");
    m_focusScope = scope;
    setScopes(std::move(collapsed), std::move(opened));
}

} // namespace placer::views
