// A graph of tens of thousands of nodes on the canvas: its prediction follows its plan when the
// window is idle, and the minimap shows the whole plan from an image the scene paints.
#include "CanvasFixture.h"
#include "ScopedLayers.h"

#include "io/ModelLoader.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "views/CopyBadgeItem.h"
#include "views/DevicePalette.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/LayoutController.h"
#include "views/MiniMap.h"
#include "views/NodeItem.h"
#include "views/PlacementDocument.h"
#include "views/PlanSummary.h"

#include <QApplication>
#include <QLabel>
#include <QSignalSpy>
#include <QtTest>

#include <string>

using namespace placer;

namespace {

/// A canvas whose plans predict with assumed costs.
struct Canvas : test::CanvasFixture {
    Canvas() : CanvasFixture(QSize(900, 700)) {
        document.setCostSource([](const DeviceSet& devices) {
            return std::make_shared<const CostModel>(CostModel::assumed(devices, 2));
        });
    }
};

/// Whether `image` has a pixel of `colour`.
bool shows(const QImage& image, const QColor& colour) {
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (image.pixelColor(x, y).rgb() == colour.rgb())
                return true;
    return false;
}

} // namespace

class TestLargeGraph : public QObject {
    Q_OBJECT

private slots:
    void aLargeGraphIsPredictedWhenIdle() {
        Canvas canvas;
        QString error;
        QVERIFY2(canvas.document.openText(test::scopedLayersJson(500, 41),
                                          QStringLiteral("large.json"), &error),
                 qPrintable(error));
        views::PlacementDocument& document = canvas.document;
        QVERIFY(document.graph().size() > views::PlacementDocument::kDeferredPrediction);
        // The plan is there at once, its prediction when the window is next idle.
        QVERIFY(document.predictionPending());
        QVERIFY(!document.plan().prediction);
        QVERIFY(document.plan().memory.devices.empty()); // no capacity to check: it follows
        QVERIFY(views::planSummary(document).contains(QStringLiteral("predicting")));
        // The device chips say the peak is still to come, then say it.
        views::DevicePalette palette(&document);
        const auto chipSays = [&](const QString& text) {
            for (QLabel* label : palette.chip(QStringLiteral("gpu"))->findChildren<QLabel*>())
                if (label->text().contains(text))
                    return true;
            return false;
        };
        QVERIFY(chipSays(QStringLiteral("node(s) · …")) || chipSays(QStringLiteral("nodes · …")));
        QSignalSpy predicted(&document, &views::PlacementDocument::predictionChanged);
        QTRY_VERIFY(!document.predictionPending());
        QCOMPARE(predicted.count(), 1);
        QVERIFY(document.plan().prediction);
        QVERIFY(!document.plan().memory.devices.empty());
        QVERIFY(views::planSummary(document).contains(QStringLiteral("peak memory")));
        QVERIFY(!chipSays(QStringLiteral("…")) && chipSays(QStringLiteral(" KiB")));
        QVERIFY(views::planSummary(document).contains(QStringLiteral("predicted latency")));
        // The same plan, and the prediction a plan made at once with the costs has.
        PlanOptions options = document.options();
        const Plan whole = planDevices(document.graph(), document.devices(), options);
        QVERIFY(whole.prediction);
        QCOMPARE(document.plan().devices, whole.devices);
        QCOMPARE(document.plan().copies.size(), whole.copies.size());
        QCOMPARE(document.plan().prediction->makespanMicros, whole.prediction->makespanMicros);
        QCOMPARE(document.plan().prediction->micros, whole.prediction->micros);
        // An edit: placed at once; a burst of edits is predicted once.
        const NodeId op = *document.graph().find("/layer250/op7");
        const DeviceId cpu = *document.devices().find("cpu");
        document.setPins({op}, {Pin{PinKind::Plain, cpu, "test"}});
        QCOMPARE(document.plan().devices[op.index], cpu);
        QVERIFY(document.predictionPending());
        const NodeId next = *document.graph().find("/layer250/op8");
        document.setPins({next}, {Pin{PinKind::Plain, cpu, "test"}});
        QTRY_VERIFY(!document.predictionPending());
        QCOMPARE(predicted.count(), 2);
        QCOMPARE(document.plan().devices[next.index], cpu);
        QCOMPARE(document.plan().prediction->micros.size(), document.graph().size());
        // What needs the whole plan now (a run, a save) has it at once.
        document.setPins({next}, {Pin{}});
        QVERIFY(document.predictionPending());
        document.settlePrediction();
        QVERIFY(!document.predictionPending());
        QVERIFY(document.plan().prediction);
        QCOMPARE(predicted.count(), 3);
        // Auto mode places by the prediction: never deferred.
        document.setMode(PlanMode::Auto);
        QVERIFY(!document.predictionPending());
        QVERIFY(document.plan().prediction);
    }

    void aCapacityIsCheckedAtOnce() {
        // A device with a memory capacity: the plan is checked against it with every edit,
        // however large the graph; only the prediction waits.
        std::string json = test::scopedLayersJson(500, 41);
        const std::string gpu = R"("kind": "cuda"})";
        json.replace(json.find(gpu), gpu.size(), R"("kind": "cuda", "memory": 1000})");
        Canvas canvas;
        QString error;
        QVERIFY2(canvas.document.openText(json, QStringLiteral("capacity.json"), &error),
                 qPrintable(error));
        QVERIFY(canvas.document.predictionPending());
        QVERIFY(!canvas.document.plan().memory.devices.empty());
        const auto capacity = std::find_if(
            canvas.document.plan().conflicts.begin(), canvas.document.plan().conflicts.end(),
            [](const Conflict& c) { return c.kind == ConflictKind::MemoryCapacity; });
        QVERIFY(capacity != canvas.document.plan().conflicts.end());
    }

    void aSmallGraphIsPredictedWithItsPlan() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(3, 5), QStringLiteral("small.json"),
                                         &error));
        QVERIFY(!canvas.document.predictionPending());
        QVERIFY(canvas.document.plan().prediction);
    }

    void largeGraphsStartWithTheirScopesCollapsed() {
        const auto scopesOf = [](const std::string& json) {
            auto loaded = loadModelText(json, "scoped.json", GraphFormat::Json, std::nullopt);
            if (!loaded)
                qFatal("%s", loaded.error().message.c_str());
            return views::LayoutController::startingScopes(loaded.value().graph);
        };
        // 100 layers of 41 ops: each layer a group.
        const auto layers = scopesOf(test::scopedLayersJson(100, 41));
        QCOMPARE(layers.size(), std::size_t(100));
        QVERIFY(layers.count("/layer42/"));
        // All under one outer scope: one level in, not one group of everything.
        const auto inner = scopesOf(test::scopedLayersJson(100, 41, "/model"));
        QCOMPARE(inner.size(), std::size_t(100));
        QVERIFY(inner.count("/model/layer42/"));
        // Everything in one scope, nothing deeper: one box would hide the graph.
        // "/layer7/op3" -> "/model/layer7_op3".
        std::string single = test::scopedLayersJson(100, 41);
        for (std::size_t at = single.find("\"/layer"); at != std::string::npos;
             at = single.find("\"/layer", at + 1)) {
            single[single.find('/', at + 2)] = '_';
            single.replace(at + 1, 1, "/model/");
        }
        QVERIFY(scopesOf(single).empty());
        // Small graphs, and graphs without scopes, open as they are.
        QVERIFY(scopesOf(test::scopedLayersJson(20, 41)).empty());
        std::string flat = test::scopedLayersJson(100, 41);
        for (std::size_t at = flat.find("/layer"); at != std::string::npos;
             at = flat.find("/layer", at))
            flat[at] = '_';
        QVERIFY(scopesOf(flat).empty());
        // On the canvas: groups, and a node inside one is shown by opening its group.
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(100, 41), QStringLiteral("g.json"),
                                         &error));
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(100));
        const NodeId inside = *canvas.document.graph().find("/layer57/op3");
        QVERIFY(!canvas.scene.nodeItem(inside));
        QVERIFY(canvas.scene.inCollapsedGroup(inside));
        // A run's times: a closed group shows the sum of its nodes' (41 of 0.5 ms here).
        canvas.scene.setNodeTimes(std::vector<double>(canvas.document.graph().size(), 0.5));
        int groups = 0;
        for (QGraphicsItem* item : canvas.scene.items()) {
            if (auto* group = qgraphicsitem_cast<views::GroupItem*>(item)) {
                QCOMPARE(group->timingMillis(), 20.5);
                ++groups;
            }
        }
        QCOMPARE(groups, 100);
        canvas.scene.setNodeTimes({});
        canvas.view->showNode(inside);
        QVERIFY(finished.wait(60000));
        QVERIFY(canvas.scene.nodeItem(inside));
        QVERIFY(!canvas.scene.collapsed().count("/layer57/"));
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(99));
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{inside});
        QVERIFY(canvas.view->viewport()->rect().contains(
            canvas.view->mapFromScene(canvas.scene.nodeItem(inside)->pos())));
    }

    void anOpenedGroupIsAFrameLaidOutOnItsOwn() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(100, 41, "/model"),
                                         QStringLiteral("nested.json"), &error));
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QSignalSpy messages(canvas.layout, &views::LayoutController::message);
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(100));
        const Graph& graph = canvas.document.graph();
        const NodeId pinned = *graph.find("/model/layer57/op3");
        const DeviceId cpu = *canvas.document.devices().find("cpu");
        canvas.document.setPins({pinned}, {Pin{PinKind::Plain, cpu, "test"}});
        const NodeId input = *graph.find("x");
        canvas.scene.nodeItem(input)->setSelected(true);
        // A run's times (0.25 ms a node), shown on the groups and kept by every layout below.
        canvas.scene.setNodeTimes(std::vector<double>(graph.size(), 0.25));
        // Double-clicking a group opens it as a frame around its nodes.
        views::GroupItem* group = nullptr;
        for (QGraphicsItem* item : canvas.scene.items())
            if (auto* candidate = qgraphicsitem_cast<views::GroupItem*>(item))
                if (candidate->scope() == QStringLiteral("/model/layer57/"))
                    group = candidate;
        QVERIFY(group);
        canvas.view->centerOn(group);
        // As a user's double-click: a click (it selects the group), then the double-click.
        QTest::mouseClick(canvas.view->viewport(), Qt::LeftButton, {},
                          canvas.view->mapFromScene(group->pos()));
        QTest::mouseDClick(canvas.view->viewport(), Qt::LeftButton, {},
                           canvas.view->mapFromScene(group->pos()));
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.opened(), std::set<std::string>{"/model/layer57/"});
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(99));
        QCOMPARE(canvas.scene.frames().size(), std::size_t(1));
        views::FrameItem* frame = canvas.scene.frames().front();
        QCOMPARE(frame->scope(), QStringLiteral("/model/layer57/"));
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            if (graph.nodes()[i].name.rfind("/model/layer57/", 0) != 0)
                continue;
            views::NodeItem* item = canvas.scene.nodeItem(NodeId(i));
            QVERIFY2(item, graph.nodes()[i].name.c_str());
            QVERIFY(frame->rect().contains(item->sceneBoundingRect().adjusted(4, 4, -4, -4)));
            QVERIFY(
                !frame->titleRect().intersects(item->sceneBoundingRect().adjusted(4, 4, -4, -4)));
        }
        // No group box overlaps the frame; the pin and the selection outlived the layout.
        for (QGraphicsItem* item : canvas.scene.items())
            if (auto* other = qgraphicsitem_cast<views::GroupItem*>(item))
                QVERIFY(
                    !frame->rect().intersects(other->sceneBoundingRect().adjusted(4, 4, -4, -4)));
        QVERIFY(canvas.scene.nodeItem(pinned)->isPinned());
        QCOMPARE(canvas.document.plan().devices[pinned.index], cpu);
        QCOMPARE(canvas.scene.nodeItem(pinned)->timingMillis(), 0.25);
        // The click selected the group; its nodes stay selected inside the frame.
        QCOMPARE(canvas.scene.selectedNodes().size(), std::size_t(41));
        QVERIFY(canvas.scene.nodeItem(pinned)->isSelected());
        canvas.scene.clearSelection();
        canvas.scene.nodeItem(input)->setSelected(true);
        // The top and the new frame were laid out.
        QVERIFY2(messages.last().at(0).toString().contains(QStringLiteral("(2 of 2 levels")),
                 qPrintable(messages.last().at(0).toString()));
        // Opening a second group lays out that group and the top; the first frame is kept.
        canvas.layout->expand("/model/layer5/");
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.frames().size(), std::size_t(2));
        QVERIFY2(messages.last().at(0).toString().contains(QStringLiteral("(2 of 3 levels")),
                 qPrintable(messages.last().at(0).toString()));
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{input});
        // Double-clicking a frame's title closes it again.
        frame = nullptr;
        for (views::FrameItem* candidate : canvas.scene.frames())
            if (candidate->scope() == QStringLiteral("/model/layer57/"))
                frame = candidate;
        QVERIFY(frame);
        const QPointF title = frame->titleRect().center();
        canvas.view->centerOn(title);
        QTest::mouseDClick(canvas.view->viewport(), Qt::LeftButton, {},
                           canvas.view->mapFromScene(title));
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.opened(), std::set<std::string>{"/model/layer5/"});
        QVERIFY(canvas.scene.collapsed().count("/model/layer57/"));
        QVERIFY(!canvas.scene.nodeItem(pinned));
        for (QGraphicsItem* item : canvas.scene.items())
            if (auto* closed = qgraphicsitem_cast<views::GroupItem*>(item))
                QCOMPARE(closed->timingMillis(), 41 * 0.25);
        QCOMPARE(canvas.document.plan().devices[pinned.index], cpu);
        // Collapsing everything closes the frames.
        canvas.layout->collapseAll();
        QVERIFY(finished.wait(60000));
        QVERIFY(canvas.scene.opened().empty());
        QVERIFY(canvas.scene.frames().empty());
    }

    void openingAScopeShowsTheScopesInsideCollapsed() {
        // /model/ opened: its 100 layers are boxes inside its frame, not 4,100 loose nodes.
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(100, 41, "/model"),
                                         QStringLiteral("nested.json"), &error));
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QVERIFY(finished.wait(60000));
        canvas.layout->collapseAll();
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.collapsed(), std::set<std::string>{"/model/"});
        canvas.layout->expand("/model/");
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.opened(), std::set<std::string>{"/model/"});
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(100));
        QCOMPARE(canvas.scene.frames().size(), std::size_t(1));
        // Finding a node inside opens the way to it: /model/ stays a frame, its layer another.
        const NodeId inside = *canvas.document.graph().find("/model/layer3/op2");
        canvas.view->showNode(inside);
        QVERIFY(finished.wait(60000));
        QVERIFY(canvas.scene.nodeItem(inside));
        QCOMPARE(canvas.scene.opened(), (std::set<std::string>{"/model/", "/model/layer3/"}));
        QCOMPARE(canvas.scene.frames().size(), std::size_t(2));
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{inside});
    }

    void aRelayoutKeepsTheSelectionThroughItsQuickLayout() {
        // 1,231 drawn nodes: dot lays them out, a quick layout shown meanwhile.
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(30, 41), QStringLiteral("m.json"),
                                         &error));
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QVERIFY(finished.wait(60000));
        QVERIFY(canvas.scene.collapsed().empty());
        const NodeId chosen = *canvas.document.graph().find("/layer3/op5");
        canvas.scene.nodeItem(chosen)->setSelected(true);
        canvas.view->zoomIn();
        const double zoom = canvas.view->zoom();
        canvas.layout->collapse("/layer20/");
        QVERIFY(canvas.scene.hasItems()); // the quick layout, already showing the selection
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{chosen});
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{chosen});
        QCOMPARE(canvas.view->zoom(), zoom); // the view stays on the group just closed
    }

    void aReplanKeepsTheBadgesOfCopiesItStillHas() {
        // Adding items to a scene of 150,000 costs more than restyling it: a re-plan keeps the
        // badges of the copies the new plan has too, and shows exactly the new plan's copies.
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(6, 5), QStringLiteral("g.json"),
                                         &error));
        canvas.layout->layoutNow();
        const Graph& graph = canvas.document.graph();
        const DeviceId cpu = *canvas.document.devices().find("cpu");
        canvas.document.setPins({*graph.find("/layer1/op2")}, {Pin{PinKind::Plain, cpu, "t"}});
        const std::vector<views::CopyBadgeItem*> first = canvas.scene.badges();
        QVERIFY(first.size() >= 2);
        canvas.scene.setCopyTimes(std::vector<double>(canvas.document.plan().copies.size(), 0.5));
        QVERIFY(!first.front()->timing().isEmpty());
        // A pin far away: its copies are added, the first pin's kept as they were.
        canvas.document.setPins({*graph.find("/layer4/op1")}, {Pin{PinKind::Plain, cpu, "t"}});
        const std::vector<views::CopyBadgeItem*> second = canvas.scene.badges();
        QVERIFY(second.size() >= first.size() + 2);
        for (views::CopyBadgeItem* kept : first) {
            QVERIFY(std::find(second.begin(), second.end(), kept) != second.end());
            QVERIFY(kept->timing().isEmpty()); // the run's time went with its plan
        }
        // Every badge names its copy in the new plan, and each copy has its badge.
        const Plan& plan = canvas.document.plan();
        std::set<int> shown;
        for (views::CopyBadgeItem* badge : second) {
            QVERIFY(badge->copyIndex() >= 0 &&
                    static_cast<std::size_t>(badge->copyIndex()) < plan.copies.size());
            const CopyPlan& copy = plan.copies[static_cast<std::size_t>(badge->copyIndex())];
            QVERIFY(std::find(copy.consumers.begin(), copy.consumers.end(), badge->consumer()) !=
                    copy.consumers.end());
            shown.insert(badge->copyIndex());
        }
        QCOMPARE(shown.size(), plan.copies.size());
        // Unpinning the first: its badges go, and no others.
        canvas.document.setPins({*graph.find("/layer1/op2")}, {Pin{}});
        for (views::CopyBadgeItem* badge : canvas.scene.badges())
            QVERIFY(std::find(first.begin(), first.end(), badge) == first.end());
        QCOMPARE(canvas.scene.badges().size(), second.size() - first.size());
    }

    void theMinimapShowsThePlanAndMovesTheCanvas() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.document.openText(test::scopedLayersJson(60, 12),
                                         QStringLiteral("tall.json"), &error));
        canvas.layout->layoutNow();
        views::MiniMap* map = canvas.view->miniMap();
        QTRY_VERIFY(map->isVisible()); // the tall graph does not fit the canvas
        QTRY_VERIFY(!map->overview().isNull());
        const QColor gpu = canvas.document.deviceColor(*canvas.document.devices().find("gpu"));
        const QColor cpu = canvas.document.deviceColor(*canvas.document.devices().find("cpu"));
        // Everything runs on the default gpu but the input, which the host holds.
        QVERIFY(shows(map->overview(), gpu));
        // Never more than a third of the canvas across or down.
        QVERIFY(map->width() <= canvas.view->viewport()->width() / 3 + 1);
        QVERIFY(map->height() <= canvas.view->viewport()->height() / 3 + 1);
        // Half the graph pinned to the cpu: the overview follows the plan.
        std::vector<NodeId> nodes;
        std::vector<Pin> pins;
        for (std::uint32_t i = 1; i < canvas.document.graph().size() / 2; ++i) {
            nodes.push_back(NodeId(i));
            pins.push_back(Pin{PinKind::Plain, *canvas.document.devices().find("cpu"), "test"});
        }
        const QImage before = map->overview();
        canvas.document.setPins(nodes, pins);
        QTRY_VERIFY(map->overview() != before);
        QVERIFY(shows(map->overview(), cpu));
        QVERIFY(shows(map->overview(), gpu));
        // A click on the map centres the canvas there.
        const QPoint low(map->width() / 2, map->height() - 10);
        QTest::mouseClick(map, Qt::LeftButton, {}, low);
        const QPointF centre = canvas.view->mapToScene(canvas.view->viewport()->rect().center());
        const QPointF wanted = map->toScene(low);
        const QRectF visible =
            canvas.view->mapToScene(canvas.view->viewport()->rect()).boundingRect();
        QVERIFY2(visible.contains(wanted) && std::abs(centre.y() - wanted.y()) < 60,
                 qPrintable(QStringLiteral("centre %1,%2 wanted %3,%4")
                                .arg(centre.x())
                                .arg(centre.y())
                                .arg(wanted.x())
                                .arg(wanted.y())));
    }
};

QTEST_MAIN(TestLargeGraph)
#include "tst_largegraph.moc"
