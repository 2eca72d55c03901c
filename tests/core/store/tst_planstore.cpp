// The plan store: saved plans reopen to the identical plan; renames, copies, deletes and diffs;
// hostile names; files that are not ours, newer, truncated or older; a full disk; drafts; crash
// safety under 100 SIGKILLs amid saves of plans, runs and drafts
// and two writers at once (this executable doubles as the writing child process).
#include "device/DeviceMapping.h"
#include "io/JsonGraph.h"
#include "io/ModelLoader.h"
#include "kernels/RandomTensor.h"
#include "plan/Annotations.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "session/Session.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"

#include <QCoreApplication>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

using namespace placer;
using namespace placer::store;

namespace {

const std::string kExample =
    std::string(PLACER_SOURCE_DIR) + "/resources/examples/residual_block.relay";

LoadedModel example() {
    auto loaded = loadModelFile(kExample, GraphFormat::Auto, std::nullopt);
    if (!loaded)
        qFatal("%s", loaded.error().toString().c_str());
    return loaded.take();
}

std::string fileBytes(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(file), {});
}

std::unique_ptr<PlanStore> openOrDie(const std::string& path) {
    auto store = PlanStore::open(path);
    if (!store)
        qFatal("%s", store.error().toString().c_str());
    return store.take();
}

Status saveExample(PlanStore& store, const std::string& name, const PlanOptions& options = {}) {
    LoadedModel model = example();
    return store.savePlan(name, "note of " + name, model.graph, model.devices, options,
                          planDevices(model.graph, model.devices, options));
}

std::string integrity(const std::string& path) {
    auto db = Database::open(path, false);
    if (!db)
        return db.error().message;
    auto check = db.value()->prepare("PRAGMA integrity_check");
    if (!check || !check.value().step())
        return "cannot check";
    return check.value().text(0);
}

/// The child: saves plans named PREFIX-0, PREFIX-1, ... and prints "saved NAME" after each
/// commit; a busy database is reported as "busy NAME" and retried.
int childSave(const std::string& db, const std::string& prefix, int count) {
    auto store = PlanStore::open(db);
    if (!store) {
        std::printf("open failed: %s\n", store.error().message.c_str());
        return 1;
    }
    LoadedModel model = example();
    for (int i = 0; i < count; ++i) {
        const std::string name = prefix + "-" + std::to_string(i);
        PlanOptions options;
        options.rules = {{i % 2 ? "nn.conv2d" : "nn.relu", "cpu"}};
        const Plan plan = planDevices(model.graph, model.devices, options);
        for (int attempt = 0;; ++attempt) {
            const Status status =
                store.value()->savePlan(name, "child", model.graph, model.devices, options, plan);
            if (status.ok())
                break;
            const std::string& message = status.error().message;
            if (message.find("busy") == std::string::npos || attempt > 50) {
                std::printf("failed %s: %s\n", name.c_str(), message.c_str());
                return 1;
            }
            std::printf("busy %s\n", name.c_str());
        }
        std::printf("saved %s\n", name.c_str());
        std::fflush(stdout);
        // A run of it, and a window's draft, as the GUI records them after a run and an edit.
        RunRecord run;
        run.mapping = "cpu=cpu, gpu=vcpu1";
        run.machine = "child";
        run.iterations = i + 1;
        run.latencyMs = 1.5 * (i + 1);
        run.report = "{}";
        for (int attempt = 0;; ++attempt) {
            const Status status = store.value()->saveRun(name, run);
            if (status.ok())
                break;
            if (status.error().message.find("busy") == std::string::npos || attempt > 50) {
                std::printf("failed run %s: %s\n", name.c_str(), status.error().message.c_str());
                return 1;
            }
        }
        std::printf("ran %s %d\n", name.c_str(), run.iterations);
        std::fflush(stdout);
        for (int attempt = 0;; ++attempt) {
            const Status status = store.value()->saveDraft(
                prefix + " 1 1 1", name, kExample, model.graph, model.devices, options, plan);
            if (status.ok())
                break;
            if (status.error().message.find("busy") == std::string::npos || attempt > 50) {
                std::printf("failed draft %s: %s\n", name.c_str(), status.error().message.c_str());
                return 1;
            }
        }
    }
    return 0;
}

} // namespace

class TestPlanStore : public QObject {
    Q_OBJECT

private slots:
    void savedPlanReopensToTheSamePlan() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("ws.db").toStdString();
        auto store = openOrDie(path);
        LoadedModel model = example();
        QVERIFY(applyPinRequests(model.graph, model.devices, {{"%2", "cpu", false}}).ok());
        PlanOptions options;
        options.rules = {{"nn.dense", "cpu"}};
        options.mode = PlanMode::Unify;
        const Plan plan = planDevices(model.graph, model.devices, options);
        QVERIFY(
            store->savePlan("mine", "an hour of pinning", model.graph, model.devices, options, plan)
                .ok());
        store.reset();

        auto reopened = openOrDie(path);
        auto stored = reopened->loadPlan("mine");
        QVERIFY2(stored.ok(), stored.ok() ? "" : stored.error().message.c_str());
        QCOMPARE(stored.value().note, std::string("an hour of pinning"));
        QVERIFY(stored.value().options == options);
        QCOMPARE(stored.value().model.graph.node(*stored.value().model.graph.find("%2")).pin.kind,
                 PinKind::Plain);
        const PlanCheck check = PlanStore::check(stored.value());
        QVERIFY2(check.differences.empty(),
                 check.differences.empty() ? "" : check.differences[0].c_str());
        QCOMPARE(check.plan.devices, plan.devices);
        QCOMPARE(check.plan.copies.size(), plan.copies.size());
        QCOMPARE(check.plan.conflicts.size(), plan.conflicts.size());
        // Saving the same name again replaces it; the graph is stored once.
        QVERIFY(
            reopened->savePlan("mine", "second", model.graph, model.devices, options, plan).ok());
        auto list = reopened->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), std::size_t{1});
        QCOMPARE(list.value()[0].note, std::string("second"));
    }

    // Drafts (autosave): a window's edit state journaled apart from the saved plans. It
    // reloads to the same plan (pins, devices, options with micro-batches and splits), each
    // owner keeps one, a draft whose process is gone is abandoned, the saved plan is untouched,
    // and deleting drafts and plans leaves no graph behind.
    void draftsKeepUnsavedEdits() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("ws.db").toStdString();
        auto store = openOrDie(path);
        QVERIFY(saveExample(*store, "mine").ok());
        LoadedModel model = example();
        QVERIFY(applyPinRequests(model.graph, model.devices, {{"%4", "cpu", false}}).ok());
        PlanOptions options;
        options.rules = {{"nn.dense", "cpu"}};
        options.mode = PlanMode::Auto;
        options.splits.push_back(parseSplitRequest("%9=cpu,gpu").take());
        const Plan plan = planDevices(model.graph, model.devices, options);
        const std::string mine = draftOwner(1), other = draftOwner(2);
        QVERIFY(mine != other);
        QVERIFY(draftOwnerRunning(mine));
        QVERIFY(store->saveDraft(mine, "mine", kExample, model.graph, model.devices, options, plan)
                    .ok());
        // A second edit replaces the first; another window keeps its own.
        options.microBatches = 4;
        QVERIFY(store->saveDraft(mine, "mine", kExample, model.graph, model.devices, options, plan)
                    .ok());
        QVERIFY(store->saveDraft(other, "", kExample, model.graph, model.devices, {}, plan).ok());
        // A draft of a process that is gone (no pid is that large): abandoned.
        std::string dead = mine;
        dead.replace(dead.find(' ') + 1, dead.find(' ', dead.find(' ') + 1) - dead.find(' ') - 1,
                     "999999999");
        QVERIFY(!draftOwnerRunning(dead));
        QVERIFY(store->saveDraft(dead, "mine", kExample, model.graph, model.devices, options, plan)
                    .ok());
        store.reset();

        auto reopened = openOrDie(path);
        auto drafts = reopened->listDrafts();
        QVERIFY(drafts.ok());
        QCOMPARE(drafts.value().size(), std::size_t{3});
        int abandoned = 0;
        std::int64_t deadId = -1, mineId = -1;
        for (const DraftSummary& d : drafts.value()) {
            abandoned += d.abandoned;
            if (d.owner == dead)
                deadId = d.id;
            if (d.owner == mine)
                mineId = d.id;
        }
        QCOMPARE(abandoned, 1);
        auto draft = reopened->loadDraft(deadId);
        QVERIFY2(draft.ok(), draft.ok() ? "" : draft.error().message.c_str());
        QCOMPARE(draft.value().summary.plan, std::string("mine"));
        QCOMPARE(draft.value().summary.source, kExample);
        QVERIFY(draft.value().summary.abandoned);
        QVERIFY(draft.value().plan.options == options);
        const Graph& restored = draft.value().plan.model.graph;
        QCOMPARE(restored.node(*restored.find("%4")).pin.kind, PinKind::Plain);
        const Plan again =
            planDevices(restored, draft.value().plan.model.devices, draft.value().plan.options);
        const Plan expected = planDevices(model.graph, model.devices, options);
        QCOMPARE(again.devices, expected.devices);
        QCOMPARE(again.copies.size(), expected.copies.size());
        // The saved plan is untouched.
        auto saved = reopened->loadPlan("mine");
        QVERIFY(saved.ok());
        QVERIFY(saved.value().options == PlanOptions{});
        // Deleting: by owner, by id; a missing one is fine by owner, an error by id.
        QVERIFY(reopened->deleteDraft(mine).ok());
        QVERIFY(reopened->deleteDraft(mine).ok());
        QVERIFY(!reopened->deleteDraft(mineId).ok());
        QVERIFY(reopened->deleteDraft(deadId).ok());
        QVERIFY(reopened->deleteDraft(other).ok());
        QVERIFY(reopened->deletePlan("mine").ok());
        auto graphs = reopened->database().firstRow("SELECT count(*) FROM graphs WHERE id > ?",
                                                    std::int64_t{-1});
        QVERIFY(graphs.ok() && graphs.value());
        QCOMPARE(graphs.value()->integer(0), std::int64_t{0});
        QCOMPARE(integrity(path), std::string("ok"));
    }

    // A full disk: a 1 MiB file system (tmpfs, where this test may mount one) fills up while
    // plans are saved; the save that does not fit fails with a sentence that says so and names
    // the workspace, and every plan saved before it reloads intact.
    void aFullDiskFailsTheSaveAndKeepsTheRest() {
        QTemporaryDir dir;
        const QString mountPoint = dir.filePath("small");
        QVERIFY(QDir().mkpath(mountPoint));
        QProcess mount;
        mount.start("mount", {"-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint});
        if (!mount.waitForFinished() || mount.exitCode() != 0)
            QSKIP("cannot mount a small tmpfs here (needs root and permission to mount): " +
                  mount.readAllStandardError().trimmed());
        struct Unmount {
            QString at;
            ~Unmount() { QProcess::execute("umount", {at}); }
        } unmount{mountPoint};
        const std::string path = (mountPoint + "/ws.db").toStdString();
        auto store = openOrDie(path);
        std::vector<std::string> saved;
        std::string failure;
        LoadedModel model = example();
        for (int i = 0; i < 2000 && failure.empty(); ++i) {
            const std::string name = "plan-" + std::to_string(i);
            PlanOptions options;
            options.rules = {{"nn.conv2d", i % 2 ? "cpu" : "gpu"}};
            // A note of 8 KiB each, so that the disk fills within a few hundred saves.
            const Status status = store->savePlan(
                name, std::string(8192, static_cast<char>('a' + i % 26)), model.graph,
                model.devices, options, planDevices(model.graph, model.devices, options));
            if (status.ok())
                saved.push_back(name);
            else
                failure = status.error().toString();
        }
        QVERIFY2(!failure.empty(), "the disk never filled");
        QVERIFY2(failure.find("the disk is full") != std::string::npos, failure.c_str());
        QVERIFY2(failure.find(path) != std::string::npos, failure.c_str());
        QVERIFY(saved.size() > 5);
        store.reset();
        auto reopened = PlanStore::open(path);
        QVERIFY2(reopened.ok(), reopened.ok() ? "" : reopened.error().message.c_str());
        auto list = reopened.value()->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), saved.size());
        for (const std::string& name : {saved.front(), saved.back()})
            QVERIFY(reopened.value()->loadPlan(name).ok());
        reopened.value().reset();
        QCOMPARE(integrity(path), std::string("ok"));
        qInfo("%zu plans saved before the disk was full: %s", saved.size(), failure.c_str());
    }

    void aChangedPlannerAnswerIsReported() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("ws.db").toStdString();
        auto store = openOrDie(path);
        QVERIFY(saveExample(*store, "p").ok());
        // As if an older planner had put %9 elsewhere.
        auto stored = store->loadPlan("p");
        QVERIFY(stored.ok());
        std::vector<std::string> devices = stored.value().savedDevices;
        const auto index = stored.value().model.graph.find("%9")->index;
        devices[index] = devices[index] == "cpu" ? "gpu" : "cpu";
        Json array = Json::array();
        for (const auto& d : devices)
            array.push(d);
        auto update = store->database().prepare("UPDATE plans SET placement = ? WHERE name = 'p'");
        QVERIFY(update.ok());
        update.value().bind(1, std::string_view(array.dump(-1)));
        QVERIFY(update.value().run().ok());
        stored = store->loadPlan("p");
        const PlanCheck check = PlanStore::check(stored.value());
        QCOMPARE(check.differences.size(), std::size_t{1});
        QVERIFY2(QString::fromStdString(check.differences[0]).startsWith("%9: saved on"),
                 check.differences[0].c_str());
    }

    void renameDuplicateDeleteAndRuns() {
        QTemporaryDir dir;
        auto store = openOrDie(dir.filePath("ws.db").toStdString());
        QVERIFY(saveExample(*store, "a").ok());
        QVERIFY(store->duplicatePlan("a", "b").ok());
        QVERIFY(store->renamePlan("b", "c").ok());
        QVERIFY(!store->renamePlan("c", "a").ok());  // taken
        QVERIFY(!store->renamePlan("zz", "y").ok()); // missing
        QVERIFY(store->saveRun("c", RunRecord{"gpu=vcpu1", "2 cores", 10, 1.25, "{}"}).ok());
        QVERIFY(store->saveRun("c", RunRecord{"gpu=vcpu1", "2 cores", 10, 0.75, "{}"}).ok());
        auto list = store->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), std::size_t{2});
        QCOMPARE(list.value()[1].name, std::string("c"));
        QCOMPARE(list.value()[1].lastRunMs, 0.75);
        QCOMPARE(list.value()[0].lastRunMs, -1.0);
        QVERIFY(store->deletePlan("c").ok());
        QVERIFY(!store->deletePlan("c").ok());
        auto runs = store->database().prepare("SELECT count(*) FROM runs");
        QVERIFY(runs.ok() && runs.value().step().value());
        QCOMPARE(runs.value().integer(0), std::int64_t{0}); // runs went with the plan
    }

    // Generations are kept per plan, the latest first, and go with their plan.
    void generationsKeptPerPlan() {
        QTemporaryDir dir;
        auto store = openOrDie(dir.filePath("ws.db").toStdString());
        QVERIFY(saveExample(*store, "decoder").ok());
        GenerationRecord first{"a=vcpu1", "2 cores", 32, 64, 12.5, 240.0, "{\"tokens\": []}", ""};
        GenerationRecord second = first;
        second.newTokens = 8;
        second.tokensPerSecond = 250.5;
        QVERIFY(store->saveGeneration("decoder", first).ok());
        QVERIFY(store->saveGeneration("decoder", second).ok());
        QVERIFY(!store->saveGeneration("nosuch", first).ok());
        auto kept = store->generations("decoder");
        QVERIFY(kept.ok());
        QCOMPARE(kept.value().size(), std::size_t{2});
        QCOMPARE(kept.value()[0].newTokens, 8);
        QCOMPARE(kept.value()[0].tokensPerSecond, 250.5);
        QCOMPARE(kept.value()[1].promptTokens, 32);
        QCOMPARE(kept.value()[1].mapping, std::string("a=vcpu1"));
        QCOMPARE(kept.value()[1].report, first.report);
        QVERIFY(!kept.value()[1].created.empty());
        QCOMPARE(store->generations("decoder", 1).value().size(), std::size_t{1});
        QVERIFY(store->deletePlan("decoder").ok());
        auto left = store->database().prepare("SELECT count(*) FROM generations");
        QVERIFY(left.ok() && left.value().step().value());
        QCOMPARE(left.value().integer(0), std::int64_t{0}); // they went with the plan
    }

    // The CLI and the GUI record a run with this one function: the physical device each
    // virtual device ran on, the machine, the iterations, the median and the report.
    void runRecordSaysWhatRan() {
        LoadedModel model = example();
        auto planned = std::make_shared<PlannedModel>();
        planned->options.rules = {{"nn.conv2d", "gpu"}};
        planned->options.fallbackDevice = "cpu";
        planned->plan = planDevices(model.graph, model.devices, planned->options);
        planned->model = std::move(model);
        QTemporaryDir dir;
        Session session(SessionOptions{dir.filePath("runs.db").toStdString()});
        RunRequest request;
        request.maps = {{"gpu", "vcpu5"}};
        request.warmup = 0;
        request.iterations = 3;
        auto ran = session.run(planned, request);
        QVERIFY2(ran.ok(), ran ? "" : ran.error().message.c_str());
        const RunOutcome& report = *ran.value();
        const RunRecord record = runRecord(report);
        QCOMPARE(record.mapping, std::string("cpu=cpu, gpu=vcpu5"));
        QCOMPARE(record.machine,
                 std::to_string(std::thread::hardware_concurrency()) + std::string(" cores"));
        QCOMPARE(record.iterations, 3);
        QVERIFY(record.latencyMs > 0);
        auto json = Json::parse(record.report, "report");
        QVERIFY(json.ok());
        QCOMPARE(json.value()["iterations"].asInt(), std::int64_t{3});
    }

    void diffOfTwoPlans() {
        QTemporaryDir dir;
        auto store = openOrDie(dir.filePath("ws.db").toStdString());
        QVERIFY(saveExample(*store, "gpu").ok());
        PlanOptions split;
        split.rules = {{"nn.conv2d", "gpu"}};
        split.fallbackDevice = "cpu";
        QVERIFY(saveExample(*store, "split", split).ok());
        auto diff = store->diffPlans("gpu", "split");
        QVERIFY(diff.ok());
        QVERIFY(!diff.value().movedNodes.empty());
        QVERIFY(!diff.value().copiesAdded.empty());
        QVERIFY(diff.value().copiesRemoved.empty());
        QCOMPARE(diff.value().bytesA, std::int64_t{0});
        QVERIFY(diff.value().bytesB > 0);
        QVERIFY(!store->diffPlans("gpu", "none").ok());
    }

    void hostileNames_data() {
        QTest::addColumn<QByteArray>("name");
        QTest::newRow("quotes") << QByteArray("it's \"quoted\"");
        QTest::newRow("sql") << QByteArray("x'); DROP TABLE plans; --");
        QTest::newRow("invalid-utf8") << QByteArray("bad \xff\xfe\xc3 bytes");
        QTest::newRow("one-megabyte") << QByteArray(1 << 20, 'n');
        QTest::newRow("nul-free-control") << QByteArray("tab\tnewline\nend");
    }
    void hostileNames() {
        QFETCH(QByteArray, name);
        QTemporaryDir dir;
        auto store = openOrDie(dir.filePath("ws.db").toStdString());
        const std::string text = name.toStdString();
        QVERIFY(saveExample(*store, text).ok());
        QVERIFY(saveExample(*store, "other").ok());
        auto list = store->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), std::size_t{2});
        auto stored = store->loadPlan(text);
        QVERIFY(stored.ok());
        QCOMPARE(stored.value().name, text);
        QVERIFY(store->renamePlan(text, text + "2").ok());
        QVERIFY(store->deletePlan(text + "2").ok());
        QCOMPARE(integrity(dir.filePath("ws.db").toStdString()), std::string("ok"));
    }

    void refusesFilesThatAreNotOurs() {
        QTemporaryDir dir;
        const std::string text = dir.filePath("notes.db").toStdString();
        std::ofstream(text) << "these are my notes, not a database\n";
        const std::string before = fileBytes(text);
        auto store = PlanStore::open(text);
        QVERIFY(!store.ok());
        QVERIFY2(store.error().message.find("not SQLite") != std::string::npos,
                 store.error().message.c_str());
        QCOMPARE(fileBytes(text), before);

        // A newer schema: refused, file untouched.
        const std::string newer = dir.filePath("newer.db").toStdString();
        {
            auto db = Database::open(newer);
            QVERIFY(db.ok());
            QVERIFY(db.value()->exec("CREATE TABLE t(x); PRAGMA user_version = 99;").ok());
            QVERIFY(db.value()->exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
        }
        const std::string newerBytes = fileBytes(newer);
        auto refused = PlanStore::open(newer);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.error().message.find("newer Placement Explorer (schema 99") !=
                     std::string::npos,
                 refused.error().message.c_str());
        QCOMPARE(fileBytes(newer), newerBytes);

        // A truncated workspace: a clear error, no crash.
        const std::string cut = dir.filePath("cut.db").toStdString();
        {
            auto full = openOrDie(cut);
            for (int i = 0; i < 30; ++i)
                QVERIFY(saveExample(*full, "plan " + std::to_string(i)).ok());
            QVERIFY(full->database().exec("PRAGMA wal_checkpoint(TRUNCATE)").ok());
        }
        const std::string bytes = fileBytes(cut);
        std::ofstream(cut, std::ios::binary | std::ios::trunc)
            .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 3));
        std::filesystem::remove(cut + "-wal");
        std::filesystem::remove(cut + "-shm");
        auto damaged = PlanStore::open(cut);
        QVERIFY(!damaged.ok());
        QVERIFY2(damaged.error().message.find("damaged") != std::string::npos,
                 damaged.error().message.c_str());
    }

    void costsAndCalibrationsPerMachine() {
        QTemporaryDir dir;
        auto store = PlanStore::open(dir.filePath("w.db").toStdString());
        QVERIFY(store.ok());
        PlanStore& plans = *store.value();
        QVERIFY(plans
                    .recordCosts("box", {{"nn.relu(float32[4])", "vcpu", 10, 1},
                                         {"nn.relu(float32[4])", "cpu", 4, 1}})
                    .ok());
        // A second run of the same op: the mean of the runs' medians.
        QVERIFY(plans.recordCosts("box", {{"nn.relu(float32[4])", "vcpu", 20, 1}}).ok());
        QVERIFY(plans.recordCosts("other", {{"nn.relu(float32[4])", "vcpu", 99, 1}}).ok());
        auto costs = plans.loadCosts("box");
        QVERIFY(costs.ok());
        QCOMPARE(costs.value().size(), std::size_t{2});
        QCOMPARE(costs.value()[1].physical, std::string("vcpu"));
        QCOMPARE(costs.value()[1].micros, 15.0);
        QCOMPARE(costs.value()[1].runs, 2);
        QCOMPARE(plans.loadCosts("nobody").value().size(), std::size_t{0});

        QVERIFY(plans.loadCalibration("box").ok() && !plans.loadCalibration("box").value());
        Calibration calibration;
        calibration.machine = "box";
        DeviceProfile cpu = assumedProfile("cpu", false);
        cpu.flopsPerMicro = 1.25e5;
        cpu.calibrated = true;
        calibration.devices.push_back(cpu);
        calibration.links[{"cpu", "vcpu1"}] = LinkProfile{0.5, 2e4, true};
        QVERIFY(plans.saveCalibration(calibration).ok());
        auto loaded = plans.loadCalibration("box");
        QVERIFY(loaded.ok() && loaded.value());
        QCOMPARE(loaded.value()->devices.size(), std::size_t{1});
        QCOMPARE(loaded.value()->devices[0].flopsPerMicro, 1.25e5);
        QVERIFY(loaded.value()->devices[0].calibrated);
        QCOMPARE(loaded.value()->links.at({"cpu", "vcpu1"}).bytesPerMicro, 2e4);
    }

    /// The cost table follows the machine: the history of a key weighs at most kCostMemory
    /// runs against a new one, however many runs it has seen; one run's entries of a key are
    /// one measurement.
    void costsFollowTheMachine() {
        QTemporaryDir dir;
        auto store = PlanStore::open(dir.filePath("w.db").toStdString());
        QVERIFY(store.ok());
        PlanStore& plans = *store.value();
        const auto micros = [&](const std::string& key) {
            const auto costs = plans.loadCosts("box");
            for (const MeasuredCost& cost : costs.value())
                if (cost.key == key)
                    return std::pair(cost.micros, cost.runs);
            return std::pair(-1.0, 0);
        };
        for (int run = 0; run < 20; ++run)
            QVERIFY(plans.recordCosts("box", {{"conv", "vcpu", 20, 1}}).ok());
        QCOMPARE(micros("conv"), std::pair(20.0, 20));
        // The kernel became twice as fast: five runs later the estimate is past halfway, where
        // the mean of all 25 runs would be 18.
        double expected = 20;
        for (int run = 0; run < 5; ++run) {
            QVERIFY(plans.recordCosts("box", {{"conv", "vcpu", 10, 1}}).ok());
            expected = (expected * kCostMemory + 10) / (kCostMemory + 1);
        }
        QVERIFY(std::abs(micros("conv").first - expected) < 1e-9);
        QVERIFY(micros("conv").first < 15.2);
        QCOMPARE(micros("conv").second, 25);
        // Three alike ops of one run: one measurement, their mean, standing for three.
        QVERIFY(plans
                    .recordCosts(
                        "box",
                        {{"relu", "vcpu", 10, 1}, {"relu", "vcpu", 20, 1}, {"relu", "vcpu", 30, 1}})
                    .ok());
        QCOMPARE(micros("relu"), std::pair(20.0, 3));
        QVERIFY(plans.recordCosts("box", {{"relu", "vcpu", 40, 1}}).ok());
        QCOMPARE(micros("relu"), std::pair(25.0, 4)); // within the memory: the mean of all four
    }

    void olderSchemaIsMigratedAfterABackup() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("old.db").toStdString();
        LoadedModel model = example();
        const std::string body = writeJsonGraph(model.graph, model.devices).dump(-1);
        {
            // What version 1 wrote: graphs and plans, no runs.
            auto db = Database::open(path);
            QVERIFY(db.ok());
            QVERIFY(
                db.value()
                    ->exec(
                        "CREATE TABLE graphs(id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE, "
                        "name TEXT "
                        "NOT NULL, format TEXT NOT NULL, body TEXT NOT NULL);"
                        "CREATE TABLE plans(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                        "graph_id "
                        "INTEGER NOT NULL REFERENCES graphs(id), devices TEXT NOT NULL, options "
                        "TEXT NOT "
                        "NULL, note TEXT NOT NULL, placement TEXT NOT NULL, copies TEXT NOT NULL, "
                        "copy_count INTEGER NOT NULL, copied_bytes INTEGER NOT NULL, conflicts "
                        "INTEGER NOT "
                        "NULL, report TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL);"
                        "PRAGMA user_version = 1;")
                    .ok());
            auto graph =
                db.value()->prepare("INSERT INTO graphs VALUES(1, 'h', 'old', 'relay', ?)");
            QVERIFY(graph.ok());
            graph.value().bind(1, std::string_view(body));
            QVERIFY(graph.value().run().ok());
            QVERIFY(db.value()
                        ->exec("INSERT INTO plans VALUES(1, 'kept', 1, 'cpu, gpu', "
                               "'{\"mode\":\"demand\"}', '', "
                               "'[]', '[]', 0, 0, 0, '{}', '2026-01-01T00:00:00Z', "
                               "'2026-01-01T00:00:00Z')")
                        .ok());
        }
        auto store = PlanStore::open(path);
        QVERIFY2(store.ok(), store.ok() ? "" : store.error().message.c_str());
        auto version = store.value()->database().prepare("PRAGMA user_version");
        QVERIFY(version.ok() && version.value().step().value());
        QCOMPARE(version.value().integer(0), std::int64_t{kSchemaVersion});
        QVERIFY(store.value()->saveRun("kept", RunRecord{"", "", 1, 2.0, "{}"}).ok());
        QVERIFY(store.value()->loadPlan("kept").ok());
        // Version 3's tables exist.
        QVERIFY(store.value()->recordCosts("m", {{"k", "cpu", 1, 1}}).ok());
        QVERIFY(store.value()->loadCalibration("m").ok());
        // The backup is the version-1 file, intact.
        QVERIFY(std::filesystem::exists(path + ".bak"));
        auto backup = Database::open(path + ".bak", false);
        QVERIFY(backup.ok());
        auto old = backup.value()->prepare("PRAGMA user_version");
        QVERIFY(old.ok() && old.value().step().value());
        QCOMPARE(old.value().integer(0), std::int64_t{1});
    }

    void survivesBeingKilledWhileSaving() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("crash.db").toStdString();
        openOrDie(path); // created before the children race to do it
        std::mt19937 rng(3);
        std::vector<std::string> saved;
        std::vector<std::pair<std::string, int>> ran; // (plan, iterations) recorded
        for (int round = 0; round < 100; ++round) {
            QProcess child;
            child.start(QCoreApplication::applicationFilePath(),
                        {"--child-save", QString::fromStdString(path),
                         QStringLiteral("r%1").arg(round), "1000"});
            QVERIFY(child.waitForStarted());
            // Every other child is killed only after it said it saved a plan, so that the check
            // below always has committed plans to find; the others anywhere from start-up on.
            if (round % 2 == 0)
                QVERIFY2(child.waitForReadyRead(20000), "the child saved nothing in 20 s");
            // Let it get somewhere (0 to ~40 ms more of saving), then SIGKILL it mid-stride.
            QTest::qWait(static_cast<int>(rng() % 40));
            ::kill(static_cast<pid_t>(child.processId()), SIGKILL);
            QVERIFY(child.waitForFinished(10000));
            for (const QByteArray& line : child.readAllStandardOutput().split('\n')) {
                if (line.startsWith("saved "))
                    saved.push_back(line.mid(6).toStdString());
                if (line.startsWith("ran ")) {
                    const QList<QByteArray> words = line.split(' ');
                    ran.emplace_back(words[1].toStdString(), words[2].toInt());
                }
            }
        }
        QCOMPARE(integrity(path), std::string("ok"));
        // Half the children were killed after saving: the check below is not vacuous.
        QVERIFY2(saved.size() >= 50, qPrintable(QString("only %1 plans saved").arg(saved.size())));
        auto store = openOrDie(path);
        for (const std::string& name : saved) {
            auto plan = store->loadPlan(name);
            QVERIFY2(plan.ok(), name.c_str());
            QCOMPARE(plan.value().model.graph.size(), example().graph.size());
            QVERIFY(PlanStore::check(plan.value()).differences.empty());
        }
        // Every run reported recorded is there, and every draft left behind loads.
        QVERIFY(!ran.empty());
        for (const auto& [name, iterations] : ran) {
            auto last = store->lastRun(name);
            QVERIFY2(last.ok() && last.value(), name.c_str());
            QCOMPARE(last.value()->iterations, iterations);
        }
        auto drafts = store->listDrafts();
        QVERIFY(drafts.ok());
        for (const DraftSummary& draft : drafts.value())
            QVERIFY2(store->loadDraft(draft.id).ok(), draft.owner.c_str());
        qInfo("%zu plans and %zu runs reported saved before the kills, all intact; %zu drafts "
              "left, all loading",
              saved.size(), ran.size(), drafts.value().size());
    }

    void twoWritersAtOnce() {
        QTemporaryDir dir;
        const std::string path = dir.filePath("shared.db").toStdString();
        openOrDie(path);
        QProcess a, b;
        for (auto [process, prefix] : {std::pair{&a, "a"}, std::pair{&b, "b"}})
            process->start(QCoreApplication::applicationFilePath(),
                           {"--child-save", QString::fromStdString(path), prefix, "40"});
        QVERIFY(a.waitForFinished(120000) && b.waitForFinished(120000));
        int saved = 0;
        for (QProcess* process : {&a, &b}) {
            const QByteArray output = process->readAllStandardOutput();
            QVERIFY2(process->exitCode() == 0, output.constData());
            saved += static_cast<int>(output.count("saved "));
        }
        QCOMPARE(saved, 80);
        QCOMPARE(integrity(path), std::string("ok"));
        auto list = openOrDie(path)->listPlans();
        QVERIFY(list.ok());
        QCOMPARE(list.value().size(), std::size_t{80});
    }
};

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "--child-save")
        return childSave(argv[2], argv[3], std::atoi(argv[4]));
    QCoreApplication app(argc, argv);
    TestPlanStore test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_planstore.moc"
