// The layered layout for large graphs (views/LayeredLayout.h): ranks point down, nodes never
// overlap, the result is deterministic, the sweeps never add crossings, cycles are drawn with
// reversed edges, and every path runs from its tail's bottom to its head's top; against dot on a
// graph dot lays out quickly.
#include "views/GraphvizLayout.h"
#include "views/LayeredLayout.h"
#include "views/LayoutController.h"

#include <QtTest>

#include <algorithm>
#include <random>

using namespace placer::views;

namespace {

/// Transformer-shaped: blocks of a written-out layer norm, three attention heads and a GELU,
/// with residual edges; `blocks` of them (about 28 nodes each), widths as the canvas draws them.
LayoutRequest transformerShaped(int blocks, unsigned seed) {
    std::mt19937 rng(seed);
    LayoutRequest request;
    auto node = [&] {
        request.nodeSizes.emplace_back(80 + static_cast<double>(rng() % 120), 36);
        return static_cast<int>(request.nodeSizes.size() - 1);
    };
    auto edge = [&](int a, int b) { request.edges.emplace_back(a, b); };
    int previous = node();
    for (int b = 0; b < blocks; ++b) {
        // Layer norm, written out.
        const int mean = node(), sub = node(), pow = node(), var = node(), add = node(),
                  sqrt = node(), div = node(), mul = node(), shift = node();
        edge(previous, mean);
        edge(previous, sub);
        edge(mean, sub);
        edge(sub, pow);
        edge(pow, var);
        edge(var, add);
        edge(add, sqrt);
        edge(sub, div);
        edge(sqrt, div);
        edge(div, mul);
        edge(mul, shift);
        // Three heads: q, k, v projections, scores, softmax, weighted sum.
        const int concat = node();
        for (int h = 0; h < 3; ++h) {
            const int q = node(), k = node(), v = node(), scores = node(), soft = node(),
                      sum = node();
            edge(shift, q);
            edge(shift, k);
            edge(shift, v);
            edge(q, scores);
            edge(k, scores);
            edge(scores, soft);
            edge(soft, sum);
            edge(v, sum);
            edge(sum, concat);
        }
        const int residual = node();
        edge(previous, residual);
        edge(concat, residual);
        // GELU, written out.
        const int d = node(), erf = node(), one = node(), x = node(), half = node();
        edge(residual, d);
        edge(d, erf);
        edge(erf, one);
        edge(one, x);
        edge(residual, x);
        edge(x, half);
        previous = half;
    }
    return request;
}

/// A random layered DAG: `n` nodes in ranks of up to `width`, each with 1-3 inputs from the
/// ranks above (some far above), and some weights (sources) feeding a node.
LayoutRequest randomLayered(int n, int width, unsigned seed) {
    std::mt19937 rng(seed);
    LayoutRequest request;
    std::vector<int> rankOf;
    for (int i = 0; i < n; ++i) {
        request.nodeSizes.emplace_back(60 + static_cast<double>(rng() % 140), 36);
        rankOf.push_back(i / width);
    }
    for (int i = width; i < n; ++i) {
        const int inputs = 1 + static_cast<int>(rng() % 3);
        for (int k = 0; k < inputs; ++k) {
            const int span = 1 + static_cast<int>(rng() % 4 == 0 ? rng() % 6 : 0);
            const int rank = std::max(0, rankOf[static_cast<std::size_t>(i)] - span);
            const int from = rank * width + static_cast<int>(rng() % width);
            if (from < i)
                request.edges.emplace_back(from, i);
        }
    }
    return request;
}

void checkLayout(const LayoutRequest& request, const LayoutResult& layout,
                 const LayeredStats& stats, const LayeredOptions& options) {
    const std::size_t n = request.nodeSizes.size();
    QCOMPARE(layout.nodeCenters.size(), n);
    QCOMPARE(layout.edgePaths.size(), request.edges.size());
    // Edges point down, but for the ones reversed to break cycles.
    std::int64_t upward = 0;
    for (const auto& [from, to] : request.edges) {
        const double a = layout.nodeCenters[static_cast<std::size_t>(from)].y();
        const double b = layout.nodeCenters[static_cast<std::size_t>(to)].y();
        if (from != to && b <= a)
            ++upward;
    }
    QCOMPARE(upward, stats.reversedEdges);
    // No two nodes overlap (nor come closer than the gap within a rank).
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const QPointF& p = layout.nodeCenters[a];
        const QPointF& q = layout.nodeCenters[b];
        return p.y() != q.y() ? p.y() < q.y() : p.x() < q.x();
    });
    for (std::size_t k = 1; k < n; ++k) {
        const std::size_t a = order[k - 1], b = order[k];
        if (layout.nodeCenters[a].y() != layout.nodeCenters[b].y())
            continue;
        const double room = layout.nodeCenters[b].x() - layout.nodeCenters[a].x() -
                            (request.nodeSizes[a].width() + request.nodeSizes[b].width()) / 2;
        QVERIFY2(room >= options.nodeGap - 1e-6,
                 qPrintable(QString("nodes %1 and %2 are %3 apart").arg(a).arg(b).arg(room)));
    }
    // Ranks are apart by at least the gap: boxes of different ranks never overlap.
    std::vector<double> levels;
    for (const QPointF& c : layout.nodeCenters)
        levels.push_back(c.y());
    std::sort(levels.begin(), levels.end());
    levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
    for (std::size_t i = 1; i < levels.size(); ++i)
        QVERIFY(levels[i] - levels[i - 1] >= 36 + options.rankGap - 1e-6);
    // Each path from its tail's bottom to its head's top.
    for (std::size_t e = 0; e < request.edges.size(); ++e) {
        const auto [from, to] = request.edges[e];
        if (from == to)
            continue;
        const QPainterPath& path = layout.edgePaths[e];
        const QPointF tail = layout.nodeCenters[static_cast<std::size_t>(from)];
        const QPointF head = layout.nodeCenters[static_cast<std::size_t>(to)];
        const bool down = head.y() > tail.y();
        QVERIFY(std::abs(path.pointAtPercent(0).x() - tail.x()) < 1e-6);
        QVERIFY(std::abs(path.pointAtPercent(0).y() - (tail.y() + (down ? 18 : -18))) < 1e-6);
        QVERIFY(std::abs(path.pointAtPercent(1).x() - head.x()) < 1e-6);
        QVERIFY(std::abs(path.pointAtPercent(1).y() - (head.y() + (down ? -18 : 18))) < 1e-6);
    }
    QVERIFY(stats.crossings <= stats.initialCrossings);
    QVERIFY(layout.bounds.width() > 0 && layout.bounds.height() > 0);
}

} // namespace

class TestLayeredLayout : public QObject {
    Q_OBJECT

private slots:
    void layoutsAreRankedAndDisjoint_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("size");
        QTest::newRow("transformer-shaped, 40 blocks") << 0 << 40;
        QTest::newRow("transformer-shaped, 180 blocks (5,000 nodes)") << 0 << 180;
        QTest::newRow("random layered, 300 nodes") << 1 << 300;
        QTest::newRow("random layered, 5,000 nodes") << 1 << 5000;
    }
    void layoutsAreRankedAndDisjoint() {
        QFETCH(int, kind);
        QFETCH(int, size);
        const LayoutRequest request =
            kind == 0 ? transformerShaped(size, 1) : randomLayered(size, 12, 2);
        LayeredStats stats;
        const LayeredOptions options;
        const LayoutResult layout = layeredLayout(request, options, &stats);
        checkLayout(request, layout, stats, options);
        qInfo("%zu nodes: %d ranks, %lld virtual nodes, crossings %lld (first ordering %lld, "
              "counted on the drawing %lld), %.3f s",
              request.nodeSizes.size(), stats.ranks, static_cast<long long>(stats.virtualNodes),
              static_cast<long long>(stats.crossings),
              static_cast<long long>(stats.initialCrossings),
              static_cast<long long>(countCrossings(request, layout)), layout.seconds);
        QCOMPARE(stats.reversedEdges, std::int64_t{0});
        QVERIFY(stats.crossings < stats.initialCrossings || stats.initialCrossings == 0);
        // The same request, the same layout, to the bit.
        LayeredStats again;
        const LayoutResult second = layeredLayout(request, options, &again);
        QCOMPARE(second.nodeCenters, layout.nodeCenters);
        QCOMPARE(again.crossings, stats.crossings);
        for (std::size_t e = 0; e < layout.edgePaths.size(); ++e)
            QVERIFY(second.edgePaths[e] == layout.edgePaths[e]);
    }

    // Cycles (a collapsed group's edges can make them) are drawn with edges pointing up; self
    // loops get a hook; nothing is lost.
    void cyclesAreDrawnWithReversedEdges() {
        LayoutRequest request;
        for (int i = 0; i < 6; ++i)
            request.nodeSizes.emplace_back(100, 36);
        request.edges = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {3, 4}, {4, 2}, {5, 5}, {4, 5}};
        LayeredStats stats;
        const LayeredOptions options;
        const LayoutResult layout = layeredLayout(request, options, &stats);
        QCOMPARE(stats.reversedEdges, std::int64_t{2});
        for (std::size_t e = 0; e < request.edges.size(); ++e)
            QVERIFY(!layout.edgePaths[e].isEmpty());
        LayoutRequest withoutLoop = request;
        withoutLoop.edges.erase(withoutLoop.edges.begin() + 6);
        LayeredStats loopless;
        const LayoutResult drawn = layeredLayout(withoutLoop, options, &loopless);
        checkLayout(withoutLoop, drawn, loopless, options);
        // An empty request gives an empty result.
        const LayoutResult empty = layeredLayout(LayoutRequest{});
        QVERIFY(empty.nodeCenters.empty() && empty.edgePaths.empty());
    }

    // The canvas uses dot up to kLayeredNodes, the layered layout above; on a graph dot lays out
    // quickly, the layered layout has at most 1.3 times dot's crossings (the benchmark reports
    // the ratio on the bundled models and larger graphs).
    void againstDotOnASmallGraph_data() {
        QTest::addColumn<int>("kind");
        QTest::newRow("transformer-shaped") << 0;
        QTest::newRow("random layered") << 1;
    }
    void againstDotOnASmallGraph() {
        QFETCH(int, kind);
        const LayoutRequest request =
            kind == 0 ? transformerShaped(12, 3) : randomLayered(300, 12, 5);
        QVERIFY(request.nodeSizes.size() <= LayoutController::kLayeredNodes);
        const LayoutResult dot = computeLayout(request);
        QVERIFY2(dot.error.isEmpty(), qPrintable(dot.error));
        const LayoutResult layered = layeredLayout(request);
        const std::int64_t dotCrossings = countCrossings(request, dot);
        const std::int64_t ours = countCrossings(request, layered);
        qInfo("crossings on %zu nodes: dot %lld, layered %lld", request.nodeSizes.size(),
              static_cast<long long>(dotCrossings), static_cast<long long>(ours));
        QVERIFY2(ours <= 13 * dotCrossings / 10 + 5, // the goal: 1.3x dot's at most
                 qPrintable(QString("layered %1 against dot's %2").arg(ours).arg(dotCrossings)));
        QVERIFY(LayoutController::layoutFor(transformerShaped(80, 4)).error.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestLayeredLayout)
#include "tst_layeredlayout.moc"
