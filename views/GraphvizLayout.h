// Graph layout by Graphviz `dot` through its C library, for the canvas. Graphviz is not
// thread-safe: layouts run one at a time behind one lock, and every C handle is owned by RAII.
#pragma once

#include <QPainterPath>
#include <QPointF>
#include <QRectF>
#include <QSizeF>
#include <QString>

#include <vector>

namespace placer::views {

struct LayoutRequest {
    std::vector<QSizeF> nodeSizes;          ///< in points; one per graph node
    std::vector<std::pair<int, int>> edges; ///< (from, to) node indices, one per drawn edge
    bool boundEffort = false;               ///< cap dot's network-simplex work (large graphs)
};

struct LayoutResult {
    QRectF bounds;
    std::vector<QPointF> nodeCenters;    ///< per node, in scene coordinates (y down)
    std::vector<QPainterPath> edgePaths; ///< per request edge, from tail to head
    QString error;                       ///< empty on success
    double seconds = 0;
};

/// Lays out the request with `dot` (top to bottom). Safe to call from any thread; calls are
/// serialised. Never throws; a Graphviz failure comes back in `error`.
LayoutResult computeLayout(const LayoutRequest& request);

/// computeLayout() through a cache on disk keyed by the request (node sizes, edges, options):
/// reopening a graph lays it out instantly. `cacheDir` empty: the user's cache folder.
/// `fromCache` (optional) says whether the result came from the cache.
LayoutResult cachedLayout(const LayoutRequest& request, const QString& cacheDir = QString(),
                          bool* fromCache = nullptr);

} // namespace placer::views
