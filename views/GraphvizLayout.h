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
    /// Open groups drawn as frames around their contents (views/CompoundLayout.h); all empty for
    /// a flat layout. Per node: the frame it is drawn in, or -1 for the top (empty: all top).
    std::vector<int> nodeFrame;
    std::vector<int> frameParent;    ///< per frame: the frame it is drawn in, or -1
    std::vector<QSizeF> frameTitles; ///< per frame: its title's size, at the frame's top
};

struct LayoutResult {
    QRectF bounds;
    std::vector<QPointF> nodeCenters;    ///< per node, in scene coordinates (y down)
    std::vector<QPainterPath> edgePaths; ///< per request edge, from tail to head
    std::vector<QRectF> frameRects;      ///< per request frame, in scene coordinates
    int levels = 0;        ///< a layout with frames: its levels (the top and each frame)
    int levelsLaidOut = 0; ///< of those, the ones not found in the cache
    QString error;         ///< empty on success
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
