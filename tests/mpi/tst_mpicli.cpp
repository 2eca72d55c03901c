// `placer` under mpirun, as a user starts it: the listing of every rank's devices, a split over
// two ranks with its report, trace and outputs written by rank 0 alone, ranks that differ, and
// ranks that die or stop answering mid-run (every test has a deadline; nothing is left behind).
#include "RankProcesses.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/types.h>
#include <unistd.h>

namespace {

using placer::test::processesWith;

const QString kPlacer = PLACER_BINARY;
const QString kMpirun = PLACER_MPIRUN;
const QString kModels = QStringLiteral(PLACER_SOURCE_DIR) + "/resources/models/";

QStringList mpirunArguments() {
    return {"--oversubscribe", "--bind-to", "none", "--timeout", "120"};
}

struct Ran {
    int code = -1;
    QString out, err;
    qint64 millis = 0;
    int leftBehind = 0; ///< processes of the job still there once it ended
};

/// This environment with `environment`'s NAME=VALUE entries, and Open MPI's consent to run as
/// root (CI's fresh root is).
QProcessEnvironment mpirunEnvironment(const QStringList& environment) {
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    for (const QString& entry : environment)
        env.insert(entry.section('=', 0, 0), entry.section('=', 1));
    return env;
}

Ran run(const QStringList& arguments, const QStringList& environment = {}) {
    QProcess process;
    process.setProcessEnvironment(mpirunEnvironment(environment));
    QElapsedTimer timer;
    timer.start();
    process.start(kMpirun, mpirunArguments() + arguments);
    process.waitForFinished(150000);
    Ran ran;
    ran.code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    ran.out = QString::fromUtf8(process.readAllStandardOutput());
    ran.err = QString::fromUtf8(process.readAllStandardError());
    ran.millis = timer.elapsed();
    return ran;
}

/// Seconds of processor time process `pid` has used, or -1 when it is gone.
double cpuSeconds(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    if (!std::getline(stat, text))
        return -1;
    // Fields after the command name (which may hold spaces): state is the 3rd, utime the 14th.
    std::istringstream fields(text.substr(text.rfind(')') + 2));
    std::string field;
    long long utime = 0, stime = 0;
    for (int k = 3; k <= 15 && fields >> field; ++k) {
        if (k == 14)
            utime = std::stoll(field);
        else if (k == 15)
            stime = std::stoll(field);
    }
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

} // namespace

class TestMpiCli : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

    QString db(const QString& name) const { return m_dir.filePath(name + ".db"); }

    /// A long run over two ranks, rank 1's command line marked so that it can be found; once it
    /// runs, `act` is done to it. Returns how the job ended.
    Ran longRunWithRankOne(const QString& marker, int signal, const QStringList& environment) {
        const QStringList common = {"run",           kModels + "tiny_resnet.onnx",
                                    "--devices",     "a:vcpu,b:vcpu",
                                    "--map",         "b=rank1/vcpu1",
                                    "--rule",        "Conv=a",
                                    "--fallback",    "b",
                                    "--iterations",  "1000000",
                                    "--no-reference"};
        QProcess process;
        process.setProcessEnvironment(mpirunEnvironment(environment));
        QStringList arguments = mpirunArguments();
        arguments << "-np"
                  << "1" << kPlacer;
        arguments += common;
        arguments << "--db" << db("rank0") << ":"
                  << "-np"
                  << "1" << kPlacer;
        arguments += common;
        arguments << "--db" << db(marker);
        process.start(kMpirun, arguments);
        // Rank 1 is found once it runs; it is running iterations a second later.
        QList<pid_t> rankOne;
        QElapsedTimer waiting;
        waiting.start();
        while (rankOne.isEmpty() && waiting.elapsed() < 30000) {
            QTest::qWait(100);
            rankOne = processesWith(marker);
        }
        Ran ran;
        if (rankOne.isEmpty()) {
            process.kill();
            process.waitForFinished();
            ran.err = "rank 1 never started";
            return ran;
        }
        // Running iterations, not starting: a second of processor time (starting, planning
        // and loading take a fraction of that).
        while (cpuSeconds(rankOne.first()) < 1 && waiting.elapsed() < 60000)
            QTest::qWait(100);
        QElapsedTimer timer;
        timer.start();
        ::kill(rankOne.first(), signal);
        const double used = cpuSeconds(rankOne.first());
        const bool ended = process.waitForFinished(60000);
        ran.millis = timer.elapsed();
        if (!ended) {
            process.kill();
            process.waitForFinished();
        }
        ran.code = ended && process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
        ran.out = QString::fromUtf8(process.readAllStandardOutput());
        ran.err = QString::fromUtf8(process.readAllStandardError());
        if (!ended)
            ran.err = QString("the job went on for 60 s after rank 1 was signalled (it had used "
                              "%1 s of processor time); its standard error: ")
                          .arg(used) +
                      ran.err;
        QTest::qWait(500);
        const QList<pid_t> left = processesWith(marker);
        ran.leftBehind = static_cast<int>(left.size());
        for (pid_t pid : left) // not to outlive the test whatever happened
            ::kill(pid, SIGKILL);
        return ran;
    }

private slots:
    void devicesOfEveryRank() {
        const Ran ran = run({"-np", "2", kPlacer, "devices"});
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        QVERIFY2(ran.out.contains("rank 0 on ") && ran.out.contains("rank 1 on "),
                 qPrintable(ran.out));
        QVERIFY(ran.out.contains("rank1/vcpuN"));
        const Ran json = run({"-np", "2", kPlacer, "devices", "--json"});
        QVERIFY2(json.code == 0, qPrintable(json.err));
        const QJsonArray ranks = QJsonDocument::fromJson(json.out.toUtf8())["ranks"].toArray();
        QCOMPARE(ranks.size(), 2);
        QCOMPARE(ranks[1]["rank"].toInt(), 1);
        QVERIFY(!ranks[1]["host"].toString().isEmpty());
    }

    // placer calibrate under mpirun measures every ordered pair of ranks, and rank 0 keeps them
    // in its workspace for auto mode's copies between ranks.
    void calibrateMeasuresTheLinksBetweenRanks() {
        const Ran ran = run({"-np", "2", kPlacer, "calibrate", "--quick", "--db", db("links")});
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        QVERIFY2(ran.out.contains("rank0 -> rank1: ") && ran.out.contains("rank1 -> rank0: "),
                 qPrintable(ran.out));
        QVERIFY(ran.out.count("calibration of ") == 1);
        const Ran automatic = run({"-np", "2", kPlacer, "run", kModels + "tiny_inception.onnx",
                                   "--devices", "a:vcpu,b:vcpu", "--map", "b=rank1/vcpu1", "--mode",
                                   "auto", "--iterations", "2", "--db", db("links")});
        QVERIFY2(automatic.code == 0, qPrintable(automatic.err));
        QVERIFY2(automatic.out.contains("reference check: ok"), qPrintable(automatic.out));
    }

    // A batch split over two ranks: one report, on rank 0's standard output, whose reference
    // check passed; one trace with each rank's device; outputs written once.
    void aSplitOverTwoRanks() {
        const QString trace = m_dir.filePath("split.trace.json");
        const QString outputs = m_dir.filePath("outputs");
        const Ran ran = run({"-np",
                             "2",
                             kPlacer,
                             "run",
                             kModels + "tiny_encoder_batch4.onnx",
                             "--devices",
                             "a:vcpu,b:vcpu",
                             "--map",
                             "b=rank1/vcpu1",
                             "--split",
                             "*=a,b",
                             "--iterations",
                             "3",
                             "--json",
                             "--trace",
                             trace,
                             "--save-outputs",
                             outputs,
                             "--db",
                             db("split")});
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        const QJsonDocument report = QJsonDocument::fromJson(ran.out.toUtf8());
        QVERIFY2(report.isObject(), qPrintable("one JSON report, not: " + ran.out.left(400)));
        QVERIFY2(report["reference_check"]["ok"].toBool(), qPrintable(ran.out.left(2000)));
        QVERIFY2(ran.out.contains("rank1/vcpu1"), "the report names rank 1's device");
        QFile traceFile(trace);
        QVERIFY(traceFile.open(QIODevice::ReadOnly));
        const QByteArray traceText = traceFile.readAll();
        QVERIFY(traceText.contains("rank1/vcpu1"));
        QVERIFY(traceText.contains("vcpu1"));
        QCOMPARE(QDir(outputs).entryList(QDir::Files).size(), 1);
    }

    // The encoder at batch 1 sharded inside its ops over two ranks: its AllReduces' parts
    // cross between the ranks in the same order on both, and the outputs match one device.
    void aShardingOverTwoRanks() {
        const Ran ran = run({"-np", "2", kPlacer, "run", kModels + "tiny_encoder.onnx", "--devices",
                             "a:vcpu,b:vcpu", "--map", "b=rank1/vcpu1", "--shard", "*=a,b",
                             "--iterations", "3", "--json", "--db", db("shard")});
        QVERIFY2(ran.code == 0, qPrintable(ran.err));
        const QJsonDocument report = QJsonDocument::fromJson(ran.out.toUtf8());
        QVERIFY2(report.isObject(), qPrintable("one JSON report, not: " + ran.out.left(400)));
        QVERIFY2(report["reference_check"]["ok"].toBool(), qPrintable(ran.out.left(2000)));
        QVERIFY(report["splits"][0]["span_ms"].toDouble() > 0);
        QVERIFY(ran.out.contains("rank1/vcpu1"));
    }

    void ranksThatDifferStop() {
        // One rank each (mpirun's app contexts, joined by ':'), each reading its own model.
        auto rank = [&](const QString& model, const QString& workspace) {
            return QStringList{"-np",
                               "1",
                               kPlacer,
                               "run",
                               kModels + model,
                               "--devices",
                               "a:vcpu,b:vcpu",
                               "--map",
                               "b=rank1/vcpu1",
                               "--rule",
                               "Conv=a",
                               "--fallback",
                               "b",
                               "--db",
                               db(workspace)};
        };
        const QStringList arguments = rank("tiny_resnet.onnx", "differ0") + QStringList{":"} +
                                      rank("tiny_mobilenet.onnx", "differ1");
        const Ran ran = run(arguments);
        QVERIFY(ran.code != 0);
        QVERIFY2(ran.err.contains("rank 1 (host ") && ran.err.contains("differs from rank 0") &&
                     ran.err.contains("another model"),
                 qPrintable(ran.err));
    }

    // A rank killed mid-run ends the job within 30 s, naming the rank; nothing is left behind.
    void aKilledRankEndsTheRun() {
        const Ran ran = longRunWithRankOne("killed-rank", SIGKILL, {});
        QVERIFY2(ran.code > 0, qPrintable(ran.err));
        QVERIFY2(ran.millis < 30000, qPrintable(QString::number(ran.millis)));
        QVERIFY2(ran.err.contains("rank 1"), qPrintable(ran.err));
        QCOMPARE(ran.leftBehind, 0);
    }

    // A rank that stops answering (stopped, not dead) ends the run at the deadline: rank 0 says
    // which rank it waited for.
    void aRankThatStopsAnsweringEndsTheRun() {
        const Ran ran = longRunWithRankOne("stopped-rank", SIGSTOP, {"PLACER_RANK_TIMEOUT_S=3"});
        QVERIFY2(ran.code > 0, qPrintable(ran.err));
        QVERIFY2(ran.millis < 30000, qPrintable(QString::number(ran.millis)));
        // Waiting for its data, rank 0 names rank 1; waiting where every rank meets (an
        // iteration's start), it says that not every rank answered.
        QVERIFY2(
            (ran.err.contains("rank 1 (host ") && (ran.err.contains("sent nothing for 3 s") ||
                                                   ran.err.contains("took nothing for 3 s"))) ||
                ran.err.contains("not every rank answered within 3 s"),
            qPrintable(ran.err));
        QCOMPARE(ran.leftBehind, 0);
    }
};

QTEST_GUILESS_MAIN(TestMpiCli)
#include "tst_mpicli.moc"
