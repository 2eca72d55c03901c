// Running layouts in the background, the quick one first, and the collapsed groups.
#include "views/LayoutController.h"

#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/LayeredLayout.h"
#include "views/NodeItem.h"
#include "views/PlacementDocument.h"

#include <QProgressBar>
#include <QPushButton>
#include <QtConcurrent/QtConcurrentRun>

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
}

LayoutController::~LayoutController() {
    m_watcher.waitForFinished();
}

void LayoutController::start() {
    if (m_path != m_document->path()) { // a new graph: its own groups
        m_path = m_document->path();
        m_reveal = NodeId();
        std::set<std::string> scopes = startingScopes(m_document->graph());
        if (!scopes.empty())
            emit message(tr("%n name scope(s) shown collapsed: double-click a group to open it; "
                            "Find opens the groups a node is in",
                            nullptr, static_cast<int>(scopes.size())),
                         10000);
        m_scene->setCollapsed(std::move(scopes));
    }
    ++m_generation;
    const LayoutRequest request = m_scene->layoutRequest();
    m_progress->show();
    m_cancel->show();
    m_runningGeneration = m_generation;
    if (request.nodeSizes.size() > kQuickLayoutNodes && request.nodeSizes.size() <= kLayeredNodes) {
        // A large graph for dot: show a simple ranked layout at once, replaced by dot's.
        m_scene->applySimpleLayout();
        m_view->fitAll();
        emit message(tr("Showing a quick layout while Graphviz lays out %n node(s)…", nullptr,
                        static_cast<int>(request.nodeSizes.size())),
                     0);
    }
    m_watcher.setFuture(QtConcurrent::run([request] { return layoutFor(request); }));
}

LayoutResult LayoutController::layoutFor(const LayoutRequest& request) {
    if (request.nodeSizes.size() > kLayeredNodes)
        return layeredLayout(request);
    return cachedLayout(request);
}

void LayoutController::layoutNow() {
    m_watcher.waitForFinished();
    ++m_generation;
    m_scene->applyLayout(layoutFor(m_scene->layoutRequest()));
    m_progress->hide();
    m_cancel->hide();
    m_view->fitAll();
    showRevealed();
    emit finished();
}

void LayoutController::done() {
    const LayoutResult result = m_watcher.result();
    if (m_runningGeneration != m_generation)
        return; // a newer layout (or a cancel) superseded this one
    m_progress->hide();
    m_cancel->hide();
    const std::vector<NodeId> selected = m_scene->selectedNodes();
    const bool hadQuickLayout = m_scene->hasItems();
    const QTransform zoom = m_view->transform();
    m_scene->applyLayout(result);
    for (NodeId node : selected) // the user may have selected during the quick layout
        if (auto* item = m_scene->nodeItem(node))
            item->setSelected(true);
    if (hadQuickLayout && !selected.empty()) {
        m_view->setTransform(zoom);
        m_view->centerOn(m_scene->nodeItem(selected.front()));
    } else {
        m_view->fitAll();
    }
    if (!result.error.isEmpty())
        emit message(tr("Layout failed (%1); showing a simple ranked layout").arg(result.error),
                     10000);
    else
        emit message(tr("Laid out in %1 s").arg(result.seconds, 0, 'f', 2), 4000);
    showRevealed();
    emit finished();
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
    m_scene->setCollapsed(std::move(scopes));
    start();
}

void LayoutController::collapseAll() {
    std::set<std::string> scopes;
    for (const Node& node : m_document->graph().nodes()) {
        const auto all = GraphScene::scopesOf(node.name);
        if (!all.empty())
            scopes.insert(all.front());
    }
    setCollapsedScopes(std::move(scopes));
}

void LayoutController::collapse(const std::string& scope) {
    auto scopes = m_scene->collapsed();
    scopes.insert(scope);
    setCollapsedScopes(std::move(scopes));
}

void LayoutController::reveal(NodeId node) {
    if (!node.valid() || node.index >= m_document->graph().size() || m_scene->nodeItem(node))
        return;
    auto scopes = m_scene->collapsed();
    bool opened = false;
    for (const std::string& scope : GraphScene::scopesOf(m_document->graph().node(node).name))
        opened = scopes.erase(scope) > 0 || opened;
    if (!opened)
        return; // not in a group: not drawn at all (a constant)
    m_reveal = node;
    setCollapsedScopes(std::move(scopes));
}

std::set<std::string> LayoutController::startingScopes(const Graph& graph) {
    std::size_t drawn = 0;
    std::size_t deepest = 0;
    for (const Node& node : graph.nodes()) {
        if (node.isConstant())
            continue;
        ++drawn;
        deepest = std::max(deepest, GraphScene::scopesOf(node.name).size());
    }
    if (drawn <= kCollapseAbove || deepest == 0)
        return {};
    for (std::size_t depth = 1; depth <= deepest; ++depth) {
        // The units at this depth: one per scope that deep, and each node in fewer scopes.
        std::set<std::string> scopes;
        std::size_t loose = 0;
        for (const Node& node : graph.nodes()) {
            if (node.isConstant())
                continue;
            const auto all = GraphScene::scopesOf(node.name);
            if (all.size() >= depth)
                scopes.insert(all[depth - 1]);
            else
                ++loose;
        }
        if (scopes.size() + loose >= kLeastGroups)
            return scopes;
    }
    // No depth gives enough groups (everything in one or a few scopes, no deeper ones): a
    // handful of boxes would hide the graph, so it opens as it is.
    return {};
}

void LayoutController::expand(const std::string& scope) {
    auto scopes = m_scene->collapsed();
    scopes.erase(scope);
    setCollapsedScopes(std::move(scopes));
}

} // namespace placer::views
