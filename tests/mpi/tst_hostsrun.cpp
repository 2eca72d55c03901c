// Run ▸ Run on Hosts… in the window: the dialog maps the plan's devices to two ranks on this
// machine, the window starts mpirun, and the gathered report and trace come back as the Run
// panel's summary and a timeline whose lanes are grouped by rank and host, with a lane for the
// copies over the link between the ranks; Cancel in the progress dialog ends every rank and the
// window goes on; a run that fails says why.
#include "RankProcesses.h"
#include "gui/HostsRun.h"
#include "gui/MainWindow.h"
#include "gui/RunPanel.h"
#include "views/DevicePalette.h"
#include "views/PlacementDocument.h"
#include "views/TimelineWidget.h"

#include <QApplication>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QProgressDialog>
#include <QPushButton>
#include <QRadioButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QSysInfo>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QTimer>
#include <QtTest>

#include <QElapsedTimer>

#include <csignal>
#include <sys/types.h>

using namespace placer;
using test::processesWith;

namespace {

const QString kModels = QStringLiteral(PLACER_SOURCE_DIR "/resources/models/");

/// A window with tiny_resnet (copied to `folder`, so that its ranks can be told apart) planned
/// over two virtual CPUs: the convolutions on a, the rest on b.
void openSplitModel(gui::MainWindow& window, const QTemporaryDir& folder, QString* model) {
    *model = folder.filePath(QStringLiteral("hosts_tiny_resnet.onnx"));
    QVERIFY(QFile::copy(kModels + "tiny_resnet.onnx", *model));
    views::PlacementDocument* document = window.document();
    DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
    devices.chooseDefaults();
    QString error;
    QVERIFY2(document->open(*model, &error, devices), qPrintable(error));
    PlanOptions options = document->options();
    options.rules = {{"Conv", "a"}, {"Relu", "b"}, {"Add", "b"}};
    document->setOptions(options);
    window.runPanel()->warmup()->setValue(0);
}

/// The split model run on two ranks for far longer than a test, once both ranks are running;
/// the request it was started with.
gui::HostsRunRequest startLongRun(gui::MainWindow& window, const QTemporaryDir& folder,
                                  QString* model) {
    window.show();
    openSplitModel(window, folder, model);
    window.runPanel()->iterations()->setValue(1000000);
    gui::HostsRunRequest request;
    request.maps = {QStringLiteral("a=vcpu1"), QStringLiteral("b=rank1/vcpu1")};
    window.startHostsRun(request);
    QElapsedTimer started;
    started.start();
    while (processesWith(*model).size() < 2 && started.elapsed() < 60000)
        QTest::qWait(50);
    QTest::qWait(1000);
    return request;
}

/// Waits for the window's run on hosts to finish; a failure of the test (with mpirun's output or
/// the run's message) where it fails.
void waitForRun(gui::MainWindow& window) {
    gui::HostsRunner* runner = window.hostsRunner();
    QVERIFY(runner);
    QSignalSpy done(runner, &gui::HostsRunner::finished);
    QSignalSpy failed(runner, &gui::HostsRunner::failed);
    QVERIFY2(done.wait(150000) || !failed.isEmpty(), qPrintable(runner->output()));
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed[0][0].toString()));
}

/// Clicks a radio button on its indicator (its middle may lie past its text, where a click
/// does nothing).
void clickRadio(QRadioButton* button) {
    QTest::mouseClick(button, Qt::LeftButton, {}, QPoint(6, button->height() / 2));
}

} // namespace

class TestHostsRun : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv("PLACER_PROGRAM", PLACER_BINARY); }

    void theDialogRunsThePlanOnTwoRanks() {
        QTemporaryDir folder;
        gui::MainWindow window;
        window.show();
        QString model;
        openSplitModel(window, folder, &model);
        window.runPanel()->iterations()->setValue(3);
        // The dialog, as it first shows: read, then Run clicked (or closed, so that exec ends).
        bool sawDialog = false;
        int ranks = 0, rows = 0, rankA = -1, rankB = -1;
        QTimer::singleShot(200, this, [&] {
            auto* dialog = qobject_cast<gui::HostsDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            sawDialog = true;
            ranks = dialog->ranks()->value();
            QTableWidget* mapping = dialog->mapping();
            rows = mapping->rowCount();
            if (rows == 2) {
                auto* a = qobject_cast<QSpinBox*>(mapping->cellWidget(0, 2));
                auto* b = qobject_cast<QSpinBox*>(mapping->cellWidget(1, 2));
                rankA = a ? a->value() : -1;
                rankB = b ? b->value() : -1;
            }
            auto* buttons = dialog->findChild<QDialogButtonBox*>();
            if (buttons)
                QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
            else
                dialog->reject();
        });
        QAction* action = window.findChild<QAction*>(QStringLiteral("runOnHosts"));
        QVERIFY(action);
        action->trigger();
        QVERIFY(sawDialog);
        QCOMPARE(ranks, 2);
        QCOMPARE(rows, 2);
        QCOMPARE(rankA, 0); // a, the host device, stays on rank 0
        QCOMPARE(rankB, 1); // b goes to rank 1's vcpu
        waitForRun(window);
        if (QTest::currentTestFailed())
            return;

        // The timeline: lanes grouped by host and rank, rank 1's device, the link's copies.
        const views::TimelineData& timeline = window.timeline()->data();
        const QString lanes = QStringList(timeline.lanes.begin(), timeline.lanes.end()).join('\n');
        QVERIFY2(lanes.contains(QStringLiteral("rank 0 · vcpu1 compute")), qPrintable(lanes));
        QVERIFY2(lanes.contains(QStringLiteral("rank 1 · vcpu1 compute")), qPrintable(lanes));
        QVERIFY2(lanes.contains(QStringLiteral("copies rank 0 → rank 1")), qPrintable(lanes));
        QVERIFY2(lanes.contains(QStringLiteral("copies rank 1 → rank 0")), qPrintable(lanes));
        int kernels = 0, onRankOne = 0;
        for (const views::TimelineBar& bar : timeline.bars) {
            QVERIFY(bar.lane >= 0 && bar.lane < static_cast<int>(timeline.lanes.size()));
            QVERIFY(bar.end >= bar.start);
            if (!bar.idle && timeline.lanes[bar.lane].endsWith(QStringLiteral("compute"))) {
                ++kernels;
                onRankOne += timeline.lanes[bar.lane].startsWith(QStringLiteral("rank 1 "));
            }
        }
        QVERIFY(kernels >= 10);
        QVERIFY(onRankOne >= 3);
        // The Run panel's summary: devices with their ranks, the link, the reference check.
        const QString summary = window.runPanel()->summary()->toPlainText();
        QVERIFY2(summary.contains(QStringLiteral("rank1/vcpu1")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("Rank 0")), qPrintable(summary));
        QVERIFY2(summary.contains(QStringLiteral("Outputs match the single-device reference")),
                 qPrintable(summary));
        // The device palette, grouped by where the devices ran: a on rank 0, b under rank 1.
        auto* palette = window.findChild<views::DevicePalette*>();
        QVERIFY(palette);
        QLayout* layout = palette->layout();
        int headingOne = -1, chipB = -1, headings = 0;
        for (int i = 0; i < layout->count(); ++i) {
            QWidget* widget = layout->itemAt(i)->widget();
            if (!widget)
                continue;
            if (widget->objectName() == QStringLiteral("deviceGroup")) {
                ++headings;
                if (widget->property("group").toString().startsWith(QStringLiteral("rank 1 on ")))
                    headingOne = i;
            }
            if (widget == palette->chip(QStringLiteral("b")))
                chipB = i;
        }
        QCOMPARE(headings, 2);
        QVERIFY(headingOne >= 0 && chipB == headingOne + 1);
        QVERIFY(processesWith(model).isEmpty());
    }

    /// The dialog reads the host file as it is chosen: its hosts and slots, the ranks set to the
    /// slots, each device's host from its rank; a file mpirun could not use says where and why,
    /// and Run waits for a good one.
    void theDialogReadsTheHostFile() {
        QTemporaryDir folder;
        const auto write = [&](const QString& name, const QByteArray& text) {
            QFile file(folder.filePath(name));
            if (!file.open(QIODevice::WriteOnly))
                return QString();
            file.write(text);
            return file.fileName();
        };
        const QString good = write(QStringLiteral("hosts"), "# the cluster\n"
                                                            "nodeA slots=2\n"
                                                            "nodeB slots = 3 max_slots=4 # GPUs\n"
                                                            "\n"
                                                            "nodeA slots=1\n");
        DeviceSet devices = DeviceSet::parse("a:vcpu,b:vcpu,c:vcpu").take();
        devices.chooseDefaults();
        gui::HostsDialog dialog(devices);
        dialog.show();
        QVERIFY(QTest::qWaitForWindowExposed(&dialog));
        auto* run = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QTableWidget* mapping = dialog.mapping();
        QCOMPARE(mapping->columnCount(), 5);
        // This machine: every device's host is this one.
        QVERIFY(dialog.hostSummary()->text().contains(QSysInfo::machineHostName()));
        QCOMPARE(mapping->item(2, 4)->text(), QSysInfo::machineHostName());
        QVERIFY(run->isEnabled());

        clickRadio(dialog.useHostFile());
        QVERIFY(dialog.useHostFile()->isChecked());
        QVERIFY(!run->isEnabled()); // no file yet
        dialog.hostFile()->setFocus();
        QTest::keyClicks(dialog.hostFile(), good);
        QCOMPARE(dialog.ranks()->value(), 6); // nodeA 2 + 1, nodeB 3
        QString summary = dialog.hostSummary()->text();
        // (Tests load no translator: English plurals read "slot(s)" here.)
        QVERIFY2(summary.contains(QStringLiteral("nodeA (3 slot(s))")) &&
                     summary.contains(QStringLiteral("nodeB (3 slot(s))")),
                 qPrintable(summary));
        QVERIFY(run->isEnabled());
        auto* rankOfC = qobject_cast<QSpinBox*>(mapping->cellWidget(2, 2));
        QVERIFY(rankOfC);
        rankOfC->setValue(2);
        QCOMPARE(mapping->item(2, 4)->text(), QStringLiteral("nodeA"));
        rankOfC->setFocus();
        rankOfC->selectAll();
        QTest::keyClicks(rankOfC, QStringLiteral("4"));
        QCOMPARE(rankOfC->value(), 4);
        QCOMPARE(mapping->item(2, 4)->text(), QStringLiteral("nodeB"));
        QCOMPARE(mapping->item(0, 4)->text(), QStringLiteral("nodeA"));
        dialog.ranks()->setValue(8);
        QVERIFY2(dialog.hostSummary()->text().contains(QStringLiteral("8 ranks on 6 slots")),
                 qPrintable(dialog.hostSummary()->text()));
        // PLACER_SCREENSHOT_DIR: the dialog as the user sees it, to look at.
        if (const QByteArray dir = qgetenv("PLACER_SCREENSHOT_DIR"); !dir.isEmpty()) {
            QTest::qWait(50); // the summary's new height laid out
            dialog.grab().save(QString::fromLocal8Bit(dir) + QStringLiteral("/hostsDialog.png"));
        }
        const gui::HostsRunRequest request = dialog.request();
        QCOMPARE(request.hostFile, good);
        QCOMPARE(request.ranks, 8);

        // Files mpirun could not use: where and why, and no Run.
        const std::vector<std::pair<QString, QString>> bad = {
            {write(QStringLiteral("words"), "nodeA slots=2\nnodeB cores=4\n"),
             QStringLiteral("words, line 2: \"cores=4\" is not slots=N or max_slots=N")},
            {write(QStringLiteral("count"), "nodeA slots=two\n"),
             QStringLiteral("count, line 1: \"slots=two\" is not a number of slots")},
            {write(QStringLiteral("zero"), "\n\nnodeA slots=0\n"),
             QStringLiteral("zero, line 3: \"slots=0\" is not a number of slots")},
            {write(QStringLiteral("empty"), "# nothing yet\n\n"),
             QStringLiteral("empty names no host")},
            {folder.filePath(QStringLiteral("missing")),
             QStringLiteral("Cannot read the host file")},
            {folder.path(), QStringLiteral("is not a host file")},
            {QStringLiteral("/dev/zero"), QStringLiteral("/dev/zero is not a host file")},
        };
        for (const auto& [path, why] : bad) {
            dialog.hostFile()->setText(path);
            QVERIFY2(dialog.hostSummary()->text().contains(why.toHtmlEscaped()),
                     qPrintable(dialog.hostSummary()->text() + " lacks " + why));
            QVERIFY(!run->isEnabled());
            QCOMPARE(dialog.ranks()->value(), 8); // left as it was
        }
        // A host without slots has as many as its cores: rank 0 is on it, the rest mpirun places.
        dialog.hostFile()->setText(write(QStringLiteral("cores"), "nodeA\nnodeB slots=2\n"));
        QVERIFY(run->isEnabled());
        QVERIFY2(dialog.hostSummary()->text().contains(QStringLiteral("nodeA (a slot per core)")),
                 qPrintable(dialog.hostSummary()->text()));
        QCOMPARE(mapping->item(0, 4)->text(), QStringLiteral("nodeA"));
        QCOMPARE(mapping->item(2, 4)->text(), QStringLiteral("chosen by mpirun"));
        // Back to this machine.
        clickRadio(dialog.findChild<QRadioButton*>(QStringLiteral("thisMachine")));
        QVERIFY(run->isEnabled());
        QCOMPARE(dialog.request().hostFile, QString());
    }

    /// A run on the hosts of a host file (this machine, two slots) through the dialog.
    void theDialogRunsOnTheHostsOfAFile() {
        QTemporaryDir folder;
        QFile hosts(folder.filePath(QStringLiteral("hosts")));
        QVERIFY(hosts.open(QIODevice::WriteOnly));
        // This machine by the name mpirun knows it by (a fresh root may not resolve localhost).
        hosts.write(QSysInfo::machineHostName().toUtf8() + " slots=2\n");
        hosts.close();
        gui::MainWindow window;
        window.show();
        QString model;
        openSplitModel(window, folder, &model);
        window.runPanel()->iterations()->setValue(2);
        bool sawDialog = false;
        int ranks = 0;
        QString hostFile;
        QTimer::singleShot(200, this, [&] {
            auto* dialog = qobject_cast<gui::HostsDialog*>(QApplication::activeModalWidget());
            if (!dialog)
                return;
            sawDialog = true;
            clickRadio(dialog->useHostFile());
            dialog->hostFile()->setText(hosts.fileName());
            ranks = dialog->ranks()->value();
            hostFile = dialog->request().hostFile;
            QTest::mouseClick(dialog->findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok),
                              Qt::LeftButton);
            if (dialog->isVisible())
                dialog->reject();
        });
        window.findChild<QAction*>(QStringLiteral("runOnHosts"))->trigger();
        QVERIFY(sawDialog);
        QCOMPARE(ranks, 2);
        QCOMPARE(hostFile, hosts.fileName());
        waitForRun(window);
        if (QTest::currentTestFailed())
            return;
        const QString summary = window.runPanel()->summary()->toPlainText();
        QVERIFY2(summary.contains(QStringLiteral("Outputs match the single-device reference")),
                 qPrintable(summary));
        QVERIFY(processesWith(model).isEmpty());
    }

    void cancelEndsEveryRankAndTheWindowGoesOn() {
        QTemporaryDir folder;
        gui::MainWindow window;
        QString model;
        const gui::HostsRunRequest request = startLongRun(window, folder, &model);
        gui::HostsRunner* runner = window.hostsRunner();
        QCOMPARE(processesWith(model).size(), 2); // both ranks run
        QVERIFY(runner && runner->running());
        auto* progress = window.findChild<QProgressDialog*>(QStringLiteral("hostsProgress"));
        QVERIFY(progress && progress->isVisible());
        QSignalSpy cancelled(runner, &gui::HostsRunner::cancelled);
        auto* cancel = progress->findChild<QPushButton*>();
        QVERIFY(cancel);
        QTest::mouseClick(cancel, Qt::LeftButton);
        QVERIFY(cancelled.wait(15000));
        QVERIFY(!runner->running());
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(model).isEmpty(), 10000);
        // The window goes on: a plain run of the same plan.
        window.runPanel()->iterations()->setValue(2);
        gui::HostsRunRequest again;
        again.maps = request.maps;
        QSignalSpy done(runner, &gui::HostsRunner::finished);
        window.startHostsRun(again);
        QVERIFY2(done.wait(150000), qPrintable(runner->output()));
    }

    // A rank killed mid-run ends the run (mpirun ends the other), the window says so, and
    // the next run goes.
    void aKilledRankEndsTheRunAndTheWindowGoesOn() {
        QTemporaryDir folder;
        gui::MainWindow window;
        QString model;
        const gui::HostsRunRequest request = startLongRun(window, folder, &model);
        gui::HostsRunner* runner = window.hostsRunner();
        QCOMPARE(processesWith(model).size(), 2); // both ranks run
        QSignalSpy failed(runner, &gui::HostsRunner::failed);
        QElapsedTimer timer;
        timer.start();
        ::kill(processesWith(model).last(), SIGKILL);
        QVERIFY(failed.wait(40000));
        QVERIFY2(timer.elapsed() < 30000, qPrintable(QString::number(timer.elapsed())));
        QVERIFY2(!failed[0][0].toString().isEmpty(), "no reason given");
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(model).isEmpty(), 10000);
        // The error is shown in a dialog that does not block the window.
        QTRY_VERIFY(window.findChild<QWidget*>(QStringLiteral("errorDialog")));
        window.runPanel()->iterations()->setValue(2);
        QSignalSpy done(runner, &gui::HostsRunner::finished);
        window.startHostsRun(request);
        QVERIFY2(done.wait(150000), qPrintable(runner->output()));
    }

    // Closing the window during a run on hosts ends every rank.
    void closingTheWindowEndsEveryRank() {
        QTemporaryDir folder;
        QString model;
        {
            gui::MainWindow window;
            startLongRun(window, folder, &model);
            QCOMPARE(processesWith(model).size(), 2);
        }
        QTRY_VERIFY_WITH_TIMEOUT(processesWith(model).isEmpty(), 15000);
    }

    void aRunThatFailsSaysWhy() {
        QTemporaryDir folder;
        gui::MainWindow window;
        window.show();
        QString model;
        openSplitModel(window, folder, &model);
        window.runPanel()->iterations()->setValue(2);
        gui::HostsRunRequest request;
        request.maps = {QStringLiteral("a=vcpu1"), QStringLiteral("b=rank5/vcpu1")};
        gui::HostsRunner* runner = nullptr;
        window.startHostsRun(request);
        runner = window.hostsRunner();
        QSignalSpy failed(runner, &gui::HostsRunner::failed);
        QVERIFY(failed.wait(150000));
        const QString message = failed[0][0].toString();
        QVERIFY2(message.contains(QStringLiteral("rank5")) ||
                     message.contains(QStringLiteral("rank 5")),
                 qPrintable(message));
        QVERIFY(processesWith(model).isEmpty());
    }
};

QTEST_MAIN(TestHostsRun)
#include "tst_hostsrun.moc"
