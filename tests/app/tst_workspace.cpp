// The workspace controller on its own: save, open, rename, duplicate, delete and compare plans
// of a document, and record runs only of a saved, unchanged plan; problems come back as
// sentences, never as dialogs.
#include "gui/PlanBrowser.h"
#include "gui/WorkspaceController.h"
#include "session/Generate.h"
#include "store/PlanStore.h"
#include "views/PlacementDocument.h"

#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QUndoStack>
#include <QtTest>

using namespace placer;

namespace {

const char* const kGraph = R"(#[version = "0.0.5"]
def @main(%a: Tensor[(4, 8), float32], %b: Tensor[(4, 8), float32]) {
  %0 = add(%a, %b);
  %1 = nn.relu(%0);
  negative(%1)
}
)";

} // namespace

class TestWorkspace : public QObject {
    Q_OBJECT

private slots:
    void plansGoInAndOutOfTheWorkspace() {
        views::PlacementDocument document;
        QString error;
        QVERIFY(document.openText(kGraph, QStringLiteral("g.relay"), &error));
        QUndoStack undo;
        gui::PlanBrowser browser;
        gui::WorkspaceController workspace(&document, &undo, &browser);
        QSignalSpy problems(&workspace, &gui::WorkspaceController::problem);
        // Without a workspace, saving is a problem, not a crash.
        QVERIFY(!workspace.save(QStringLiteral("first")));
        QCOMPARE(problems.size(), 1);
        QTemporaryDir dir;
        QVERIFY(workspace.open(dir.filePath("ws.db")));
        QSignalSpy saved(&workspace, &gui::WorkspaceController::planSaved);
        QVERIFY(workspace.save(QStringLiteral("first")));
        QCOMPARE(saved.size(), 1);
        QCOMPARE(workspace.planName(), QStringLiteral("first"));
        QVERIFY(undo.isClean());
        QCOMPARE(browser.table()->rowCount(), 1);
        PlanOptions options;
        options.rules = {{"nn.relu", "cpu"}};
        options.constants = ConstantPolicy::Copy;
        options.mode = PlanMode::Unify;
        document.setOptions(options);
        QVERIFY(workspace.save(QStringLiteral("second")));
        QVERIFY(workspace.duplicate(QStringLiteral("second"), QStringLiteral("third")));
        QVERIFY(!workspace.duplicate(QStringLiteral("second"), QStringLiteral("third")));
        QCOMPARE(problems.size(), 2);
        QVERIFY(workspace.rename(QStringLiteral("second"), QStringLiteral("renamed")));
        QCOMPARE(workspace.planName(), QStringLiteral("renamed")); // it was the current plan
        const QString html = workspace.compare(QStringLiteral("first"), QStringLiteral("renamed"));
        QVERIFY2(html.contains("moved") && html.contains("Run both plans"), qPrintable(html));
        QSignalSpy opened(&workspace, &gui::WorkspaceController::planOpened);
        QVERIFY(workspace.openPlan(QStringLiteral("first")));
        QCOMPARE(opened.size(), 1);
        QVERIFY(document.options().rules.empty()); // the first plan had no rules
        QCOMPARE(document.options().constants, ConstantPolicy::Replicate);
        // Every option comes back as saved, constants and mode included.
        QVERIFY(workspace.openPlan(QStringLiteral("renamed")));
        QCOMPARE(document.options().rules.size(), std::size_t{1});
        QCOMPARE(document.options().constants, ConstantPolicy::Copy);
        QCOMPARE(document.options().mode, PlanMode::Unify);
        QVERIFY(workspace.openPlan(QStringLiteral("first")));
        QVERIFY(workspace.remove(QStringLiteral("first")));
        QVERIFY(workspace.planName().isEmpty());
        QVERIFY(!workspace.openPlan(QStringLiteral("first")));
        QCOMPARE(problems.size(), 3);
        QCOMPARE(browser.table()->rowCount(), 2);
    }

    // A generation of the saved, unchanged plan is kept with it, as a run is; of an unsaved
    // edit, not.
    void generationsOfASavedPlanAreKept() {
        views::PlacementDocument document;
        QString error;
        QVERIFY(document.openText(kGraph, QStringLiteral("g.relay"), &error));
        QUndoStack undo;
        gui::PlanBrowser browser;
        gui::WorkspaceController workspace(&document, &undo, &browser);
        QTemporaryDir dir;
        const std::string path = dir.filePath("ws.db").toStdString();
        QVERIFY(workspace.open(QString::fromStdString(path)));
        GenerationReport report;
        report.prompt = {1, 2, 3};
        report.tokens = {4, 5};
        report.mapping = "cpu=cpu";
        report.steps = {GenerateStep{3, 2.0, 1.5, {}}, GenerateStep{1, 1.0, 0.9, {}}};
        workspace.recordGeneration(report, false); // no plan yet: nothing to keep it with
        QVERIFY(workspace.save(QStringLiteral("decoder")));
        workspace.recordGeneration(report, true); // an unsaved edit
        workspace.recordGeneration(report, false);
        auto store = store::PlanStore::open(path);
        QVERIFY(store.ok());
        auto kept = store.value()->generations("decoder");
        QVERIFY(kept.ok());
        QCOMPARE(kept.value().size(), std::size_t{1});
        QCOMPARE(kept.value()[0].newTokens, 2);
        QCOMPARE(kept.value()[0].promptTokens, 3);
        QCOMPARE(kept.value()[0].tokensPerSecond, 1000.0);
        QCOMPARE(kept.value()[0].mapping, std::string("cpu=cpu"));
    }

    void aWorkspaceThatCannotBeOpened() {
        views::PlacementDocument document;
        QUndoStack undo;
        gui::PlanBrowser browser;
        gui::WorkspaceController workspace(&document, &undo, &browser);
        QTemporaryDir dir;
        QFile file(dir.filePath("a-file"));
        QVERIFY(file.open(QIODevice::WriteOnly)); // a file where a folder would have to be
        file.close();
        QVERIFY(!workspace.open(dir.filePath("a-file/ws.db")));
        QVERIFY(!workspace.store());
    }
};

QTEST_MAIN(TestWorkspace)
#include "tst_workspace.moc"
