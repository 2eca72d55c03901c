// Autosave and recovery in the real window: edits made with the mouse and the keyboard are
// journaled as a draft in the workspace; the window's process is killed (SIGKILL; this executable
// doubles as that child); the next window offers the draft back and restores the same plan; a
// clean exit after saving or discarding leaves no draft; two windows keep separate drafts.
#include "gui/MainWindow.h"
#include "gui/WorkspaceController.h"
#include "io/ModelLoader.h"
#include "plan/Planner.h"
#include "store/PlanStore.h"
#include "views/GraphScene.h"
#include "views/GraphView.h"
#include "views/NodeItem.h"

#include <QApplication>
#include <QDir>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTimer>
#include <QUndoStack>
#include <QtTest>

#include <cstdio>
#include <functional>
#include <thread>

using namespace placer;

namespace {

const QString kExample =
    QStringLiteral(PLACER_SOURCE_DIR "/resources/examples/residual_block.relay");

void openAndWait(gui::MainWindow& window, const QString& path) {
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    QVERIFY(window.openFile(path));
    QVERIFY(laidOut.wait(20000));
}

NodeId nodeNamed(const gui::MainWindow& window, const char* name) {
    const auto id = window.document()->graph().find(name);
    if (!id)
        qFatal("no node %s", name);
    return *id;
}

/// Clicks the node's item, with Ctrl to add it to the selection.
void clickNode(gui::MainWindow& window, const char* name, bool add) {
    // A plan just opened is laid out in the background: its items come with the layout.
    QTRY_VERIFY_WITH_TIMEOUT(window.scene()->nodeItem(nodeNamed(window, name)), 20000);
    views::NodeItem* item = window.scene()->nodeItem(nodeNamed(window, name));
    window.view()->centerOn(item);
    const QPoint at = window.view()->mapFromScene(item->scenePos());
    QTest::mouseClick(window.view()->viewport(), Qt::LeftButton,
                      add ? Qt::ControlModifier : Qt::NoModifier, at);
}

/// The drafts in the workspace at `path`.
std::vector<store::DraftSummary> draftsIn(const QString& path) {
    auto store = store::PlanStore::open(path.toStdString());
    if (!store)
        return {};
    auto drafts = store.value()->listDrafts();
    return drafts ? drafts.take() : std::vector<store::DraftSummary>{};
}

/// Runs `act`, clicking the button labelled `label` of the first message box it shows.
bool answering(const QString& label, const std::function<void()>& act) {
    bool answered = false;
    QTimer answer;
    answer.setInterval(10);
    QObject::connect(&answer, &QTimer::timeout, [&] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (!box || answered || !box->isVisible())
            return;
        // PLACER_SCREENSHOT_DIR: the box as the user sees it, to look at.
        if (const QByteArray dir = qgetenv("PLACER_SCREENSHOT_DIR"); !dir.isEmpty())
            box->grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/") + box->objectName() +
                             QStringLiteral(".png"));
        for (QAbstractButton* button : box->buttons()) {
            if (button->text().remove(QLatin1Char('&')) == label) {
                answered = true;
                QTest::mouseClick(button, Qt::LeftButton);
                return;
            }
        }
    });
    answer.start();
    act();
    answer.stop();
    return answered;
}

/// The edits both processes make: %4 and %5 picked with the mouse and pinned with Alt+2 (the
/// palette's second device), then a rule typed into the rules panel and applied.
void makeEdits(gui::MainWindow& window) {
    clickNode(window, "%4", false);
    clickNode(window, "%5", true);
    QTest::keyClick(&window, Qt::Key_2, Qt::AltModifier);
    auto* rules = window.findChild<QPlainTextEdit*>();
    QVERIFY(rules);
    rules->setFocus();
    QTest::keyClicks(rules, QStringLiteral("nn.relu=cpu"));
    QTest::mouseClick(window.findChild<QPushButton*>(QStringLiteral("applyRules")), Qt::LeftButton);
}

/// The child: a window on the workspace at `db` makes the edits, waits for its draft, says
/// "edited", and waits to be killed.
int child(int argc, char** argv) {
    QApplication app(argc, argv);
    QCoreApplication::setOrganizationName(QStringLiteral("placer-tests"));
    gui::MainWindow window;
    window.show();
    if (!window.workspace()->open(QString::fromLocal8Bit(argv[2])))
        return 2;
    QSignalSpy laidOut(&window, &gui::MainWindow::layoutFinished);
    if (!window.openFile(kExample) || !laidOut.wait(20000))
        return 3;
    window.activateWindow();
    makeEdits(window);
    if (window.undoStack()->count() != 2)
        return 4;
    // The draft follows each edit within the autosave delay.
    for (int tries = 0; tries < 500 && draftsIn(QString::fromLocal8Bit(argv[2])).empty(); ++tries)
        QTest::qWait(10);
    std::printf("edited\n");
    std::fflush(stdout);
    for (;;)
        QTest::qWait(1000);
}

} // namespace

class TestDrafts : public QObject {
    Q_OBJECT

    QTemporaryDir m_home;

private slots:
    void initTestCase() {
        qputenv("XDG_DATA_HOME", m_home.path().toUtf8());
        qputenv("XDG_CONFIG_HOME", m_home.path().toUtf8());
        qputenv("XDG_CACHE_HOME", m_home.path().toUtf8());
        QCoreApplication::setOrganizationName(QStringLiteral("placer-tests"));
    }

    void aKilledWindowsEditsAreOfferedBack() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("ws.db"));
        QProcess process;
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        process.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--child"), db});
        QVERIFY(process.waitForStarted());
        QByteArray said;
        while (!said.contains("edited") && process.state() == QProcess::Running &&
               process.waitForReadyRead(60000))
            said += process.readAllStandardOutput();
        QVERIFY2(said.contains("edited"), said.constData());
        process.kill(); // SIGKILL: no close event, no clean-up
        QVERIFY(process.waitForFinished());
        const auto left = draftsIn(db);
        QCOMPARE(left.size(), std::size_t{1});
        QVERIFY(left.front().abandoned);

        // The next start offers it back; restoring gives the same plan.
        gui::MainWindow window;
        window.show();
        QVERIFY(window.workspace()->open(db));
        bool restored = false;
        QVERIFY(answering(QStringLiteral("Restore"),
                          [&] { restored = window.workspace()->offerAbandonedDrafts(); }));
        QVERIFY(restored);
        QVERIFY(window.isWindowModified());
        for (const char* name : {"%4", "%5"})
            QCOMPARE(window.document()->pin(nodeNamed(window, name)).device, DeviceId(1));
        QCOMPARE(window.document()->options().rules.size(), std::size_t{1});
        QCOMPARE(window.document()->options().rules.front().opPattern, std::string("nn.relu"));
        // The same edits made here plan the same.
        gui::MainWindow again;
        again.show();
        openAndWait(again, kExample);
        again.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&again));
        makeEdits(again);
        QCOMPARE(again.undoStack()->count(), 2);
        QCOMPARE(window.document()->plan().devices, again.document()->plan().devices);
        QCOMPARE(window.document()->plan().copies.size(), again.document()->plan().copies.size());

        // The draft is this window's now, and the other window keeps its own.
        window.workspace()->writeDraftNow();
        QVERIFY(again.workspace()->open(db));
        again.workspace()->writeDraftNow();
        auto now = draftsIn(db);
        QCOMPARE(now.size(), std::size_t{2});
        QVERIFY(!now[0].abandoned && !now[1].abandoned);
        QVERIFY(now[0].owner != now[1].owner);
        // Saving leaves no draft of that window; discarding at close leaves none of the other.
        QVERIFY(window.workspace()->save(QStringLiteral("restored")));
        QCOMPARE(draftsIn(db).size(), std::size_t{1});
        QVERIFY(answering(QStringLiteral("Discard"), [&] { again.close(); }));
        QVERIFY(draftsIn(db).empty());
        // An edit after saving journals again; a clean close after saving drops it.
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        clickNode(window, "%9", false);
        QTest::keyClick(&window, Qt::Key_1, Qt::AltModifier);
        QTRY_COMPARE(draftsIn(db).size(), std::size_t{1});
        QVERIFY(answering(QStringLiteral("Save"), [&] { window.close(); }));
        QVERIFY(draftsIn(db).empty());
    }

    // A declined draft is deleted; another host's draft is not this host's to judge, so it is
    // neither offered nor deleted.
    void aDeclinedDraftIsDropped() {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("ws.db"));
        std::string dead = store::draftOwner(7);
        const std::size_t pid = dead.find(' ') + 1;
        dead.replace(pid, dead.find(' ', pid) - pid, "999999999");
        {
            auto store = store::PlanStore::open(db.toStdString());
            QVERIFY(store.ok());
            auto loaded = loadModelFile(kExample.toStdString(), GraphFormat::Auto, std::nullopt);
            QVERIFY(loaded.ok());
            const Plan plan = planDevices(loaded.value().graph, loaded.value().devices, {});
            for (const std::string& owner : {std::string("elsewhere 1234 1 1"), dead})
                QVERIFY(store.value()
                            ->saveDraft(owner, "", kExample.toStdString(), loaded.value().graph,
                                        loaded.value().devices, {}, plan)
                            .ok());
        }
        gui::MainWindow window;
        window.show();
        QVERIFY(window.workspace()->open(db));
        bool restored = true;
        QVERIFY(answering(QStringLiteral("Discard"),
                          [&] { restored = window.workspace()->offerAbandonedDrafts(); }));
        QVERIFY(!restored);
        const auto left = draftsIn(db);
        QCOMPARE(left.size(), std::size_t{1});
        QCOMPARE(left.front().owner, std::string("elsewhere 1234 1 1"));
        QVERIFY(!left.front().abandoned);
        // Nothing more to offer.
        QVERIFY(!answering(QStringLiteral("Discard"),
                           [&] { restored = window.workspace()->offerAbandonedDrafts(); }));
    }

    // A workspace on a read-only file system: the window says so and keeps working. Its plans
    // list and open; the edits' draft goes to a temporary workspace the message names; saving
    // fails with a sentence that says why; the workspace itself is unchanged.
    void aReadOnlyWorkspaceKeepsDraftsElsewhere() {
        QTemporaryDir dir;
        const QString mountPoint = dir.filePath(QStringLiteral("ro"));
        QVERIFY(QDir().mkpath(mountPoint));
        QProcess mount;
        mount.start(QStringLiteral("mount"),
                    {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"),
                     QStringLiteral("size=4m"), QStringLiteral("tmpfs"), mountPoint});
        if (!mount.waitForFinished() || mount.exitCode() != 0)
            QSKIP("cannot mount a tmpfs here (needs root and permission to mount): " +
                  mount.readAllStandardError().trimmed());
        struct Unmount {
            QString at;
            ~Unmount() { QProcess::execute(QStringLiteral("umount"), {at}); }
        } unmount{mountPoint};
        const QString db = mountPoint + QStringLiteral("/ws.db");
        {
            auto store = store::PlanStore::open(db.toStdString());
            QVERIFY(store.ok());
            auto loaded = loadModelFile(kExample.toStdString(), GraphFormat::Auto, std::nullopt);
            QVERIFY(loaded.ok());
            QVERIFY(store.value()
                        ->savePlan("kept", "", loaded.value().graph, loaded.value().devices, {},
                                   planDevices(loaded.value().graph, loaded.value().devices, {}))
                        .ok());
        }
        QVERIFY(QProcess::execute(
                    QStringLiteral("mount"),
                    {QStringLiteral("-o"), QStringLiteral("remount,ro"), mountPoint}) == 0);
        const QByteArray oldTmp = qgetenv("TMPDIR");
        qputenv("TMPDIR", dir.path().toUtf8());

        gui::MainWindow window;
        window.show();
        QVERIFY(window.workspace()->open(db));
        QVERIFY(window.workspace()->store()->readOnly());
        const QString drafts = window.workspace()->draftWorkspace();
        QVERIFY2(drafts.startsWith(dir.path()), qPrintable(drafts));
        auto* said = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(said);
        QVERIFY2(said->text().contains(QStringLiteral("cannot be written")) &&
                     said->text().contains(drafts),
                 qPrintable(said->text()));
        said->accept();
        QVERIFY(window.workspace()->openPlan(QStringLiteral("kept")));
        window.activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(&window));
        clickNode(window, "%4", false);
        QTest::keyClick(&window, Qt::Key_2, Qt::AltModifier);
        QCOMPARE(window.undoStack()->count(), 1);
        window.workspace()->writeDraftNow();
        QCOMPARE(draftsIn(drafts).size(), std::size_t{1});
        QCOMPARE(draftsIn(drafts).front().plan, std::string("kept"));
        // Saving fails, saying why; the workspace keeps its one plan.
        QVERIFY(!window.workspace()->save(QStringLiteral("kept")));
        QTRY_VERIFY(window.findChild<QMessageBox*>(QStringLiteral("errorDialog")));
        const QString why = window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))->text();
        QVERIFY2(why.contains(QStringLiteral("read-only")), qPrintable(why));
        window.findChild<QMessageBox*>(QStringLiteral("errorDialog"))->accept();
        auto list = window.workspace()->store()->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), std::size_t{1});
        window.workspace()->discardDraft();
        QVERIFY(draftsIn(drafts).empty());
        window.workspace()->open(dir.filePath(QStringLiteral("elsewhere.db"))); // lets go of it
        if (oldTmp.isEmpty())
            qunsetenv("TMPDIR");
        else
            qputenv("TMPDIR", oldTmp);
    }
};

int main(int argc, char** argv) {
    if (argc > 2 && std::string(argv[1]) == "--child")
        return child(argc, argv);
    QApplication app(argc, argv);
    TestDrafts test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_drafts.moc"
