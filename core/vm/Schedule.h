// How a program's run section may be ordered across devices: its dependence graph, the waits a
// device needs where work crosses lanes, each instruction's priority, and the schedule those
// priorities predict. A pure analysis of the program (no devices): the executor runs it, the
// tests and the auto-placement read it.
//
// The executor is a dataflow executor with a static priority (Executor.cpp): each device's
// worker takes, of the instructions whose dependencies have been issued, the one with the
// highest priority. That choice over the two classic designs, a dataflow executor (ONNX
// Runtime's parallel executor, TensorFlow's) and a static per-device order from list
// scheduling, takes the useful half of each:
//  - dynamic: no device waits while it has an instruction whose inputs are ready, however wrong
//    the cost estimates are, because the order adapts to the times that really happen;
//  - static: the priority is computed once at load from the estimated costs (the longest path
//    to the end of the program, as list scheduling uses it), so ties are broken the same way
//    every run, and listSchedule() predicts the schedule those costs give.
// Every kernel is deterministic and each instruction reads exactly the data its dependencies
// produced, so outputs are bitwise identical whatever the order.
//
// Dependencies (all point to earlier instructions in program order, so the graph is acyclic):
//  - a reader depends on the writer of each register it reads (a copy reads its source);
//  - a register's writer depends on its AllocTensor;
//  - a Free depends on every instruction that used the register;
//  - an AllocTensor depends on the Free of the storage's previous tenant, so a storage is
//    reused only once nothing reads its previous tenant any more (without a Free before it, on
//    every earlier use of the previous tenant).
// Bookkeeping (AllocTensor, Free) is part of the graph: it carries storage reuse.
#pragma once

#include "ir/Graph.h"
#include "plan/Plan.h"
#include "vm/Bytecode.h"

#include <cstdint>
#include <vector>

namespace placer {

/// Where each instruction runs, as the executor mapped the program.
struct ScheduleInput {
    const Program* program = nullptr;
    /// Per instruction: the physical stream (device) that runs it, -1 for none (Ret, load).
    std::vector<int> stream;
    /// Per instruction: the lane of its device that runs it (a GPU's compute or copy stream), -1
    /// for bookkeeping; lanes are numbered per device.
    std::vector<int> lane;
    /// Per stream: whether its work runs asynchronously to its worker (a GPU), so that a
    /// dependency on it is met on the device (an event) rather than by the host.
    std::vector<bool> asynchronous;
    /// Per instruction: its estimated time in microseconds (estimateCosts gives one).
    std::vector<double> cost;
    /// Per instruction, in a pipelined program: the micro-batch it works on (Node::microBatch),
    /// -1 where it has none; empty when the program is not pipelined.
    std::vector<std::int32_t> wave;
};

struct Schedule {
    /// Per instruction: the instructions that must have been issued before it may be.
    std::vector<std::vector<std::uint32_t>> deps;
    std::vector<std::vector<std::uint32_t>> succs;
    /// Per instruction: the work on other lanes whose completion it waits for on its device (an
    /// asynchronous producer's event); the producers whose `records` is set.
    std::vector<std::vector<std::uint32_t>> waits;
    std::vector<bool> records;
    /// Per instruction: the longest estimated path from its start to the end of the program;
    /// among ready instructions the longest goes first. In a pipelined program an earlier
    /// micro-batch goes before a later one whatever their paths (an instruction without one
    /// takes the latest of its dependencies'), so that each device works through the
    /// micro-batches in order and hands each on as soon as it can: GPipe's schedule.
    std::vector<double> priority;
    /// The instructions of the run section that a stream runs, in program order.
    std::vector<std::vector<std::uint32_t>> streamInstructions;

    /// Whether `a` comes before `b` among ready work: higher priority, then program order.
    bool before(std::uint32_t a, std::uint32_t b) const {
        return priority[a] != priority[b] ? priority[a] > priority[b] : a < b;
    }
};

/// The dependence graph, waits and priorities of `input.program`'s run section.
Schedule buildSchedule(const ScheduleInput& input);

/// Estimated microseconds per instruction on a device of roughly a CPU core's speed: arithmetic
/// for convolutions and matrix products, bytes moved for the rest and for copies; 0 for
/// bookkeeping. Only the ratios matter (priorities).
std::vector<double> estimateCosts(const Program& program, const Graph& graph);

/// Per node of an optimised graph (passes/PassManager.h, `origin[j]` the user's node that node
/// j computes): the kernel time the user's plan predicts for it, or -1 where it predicts none
/// (a node a pass inserted, or no prediction). What Program::nodeMicros takes, so that the
/// executor orders work by the plan's cost model.
std::vector<double> predictedNodeMicros(const Plan& userPlan, const std::vector<NodeId>& origin,
                                        std::size_t nodes);

/// The schedule list scheduling predicts: every stream takes, whenever it is free, the ready
/// instruction that comes first; an instruction is ready when its dependencies have ended.
/// Lanes of one stream run concurrently. Per instruction: predicted start and end (µs from 0).
struct PredictedSchedule {
    std::vector<double> start, end;
    double makespan = 0;
    std::vector<std::vector<std::uint32_t>> order; ///< per stream, in start order
};
PredictedSchedule listSchedule(const ScheduleInput& input, const Schedule& schedule);

} // namespace placer
