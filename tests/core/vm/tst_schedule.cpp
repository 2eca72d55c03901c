// The schedule analysis on its own (vm/Schedule.h) and the execution order the memory plan
// and the lowering follow (plan/ExecutionOrder.h): dependencies point backwards and cover every
// register and storage, waits only where a device cannot know on its own, priorities follow the
// longest path, the predicted schedule overlaps independent branches, and the order keeps storage
// reuse from tying one device's branch to another's.
#include "TwoBranchGraph.h"

#include "plan/ExecutionOrder.h"
#include "plan/GraphIndex.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Schedule.h"

#include <QtTest>

#include <set>

using namespace placer;

namespace {

struct Lowered {
    Graph graph;
    DeviceSet devices;
    Plan plan;
    Program program;
};

Lowered lowered(test::BranchOrder order, std::int64_t channels = 8, std::int64_t size = 8) {
    Lowered l;
    l.graph = test::twoBranchGraph(channels, size, 3, order, true);
    l.devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
    l.plan = planDevices(l.graph, l.devices, PlanOptions{});
    auto program = lowerToBytecode(l.graph, l.devices, l.plan);
    if (!program)
        qFatal("%s", program.error().message.c_str());
    l.program = program.take();
    return l;
}

/// Streams by virtual device (or all on stream 0); lanes: 0 for work, -1 for bookkeeping.
ScheduleInput inputFor(const Lowered& l, std::vector<bool> asynchronous, bool oneStream = false) {
    ScheduleInput input;
    input.program = &l.program;
    for (std::size_t k = 0; k < l.program.code.size(); ++k) {
        const Instruction& instr = l.program.code[k];
        const bool runs = k >= l.program.runStart && instr.op != Opcode::Ret;
        input.stream.push_back(runs ? (oneStream ? 0 : static_cast<int>(instr.device.index)) : -1);
        const bool work = instr.op == Opcode::Invoke || instr.op == Opcode::DeviceCopy ||
                          instr.op == Opcode::LoadInput;
        input.lane.push_back(runs && work ? (instr.op == Opcode::Invoke ? 0 : 1) : -1);
    }
    input.asynchronous = std::move(asynchronous);
    input.cost = estimateCosts(l.program, l.graph);
    return input;
}

std::set<std::uint32_t> ancestors(const Schedule& schedule, std::uint32_t k) {
    std::set<std::uint32_t> seen;
    std::vector<std::uint32_t> stack(schedule.deps[k].begin(), schedule.deps[k].end());
    while (!stack.empty()) {
        const std::uint32_t d = stack.back();
        stack.pop_back();
        if (seen.insert(d).second)
            stack.insert(stack.end(), schedule.deps[d].begin(), schedule.deps[d].end());
    }
    return seen;
}

std::int64_t invokeOf(const Lowered& l, const char* name) {
    for (std::size_t k = l.program.runStart; k < l.program.code.size(); ++k) {
        const Instruction& instr = l.program.code[k];
        if (instr.op == Opcode::Invoke && l.graph.node(instr.node).name == name)
            return static_cast<std::int64_t>(k);
    }
    return -1;
}

} // namespace

class TestSchedule : public QObject {
    Q_OBJECT

private slots:
    void dependenciesCoverRegistersAndStorages() {
        const Lowered l = lowered(test::BranchOrder::AThenB);
        const Schedule schedule = buildSchedule(inputFor(l, {false, false}));
        std::vector<std::int64_t> writer(l.program.registers.size(), -1);
        for (std::size_t k = l.program.runStart; k < l.program.code.size(); ++k) {
            const Instruction& instr = l.program.code[k];
            if (instr.op == Opcode::Ret)
                continue;
            const std::set<std::uint32_t> before =
                ancestors(schedule, static_cast<std::uint32_t>(k));
            for (std::uint32_t d : schedule.deps[k])
                QVERIFY2(d < k, "every dependency is earlier in program order");
            std::vector<std::int32_t> reads = instr.args;
            if (instr.op == Opcode::DeviceCopy)
                reads.push_back(instr.src);
            for (std::int32_t r : reads) {
                const std::int64_t w = writer[static_cast<std::size_t>(r)];
                if (w >= 0)
                    QVERIFY2(before.count(static_cast<std::uint32_t>(w)),
                             "a reader comes after the writer of what it reads");
            }
            std::vector<std::int32_t> writes = instr.results;
            if (instr.op == Opcode::DeviceCopy || instr.op == Opcode::LoadInput)
                writes.push_back(instr.dst);
            for (std::int32_t r : writes)
                writer[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(k);
        }
        // A storage's next tenant is written only after every use of the previous one.
        std::map<std::int32_t, std::vector<std::uint32_t>> usesOfStorage; // current tenant's uses
        std::map<std::int32_t, std::int32_t> storageOf;
        for (std::size_t k = l.program.runStart; k < l.program.code.size(); ++k) {
            const Instruction& instr = l.program.code[k];
            if (instr.op == Opcode::AllocTensor && instr.storage >= 0) {
                const std::set<std::uint32_t> before =
                    ancestors(schedule, static_cast<std::uint32_t>(k));
                for (std::uint32_t use : usesOfStorage[instr.storage])
                    QVERIFY2(before.count(use), "storage reuse waits for the previous tenant");
                usesOfStorage[instr.storage].clear();
                storageOf[instr.dst] = instr.storage;
            }
            auto use = [&](std::int32_t r) {
                if (storageOf.count(r))
                    usesOfStorage[storageOf[r]].push_back(static_cast<std::uint32_t>(k));
            };
            for (std::int32_t r : instr.args)
                use(r);
            for (std::int32_t r : instr.results)
                use(r);
            if (instr.op == Opcode::DeviceCopy) {
                use(instr.src);
                use(instr.dst);
            }
        }
    }

    void waitsOnlyForAsynchronousWorkOnOtherLanes() {
        const Lowered l = lowered(test::BranchOrder::Interleaved);
        // Host workers know when their producers are done: no events at all.
        const Schedule host = buildSchedule(inputFor(l, {false, false}));
        for (std::size_t k = 0; k < l.program.code.size(); ++k) {
            QVERIFY(host.waits[k].empty());
            QVERIFY(!host.records[k]);
        }
        // Device a is asynchronous: what b reads from it, and a's own copy lane, wait for events.
        const ScheduleInput input = inputFor(l, {true, false});
        const Schedule mixed = buildSchedule(input);
        int waits = 0;
        for (std::size_t k = 0; k < l.program.code.size(); ++k) {
            for (std::uint32_t p : mixed.waits[k]) {
                ++waits;
                QCOMPARE(input.stream[p], 0);
                QVERIFY(mixed.records[p]);
                QVERIFY(input.stream[k] != 0 || input.lane[k] != input.lane[p]);
                QVERIFY(input.lane[p] >= 0); // bookkeeping passes its dependencies on
            }
        }
        QVERIFY(waits > 0);
    }

    void prioritiesFollowTheLongestPath() {
        const Lowered l = lowered(test::BranchOrder::AThenB);
        const ScheduleInput input = inputFor(l, {false, false});
        const Schedule schedule = buildSchedule(input);
        for (std::size_t k = l.program.runStart; k < l.program.code.size(); ++k) {
            for (std::uint32_t d : schedule.deps[k])
                QVERIFY(schedule.priority[d] >= schedule.priority[k] + input.cost[d] - 1e-9);
        }
        // The first convolution of a branch outranks the last.
        QVERIFY(schedule.priority[static_cast<std::size_t>(invokeOf(l, "%a0"))] >
                schedule.priority[static_cast<std::size_t>(invokeOf(l, "%a2"))]);
    }

    void thePredictedScheduleOverlapsTheBranches() {
        const Lowered l = lowered(test::BranchOrder::AThenB, 64, 56); // only planned, not run
        const ScheduleInput two = inputFor(l, {false, false});
        const ScheduleInput one = inputFor(l, {false}, true);
        const PredictedSchedule split = listSchedule(two, buildSchedule(two));
        const PredictedSchedule serial = listSchedule(one, buildSchedule(one));
        QVERIFY(split.makespan > 0);
        QVERIFY2(split.makespan < 0.65 * serial.makespan,
                 qPrintable(QString("%1 vs %2").arg(split.makespan).arg(serial.makespan)));
        // b's first convolution starts before a's last one.
        QVERIFY(split.start[static_cast<std::size_t>(invokeOf(l, "%b0"))] <
                split.start[static_cast<std::size_t>(invokeOf(l, "%a2"))]);
        std::size_t ordered = 0;
        for (const auto& stream : split.order)
            ordered += stream.size();
        std::size_t scheduled = 0;
        for (int s : two.stream)
            scheduled += s >= 0 ? 1 : 0;
        QCOMPARE(ordered, scheduled);
    }

    void theExecutionOrderIsTopologicalAndDeterministic_data() {
        QTest::addColumn<int>("order");
        for (auto order :
             {test::BranchOrder::AThenB, test::BranchOrder::BThenA, test::BranchOrder::Interleaved})
            QTest::newRow(test::branchOrderName(order)) << static_cast<int>(order);
    }
    void theExecutionOrderIsTopologicalAndDeterministic() {
        QFETCH(int, order);
        const Lowered l = lowered(static_cast<test::BranchOrder>(order));
        const GraphIndex index(l.graph);
        OrderScratch scratch;
        const std::vector<NodeId> first = executionOrder(l.graph, index, l.plan, 2, scratch);
        QCOMPARE(first, executionOrder(l.graph, index, l.plan, 2, scratch));
        QCOMPARE(first, l.plan.memory.order);
        QCOMPARE(first.size(), l.graph.size());
        std::vector<std::size_t> position(l.graph.size());
        for (std::size_t p = 0; p < first.size(); ++p)
            position[first[p].index] = p;
        for (std::uint32_t i = 0; i < l.graph.size(); ++i)
            for (const ValueRef input : l.graph.nodes()[i].inputs)
                QVERIFY(position[input.node.index] < position[i]);
        // Whatever the textual order, the branches interleave: b0 before a2 and a0 before b2.
        auto at = [&](const char* name) { return position[l.graph.find(name)->index]; };
        QVERIFY(at("%b0") < at("%a2"));
        QVERIFY(at("%a0") < at("%b2"));
    }

    // Storage reuse follows the execution order: device b's branch never waits, through a
    // reused storage, for device a's.
    void storageReuseDoesNotTieTheBranches() {
        for (auto order : {test::BranchOrder::AThenB, test::BranchOrder::BThenA,
                           test::BranchOrder::Interleaved}) {
            const Lowered l = lowered(order);
            const ScheduleInput input = inputFor(l, {false, false});
            const Schedule schedule = buildSchedule(input);
            const auto b2 = static_cast<std::uint32_t>(invokeOf(l, "%b2"));
            for (std::uint32_t d : ancestors(schedule, b2)) {
                const Instruction& instr = l.program.code[d];
                if (input.stream[d] != 0)
                    continue;
                // On a, b's branch needs only the input it copies.
                QVERIFY2(instr.op == Opcode::LoadInput || instr.op == Opcode::AllocTensor,
                         qPrintable(
                             QString("%1: b2 waits for instruction %2 (%3) on a")
                                 .arg(test::branchOrderName(order))
                                 .arg(d)
                                 .arg(QString::fromStdString(std::string(opcodeName(instr.op))))));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestSchedule)
#include "tst_schedule.moc"
