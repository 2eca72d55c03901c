// The groups of a graph (views/ScopeTree.h): name scopes from node names, and synthetic parts of
// at most ScopeTree::kMaxChildren children where a scope, or the graph, has more; a large graph
// without scopes opens as its parts, and a node inside one is found by opening it.
#include "CanvasFixture.h"
#include "ScopedLayers.h"

#include "io/ModelLoader.h"
#include "views/FrameItem.h"
#include "views/NodeItem.h"
#include "views/ScopeTree.h"

#include <QSignalSpy>
#include <QtTest>

using namespace placer;
using views::ScopeTree;

namespace {

/// scopedLayersJson without its layer scopes ("/layer7/op3" -> "_layer7_op3"), under `outer`
/// ("/model") or in no scope at all.
std::string unscoped(int layers, int perLayer, const std::string& outer = "") {
    std::string json = test::scopedLayersJson(layers, perLayer);
    for (std::size_t at = json.find("\"/layer"); at != std::string::npos;
         at = json.find("\"/layer", at + 1)) {
        json[at + 1] = '_';
        json[json.find('/', at + 2)] = '_';
        if (!outer.empty())
            json.insert(at + 1, outer + "/");
    }
    return json;
}

Graph load(const std::string& json) {
    auto loaded = loadModelText(json, "g.json", GraphFormat::Json, std::nullopt);
    if (!loaded)
        qFatal("%s", loaded.error().message.c_str());
    return std::move(loaded.value().graph);
}

} // namespace

class TestScopeTree : public QObject {
    Q_OBJECT

private slots:
    void scopesComeFromNames() {
        const Graph graph = load(test::scopedLayersJson(3, 5, "/model"));
        const ScopeTree tree(graph);
        QCOMPARE(tree.depth(), std::size_t(2));
        QCOMPARE(tree.of(*graph.find("/model/layer1/op2")),
                 (std::vector<std::string>{"/model/", "/model/layer1/"}));
        QVERIFY(tree.of(*graph.find("x")).empty());
        const auto inner = tree.inner("/model/");
        QCOMPARE(inner.size(), std::size_t(3));
        QCOMPARE(inner.front(), (std::pair<std::string, std::size_t>{"/model/layer0/", 5}));
        QCOMPARE(tree.inner(""),
                 (std::vector<std::pair<std::string, std::size_t>>{{"/model/", 15}}));
        std::size_t loose = 0;
        QCOMPARE(tree.atDepth(2, &loose).size(), std::size_t(3));
        QCOMPARE(loose, std::size_t(1)); // x
        QVERIFY(!tree.isPart("/model/"));
        QVERIFY(tree.isFor(graph));
    }

    void hostileNamesStayCheap() {
        // A node named by 200,000 slashes, and names of slashes alone: at most kMaxDepth scopes
        // each, nothing quadratic, no abort.
        std::string json = test::scopedLayersJson(2, 3);
        auto rename = [&json](const std::string& from, const std::string& to) {
            for (std::size_t at = json.find('"' + from + '"'); at != std::string::npos;
                 at = json.find('"' + from + '"', at + to.size()))
                json.replace(at + 1, from.size(), to);
        };
        rename("/layer1/op0", std::string(200000, '/') + "deep");
        rename("/layer1/op1", "/");
        rename("/layer0/op1", "//");
        Graph graph = load(json);
        const ScopeTree tree(graph);
        QVERIFY(tree.depth() <= ScopeTree::kMaxDepth);
        for (std::uint32_t i = 0; i < graph.size(); ++i)
            for (const std::string& scope : tree.of(NodeId(i)))
                QVERIFY(scope.size() <= ScopeTree::kMaxDepth + 1 || scope.rfind("/layer", 0) == 0);
    }

    void aGraphOfTooManyChildrenIsCutIntoParts() {
        // 2,461 nodes in no scope: three parts of at most 1,000, in graph order.
        const Graph graph = load(unscoped(60, 41));
        const ScopeTree tree(graph);
        QCOMPARE(tree.depth(), std::size_t(1));
        const auto parts = tree.inner("");
        QCOMPARE(parts.size(), std::size_t(3));
        std::size_t total = 0;
        for (const auto& [name, members] : parts) {
            QVERIFY(tree.isPart(name));
            QVERIFY(members <= ScopeTree::kMaxChildren);
            total += members;
        }
        QCOMPARE(total, std::size_t(2461));
        QCOMPARE(tree.of(*graph.find("x")), std::vector<std::string>{"/part 1 of 3/"});
        QCOMPARE(tree.of(*graph.find("_layer59_add")), std::vector<std::string>{"/part 3 of 3/"});
        // Parts follow the graph's order: every node's part is at least its predecessor's.
        std::string last;
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            const auto scopes = tree.of(NodeId(i));
            if (scopes.empty())
                continue;
            QVERIFY(scopes.front() >= last);
            last = scopes.front();
        }
    }

    void aScopeOfTooManyChildrenIsCutIntoParts() {
        // A scope's own nodes and the scopes inside it are its children alike.
        // /model/ holds 1,640 nodes directly: two parts.
        const Graph graph = load(unscoped(40, 41, "/model"));
        const ScopeTree flat(graph);
        QCOMPARE(flat.inner("/model/").size(), std::size_t(2));
        QCOMPARE(flat.of(*graph.find("/model/_layer39_add")),
                 (std::vector<std::string>{"/model/", "/model/part 2 of 2/"}));
        // A real sub-scope keeps its place under the part.
        const Graph nested = load(test::scopedLayersJson(1100, 2, "/model"));
        const ScopeTree tree(nested);
        QCOMPARE(tree.of(*nested.find("/model/layer1099/op0")),
                 (std::vector<std::string>{"/model/", "/model/part 2 of 2/", "/model/layer1099/"}));
        QCOMPARE(tree.depth(), std::size_t(3));
        QCOMPARE(tree.inner("/model/part 1 of 2/").size(), std::size_t(550));
    }

    void aLargeGraphWithoutScopesOpensAsItsParts() {
        // 24,601 nodes in no scope: 25 parts, shown collapsed; Find opens the one a node is in.
        test::CanvasFixture canvas(QSize(900, 700));
        QString error;
        QVERIFY(canvas.document.openText(unscoped(600, 41), QStringLiteral("flat.json"), &error));
        QSignalSpy finished(canvas.layout, &views::LayoutController::finished);
        QVERIFY(finished.wait(60000));
        QCOMPARE(canvas.scene.collapsed().size(), std::size_t(25));
        QVERIFY(canvas.scene.collapsed().count("/part 7 of 25/"));
        const NodeId inside = *canvas.document.graph().find("_layer300_op5");
        QVERIFY(!canvas.scene.nodeItem(inside));
        canvas.view->showNode(inside);
        QVERIFY(finished.wait(60000));
        QVERIFY(canvas.scene.nodeItem(inside));
        QCOMPARE(canvas.scene.frames().size(), std::size_t(1));
        QVERIFY(canvas.scene.frames().front()->scope().startsWith(QStringLiteral("/part ")));
        QVERIFY(canvas.scene.frames().front()->rect().contains(
            canvas.scene.nodeItem(inside)->sceneBoundingRect()));
        QCOMPARE(canvas.scene.selectedNodes(), std::vector<NodeId>{inside});
    }
};

QTEST_MAIN(TestScopeTree)
#include "tst_scopetree.moc"
