// The layered layout for large graphs (views/LayeredLayout.h).
#include "views/LayeredLayout.h"

#include <QElapsedTimer>
#include <QPolygonF>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace placer::views {

namespace {

/// Inversions of `order` (the count of pairs out of order), by merge sort: O(n log n).
std::int64_t inversions(std::vector<double>& order, std::vector<double>& scratch) {
    const std::size_t n = order.size();
    std::int64_t count = 0;
    scratch.resize(n);
    for (std::size_t width = 1; width < n; width *= 2) {
        for (std::size_t lo = 0; lo < n; lo += 2 * width) {
            const std::size_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
            std::size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) {
                if (order[j] < order[i]) {
                    count += static_cast<std::int64_t>(mid - i);
                    scratch[k++] = order[j++];
                } else {
                    scratch[k++] = order[i++];
                }
            }
            while (i < mid)
                scratch[k++] = order[i++];
            while (j < hi)
                scratch[k++] = order[j++];
        }
        std::swap(order, scratch);
    }
    return count;
}

/// The layered graph: real nodes first, then virtual ones; edges only between adjacent ranks.
struct Layered {
    std::vector<int> rank;
    std::vector<std::vector<int>> down, up; ///< neighbours one rank below / above
    std::vector<std::vector<int>> layers;   ///< per rank, the nodes in order
    std::vector<int> position;              ///< index of a node within its rank
    std::vector<double> width, height;
    /// Per request edge: the nodes it passes, tail first (virtual ones between), and whether it
    /// was reversed to break a cycle (its drawing then runs from the last to the first).
    std::vector<std::vector<int>> chains;
    std::vector<bool> reversed;
};

/// Crossings between ranks r and r + 1 for the current positions: edges sorted by their upper
/// end, inversions of their lower ends.
std::int64_t crossingsBelow(const Layered& g, std::size_t r, std::vector<double>& keys,
                            std::vector<double>& scratch) {
    keys.clear();
    for (int u : g.layers[r]) {
        // down[u] is kept sorted by position by the caller.
        for (int v : g.down[static_cast<std::size_t>(u)])
            keys.push_back(g.position[static_cast<std::size_t>(v)]);
    }
    return inversions(keys, scratch);
}

std::int64_t totalCrossings(Layered& g) {
    std::vector<double> keys, scratch;
    std::int64_t total = 0;
    for (auto& list : g.down) {
        std::sort(list.begin(), list.end(), [&](int a, int b) {
            return g.position[static_cast<std::size_t>(a)] <
                   g.position[static_cast<std::size_t>(b)];
        });
    }
    for (std::size_t r = 0; r + 1 < g.layers.size(); ++r)
        total += crossingsBelow(g, r, keys, scratch);
    return total;
}

void renumber(Layered& g, std::size_t r) {
    for (std::size_t i = 0; i < g.layers[r].size(); ++i)
        g.position[static_cast<std::size_t>(g.layers[r][i])] = static_cast<int>(i);
}

/// Orders rank r by the mean (or the median) position of each node's neighbours in the adjacent
/// rank (`from`: up for a downward sweep); nodes without such neighbours keep their place.
void sortByBarycentre(Layered& g, std::size_t r, const std::vector<std::vector<int>>& from,
                      bool median) {
    std::vector<int>& layer = g.layers[r];
    std::vector<double> positions;
    std::vector<std::pair<double, int>> keyed;
    keyed.reserve(layer.size());
    for (int v : layer) {
        const auto& neighbours = from[static_cast<std::size_t>(v)];
        double key = g.position[static_cast<std::size_t>(v)];
        if (!neighbours.empty() && !median) {
            double sum = 0;
            for (int n : neighbours)
                sum += g.position[static_cast<std::size_t>(n)];
            key = sum / static_cast<double>(neighbours.size());
        } else if (!neighbours.empty()) {
            positions.clear();
            for (int n : neighbours)
                positions.push_back(g.position[static_cast<std::size_t>(n)]);
            std::sort(positions.begin(), positions.end());
            const std::size_t m = positions.size() / 2;
            key = positions.size() % 2 ? positions[m] : (positions[m - 1] + positions[m]) / 2.0;
        }
        keyed.emplace_back(key, v);
    }
    // Ties keep the current order (stable on position, which is the index).
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < keyed.size(); ++i)
        layer[i] = keyed[i].second;
    renumber(g, r);
}

/// Crossings among the edges of u and v to the adjacent rank `side` when u is left of v.
std::int64_t pairCrossings(const Layered& g, const std::vector<int>& nu,
                           const std::vector<int>& nv) {
    std::int64_t count = 0;
    for (int a : nu)
        for (int b : nv)
            count +=
                g.position[static_cast<std::size_t>(a)] > g.position[static_cast<std::size_t>(b)];
    return count;
}

/// dot's transposition: swaps neighbours in a rank while that lowers the crossings with both
/// adjacent ranks; a few passes. Nodes of high degree are skipped (their pair counts cost the
/// product of the degrees).
void transpose(Layered& g, int passes, bool swapTies = false) {
    constexpr std::size_t kMaxDegree = 64;
    for (int pass = 0; pass < passes; ++pass) {
        bool improved = false;
        for (std::size_t r = 0; r < g.layers.size(); ++r) {
            std::vector<int>& layer = g.layers[r];
            for (std::size_t i = 0; i + 1 < layer.size(); ++i) {
                const auto u = static_cast<std::size_t>(layer[i]);
                const auto v = static_cast<std::size_t>(layer[i + 1]);
                if (g.up[u].size() + g.down[u].size() > kMaxDegree ||
                    g.up[v].size() + g.down[v].size() > kMaxDegree)
                    continue;
                const std::int64_t now =
                    pairCrossings(g, g.up[u], g.up[v]) + pairCrossings(g, g.down[u], g.down[v]);
                const std::int64_t swapped =
                    pairCrossings(g, g.up[v], g.up[u]) + pairCrossings(g, g.down[v], g.down[u]);
                if (swapped < now || (swapTies && swapped == now && now > 0)) {
                    std::swap(layer[i], layer[i + 1]);
                    g.position[u] = static_cast<int>(i + 1);
                    g.position[v] = static_cast<int>(i);
                    improved = improved || swapped < now;
                }
            }
        }
        if (!improved)
            break;
    }
}

/// Places one rank: x as close as the ordering and the separations allow to `desired`, in the
/// least-squares sense (pool adjacent violators on x minus the cumulative separation).
void placeRank(const std::vector<int>& layer, const std::vector<double>& width,
               const std::vector<double>& desired, double gap, std::vector<double>& x) {
    const std::size_t n = layer.size();
    if (n == 0)
        return;
    std::vector<double> offset(n, 0);
    for (std::size_t i = 1; i < n; ++i)
        offset[i] = offset[i - 1] +
                    (width[static_cast<std::size_t>(layer[i - 1])] +
                     width[static_cast<std::size_t>(layer[i])]) /
                        2 +
                    gap;
    // Blocks of pooled values: their mean and size.
    std::vector<double> mean;
    std::vector<std::size_t> size;
    mean.reserve(n);
    size.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
        mean.push_back(desired[static_cast<std::size_t>(layer[i])] - offset[i]);
        size.push_back(1);
        while (mean.size() > 1 && mean[mean.size() - 2] > mean.back()) {
            const double m = mean.back();
            const std::size_t s = size.back();
            mean.pop_back();
            size.pop_back();
            mean.back() =
                (mean.back() * static_cast<double>(size.back()) + m * static_cast<double>(s)) /
                static_cast<double>(size.back() + s);
            size.back() += s;
        }
    }
    std::size_t i = 0;
    for (std::size_t b = 0; b < mean.size(); ++b) {
        for (std::size_t k = 0; k < size[b]; ++k, ++i)
            x[static_cast<std::size_t>(layer[i])] = mean[b] + offset[i];
    }
}

} // namespace

LayoutResult layeredLayout(const LayoutRequest& request, const LayeredOptions& options,
                           LayeredStats* stats) {
    QElapsedTimer clock;
    clock.start();
    LayoutResult result;
    const std::size_t n = request.nodeSizes.size();
    if (n == 0)
        return result;
    const std::size_t edgeCount = request.edges.size();

    // 1. Cycles: an iterative depth-first search in node order; an edge to a node on the stack
    //    is reversed.
    std::vector<std::vector<std::pair<int, int>>> out(n); // (head, edge)
    for (std::size_t e = 0; e < edgeCount; ++e) {
        const auto [from, to] = request.edges[e];
        if (from < 0 || to < 0 || static_cast<std::size_t>(from) >= n ||
            static_cast<std::size_t>(to) >= n)
            continue;
        out[static_cast<std::size_t>(from)].emplace_back(to, static_cast<int>(e));
    }
    Layered g;
    g.reversed.assign(edgeCount, false);
    {
        std::vector<char> state(n, 0); // 0 new, 1 on the stack, 2 done
        std::vector<std::pair<int, std::size_t>> stack;
        for (std::size_t root = 0; root < n; ++root) {
            if (state[root])
                continue;
            stack.emplace_back(static_cast<int>(root), 0);
            state[root] = 1;
            while (!stack.empty()) {
                auto& [v, next] = stack.back();
                const auto& edges = out[static_cast<std::size_t>(v)];
                if (next == edges.size()) {
                    state[static_cast<std::size_t>(v)] = 2;
                    stack.pop_back();
                    continue;
                }
                const auto [w, e] = edges[next++];
                if (w == v || state[static_cast<std::size_t>(w)] == 1) {
                    g.reversed[static_cast<std::size_t>(e)] = true;
                } else if (state[static_cast<std::size_t>(w)] == 0) {
                    state[static_cast<std::size_t>(w)] = 1;
                    stack.emplace_back(w, 0);
                }
            }
        }
    }

    // 2. Ranks: longest path in topological order (Kahn's, in node order), then each source
    //    moved down to just above its nearest consumer (weights and inputs beside their use).
    // An edge as laid out: its ends pointing down (a reversed edge swapped), or false for a
    // self loop or an end outside the request.
    auto downward = [&](std::size_t e, int* from, int* to) {
        *from = request.edges[e].first;
        *to = request.edges[e].second;
        if (*from < 0 || *to < 0 || static_cast<std::size_t>(*from) >= n ||
            static_cast<std::size_t>(*to) >= n || *from == *to)
            return false;
        if (g.reversed[e])
            std::swap(*from, *to);
        return true;
    };
    std::vector<std::vector<int>> succ(n), pred(n);
    for (std::size_t e = 0; e < edgeCount; ++e) {
        int from = 0, to = 0;
        if (!downward(e, &from, &to))
            continue;
        succ[static_cast<std::size_t>(from)].push_back(to);
        pred[static_cast<std::size_t>(to)].push_back(from);
    }
    g.rank.assign(n, 0);
    std::vector<int> topo;
    topo.reserve(n);
    {
        std::vector<int> missing(n);
        for (std::size_t v = 0; v < n; ++v)
            missing[v] = static_cast<int>(pred[v].size());
        for (std::size_t v = 0; v < n; ++v)
            if (missing[v] == 0)
                topo.push_back(static_cast<int>(v));
        for (std::size_t i = 0; i < topo.size(); ++i) {
            const int v = topo[i];
            for (int w : succ[static_cast<std::size_t>(v)]) {
                g.rank[static_cast<std::size_t>(w)] = std::max(
                    g.rank[static_cast<std::size_t>(w)], g.rank[static_cast<std::size_t>(v)] + 1);
                if (--missing[static_cast<std::size_t>(w)] == 0)
                    topo.push_back(w);
            }
        }
    }
    for (std::size_t v = 0; v < n; ++v) {
        if (!pred[v].empty() || succ[v].empty())
            continue;
        int nearest = std::numeric_limits<int>::max();
        for (int w : succ[v])
            nearest = std::min(nearest, g.rank[static_cast<std::size_t>(w)]);
        g.rank[v] = std::max(0, nearest - 1);
    }
    const int ranks = n ? *std::max_element(g.rank.begin(), g.rank.end()) + 1 : 0;

    // 3. Virtual nodes along edges longer than a rank; adjacency between adjacent ranks only.
    g.width.resize(n);
    g.height.resize(n);
    for (std::size_t v = 0; v < n; ++v) {
        g.width[v] = std::max<double>(1, request.nodeSizes[v].width());
        g.height[v] = std::max<double>(1, request.nodeSizes[v].height());
    }
    g.down.assign(n, {});
    g.up.assign(n, {});
    g.chains.assign(edgeCount, {});
    auto addNode = [&](int rank) {
        g.rank.push_back(rank);
        g.width.push_back(options.virtualWidth);
        g.height.push_back(1);
        g.down.emplace_back();
        g.up.emplace_back();
        return static_cast<int>(g.rank.size() - 1);
    };
    for (std::size_t e = 0; e < edgeCount; ++e) {
        int from = 0, to = 0;
        if (!downward(e, &from, &to))
            continue;
        std::vector<int>& chain = g.chains[e];
        chain.push_back(from);
        int previous = from;
        for (int r = g.rank[static_cast<std::size_t>(from)] + 1;
             r < g.rank[static_cast<std::size_t>(to)]; ++r) {
            const int v = addNode(r);
            g.down[static_cast<std::size_t>(previous)].push_back(v);
            g.up[static_cast<std::size_t>(v)].push_back(previous);
            chain.push_back(v);
            previous = v;
        }
        g.down[static_cast<std::size_t>(previous)].push_back(to);
        g.up[static_cast<std::size_t>(to)].push_back(previous);
        chain.push_back(to);
    }
    const std::size_t total = g.rank.size();

    // 4. The first ordering: a depth-first walk from the sources in topological order, so that
    //    chains stay together; virtual nodes follow the walk through their edges.
    g.layers.assign(static_cast<std::size_t>(ranks), {});
    g.position.assign(total, -1);
    {
        std::vector<char> seen(total, 0);
        std::vector<int> stack;
        auto visit = [&](int root) {
            stack.push_back(root);
            while (!stack.empty()) {
                const int v = stack.back();
                stack.pop_back();
                if (seen[static_cast<std::size_t>(v)])
                    continue;
                seen[static_cast<std::size_t>(v)] = 1;
                auto& layer =
                    g.layers[static_cast<std::size_t>(g.rank[static_cast<std::size_t>(v)])];
                g.position[static_cast<std::size_t>(v)] = static_cast<int>(layer.size());
                layer.push_back(v);
                const auto& next = g.down[static_cast<std::size_t>(v)];
                for (auto it = next.rbegin(); it != next.rend(); ++it)
                    if (!seen[static_cast<std::size_t>(*it)])
                        stack.push_back(*it);
            }
        };
        for (int v : topo)
            if (g.up[static_cast<std::size_t>(v)].empty())
                visit(v);
        for (std::size_t v = 0; v < total; ++v)
            if (!seen[v])
                visit(static_cast<int>(v));
    }

    // 5. Crossing reduction, as dot's: sweeps down and up ordering each rank by its neighbours'
    //    barycentre, then by their median, each followed by transposition (every fourth one also
    //    swapping neighbours whose crossings tie, to leave a plateau); the best ordering seen is
    //    kept, and a run of sweeps without gain goes back to it. Graphs of up to kManySweepNodes
    //    nodes and virtual nodes get three times the sweeps.
    std::int64_t best = totalCrossings(g);
    const std::int64_t initial = best;
    std::vector<std::vector<int>> bestLayers = g.layers;
    constexpr std::size_t kManySweepNodes = 30000;
    const int sweeps = total <= kManySweepNodes ? 3 * options.sweeps : options.sweeps;
    int sinceBest = 0;
    for (int sweep = 0; sweep < sweeps && best > 0; ++sweep) {
        const bool median = (sweep / 2) % 2 == 1;
        if (sweep % 2 == 0) {
            for (std::size_t r = 1; r < g.layers.size(); ++r)
                sortByBarycentre(g, r, g.up, median);
        } else {
            for (std::size_t r = g.layers.size() - 1; r-- > 0;)
                sortByBarycentre(g, r, g.down, median);
        }
        transpose(g, 8, sweep % 4 == 3);
        const std::int64_t crossings = totalCrossings(g);
        if (crossings < best) {
            best = crossings;
            bestLayers = g.layers;
            sinceBest = 0;
        } else if (++sinceBest >= 4) {
            g.layers = bestLayers;
            for (std::size_t r = 0; r < g.layers.size(); ++r)
                renumber(g, r);
            sinceBest = 0;
        }
    }
    g.layers = std::move(bestLayers);
    for (std::size_t r = 0; r < g.layers.size(); ++r)
        renumber(g, r);

    // 6. y by rank; x packed, then pulled towards the neighbours' mean, alternating directions.
    std::vector<double> rankY(static_cast<std::size_t>(ranks), 0);
    {
        double y = 0;
        for (std::size_t r = 0; r < g.layers.size(); ++r) {
            double tallest = 1;
            for (int v : g.layers[r])
                tallest = std::max(tallest, g.height[static_cast<std::size_t>(v)]);
            rankY[r] = y + tallest / 2;
            y += tallest + options.rankGap;
        }
    }
    std::vector<double> x(total, 0), desired(total, 0);
    for (const auto& layer : g.layers) {
        double left = 0;
        for (int v : layer) {
            x[static_cast<std::size_t>(v)] = left + g.width[static_cast<std::size_t>(v)] / 2;
            left += g.width[static_cast<std::size_t>(v)] + options.nodeGap;
        }
    }
    for (int pass = 0; pass < options.positionPasses; ++pass) {
        const bool downward = pass % 2 == 0;
        const auto& from = downward ? g.up : g.down;
        auto placeOne = [&](std::size_t r) {
            for (int v : g.layers[r]) {
                const auto& neighbours = from[static_cast<std::size_t>(v)];
                // Virtual nodes weigh both sides, so long edges run straight.
                const auto& other = downward ? g.down[static_cast<std::size_t>(v)]
                                             : g.up[static_cast<std::size_t>(v)];
                double sum = 0;
                std::size_t count = 0;
                for (int w : neighbours) {
                    sum += x[static_cast<std::size_t>(w)];
                    ++count;
                }
                if (static_cast<std::size_t>(v) >= n) {
                    for (int w : other) {
                        sum += x[static_cast<std::size_t>(w)];
                        ++count;
                    }
                }
                desired[static_cast<std::size_t>(v)] =
                    count ? sum / static_cast<double>(count) : x[static_cast<std::size_t>(v)];
            }
            placeRank(g.layers[r], g.width, desired, options.nodeGap, x);
        };
        if (downward) {
            for (std::size_t r = 0; r < g.layers.size(); ++r)
                placeOne(r);
        } else {
            for (std::size_t r = g.layers.size(); r-- > 0;)
                placeOne(r);
        }
    }

    // 7. The result: centres, bounds, and each edge as a smooth curve through its virtual nodes.
    result.nodeCenters.resize(n);
    QRectF bounds;
    for (std::size_t v = 0; v < n; ++v) {
        const QPointF centre(x[v], rankY[static_cast<std::size_t>(g.rank[v])]);
        result.nodeCenters[v] = centre;
        const QRectF box(centre.x() - g.width[v] / 2, centre.y() - g.height[v] / 2, g.width[v],
                         g.height[v]);
        bounds = bounds.isNull() ? box : bounds.united(box);
    }
    result.bounds = bounds;
    result.edgePaths.resize(edgeCount);
    std::int64_t reversedCount = 0;
    for (std::size_t e = 0; e < edgeCount; ++e) {
        const std::vector<int>& chain = g.chains[e];
        if (chain.size() < 2) { // a self loop or an edge outside the request: a small hook
            const auto [from, to] = request.edges[e];
            if (from >= 0 && static_cast<std::size_t>(from) < n) {
                const QPointF c = result.nodeCenters[static_cast<std::size_t>(from)];
                const double h = g.height[static_cast<std::size_t>(from)] / 2;
                QPainterPath path(c + QPointF(0, h));
                path.cubicTo(c + QPointF(40, h + 20), c + QPointF(40, -h - 20), c - QPointF(0, h));
                result.edgePaths[e] = path;
            }
            (void)to;
            continue;
        }
        std::vector<QPointF> points;
        points.reserve(chain.size());
        for (std::size_t i = 0; i < chain.size(); ++i) {
            const auto v = static_cast<std::size_t>(chain[i]);
            QPointF p(x[v], rankY[static_cast<std::size_t>(g.rank[v])]);
            if (i == 0)
                p.ry() += g.height[v] / 2; // leaves the bottom of its tail
            else if (i + 1 == chain.size())
                p.ry() -= g.height[v] / 2; // enters the top of its head
            points.push_back(p);
        }
        if (g.reversed[e]) {
            std::reverse(points.begin(), points.end());
            ++reversedCount;
        }
        QPainterPath path(points.front());
        for (std::size_t i = 1; i < points.size(); ++i) {
            const QPointF a = points[i - 1], b = points[i];
            const double dy = (b.y() - a.y()) / 2;
            path.cubicTo(a + QPointF(0, dy), b - QPointF(0, dy), b);
        }
        result.edgePaths[e] = path;
    }
    result.seconds = static_cast<double>(clock.nsecsElapsed()) / 1e9;
    if (stats) {
        stats->ranks = ranks;
        stats->virtualNodes = static_cast<std::int64_t>(total - n);
        stats->crossings = best;
        stats->initialCrossings = initial;
        stats->reversedEdges = reversedCount;
    }
    return result;
}

std::int64_t countCrossings(const LayoutRequest& request, const LayoutResult& layout) {
    // Bands between the distinct y levels of the node centres. Each edge's path (flattened, y
    // increasing) enters a band at one x and leaves it at another; two edges cross in a band when
    // their order at its top and at its bottom differ: the inversions of the bottom order, the
    // edges sorted by their top order (ties, edges that share an end, do not count).
    std::vector<double> levels;
    for (const QPointF& c : layout.nodeCenters)
        levels.push_back(std::round(c.y()));
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    if (levels.size() < 2)
        return 0;
    const std::size_t edges = std::min(request.edges.size(), layout.edgePaths.size());
    std::vector<std::vector<std::pair<double, double>>> bands(levels.size() - 1);
    for (std::size_t e = 0; e < edges; ++e) {
        const QList<QPolygonF> polygons = layout.edgePaths[e].toSubpathPolygons();
        if (polygons.isEmpty() || polygons.front().size() < 2)
            continue;
        std::vector<QPointF> points(polygons.front().begin(), polygons.front().end());
        if (points.front().y() > points.back().y())
            std::reverse(points.begin(), points.end());
        const double top = points.front().y(), bottom = points.back().y();
        auto xAt = [&](double y) {
            if (y <= points.front().y())
                return points.front().x();
            for (std::size_t i = 1; i < points.size(); ++i) {
                const QPointF a = points[i - 1], b = points[i];
                if (y <= b.y() && b.y() > a.y())
                    return a.x() + (y - a.y()) / (b.y() - a.y()) * (b.x() - a.x());
            }
            return points.back().x();
        };
        // The bands the edge passes through, wholly or in part.
        const std::size_t first = static_cast<std::size_t>(
            std::upper_bound(levels.begin(), levels.end(), top) - levels.begin());
        const std::size_t from = first == 0 ? 0 : first - 1;
        for (std::size_t band = from; band + 1 < levels.size() && levels[band] < bottom; ++band) {
            const double y0 = std::max(levels[band], top), y1 = std::min(levels[band + 1], bottom);
            if (y1 <= y0)
                continue;
            bands[band].emplace_back(xAt(y0), xAt(y1));
        }
    }
    std::int64_t total = 0;
    std::vector<double> order, scratch;
    for (auto& band : bands) {
        std::sort(band.begin(), band.end());
        order.clear();
        for (const auto& [top, bottom] : band)
            order.push_back(bottom);
        total += inversions(order, scratch);
    }
    return total;
}

} // namespace placer::views
