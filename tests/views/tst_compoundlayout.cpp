// Open groups laid out as frames (views/CompoundLayout.h): every node and inner frame inside its
// frame, nothing overlapping at a level, edges from tail to head, deterministic, and opening one
// group lays out that group and its ancestors only (the others come from the level cache).
#include "views/CompoundLayout.h"
#include "views/LayeredLayout.h"

#include <QtTest>

#include <random>

using namespace placer::views;

namespace {

/// Top: a chain of `perFrame` nodes, then frames 0 and 1 side by side (each a chain with a
/// branch), frame 2 inside frame 0; edges cross frame borders at every depth.
LayoutRequest nested(int perFrame, unsigned seed = 1) {
    std::mt19937 rng(seed);
    LayoutRequest request;
    request.frameParent = {-1, -1, 0};
    request.frameTitles = {QSizeF(120, 20), QSizeF(260, 20), QSizeF(90, 20)};
    auto chain = [&](int frame) {
        std::vector<int> nodes;
        for (int i = 0; i < perFrame; ++i) {
            request.nodeSizes.emplace_back(60 + static_cast<double>(rng() % 80), 30);
            request.nodeFrame.push_back(frame);
            nodes.push_back(static_cast<int>(request.nodeSizes.size() - 1));
            if (i > 0)
                request.edges.emplace_back(nodes[static_cast<std::size_t>(i - 1)], nodes.back());
            if (i > 1 && i % 3 == 0) // a skip
                request.edges.emplace_back(nodes[static_cast<std::size_t>(i - 2)], nodes.back());
        }
        return nodes;
    };
    const auto top = chain(-1);
    const auto a = chain(0);
    const auto b = chain(1);
    const auto inner = chain(2);
    const auto tail = chain(-1);
    request.edges.emplace_back(top.back(), a.front());
    request.edges.emplace_back(top.back(), b.front());
    request.edges.emplace_back(a.back(), inner.front());    // into a frame inside its own
    request.edges.emplace_back(inner.back(), tail.front()); // out of two frames at once
    request.edges.emplace_back(b.back(), tail.front());
    request.edges.emplace_back(top.front(), inner[1]); // from the top into the innermost
    return request;
}

QRectF boxOf(const LayoutRequest& request, const LayoutResult& result, int node) {
    const QSizeF size = request.nodeSizes[static_cast<std::size_t>(node)];
    return QRectF(result.nodeCenters[static_cast<std::size_t>(node)] -
                      QPointF(size.width() / 2, size.height() / 2),
                  size);
}

LayoutResult layered(const LayoutRequest& request) {
    return layeredLayout(request);
}

} // namespace

class TestCompoundLayout : public QObject {
    Q_OBJECT

private slots:
    void framesHoldTheirContentsAndNothingOverlaps() {
        const LayoutRequest request = nested(7);
        const LayoutResult result = compoundLayout(request, layered);
        QVERIFY2(result.error.isEmpty(), qPrintable(result.error));
        QCOMPARE(result.frameRects.size(), std::size_t{3});
        QCOMPARE(result.nodeCenters.size(), request.nodeSizes.size());
        QCOMPARE(result.levels, 4);
        // Each node inside its frame, each frame inside its parent, under the title.
        for (std::size_t n = 0; n < request.nodeSizes.size(); ++n) {
            const int frame = request.nodeFrame[n];
            if (frame < 0)
                continue;
            const QRectF rect = result.frameRects[static_cast<std::size_t>(frame)];
            const QRectF box = boxOf(request, result, static_cast<int>(n));
            QVERIFY2(rect.contains(box), qPrintable(QString::number(n)));
            QVERIFY(box.top() >= rect.top() + request.frameTitles[std::size_t(frame)].height());
        }
        QVERIFY(result.frameRects[0].contains(result.frameRects[2]));
        for (std::size_t f = 0; f < 3; ++f)
            QVERIFY(result.frameRects[f].width() >= request.frameTitles[f].width());
        // At each level: the boxes there (nodes and frames) are apart.
        for (int level = -1; level < 3; ++level) {
            std::vector<QRectF> boxes;
            for (std::size_t n = 0; n < request.nodeSizes.size(); ++n)
                if (request.nodeFrame[n] == level)
                    boxes.push_back(boxOf(request, result, static_cast<int>(n)));
            for (std::size_t f = 0; f < 3; ++f)
                if (request.frameParent[f] == level)
                    boxes.push_back(result.frameRects[f]);
            for (std::size_t i = 0; i < boxes.size(); ++i)
                for (std::size_t j = i + 1; j < boxes.size(); ++j)
                    QVERIFY2(
                        !boxes[i].adjusted(1, 1, -1, -1).intersects(boxes[j]),
                        qPrintable(QStringLiteral("level %1: %2 and %3").arg(level).arg(i).arg(j)));
        }
        // The two frames at the top sit side by side, under the chain that feeds both.
        QVERIFY(!result.frameRects[0].intersects(result.frameRects[1]));
        QVERIFY(boxOf(request, result, 6).bottom() <
                std::min(result.frameRects[0].top(), result.frameRects[1].top()));
    }

    void edgesRunFromTailToHeadAndPointDown() {
        const LayoutRequest request = nested(6);
        const LayoutResult result = compoundLayout(request, layered);
        QCOMPARE(result.edgePaths.size(), request.edges.size());
        for (std::size_t e = 0; e < request.edges.size(); ++e) {
            const auto [from, to] = request.edges[e];
            const QPainterPath& path = result.edgePaths[e];
            QVERIFY(!path.isEmpty());
            const QRectF tail = boxOf(request, result, from), head = boxOf(request, result, to);
            const QPointF start = path.pointAtPercent(0), end = path.pointAtPercent(1);
            QVERIFY2(std::abs(start.y() - tail.bottom()) < 1.5 && tail.left() <= start.x() &&
                         start.x() <= tail.right(),
                     qPrintable(QStringLiteral("%1: (%2, %3) from %4 %5 %6 %7")
                                    .arg(e)
                                    .arg(start.x())
                                    .arg(start.y())
                                    .arg(tail.left())
                                    .arg(tail.top())
                                    .arg(tail.right())
                                    .arg(tail.bottom())));
            QVERIFY2(std::abs(end.y() - head.top()) < 1.5 && head.left() <= end.x() &&
                         end.x() <= head.right(),
                     qPrintable(QString::number(e)));
            QVERIFY2(tail.center().y() < head.center().y(), qPrintable(QString::number(e)));
        }
    }

    void theLayoutIsDeterministic() {
        const LayoutRequest request = nested(9, 7);
        const LayoutResult a = compoundLayout(request, layered);
        const LayoutResult b = compoundLayout(request, layered);
        QCOMPARE(a.nodeCenters, b.nodeCenters);
        QCOMPARE(a.frameRects, b.frameRects);
        for (std::size_t e = 0; e < a.edgePaths.size(); ++e)
            QCOMPARE(a.edgePaths[e], b.edgePaths[e]);
    }

    void openingAGroupLaysOutItAndItsAncestorsOnly() {
        LevelCache cache;
        CompoundStats stats;
        LayoutRequest request = nested(5);
        const LayoutResult first = compoundLayout(request, layered, &cache, &stats);
        QCOMPARE(stats.levels, 4);
        QCOMPARE(stats.laidOut, 4);
        QCOMPARE(cache.size(), std::size_t{4});
        // The same again: everything kept, the same drawing.
        const LayoutResult again = compoundLayout(request, layered, &cache, &stats);
        QCOMPARE(stats.laidOut, 0);
        QCOMPARE(stats.fromCache, 4);
        QCOMPARE(again.nodeCenters, first.nodeCenters);
        QCOMPARE(again.frameRects, first.frameRects);
        // Frame 2 (inside frame 0) gets a node, as when a group inside it is opened: frame 2,
        // frame 0 and the top are laid out again; frame 1 is kept.
        request.nodeSizes.emplace_back(300, 30);
        request.nodeFrame.push_back(2);
        request.edges.emplace_back(static_cast<int>(request.nodeSizes.size()) - 2,
                                   static_cast<int>(request.nodeSizes.size()) - 1);
        const LayoutResult grown = compoundLayout(request, layered, &cache, &stats);
        QCOMPARE(stats.laidOut, 3);
        QCOMPARE(stats.fromCache, 1);
        // A change inside frame 1 leaves frames 0 and 2 as they were.
        QCOMPARE(request.nodeFrame[10], 1);
        request.nodeSizes[10] = QSizeF(600, 30); // wider than frame 1 was
        const LayoutResult changed = compoundLayout(request, layered, &cache, &stats);
        QCOMPARE(stats.laidOut, 2);
        QCOMPARE(stats.fromCache, 2);
        // Frame 0's contents moved with it, not within it.
        const QPointF shift = changed.frameRects[0].topLeft() - grown.frameRects[0].topLeft();
        QCOMPARE(changed.nodeCenters[5] - shift, grown.nodeCenters[5]);
    }

    void theCacheIsBoundedByTheNodesItHolds() {
        LevelCache cache(20);
        LayoutRequest small;
        for (int i = 0; i < 8; ++i)
            small.nodeSizes.emplace_back(40 + i, 20);
        LayoutResult result = layered(small);
        cache.insert(small, result);
        small.nodeSizes.emplace_back(50, 20);
        cache.insert(small, layered(small));
        QCOMPARE(cache.size(), std::size_t{2});
        small.nodeSizes.emplace_back(60, 20); // 8 + 9 + 10 > 20: the oldest goes
        cache.insert(small, layered(small));
        QCOMPARE(cache.size(), std::size_t{2});
        LayoutResult found;
        small.nodeSizes.resize(8);
        QVERIFY(!cache.find(small, &found));
        small.nodeSizes.emplace_back(50, 20);
        QVERIFY(cache.find(small, &found));
        QCOMPARE(found.nodeCenters.size(), std::size_t{9});
    }

    void withoutFramesItIsTheFlatLayout() {
        LayoutRequest request = nested(4);
        request.frameParent.clear();
        request.frameTitles.clear();
        request.nodeFrame.clear();
        const LayoutResult compound = compoundLayout(request, layered);
        const LayoutResult flat = layered(request);
        QCOMPARE(compound.nodeCenters, flat.nodeCenters);
        QVERIFY(compound.frameRects.empty());
    }

    void badFramesDoNotAbort() {
        // Parents that loop or point nowhere, node frames out of range: laid out, not crashed.
        LayoutRequest request = nested(3);
        request.frameParent = {1, 0, 7};
        request.nodeFrame[0] = 12;
        request.edges.emplace_back(-1, 3);
        request.edges.emplace_back(2, 2);
        const LayoutResult result = compoundLayout(request, layered);
        QVERIFY(result.error.isEmpty());
        QCOMPARE(result.nodeCenters.size(), request.nodeSizes.size());
        QCOMPARE(result.edgePaths.size(), request.edges.size());
        // A level whose layout fails fails the whole, with its reason.
        const LayoutResult failed = compoundLayout(nested(3), [](const LayoutRequest&) {
            LayoutResult broken;
            broken.error = QStringLiteral("no layout");
            return broken;
        });
        QCOMPARE(failed.error, QStringLiteral("no layout"));
    }
};

QTEST_MAIN(TestCompoundLayout)
#include "tst_compoundlayout.moc"
