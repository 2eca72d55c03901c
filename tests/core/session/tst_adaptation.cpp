// Runs that change where their work runs while they go (session/RunAdaptation.h): a device
// slowed from an iteration on is noticed and its work moved (--adapt), a device that fails is
// left out and the iteration run again on the devices left, and faults asked for in the
// environment's syntax (vm/FaultInjection.h) are read or refused with a sentence.
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "session/RunAdaptation.h"
#include "session/Session.h"
#include "vm/FaultInjection.h"

#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdlib>
#include <string>

using namespace placer;

namespace {

std::string modelPath(const std::string& name) {
    return std::string(PLACER_SOURCE_DIR) + "/tests/models/" + name;
}

InjectedFault fault(const std::string& text) {
    auto parsed = parseInjectedFaults(text, "");
    if (!parsed || parsed.value().size() != 1)
        qFatal("bad fault %s", text.c_str());
    return parsed.value().front();
}

InjectedFault slowdown(const std::string& text) {
    auto parsed = parseInjectedFaults("", text);
    if (!parsed || parsed.value().size() != 1)
        qFatal("bad slowdown %s", text.c_str());
    return parsed.value().front();
}

/// Compute nodes of the outcome's final plan on virtual device `device`.
int computeNodesOn(const RunOutcome& outcome, int device) {
    int count = 0;
    for (std::size_t i = 0; i < outcome.userPlan.devices.size(); ++i) {
        if (outcome.userGraph->nodes()[i].role() == OpRole::Compute &&
            outcome.userPlan.devices[i].index == device)
            ++count;
    }
    return count;
}

} // namespace

class TestAdaptation : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Session> m_session;

    /// The two-branch model (two chains of four 64x512 by 512x512 products) planned by auto
    /// mode on `devices`: each branch on a device of its own.
    std::shared_ptr<const PlannedModel> twoBranches(const std::string& devices,
                                                    PlanMode mode = PlanMode::Auto) {
        PlanRequest request;
        request.devices = devices;
        request.options.mode = mode;
        auto opened = m_session->open(ModelSource{modelPath("two_branches.json")}, request);
        if (!opened)
            qFatal("%s", opened.error().toString().c_str());
        return std::make_shared<const PlannedModel>(opened.take());
    }

private slots:
    void initTestCase() {
        QVERIFY(m_dir.isValid());
        m_session =
            std::make_unique<Session>(SessionOptions{m_dir.filePath("workspace.db").toStdString()});
    }

    void faultsAreReadOrRefused_data() {
        QTest::addColumn<QString>("faults");
        QTest::addColumn<QString>("slow");
        QTest::addColumn<QString>("expected"); // what it reads as, or the error's words
        QTest::newRow("error-by-default") << "b@5"
                                          << ""
                                          << "b 5 error 1";
        QTest::newRow("kinds") << "b@5:oom,vcpu3@2:lost"
                               << ""
                               << "b 5 oom 1; vcpu3 2 lost 1";
        QTest::newRow("slow") << ""
                              << "b@5:2.5"
                              << "b 5 slow 2.5";
        QTest::newRow("both") << "a@1"
                              << "b@3:4"
                              << "a 1 error 1; b 3 slow 4";
        QTest::newRow("no-iteration") << "b"
                                      << ""
                                      << "write DEVICE@ITERATION";
        QTest::newRow("iteration-zero") << "b@0"
                                        << ""
                                        << "a whole number from 1";
        QTest::newRow("unknown-kind") << "b@2:melt"
                                      << ""
                                      << "error, oom or lost";
        QTest::newRow("slow-without-factor") << ""
                                             << "b@2"
                                             << "a factor from 1 to 1000";
        QTest::newRow("slow-below-one") << ""
                                        << "b@2:0.5"
                                        << "a factor from 1 to 1000";
    }
    void faultsAreReadOrRefused() {
        QFETCH(QString, faults);
        QFETCH(QString, slow);
        QFETCH(QString, expected);
        auto parsed = parseInjectedFaults(faults.toStdString(), slow.toStdString());
        if (!parsed) {
            QVERIFY2(parsed.error().message.find(expected.toStdString()) != std::string::npos,
                     parsed.error().message.c_str());
            return;
        }
        QString read;
        for (const InjectedFault& f : parsed.value()) {
            const char* kind = f.kind == InjectedFault::Kind::Slow          ? "slow"
                               : f.kind == InjectedFault::Kind::OutOfMemory ? "oom"
                               : f.kind == InjectedFault::Kind::Lost        ? "lost"
                                                                            : "error";
            read += QString("%1%2 %3 %4 %5")
                        .arg(read.isEmpty() ? "" : "; ")
                        .arg(QString::fromStdString(f.device))
                        .arg(f.iteration)
                        .arg(kind)
                        .arg(f.factor);
        }
        QCOMPARE(read, expected);
    }

    /// A device out of service takes nothing: a node pinned there falls back with a conflict
    /// that says why, and auto mode leaves it out.
    void aDeviceOutOfServiceTakesNothing() {
        auto planned = twoBranches("a:vcpu,b:vcpu,c:vcpu", PlanMode::Demand);
        LoadedModel model = planned->model;
        Pin pin;
        pin.kind = PinKind::Plain;
        pin.device = DeviceId(1);
        pin.origin = "test";
        model.graph.setPin(*model.graph.find("b0.mm"), pin);
        for (PlanMode mode : {PlanMode::Demand, PlanMode::Auto}) {
            PlanOptions options;
            options.mode = mode;
            options.outOfService = {{"b", "vcpu2 failed at iteration 5"}};
            const Plan plan = planDevices(model.graph, model.devices, options);
            for (std::size_t i = 0; i < plan.devices.size(); ++i)
                QVERIFY(plan.devices[i].index != 1);
            bool said = false;
            for (const Conflict& conflict : plan.conflicts) {
                said = said ||
                       (conflict.kind == ConflictKind::OutOfService &&
                        conflict.message.find("b0.mm") != std::string::npos &&
                        conflict.message.find("out of service (vcpu2 failed") != std::string::npos);
            }
            QVERIFY(said);
            const std::string why =
                plan.explain(model.graph, model.devices, options, *model.graph.find("b0.mm"));
            QVERIFY2(why.find("which is out of service") != std::string::npos, why.c_str());
        }
    }

    /// One of three vcpus fails at iteration 5 of 20: the run completes on the other two with
    /// all 20 iterations, its outputs match the reference, and the report names the fault and
    /// what moved.
    void aFailedDeviceIsLeftOut() {
        auto planned = twoBranches("a:vcpu,b:vcpu,c:vcpu");
        int before = 0;
        for (std::size_t i = 0; i < planned->plan.devices.size(); ++i)
            before += planned->plan.devices[i].index == 1 &&
                      planned->model.graph.nodes()[i].role() == OpRole::Compute;
        QVERIFY2(before > 0, "auto mode put nothing on b: the test needs it to");
        RunRequest request;
        request.iterations = 20;
        request.faults = {fault("b@5")};
        auto ran = m_session->run(planned, request);
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        const RunOutcome& outcome = *ran.value();
        QCOMPARE(outcome.result.latencyMicros.size(), std::size_t{20});
        QVERIFY(outcome.reference && outcome.reference->ok);
        QCOMPARE(outcome.events.size(), std::size_t{1});
        const RunEvent& event = outcome.events.front();
        QCOMPARE(event.kind, RunEvent::Kind::DeviceFailed);
        QCOMPARE(event.iteration, 5);
        QCOMPARE(event.device, std::string("vcpu2"));
        QVERIFY2(event.reason.find("b (vcpu2) failed at iteration 5") != std::string::npos &&
                     event.reason.find("PLACER_FAULT=b@5") != std::string::npos,
                 event.reason.c_str());
        QCOMPARE(event.nodesMoved, before);
        QCOMPARE(computeNodesOn(outcome, 1), 0);
        QVERIFY(outcome.firstPlan.has_value());
        const std::string summary = runSummary(outcome);
        QVERIFY2(summary.find("device failed at iteration 5: b (vcpu2)") != std::string::npos,
                 summary.c_str());
        const Json report = runReportJson(outcome);
        QCOMPARE(report.find("events")->items().size(), std::size_t{1});
    }

    /// Every kind of failure is left out alike; a fault that leaves no device ends the run with
    /// that sentence; without failover the first failure ends it.
    void whatNoDeviceIsLeftForEndsTheRun() {
        auto planned = twoBranches("a:vcpu,b:vcpu");
        for (const char* kind : {"b@3:oom", "b@3:lost", "vcpu2@3"}) {
            RunRequest request;
            request.iterations = 6;
            request.faults = {fault(kind)};
            auto ran = m_session->run(planned, request);
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            QCOMPARE(ran.value()->events.size(), std::size_t{1});
            QVERIFY(ran.value()->reference && ran.value()->reference->ok);
        }
        RunRequest request;
        request.iterations = 6;
        request.faults = {fault("a@2"), fault("b@3")};
        auto ran = m_session->run(planned, request);
        QVERIFY(!ran);
        QVERIFY2(ran.error().message.find("the run cannot go on: no device left in service") !=
                     std::string::npos,
                 ran.error().message.c_str());
        request.faults = {fault("b@2")};
        request.failover = false;
        ran = m_session->run(planned, request);
        QVERIFY(!ran);
        QVERIFY2(ran.error().message.find("vcpu2 failed (injected: PLACER_FAULT=b@2)") !=
                     std::string::npos,
                 ran.error().message.c_str());
    }

    /// The environment's faults are the run's too; one that names no device of the run, or
    /// is malformed, is refused before anything runs.
    void faultsFromTheEnvironment() {
        auto planned = twoBranches("a:vcpu,b:vcpu");
        RunRequest request;
        request.iterations = 4;
        qputenv("PLACER_FAULT", "b@2");
        auto ran = m_session->run(planned, request);
        qputenv("PLACER_FAULT", "gpu@2");
        auto unknown = m_session->run(planned, request);
        qputenv("PLACER_FAULT", "b@two");
        auto malformed = m_session->run(planned, request);
        qunsetenv("PLACER_FAULT");
        qputenv("PLACER_SLOW", "b@2:3");
        auto slowed = m_session->run(planned, request);
        qunsetenv("PLACER_SLOW");
        QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
        QCOMPARE(ran.value()->events.size(), std::size_t{1});
        QVERIFY(!unknown);
        QVERIFY2(unknown.error().message.find("no device 'gpu' in this run (virtual devices: a, "
                                              "b; physical: vcpu") != std::string::npos,
                 unknown.error().message.c_str());
        QVERIFY(!malformed);
        QVERIFY2(malformed.error().message.find("PLACER_FAULT: 'b@two'") != std::string::npos,
                 malformed.error().message.c_str());
        QVERIFY2(slowed, slowed ? "" : slowed.error().toString().c_str());
        QVERIFY(slowed.value()->events.empty()); // slowed, but nobody asked to adapt
    }

    /// One of two vcpus four times slower from iteration 5 of 30: with adapt, the plan changes
    /// within 5 iterations, its work moves off the slow device, and the outputs still match.
    void aSlowedDeviceLosesItsWork() {
        auto planned = twoBranches("a:vcpu,b:vcpu");
        RunRequest request;
        request.iterations = 30;
        request.adapt = true;
        request.faults = {slowdown("b@5:4")};
        // The first change after the slowdown that moved b's work to a (on a busy machine the
        // other device's speed may wander too: a load that slows both may re-plan before the
        // slowdown, or with nothing moved, or move some of a's work to b as well). Where a run
        // on a machine busy with other suites shows none, it is tried again, up to three runs;
        // what each saw goes in the failure's message.
        const auto movedOffB = [](const RunEvent& e) {
            return e.iteration > 5 && e.reason.find("b (vcpu2)") != std::string::npos &&
                   e.nodesMoved > 0 && e.moved.find("to a") != std::string::npos;
        };
        Result<std::shared_ptr<RunOutcome>> ran = SourceError::sentence("not run");
        std::string seen;
        for (int attempt = 0; attempt < 3; ++attempt) {
            ran = m_session->run(planned, request);
            QVERIFY2(ran, ran ? "" : ran.error().toString().c_str());
            const auto& events = ran.value()->events;
            if (std::any_of(events.begin(), events.end(), movedOffB))
                break;
            seen += "\nrun " + std::to_string(attempt + 1) + ":";
            for (const RunEvent& e : events)
                seen += " [" + e.text() + "]";
        }
        const RunOutcome& outcome = *ran.value();
        QCOMPARE(outcome.result.latencyMicros.size(), std::size_t{30});
        QVERIFY(outcome.reference && outcome.reference->ok);
        const auto aboutB = std::find_if(outcome.events.begin(), outcome.events.end(), movedOffB);
        QVERIFY2(aboutB != outcome.events.end(),
                 ("no run moved b's work to a; events" + seen).c_str());
        const RunEvent& first = *aboutB;
        QCOMPARE(first.kind, RunEvent::Kind::Replaced);
        QVERIFY2(first.iteration > 5 && first.iteration <= 10, first.text().c_str());
        QVERIFY2(first.reason.find("b (vcpu2)") != std::string::npos &&
                     first.reason.find("slower than assumed") != std::string::npos &&
                     first.reason.find("for 3 iterations") != std::string::npos,
                 first.reason.c_str());
        QVERIFY(first.nodesMoved > 0);
        QVERIFY2(first.moved.find("to a") != std::string::npos, first.moved.c_str());
        QVERIFY(first.replanMs > 0);
        // The same slowdown without adapt keeps its plan.
        request.adapt = false;
        auto kept = m_session->run(planned, request);
        QVERIFY2(kept, kept ? "" : kept.error().toString().c_str());
        QVERIFY(kept.value()->events.empty());
    }

    /// The speed watch alone: a device's usual ratio is its own (a cost model three times off
    /// is no drift), a drift needs its iterations in a row, a plan's first iteration is not
    /// read (a swapped-in plan's first two), work that grows gradually is no drift, and a
    /// device back to speed is planned at its assumed speed again.
    void theSpeedWatchTakesEachDevicesUsualRatio() {
        Plan plan;
        plan.prediction = Prediction{};
        plan.prediction->deviceBusyMicros = {100, 100};
        SpeedWatch watch(1.3, 3, 3);
        watch.follow(plan, {});
        RunResult soFar;
        soFar.streams.resize(2);
        soFar.streams[0].physical = "vcpu1";
        soFar.streams[0].virtuals = {DeviceId(0)};
        soFar.streams[1].physical = "vcpu2";
        soFar.streams[1].virtuals = {DeviceId(1)};
        const auto step = [&](double a, double b) {
            soFar.streams[0].busyMicros.push_back(a);
            soFar.streams[1].busyMicros.push_back(b);
            return watch.observe(soFar);
        };
        QVERIFY(step(900, 900).empty()); // a plan's first iteration runs cold: unread
        for (int i = 0; i < 3; ++i)
            QVERIFY(step(300, 100).empty()); // a's model is three times off: its usual ratio
        QVERIFY(step(310, 100).empty());
        QVERIFY(step(300, 250).empty());
        QVERIFY(step(300, 100).empty()); // not in a row
        QVERIFY(step(300, 250).empty());
        QVERIFY(step(300, 260).empty());
        const auto drifts = step(300, 240);
        QCOMPARE(drifts.size(), std::size_t{1});
        const SpeedDrift* drift = &drifts.front();
        QCOMPARE(drift->physical, std::string("vcpu2"));
        QCOMPARE(drift->iterations, 3);
        QVERIFY(std::abs(drift->factor - 2.5) < 1e-9);
        // Re-planned with b 2.5 times slower; then b is back to speed.
        watch.follow(plan, {{"vcpu2", 2.5}});
        // The first two iterations of a plan swapped in run cold: unread.
        QVERIFY(step(900, 900).empty());
        QVERIFY(step(900, 900).empty());
        for (int i = 0; i < 3; ++i)
            QVERIFY(step(300, 250).empty());
        QVERIFY(step(300, 100).empty());
        QVERIFY(step(300, 100).empty());
        const auto backs = step(300, 100);
        QCOMPARE(backs.size(), std::size_t{1});
        const SpeedDrift* back = &backs.front();
        QCOMPARE(back->factor, 1.0);
        QVERIFY(back->ratio < 1);
        // Both devices slowed at once (a process on one core slows its SMT sibling too): one
        // re-placement for both.
        watch.follow(plan, {});
        QVERIFY(step(900, 900).empty());
        QVERIFY(step(900, 900).empty());
        for (int i = 0; i < 3; ++i)
            QVERIFY(step(100, 100).empty());

        QVERIFY(step(200, 300).empty());
        QVERIFY(step(200, 300).empty());
        const auto both = step(200, 300);
        QCOMPARE(both.size(), std::size_t{2});
        QVERIFY(std::abs(both[0].factor - 2) < 1e-9 && std::abs(both[1].factor - 3) < 1e-9);
        // Work that grows by the iteration (a generation's cache) is no drift: the usual ratio
        // follows what stays within the margin, here to three times the first iterations'.
        watch.follow(plan, {});
        QVERIFY(step(900, 900).empty());
        QVERIFY(step(900, 900).empty());
        double grown = 100;
        for (int i = 0; i < 40; ++i, grown *= 1.03)
            QVERIFY2(step(grown, grown).empty(), std::to_string(grown).c_str());
        // A slowdown on top still is one.
        QVERIFY(step(2 * grown, grown).empty());
        QVERIFY(step(2 * grown, grown).empty());
        QCOMPARE(step(2 * grown, grown).size(), std::size_t{1});
    }
};

QTEST_GUILESS_MAIN(TestAdaptation)
#include "tst_adaptation.moc"
