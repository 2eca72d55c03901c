// Cost-based automatic placement on an abstract problem: a DAG of tasks, each with a time per
// device, edges that carry bytes, and devices that may share one physical resource. The planner
// (Planner.cpp, PlanMode::Auto) builds the problem from a graph and a CostModel; the tests and
// bench_autoplace build random ones, as the scheduling literature does.
//
// The objective is the makespan the executor would give (vm/Executor.cpp, described in
// vm/Schedule.h): every resource takes, whenever it is free, the ready task with the longest
// estimated path to the end; a value computed on another device arrives after its copy (latency
// plus bytes over bandwidth). simulate() predicts exactly that schedule for an assignment.
//
// The optimiser:
//  1. starts from the best of HEFT (Topcuoglu et al., list scheduling with insertion, upward
//     ranks over mean costs) and every single-device placement the constraints allow;
//  2. improves it by local search: moving one task, or a chain of tasks (each the only consumer
//     of the one before), to another device, keeping a move when the simulated makespan drops,
//     then pairs of tasks moved at once, then rounds of iterated local search (a few tasks moved
//     at random with a fixed seed, a descent, the better kept); tasks on the critical path are
//     tried first, and the work is bounded so that large graphs plan in bounded time;
//  3. for small problems, on request, solves an exact mixed-integer programme with GLPK
//     (solveExact) and keeps its assignment when it simulates better.
// Everything is deterministic: the same problem gives the same assignment.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace placer {

inline constexpr double kCannotRun = std::numeric_limits<double>::infinity();

struct PlacementProblem {
    int devices = 0;
    /// Per device: the physical resource that runs it. Devices that share one run one task at a
    /// time between them.
    std::vector<int> resourceOf;

    /// Per task, in topological order (every edge goes from a lower index to a higher one).
    /// cost[t * devices + d]: microseconds of task t on device d; kCannotRun where it cannot.
    std::vector<double> cost;
    /// Per task: the device it must take, or -1.
    std::vector<int> fixed;
    /// Per task: takes no time and no resource (an explicit copy's arrival, a pinned input).
    std::vector<std::uint8_t> instant;

    /// Edges, by source: task t's are edgeTarget/edgeBytes[edgeOffset[t] .. edgeOffset[t+1]).
    std::vector<std::uint32_t> edgeOffset{0};
    std::vector<std::uint32_t> edgeTarget;
    std::vector<std::int64_t> edgeBytes;
    /// Per edge: further time a crossing costs beyond the copy (converting a value out of a
    /// device's own layout and back); empty: none.
    std::vector<double> edgeCrossMicros;

    /// A copy from device a to device b takes linkLatency[a*devices+b] +
    /// bytes / linkBytesPerMicro[a*devices+b] microseconds; nothing on one device.
    std::vector<double> linkLatency;
    std::vector<double> linkBytesPerMicro;

    /// Per task: the earliest it may start (a constant copied to its device on every run
    /// arrives then); empty: 0 for all.
    std::vector<double> release;
    /// Per device: the fixed time of a run that gives it work (waking its worker, starting and
    /// finishing), paid once per run; empty: none. A run's makespan includes the largest.
    std::vector<double> runMicros;
    /// Per device: the fixed time of any one task on it (kernel launch and the executor's
    /// dispatch), which cutting the task's rows into micro-batches does not shrink; empty: none.
    std::vector<double> taskOverheadMicros;
    /// Per task of a pipelined graph: its micro-batch (Node::microBatch), -1 for none; empty
    /// when the graph is not pipelined. Earlier micro-batches go first, as the executor runs
    /// them (vm/Schedule.h).
    std::vector<std::int32_t> wave;

    /// Memory, when any device has a capacity: per task, the bytes of its outputs and the
    /// constants it reads (each constant counted once per device that reads it).
    std::vector<std::int64_t> outputBytes;
    std::vector<std::uint32_t> weightOffset{0};
    std::vector<std::uint32_t> weightId;
    std::vector<std::int64_t> weightBytes; ///< per weight id
    std::vector<std::int64_t> capacity;    ///< per device; < 0: unlimited

    std::size_t tasks() const { return fixed.size(); }
    double taskCost(std::size_t t, int d) const {
        return cost[t * static_cast<std::size_t>(devices) + static_cast<std::size_t>(d)];
    }
    bool allowed(std::size_t t, int d) const {
        return (fixed[t] < 0 || fixed[t] == d) && taskCost(t, d) != kCannotRun;
    }
    double copyMicros(int from, int to, std::int64_t bytes) const {
        if (from == to)
            return 0;
        const auto k = static_cast<std::size_t>(from * devices + to);
        return linkLatency[k] + static_cast<double>(bytes) / linkBytesPerMicro[k];
    }
    /// The fixed time of a run under assignment `a`: the largest of the used devices'.
    double runOverhead(const std::vector<int>& a) const;
    /// What edge e costs when its ends are on devices `from` and `to`.
    double edgeMicros(std::uint32_t e, int from, int to) const {
        if (from == to)
            return 0;
        return copyMicros(from, to, edgeBytes[e]) +
               (edgeCrossMicros.empty() ? 0.0 : edgeCrossMicros[e]);
    }

    /// Appends a task with its per-device costs; its edges follow with addEdge().
    std::uint32_t addTask(const std::vector<double>& costs, int fixedDevice = -1,
                          bool isInstant = false);
    /// An edge from the last task added.
    void addEdge(std::uint32_t to, std::int64_t bytes, double crossMicros = 0);
    void addWeight(std::uint32_t id); ///< the last task added reads weight `id`
    /// Sets every link to one latency and bandwidth.
    void setLinks(double latency, double bytesPerMicro);
    /// Whether the problem is well formed, or why not.
    std::optional<std::string> check() const;
};

/// A schedule as the executor would run an assignment.
struct SimulatedSchedule {
    std::vector<double> start, end; ///< per task
    double makespan = 0;
    /// Bytes by which the assignment's estimated memory exceeds the capacities (0: fits).
    std::int64_t overflow = 0;
};

/// Predicts the executor's schedule of `assignment` (a device per task).
SimulatedSchedule simulate(const PlacementProblem& problem, const std::vector<int>& assignment);

/// The executor's priority of each task under `assignment`: the longest path from it to the
/// end (its cost, copies and successors'), an earlier micro-batch before a later one whatever
/// its path (`taskMicros`: each task's time as scheduled, which scales the waves' precedence).
std::vector<double> executorPriorities(const PlacementProblem& problem,
                                       const std::vector<int>& assignment,
                                       const std::vector<double>& taskMicros);

/// The estimated bytes each device must hold under `assignment`: the constants its tasks read,
/// once each, and its largest working set (a task's inputs and outputs).
std::vector<std::int64_t> estimatedMemory(const PlacementProblem& problem,
                                          const std::vector<int>& assignment);

/// HEFT's assignment (list scheduling with insertion on upward ranks), with capacities respected
/// where it can; its own schedule's makespan in `heftMakespan`.
std::vector<int> heftAssignment(const PlacementProblem& problem, double* heftMakespan = nullptr);

struct AutoPlaceOptions {
    /// Try the exact MILP (GLPK) when the problem has at most this many non-instant tasks.
    bool exact = false;
    std::size_t exactMaxTasks = 14;
    double exactTimeLimitSeconds = 10;
    /// Bound on the local search's work, in task-simulations (tasks + edges per evaluation).
    double searchWork = 3e7;
    /// Rounds of the iterated local search (perturb, descend, keep the better).
    int perturbations = 40;
    /// Keep the best single-device placement unless a placement over several devices is
    /// predicted shorter by more than this fraction (0: whichever is shorter).
    double splitMargin = 0;
    /// The device that wins among single devices that tie (the default device), or -1.
    int preferredDevice = -1;
    /// Starting points besides HEFT and the single devices (the rule-based plan, say).
    std::vector<std::vector<int>> seeds;
};

struct AutoPlacement {
    std::vector<int> assignment;
    SimulatedSchedule schedule;
    std::vector<int> heftAssignment; ///< HEFT's placement, a starting point
    double heftMakespan = 0;         ///< HEFT's assignment, simulated as the executor runs it
    double bestSingleDevice = 0;     ///< the best single-device placement allowed (inf if none)
    bool keptSingleDevice = false;   ///< a split did not promise splitMargin, so none was made
    int evaluations = 0;
    int improvements = 0;
    /// The exact programme's optimum (its own schedule) when it was solved to optimality.
    std::optional<double> exactOptimum;
    std::string exactStatus; ///< "optimal", "time limit", "too large", "not asked"
};

AutoPlacement autoPlace(const PlacementProblem& problem, const AutoPlaceOptions& options = {});

/// The exact mixed-integer programme (assignment, start times, an order for every pair of tasks
/// that may share a resource) solved by GLPK within `timeLimitSeconds`. Returns the assignment
/// and sets `optimum` when it was proven optimal; `status` says what happened.
std::optional<std::vector<int>> solveExact(const PlacementProblem& problem, double timeLimitSeconds,
                                           double* optimum, std::string* status);

} // namespace placer
