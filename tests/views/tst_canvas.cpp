// The canvas's parts on their own: the layout controller (background and synchronous layouts,
// collapsing and expanding name scopes, cancelling), the context menu driven through its real
// popup, find, the planner-mode box, a copy badge's click, and the status line on a plan.
#include "CanvasFixture.h"
#include "views/CopyBadgeItem.h"
#include "views/FrameItem.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/GroupItem.h"
#include "views/LayoutController.h"
#include "views/ModeBox.h"
#include "views/NodeItem.h"
#include "views/NodeMenu.h"
#include "views/PlacementDocument.h"
#include "views/PlanSummary.h"
#include "views/PropertiesPanel.h"

#include <QApplication>
#include <QMenu>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include <functional>

using namespace placer;

namespace {

// Two name scopes (/a/ and /b/), a conv that gpu runs and a copy back to cpu.
const char* const kScoped = R"({"format": "placer-graph", "version": 1,
  "devices": [{"name": "cpu", "kind": "cpu"}, {"name": "gpu", "kind": "cuda"}],
  "default": "gpu", "host": "cpu",
  "nodes": [
    {"name": "x", "op": "parameter", "outputs": [{"shape": [1, 1, 4, 4], "dtype": "float32"}]},
    {"name": "w", "op": "parameter", "outputs": [{"shape": [1, 1, 1, 1], "dtype": "float32"}]},
    {"name": "/a/conv", "op": "nn.conv2d", "inputs": ["x", "w"], "pin": {"device": "gpu"}},
    {"name": "/a/relu", "op": "nn.relu", "inputs": ["/a/conv"]},
    {"name": "/b/neg", "op": "negative", "inputs": ["/a/relu"]},
    {"name": "/b/exp", "op": "exp", "inputs": ["/b/neg"], "pin": {"device": "cpu"}}
  ],
  "outputs": ["/b/exp"]})";

struct Canvas : test::CanvasFixture {
    Canvas() : CanvasFixture(QSize(800, 600)) {}
    bool open(const char* text, QString* error) {
        return document.openText(text, QStringLiteral("scoped.json"), error);
    }
    NodeId node(const char* name) const { return *document.graph().find(name); }
};

/// Runs `show`, which opens a context menu and returns when it closes; once the menu shows,
/// `pick` triggers one of its actions (the menu is modal: it is answered from inside its event
/// loop). Returns the texts of the menu's actions.
QStringList answeringMenu(const std::function<void()>& show,
                          const std::function<void(QMenu*)>& pick) {
    QStringList offered;
    QTimer poll;
    poll.setInterval(20);
    QObject::connect(&poll, &QTimer::timeout, [&] {
        auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
        if (!menu)
            return;
        poll.stop();
        for (QAction* action : menu->actions())
            offered << action->text();
        pick(menu);
        menu->close();
    });
    poll.start();
    show();
    return offered;
}

} // namespace

class TestCanvas : public QObject {
    Q_OBJECT

private slots:
    void controlFlowIsOneNodeWithItsBodyCollapsed() {
        Canvas canvas;
        QString error;
        QVERIFY2(
            canvas.document.open(
                QStringLiteral(PLACER_SOURCE_DIR "/resources/models/tiny_recurrent.onnx"), &error),
            qPrintable(error));
        canvas.layout->layoutNow();
        // The Loop and the If are one node each, drawn with their bodies collapsed behind them;
        // the body's ops are not nodes of the graph the canvas draws.
        QVERIFY(!canvas.document.graph().find("cell_matmul"));
        views::NodeItem* loop = canvas.scene.nodeItem(canvas.node("recurrence"));
        views::NodeItem* branch = canvas.scene.nodeItem(canvas.node("head_by_sign"));
        QVERIFY(loop && branch);
        QCOMPARE(loop->collapsedBody(), 6);
        QCOMPARE(branch->collapsedBody(), 3);
        QCOMPARE(canvas.scene.nodeItem(canvas.node("softmax"))->collapsedBody(), 0);
        QVERIFY2(loop->toolTip().contains("body collapsed") &&
                     loop->toolTip().contains("body: 6 ops"),
                 qPrintable(loop->toolTip()));
        QVERIFY2(branch->toolTip().contains("then_branch: 1 op (MatMul)") &&
                     branch->toolTip().contains("else_branch: 2 ops (MatMul, Neg)"),
                 qPrintable(branch->toolTip()));

        // A click selects it like any node, and the properties list what its body holds.
        canvas.view->centerOn(loop);
        QApplication::processEvents();
        const QPoint at = canvas.view->mapFromScene(loop->sceneBoundingRect().center());
        QTest::mouseClick(canvas.view->viewport(), Qt::LeftButton, {}, at);
        QVERIFY(loop->isSelected());
        views::PropertiesPanel properties(&canvas.document);
        properties.showNodes({loop->node()});
        const QString text = properties.toPlainText();
        QVERIFY2(text.contains("Bodies") &&
                     text.contains(QString::fromUtf8(
                         "body: 6 ops (Add \u00d72, Identity, MatMul, ReduceMean, Tanh)")),
                 qPrintable(text));
    }

    void aNewGraphIsLaidOutInTheBackground() {
        Canvas canvas;
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QString error;
        QVERIFY2(canvas.open(kScoped, &error), qPrintable(error));
        // Until its result arrives (through the event loop) the progress bar shows.
        QVERIFY(!canvas.layout->progressBar()->isHidden());
        QVERIFY(finished.wait(20000));
        QVERIFY(canvas.layout->progressBar()->isHidden());
        for (const char* name : {"/a/conv", "/a/relu", "/b/neg", "/b/exp"})
            QVERIFY2(canvas.scene.nodeItem(canvas.node(name)), name);
        // Nodes are ranked top to bottom along the data flow.
        QVERIFY(canvas.scene.nodeItem(canvas.node("/a/conv"))->y() <
                canvas.scene.nodeItem(canvas.node("/b/exp"))->y());
    }

    void scopesCollapseAndExpand() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->layoutNow();
        canvas.layout->collapse("/a/");
        canvas.layout->layoutNow();
        QCOMPARE(canvas.scene.collapsed(), std::set<std::string>{"/a/"});
        QVERIFY(!canvas.scene.nodeItem(canvas.node("/a/conv"))); // drawn as its group
        QVERIFY(canvas.scene.nodeItem(canvas.node("/b/neg")));
        canvas.layout->collapseAll();
        canvas.layout->layoutNow();
        QCOMPARE(canvas.scene.collapsed(), (std::set<std::string>{"/a/", "/b/"}));
        canvas.layout->expand("/a/");
        canvas.layout->layoutNow();
        QCOMPARE(canvas.scene.collapsed(), std::set<std::string>{"/b/"});
        QVERIFY(canvas.scene.nodeItem(canvas.node("/a/conv")));
        // A new graph starts with its own groups: none collapsed.
        QVERIFY(canvas.document.openText(kScoped, QStringLiteral("other.json"), &error));
        canvas.layout->layoutNow();
        QVERIFY(canvas.scene.collapsed().empty());
    }

    void cancellingShowsARankedLayoutAndDropsTheResult() {
        Canvas canvas;
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QSignalSpy messages(canvas.layout, &views::LayoutController::message);
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->cancel();
        QCOMPARE(finished.size(), 1);
        QVERIFY(canvas.layout->progressBar()->isHidden());
        QVERIFY(canvas.scene.nodeItem(canvas.node("/b/exp"))); // the simple layout is drawn
        QVERIFY(messages.last().at(0).toString().contains("cancelled"));
        QTest::qWait(50);
        while (canvas.layout->isRunning())
            QTest::qWait(20);
        QTest::qWait(20);
        QCOMPARE(finished.size(), 1); // Graphviz's late result was dropped
    }

    void theNodeMenuPinsTheNodeUnderTheCursor() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->layoutNow();
        const NodeId relu = canvas.node("/a/relu");
        views::NodeItem* item = canvas.scene.nodeItem(relu);
        canvas.view->centerOn(item);
        const QPoint at = canvas.view->mapFromScene(item->sceneBoundingRect().center());
        QString pinnedTo;
        std::vector<NodeId> pinnedNodes;
        bool cleared = false;
        const QStringList offered = answeringMenu(
            [&] {
                views::showNodeMenu(canvas.view, &canvas.scene, canvas.document, canvas.layout, at,
                                    {[&](const QString& device, const std::vector<NodeId>& nodes) {
                                         pinnedTo = device;
                                         pinnedNodes = nodes;
                                     },
                                     [&] { cleared = true; }});
            },
            [](QMenu* menu) {
                if (QMenu* pinTo = menu->actions().front()->menu()) {
                    for (QAction* device : pinTo->actions())
                        if (device->text() == "cpu")
                            device->trigger();
                }
            });
        QCOMPARE(pinnedTo, QStringLiteral("cpu"));
        QCOMPARE(pinnedNodes, std::vector<NodeId>{relu});
        QVERIFY(!cleared);
        QVERIFY(item->isSelected()); // the node under the cursor became the selection
        QVERIFY2(offered.contains("Collapse"), qPrintable(offered.join(", ")));
        QVERIFY(offered.contains("Fit Selection"));
    }

    void anOpenGroupsFrameClosesFromItsMenu() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->layoutNow();
        canvas.layout->collapseAll();
        canvas.layout->layoutNow();
        canvas.layout->expand("/a/");
        canvas.layout->layoutNow();
        QCOMPARE(canvas.scene.frames().size(), std::size_t(1));
        views::FrameItem* frame = canvas.scene.frames().front();
        const views::NodeItem* conv = canvas.scene.nodeItem(canvas.node("/a/conv"));
        QRectF box(QPointF(), conv->boxSize());
        box.moveCenter(conv->pos());
        QVERIFY(frame->rect().contains(box));
        canvas.view->centerOn(frame->titleRect().center());
        const QPoint at = canvas.view->mapFromScene(frame->titleRect().center());
        const QStringList offered = answeringMenu(
            [&] {
                views::showNodeMenu(canvas.view, &canvas.scene, canvas.document, canvas.layout, at,
                                    {});
            },
            [](QMenu* menu) { menu->actions().front()->trigger(); });
        QCOMPARE(offered, QStringList{QStringLiteral("Collapse /a/")});
        canvas.layout->layoutNow();
        QVERIFY(canvas.scene.frames().empty());
        QVERIFY(canvas.scene.opened().empty());
        QVERIFY(canvas.scene.collapsed().count("/a/"));
        QVERIFY(!canvas.scene.nodeItem(canvas.node("/a/conv")));
    }

    void findStepsThroughMatchesBothWays() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->layoutNow();
        views::NodeFinder finder(&canvas.document, &canvas.scene, canvas.view);
        auto selected = [&] {
            const auto nodes = canvas.scene.selectedNodes();
            return nodes.size() == 1 ? canvas.document.graph().node(nodes[0]).name : std::string();
        };
        QVERIFY(finder.next("/b/"));
        QCOMPARE(selected(), std::string("/b/neg"));
        QVERIFY(finder.next("/b/"));
        QCOMPARE(selected(), std::string("/b/exp"));
        QVERIFY(finder.next("/b/")); // wraps around
        QCOMPARE(selected(), std::string("/b/neg"));
        QVERIFY(finder.next("/b/", true));
        QCOMPARE(selected(), std::string("/b/exp"));
        QVERIFY(finder.next("NN.RELU")); // ops, case-insensitively
        QCOMPARE(selected(), std::string("/a/relu"));
        finder.reset();
        QVERIFY(!finder.next("no such thing"));
        QVERIFY(!finder.next(""));
    }

    void theModeBoxFollowsTheDocumentAndSaysWhatWasChosen() {
        views::PlacementDocument document;
        QString error;
        QVERIFY(document.openText(kScoped, QStringLiteral("m.json"), &error));
        views::ModeBox box(&document);
        box.show();
        QSignalSpy chosen(&box, &views::ModeBox::modeChosen);
        PlanOptions options = document.options();
        options.mode = PlanMode::Unify;
        document.setOptions(options);
        QCOMPARE(box.currentData().toInt(), static_cast<int>(PlanMode::Unify));
        QCOMPARE(chosen.size(), 0); // following the document is no choice
        box.activated(box.findData(static_cast<int>(PlanMode::Demand)));
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.front().front().value<PlanMode>(), PlanMode::Demand);
        box.activated(box.findData(static_cast<int>(PlanMode::Unify))); // already the mode
        QCOMPARE(chosen.size(), 1);
    }

    void clickingACopyBadgeShowsItsConsumer() {
        Canvas canvas;
        QString error;
        QVERIFY(canvas.open(kScoped, &error));
        canvas.layout->layoutNow();
        QVERIFY(!canvas.scene.badges().empty());
        views::CopyBadgeItem* badge = canvas.scene.badges().front();
        canvas.view->centerOn(badge);
        QTest::mouseClick(canvas.view->viewport(), Qt::LeftButton, {},
                          canvas.view->mapFromScene(badge->sceneBoundingRect().center()));
        QTRY_COMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{badge->consumer()});
    }

    void shapesAndCopiesAreShownInTheDimensionsTheModelNames() {
        Canvas canvas;
        QString error;
        QVERIFY2(
            canvas.document.open(QStringLiteral(PLACER_SOURCE_DIR "/tests/models/dyn_encoder.onnx"),
                                 &error, DeviceSet::parse("a:vcpu,b:vcpu").value()),
            qPrintable(error));
        canvas.document.setRules({OpRule{"Softmax", "b"}}, "a");
        canvas.layout->layoutNow();
        // The attention scores go to b and come back: their badges give sizes in batch and seq.
        QStringList badges;
        for (const views::CopyBadgeItem* badge : canvas.scene.badges())
            badges << badge->text();
        QVERIFY2(badges.contains(QStringLiteral("a → b, batch×seq×seq×4 B")),
                 qPrintable(badges.join(" | ")));
        QVERIFY2(badges.contains(QStringLiteral("b → a, batch×seq×seq×4 B")),
                 qPrintable(badges.join(" | ")));
        // A click on the softmax shows its types in those names, and the planned stand-in.
        views::NodeItem* softmax = canvas.scene.nodeItem(canvas.node("p"));
        QVERIFY(softmax);
        canvas.view->centerOn(softmax);
        QTest::mouseClick(canvas.view->viewport(), Qt::LeftButton, {},
                          canvas.view->mapFromScene(softmax->sceneBoundingRect().center()));
        QTRY_COMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{canvas.node("p")});
        views::PropertiesPanel panel(&canvas.document);
        panel.showNodes(canvas.scene.selectedNodes());
        const QString text = panel.toPlainText();
        QVERIFY2(text.contains("batch×seq×seq float32 (batch×seq×seq×4 B), planned at 1x1x1"),
                 qPrintable(text));
        // The status line's sizes are at the planned values of the names.
        const QString line = views::planSummary(canvas.document);
        QVERIFY2(line.contains("(sizes at batch=1, seq=1)"), qPrintable(line));
    }

    void theStatusLineSummarisesThePlan() {
        views::PlacementDocument document;
        QString error;
        QVERIFY(document.openText(kScoped, QStringLiteral("s.json"), &error));
        const QString line = views::planSummary(document);
        int copies = 0;
        for (const CopyPlan& copy : document.plan().copies)
            copies += copy.isExplicit ? 0 : 1;
        QVERIFY(copies > 0);
        QVERIFY2(line.startsWith(QString::number(copies) + " cop"), qPrintable(line));
        QVERIFY(line.contains("peak memory: cpu "));
        QVERIFY(line.contains(", gpu "));
        QVERIFY(line.contains("0 conflict"));
        QVERIFY(line.contains("planned in "));
    }
};

QTEST_MAIN(TestCanvas)
#include "tst_canvas.moc"
