// Pipeline stages by dynamic programming (plan/PipelineStages.h) against the exact optimum of the
// same stage model, found by trying every assignment of small random chains and DAGs.
#include "plan/PipelineStages.h"

#include <QtTest>

#include <cmath>
#include <random>

using namespace placer;

namespace {

struct Shape {
    int tasks = 6;
    int devices = 2;
    bool chain = true;
    bool barred = false;   ///< some tasks cannot run on some device
    bool fixed = false;    ///< some tasks are pinned
    bool capacity = false; ///< devices have memory capacities
    bool pinnedInput = false;
    bool sharedResource = false; ///< the first two devices share one resource
};

PlacementProblem randomProblem(std::mt19937& rng, const Shape& shape) {
    auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(rng);
    };
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    PlacementProblem p;
    p.devices = shape.devices;
    for (int d = 0; d < shape.devices; ++d)
        p.resourceOf.push_back(shape.sharedResource && d == 1 ? 0 : d);
    p.setLinks(uniform(0, 20), uniform(0.5, 8));
    // Fixed time per task on each device, now and then.
    if (pick(0, 1) == 1)
        for (int d = 0; d < shape.devices; ++d)
            p.taskOverheadMicros.push_back(uniform(0, 30));
    const int first = shape.pinnedInput ? 1 : 0;
    const int total = shape.tasks + first;
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> edges(
        static_cast<std::size_t>(total));
    for (int t = 0; t < total; ++t) {
        for (int s = t + 1; s < total; ++s) {
            const bool link = shape.chain ? s == t + 1 : (s == t + 1 || pick(0, 3) == 0);
            if (link || (t == 0 && first == 1 && pick(0, 2) == 0))
                edges[static_cast<std::size_t>(t)].emplace_back(static_cast<std::uint32_t>(s),
                                                                pick(1, 4000));
        }
    }
    for (int t = 0; t < total; ++t) {
        if (t < first) {
            p.addTask(std::vector<double>(static_cast<std::size_t>(shape.devices), 0.0),
                      pick(0, shape.devices - 1), true);
        } else {
            std::vector<double> costs;
            for (int d = 0; d < shape.devices; ++d)
                costs.push_back(shape.barred && pick(0, 5) == 0 ? kCannotRun : uniform(1, 200));
            const int fixed = shape.fixed && pick(0, 6) == 0 ? pick(0, shape.devices - 1) : -1;
            if (fixed >= 0 && costs[static_cast<std::size_t>(fixed)] == kCannotRun)
                costs[static_cast<std::size_t>(fixed)] = uniform(1, 200);
            p.addTask(costs, fixed);
            if (shape.capacity) {
                p.outputBytes.back() = pick(100, 2000);
                if (pick(0, 1) == 1) {
                    // A weight of its own, or now and then one an earlier task reads too.
                    if (p.weightBytes.empty() || pick(0, 4) > 0)
                        p.weightBytes.push_back(pick(1000, 6000));
                    p.addWeight(static_cast<std::uint32_t>(
                        pick(0, static_cast<int>(p.weightBytes.size()) - 1)));
                }
            }
        }
        for (const auto& [to, bytes] : edges[static_cast<std::size_t>(t)])
            p.addEdge(to, bytes);
    }
    for (int d = 0; d < shape.devices; ++d)
        p.capacity.push_back(shape.capacity && pick(0, 3) > 0 ? pick(6000, 20000) : -1);
    return p;
}

/// Whether `a` is contiguous stages on distinct resources that the problem allows; the stages'
/// memory within capacities.
bool valid(const PlacementProblem& p, const std::vector<int>& a, int microBatches) {
    std::vector<PipelineStage> stages;
    pipelinedLatency(p, a, microBatches, &stages);
    std::vector<char> used(static_cast<std::size_t>(p.devices), 0);
    for (const PipelineStage& stage : stages) {
        if (used[static_cast<std::size_t>(p.resourceOf[static_cast<std::size_t>(stage.device)])]++)
            return false;
        const std::int64_t capacity =
            p.capacity.empty() ? -1 : p.capacity[static_cast<std::size_t>(stage.device)];
        if (capacity >= 0 && stageMemoryBytes(p, stage.begin, stage.end, microBatches) > capacity)
            return false;
    }
    for (std::size_t t = 0; t < p.tasks(); ++t) {
        if (p.instant[t]) {
            if (p.fixed[t] >= 0 && a[t] != p.fixed[t])
                return false;
            continue;
        }
        if (!p.allowed(t, a[t]))
            return false;
    }
    return true;
}

/// The exact optimum of the stage model: every assignment of the non-instant tasks.
std::optional<double> bruteForce(const PlacementProblem& p, int microBatches, int batches = 1) {
    std::vector<int> a(p.tasks(), 0);
    std::vector<std::size_t> free;
    for (std::size_t t = 0; t < p.tasks(); ++t) {
        if (p.instant[t])
            a[t] = p.fixed[t];
        else
            free.push_back(t);
    }
    std::optional<double> best;
    while (true) {
        if (valid(p, a, microBatches)) {
            const double latency = pipelinedLatency(p, a, microBatches, nullptr, batches);
            if (!best || latency < *best)
                best = latency;
        }
        std::size_t k = 0;
        while (k < free.size() && ++a[free[k]] == p.devices)
            a[free[k++]] = 0;
        if (k == free.size())
            break;
    }
    return best;
}

} // namespace

class TestPipelineStages : public QObject {
    Q_OBJECT

private slots:
    // The stage model on a hand-made case: a chain of four 100 µs tasks, free copies, two
    // devices, 4 micro-batches. Halves are 50 µs a micro-batch each: 50 + 50 + 3 x 50 = 250 µs,
    // against 400 µs on one device.
    void modelOfTwoBalancedStages() {
        PlacementProblem p;
        p.devices = 2;
        p.resourceOf = {0, 1};
        p.setLinks(0, 1e12);
        for (int t = 0; t < 4; ++t) {
            p.addTask({100, 100});
            if (t < 3)
                p.addEdge(static_cast<std::uint32_t>(t + 1), 1000);
        }
        QCOMPARE(pipelinedLatency(p, {0, 0, 0, 0}, 4), 400.0);
        QCOMPARE(pipelinedLatency(p, {0, 0, 1, 1}, 4), 250.0);
        const auto chosen = choosePipelineStages(p, 4);
        QVERIFY(chosen);
        QCOMPARE(chosen->latencyMicros, 250.0);
        QCOMPARE(chosen->stages.size(), std::size_t{2});
        QCOMPARE(chosen->stages[0].end, std::size_t{2});
        QVERIFY(chosen->exact);
        // One micro-batch gains nothing from a second device.
        const auto alone = choosePipelineStages(p, 1);
        QVERIFY(alone);
        QCOMPARE(alone->latencyMicros, 400.0);
        // A fixed 10 µs a task (launch, dispatch) is paid by every micro-batch: 10 + 90 / 4 a
        // task, 65 µs a stage, 5 x 65 for the batch; on one device 4 x 130.
        p.taskOverheadMicros = {10, 10};
        QCOMPARE(pipelinedLatency(p, {0, 0, 1, 1}, 4), 325.0);
        QCOMPARE(pipelinedLatency(p, {0, 0, 0, 0}, 4), 520.0);
        QCOMPARE(choosePipelineStages(p, 4)->latencyMicros, 325.0);
        // A stream of 3 batches in 4 micro-batches each: 12 through the pipeline, 65 + 65 +
        // 11 x 65; on one device 3 x 520.
        PipelineStageOptions stream;
        stream.batches = 3;
        QCOMPARE(pipelinedLatency(p, {0, 0, 1, 1}, 4, nullptr, 3), 845.0);
        QCOMPARE(pipelinedLatency(p, {0, 0, 0, 0}, 4, nullptr, 3), 1560.0);
        QCOMPARE(choosePipelineStages(p, 4, stream)->latencyMicros, 845.0);
        // One micro-batch a batch still pipelines across the batches: 200 + 200 + 2 x 200,
        // against 3 x 400 on one device.
        p.taskOverheadMicros = {0, 0};
        QVERIFY(std::fabs(choosePipelineStages(p, 1, stream)->latencyMicros - 800.0) < 1e-6);
        QCOMPARE(pipelinedLatency(p, {0, 0, 0, 0}, 1, nullptr, 3), 1200.0);
    }

    // Random chains and DAGs of 3 to 8 tasks on 2 or 3 devices, with barred and pinned tasks,
    // pinned inputs, memory capacities and two devices on one resource: the dynamic programme's
    // latency equals the exact optimum found by trying every assignment, and its stages are valid.
    void equalsTheBruteForceOptimum_data() {
        QTest::addColumn<int>("seed");
        for (int seed = 1; seed <= 300; ++seed)
            QTest::newRow(qPrintable(QString("random %1").arg(seed))) << seed;
    }
    void equalsTheBruteForceOptimum() {
        QFETCH(int, seed);
        std::mt19937 rng(static_cast<unsigned>(seed));
        Shape shape;
        shape.tasks = 3 + seed % 6;
        shape.devices = seed % 4 == 0 ? 3 : 2;
        if (shape.devices == 3)
            shape.tasks = std::min(shape.tasks, 7);
        shape.chain = seed % 2 == 0;
        shape.barred = seed % 3 == 0;
        shape.fixed = seed % 5 == 0;
        shape.capacity = seed % 7 < 3;
        shape.pinnedInput = seed % 11 < 4;
        shape.sharedResource = shape.devices == 3 && seed % 8 == 0;
        const PlacementProblem p = randomProblem(rng, shape);
        QVERIFY2(!p.check(), p.check() ? p.check()->c_str() : "");
        const int microBatches = 1 + static_cast<int>(rng() % 8);
        // A third of the cases stream 2 to 4 batches.
        PipelineStageOptions options;
        options.batches = seed % 3 == 1 ? 2 + static_cast<int>(rng() % 3) : 1;
        const auto expected = bruteForce(p, microBatches, options.batches);
        const auto chosen = choosePipelineStages(p, microBatches, options);
        QCOMPARE(chosen.has_value(), expected.has_value());
        if (!expected)
            return;
        QVERIFY(chosen->exact);
        QVERIFY(valid(p, chosen->assignment, microBatches));
        QVERIFY2(std::fabs(chosen->latencyMicros - *expected) <= 1e-9 * std::max(1.0, *expected),
                 qPrintable(QString("dynamic programme %1 µs, optimum %2 µs")
                                .arg(chosen->latencyMicros, 0, 'f', 6)
                                .arg(*expected, 0, 'f', 6)));
    }

    // Past the work bound the cut positions thin out: 3,000 tasks on four devices still give
    // valid stages over every device, balanced to within one position's spacing.
    void largeChainsUseSpacedPositions() {
        PlacementProblem p;
        p.devices = 4;
        p.resourceOf = {0, 1, 2, 3};
        p.setLinks(1, 100);
        const int n = 3000;
        for (int t = 0; t < n; ++t) {
            p.addTask({10, 10, 10, 10});
            if (t + 1 < n)
                p.addEdge(static_cast<std::uint32_t>(t + 1), 100);
        }
        QElapsedTimer timer;
        timer.start();
        const auto chosen = choosePipelineStages(p, 16);
        const qint64 elapsed = timer.elapsed();
        QVERIFY(chosen);
        QVERIFY(!chosen->exact);
        QVERIFY(chosen->positions < static_cast<std::size_t>(n));
        QCOMPARE(chosen->stages.size(), std::size_t{4});
        for (const PipelineStage& stage : chosen->stages) {
            const double share = static_cast<double>(stage.end - stage.begin) / n;
            QVERIFY2(std::fabs(share - 0.25) < 0.02, qPrintable(QString::number(share)));
        }
        qInfo("3000 tasks, 4 devices: %zu positions, %lld ms", chosen->positions, elapsed);
    }

    // No stage can hold a weight larger than every device's memory: no stages.
    void nothingFitsGivesNoStages() {
        PlacementProblem p;
        p.devices = 2;
        p.resourceOf = {0, 1};
        p.setLinks(1, 1);
        p.addTask({10, 10});
        p.outputBytes = {10};
        p.weightBytes = {5000};
        p.addWeight(0);
        p.capacity = {1000, 1000};
        QVERIFY(!choosePipelineStages(p, 2));
    }
};

QTEST_APPLESS_MAIN(TestPipelineStages)
#include "tst_pipelinestages.moc"
