// Frames laid out innermost first, each level a flat layout kept in a cache.
#include "views/CompoundLayout.h"

#include <QElapsedTimer>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace placer::views {

namespace {

std::uint64_t mix(std::uint64_t hash, std::uint64_t value) {
    hash ^= value + 0x9e3779b97f4a7c15ULL + (hash << 6) + (hash >> 2);
    return hash * 0xff51afd7ed558ccdULL;
}

std::uint64_t bitsOf(double value) {
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof value);
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

bool sameRequest(const LayoutRequest& a, const LayoutRequest& b) {
    return a.boundEffort == b.boundEffort && a.nodeSizes == b.nodeSizes && a.edges == b.edges;
}

} // namespace

std::uint64_t LevelCache::hashOf(const LayoutRequest& request) {
    std::uint64_t hash = mix(request.boundEffort ? 1 : 2, request.nodeSizes.size());
    for (const QSizeF& size : request.nodeSizes)
        hash = mix(mix(hash, bitsOf(size.width())), bitsOf(size.height()));
    for (const auto& [from, to] : request.edges)
        hash = mix(hash, (std::uint64_t(std::uint32_t(from)) << 32) | std::uint32_t(to));
    return hash;
}

bool LevelCache::find(const LayoutRequest& request, LayoutResult* result) {
    const std::uint64_t hash = hashOf(request);
    const std::lock_guard lock(m_mutex);
    auto [begin, end] = m_index.equal_range(hash);
    for (auto it = begin; it != end; ++it) {
        if (!sameRequest(it->second->second.request, request))
            continue;
        m_entries.splice(m_entries.begin(), m_entries, it->second);
        *result = it->second->second.result;
        return true;
    }
    return false;
}

void LevelCache::insert(const LayoutRequest& request, const LayoutResult& result) {
    if (request.nodeSizes.size() > m_maxNodes)
        return;
    const std::uint64_t hash = hashOf(request);
    const std::lock_guard lock(m_mutex);
    auto [begin, end] = m_index.equal_range(hash);
    for (auto it = begin; it != end; ++it)
        if (sameRequest(it->second->second.request, request))
            return;
    m_entries.emplace_front(hash, Entry{request, result});
    m_index.emplace(hash, m_entries.begin());
    m_nodes += request.nodeSizes.size();
    while (m_nodes > m_maxNodes && !m_entries.empty()) {
        auto last = std::prev(m_entries.end());
        auto [first, stop] = m_index.equal_range(last->first);
        for (auto it = first; it != stop; ++it) {
            if (it->second == last) {
                m_index.erase(it);
                break;
            }
        }
        m_nodes -= last->second.request.nodeSizes.size();
        m_entries.erase(last);
    }
}

void LevelCache::clear() {
    const std::lock_guard lock(m_mutex);
    m_entries.clear();
    m_index.clear();
    m_nodes = 0;
}

std::size_t LevelCache::size() const {
    const std::lock_guard lock(m_mutex);
    return m_entries.size();
}

LayoutResult compoundLayout(const LayoutRequest& request,
                            const std::function<LayoutResult(const LayoutRequest&)>& level,
                            LevelCache* cache, CompoundStats* stats) {
    QElapsedTimer timer;
    timer.start();
    if (request.frameParent.empty())
        return level(request);
    const int nodes = static_cast<int>(request.nodeSizes.size());
    const int frames = static_cast<int>(request.frameParent.size());
    const int top = frames; // the level of everything not in a frame
    auto frameOf = [&](int node) {
        const int frame = static_cast<std::size_t>(node) < request.nodeFrame.size()
                              ? request.nodeFrame[static_cast<std::size_t>(node)]
                              : -1;
        return frame >= 0 && frame < frames ? frame : top;
    };
    // Each frame's parent level; a chain of parents that loops is cut at the top.
    std::vector<int> parent(static_cast<std::size_t>(frames), top);
    for (int f = 0; f < frames; ++f) {
        const int p = request.frameParent[static_cast<std::size_t>(f)];
        parent[static_cast<std::size_t>(f)] = p >= 0 && p < frames && p != f ? p : top;
    }
    for (int f = 0; f < frames; ++f) {
        int at = f;
        for (int steps = 0; at != top && steps <= frames; ++steps)
            at = parent[static_cast<std::size_t>(at)];
        if (at != top)
            parent[static_cast<std::size_t>(f)] = top;
    }
    auto parentOf = [&](int frame) { return parent[static_cast<std::size_t>(frame)]; };
    std::vector<int> depth(static_cast<std::size_t>(frames) + 1, 0);
    for (int f = 0; f < frames; ++f)
        for (int at = f; at != top; at = parentOf(at))
            ++depth[static_cast<std::size_t>(f)];
    // A level's children: nodes (id < nodes) and frames (id nodes + f).
    std::vector<std::vector<int>> children(static_cast<std::size_t>(frames) + 1);
    std::vector<int> slot(static_cast<std::size_t>(nodes + frames), -1);
    for (int n = 0; n < nodes; ++n) {
        auto& list = children[static_cast<std::size_t>(frameOf(n))];
        slot[static_cast<std::size_t>(n)] = static_cast<int>(list.size());
        list.push_back(n);
    }
    for (int f = 0; f < frames; ++f) {
        auto& list = children[static_cast<std::size_t>(parentOf(f))];
        slot[static_cast<std::size_t>(nodes + f)] = static_cast<int>(list.size());
        list.push_back(nodes + f);
    }
    // Each edge is laid out at the level where its ends meet, between the boxes holding them.
    std::vector<LayoutRequest> levels(static_cast<std::size_t>(frames) + 1);
    std::vector<std::map<std::pair<int, int>, int>> levelEdges(levels.size());
    std::vector<std::pair<int, int>> edgeAt(request.edges.size(), {-1, -1}); // (level, edge)
    std::vector<std::pair<int, int>> edgeBoxes(request.edges.size());        // lifted ends
    for (std::size_t e = 0; e < request.edges.size(); ++e) {
        auto [from, to] = request.edges[e];
        if (from < 0 || to < 0 || from >= nodes || to >= nodes || from == to)
            continue;
        int a = from, b = to;
        int levelA = frameOf(from), levelB = frameOf(to);
        while (levelA != levelB) {
            if (depth[static_cast<std::size_t>(levelA)] >=
                depth[static_cast<std::size_t>(levelB)]) {
                a = nodes + levelA;
                levelA = parentOf(levelA);
            } else {
                b = nodes + levelB;
                levelB = parentOf(levelB);
            }
        }
        if (a == b)
            continue;
        const std::pair<int, int> key(slot[static_cast<std::size_t>(a)],
                                      slot[static_cast<std::size_t>(b)]);
        auto& known = levelEdges[static_cast<std::size_t>(levelA)];
        auto [it, inserted] = known.emplace(key, static_cast<int>(known.size()));
        if (inserted)
            levels[static_cast<std::size_t>(levelA)].edges.push_back(key);
        edgeAt[e] = {levelA, it->second};
        edgeBoxes[e] = {a, b};
    }
    // Innermost first: a frame's size is known before its parent is laid out.
    std::vector<int> order;
    for (int l = 0; l <= frames; ++l)
        order.push_back(l);
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
        return depth[static_cast<std::size_t>(x)] > depth[static_cast<std::size_t>(y)];
    });
    std::vector<QSizeF> frameSize(static_cast<std::size_t>(frames));
    std::vector<LayoutResult> laid(levels.size());
    auto titleOf = [&](int frame) {
        return static_cast<std::size_t>(frame) < request.frameTitles.size()
                   ? request.frameTitles[static_cast<std::size_t>(frame)]
                   : QSizeF(0, 0);
    };
    LayoutResult result;
    int laidOut = 0, fromCache = 0;
    for (int l : order) {
        LayoutRequest& sub = levels[static_cast<std::size_t>(l)];
        sub.boundEffort = request.boundEffort;
        for (int child : children[static_cast<std::size_t>(l)])
            sub.nodeSizes.push_back(child < nodes
                                        ? request.nodeSizes[static_cast<std::size_t>(child)]
                                        : frameSize[static_cast<std::size_t>(child - nodes)]);
        LayoutResult& out = laid[static_cast<std::size_t>(l)];
        if (sub.nodeSizes.empty()) {
            out.bounds = QRectF(0, 0, 0, 0);
        } else if (cache && cache->find(sub, &out)) {
            ++fromCache;
        } else {
            out = level(sub);
            ++laidOut;
            if (!out.error.isEmpty()) {
                result.error = out.error;
                return result;
            }
            if (out.nodeCenters.size() != sub.nodeSizes.size() ||
                out.edgePaths.size() != sub.edges.size()) {
                result.error = QStringLiteral("a level's layout has the wrong size");
                return result;
            }
            if (cache)
                cache->insert(sub, out);
        }
        if (l != top) {
            const QSizeF title = titleOf(l);
            const QSizeF content = out.bounds.size();
            frameSize[static_cast<std::size_t>(l)] =
                QSizeF(std::max(content.width(), title.width()) + 2 * kFramePadding,
                       content.height() + title.height() + 2 * kFramePadding);
        }
    }
    // Outermost first: each level's offset from its layout's coordinates to the scene's.
    std::vector<QPointF> offset(levels.size());
    result.frameRects.assign(static_cast<std::size_t>(frames), QRectF());
    result.nodeCenters.assign(static_cast<std::size_t>(nodes), QPointF());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const int l = *it;
        const LayoutResult& out = laid[static_cast<std::size_t>(l)];
        if (l == top) {
            offset[static_cast<std::size_t>(l)] = QPointF(0, 0);
            result.bounds = out.bounds;
        } else {
            const QRectF frame = result.frameRects[static_cast<std::size_t>(l)];
            const QSizeF content = out.bounds.size();
            const QPointF origin(frame.left() + (frame.width() - content.width()) / 2,
                                 frame.top() + kFramePadding + titleOf(l).height());
            offset[static_cast<std::size_t>(l)] = origin - out.bounds.topLeft();
        }
        const auto& list = children[static_cast<std::size_t>(l)];
        for (std::size_t i = 0; i < list.size(); ++i) {
            const QPointF center = out.nodeCenters[i] + offset[static_cast<std::size_t>(l)];
            if (list[i] < nodes) {
                result.nodeCenters[static_cast<std::size_t>(list[i])] = center;
            } else {
                const QSizeF size = frameSize[static_cast<std::size_t>(list[i] - nodes)];
                result.frameRects[static_cast<std::size_t>(list[i] - nodes)] =
                    QRectF(center - QPointF(size.width() / 2, size.height() / 2), size);
            }
        }
    }
    // Edges: the route where the ends meet, joined to each end drawn inside a frame there.
    result.edgePaths.assign(request.edges.size(), QPainterPath());
    for (std::size_t e = 0; e < request.edges.size(); ++e) {
        const auto [l, sub] = edgeAt[e];
        if (l < 0)
            continue;
        const auto [from, to] = request.edges[e];
        const QPainterPath route =
            laid[static_cast<std::size_t>(l)].edgePaths[static_cast<std::size_t>(sub)].translated(
                offset[static_cast<std::size_t>(l)]);
        const auto [a, b] = edgeBoxes[e];
        // Inside a frame, from a node to the frame's border or back: straight when short, else
        // bowed to the side with more room in the node's frame, so that it does not run
        // through the nodes between (a residual edge into an opened layer).
        auto join = [&](QPainterPath* into, QPointF start, QPointF end, int node) {
            const double drop = std::abs(end.y() - start.y());
            const double height = request.nodeSizes[static_cast<std::size_t>(node)].height();
            const int frame = frameOf(node);
            if (drop <= 2.5 * height || frame == top) {
                into->lineTo(end);
                return;
            }
            const QRectF room = result.frameRects[static_cast<std::size_t>(frame)];
            const double x = result.nodeCenters[static_cast<std::size_t>(node)].x();
            const double right = room.right() - x, left = x - room.left();
            const double side = right >= left ? 1.0 : -1.0;
            const double bow = std::clamp(std::max(right, left) - 8.0, 12.0, 40.0 + 0.08 * drop);
            const double reach = std::min(40.0, drop / 3);
            const double dir = end.y() >= start.y() ? 1.0 : -1.0;
            into->cubicTo(start + QPointF(side * bow, dir * reach),
                          end + QPointF(side * bow, -dir * reach), end);
        };
        QPainterPath path;
        if (a != from) {
            const QSizeF size = request.nodeSizes[static_cast<std::size_t>(from)];
            const QPointF start =
                result.nodeCenters[static_cast<std::size_t>(from)] + QPointF(0, size.height() / 2);
            path.moveTo(start);
            if (route.elementCount() > 0)
                join(&path, start, QPointF(route.elementAt(0)), from);
            path.connectPath(route);
        } else {
            path = route;
        }
        if (b != to) {
            const QSizeF size = request.nodeSizes[static_cast<std::size_t>(to)];
            join(&path, path.currentPosition(),
                 result.nodeCenters[static_cast<std::size_t>(to)] - QPointF(0, size.height() / 2),
                 to);
        }
        result.edgePaths[e] = path;
    }
    result.seconds = static_cast<double>(timer.nsecsElapsed()) / 1e9;
    result.levels = static_cast<int>(levels.size());
    result.levelsLaidOut = laidOut;
    if (stats)
        *stats = CompoundStats{result.levels, laidOut, fromCache};
    return result;
}

} // namespace placer::views
