// The device planner's state and phases (plan/Planner.cpp has the algorithm's description):
// the class is declared here so that its phases can live in two units, placement by pins, rules
// and consumers in Planner.cpp and placement by cost with the prediction in AutoMode.cpp. Only
// those two include it; everything else calls planDevices() (plan/Planner.h).
#pragma once

#include "plan/AutoPlacer.h"
#include "plan/CostModel.h"
#include "plan/GraphIndex.h"
#include "plan/PlanWorkspace.h"
#include "plan/Planner.h"
#include "plan/Split.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

namespace placer {

class DevicePlanner {
    using FixedSource = PlanWorkspace::FixedSource;
    using ClassConstraint = PlanWorkspace::ClassConstraint;

public:
    DevicePlanner(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                  PlanWorkspace& workspace)
        : m_graph(graph), m_devices(devices), m_options(options), m_workspace(workspace),
          m_index(workspace.index), m_fixed(workspace.fixed), m_fixedSource(workspace.fixedSource),
          m_classOf(workspace.classOf), m_classConstraints(workspace.classConstraints) {}

    Plan run();
    /// `plan`, made for a graph with these nodes at other sizes (ir/Graph.h
    /// instantiateAtSizes), for this graph: the same devices, reasons and copies, the copies'
    /// bytes, the memory plan, the capacities and the prediction at this graph's sizes.
    Plan resized(Plan plan);

private:
    const Node& node(std::uint32_t i) const { return m_graph.nodes()[i]; }
    /// The graph auto mode costs: typed at PlanOptions::costAt where that is set.
    const Graph& costGraph() const { return m_sized ? *m_sized : m_graph; }
    /// CostModel::nodeCost of node `i` on device `d` in costGraph(), from the workspace's
    /// NodeCosts where the same graph was costed by the same model (CostModel::stamp) before.
    CostModel::NodeCost nodeCost(std::uint32_t i, int d);
    /// Bytes of output `k` of node `i` in costGraph().
    std::int64_t costBytes(std::uint32_t i, std::uint32_t k) const {
        return m_sized ? m_sized->nodes()[i].outputs[k].bytes()
                       : m_index.valueBytes[m_index.outputBase[i] + k];
    }

    // ---- options ---------------------------------------------------------------------------

    /// The plan's arrays sized, and the options, splits, output demands and fixed devices
    /// resolved: what placing and predicting start from.
    void resolveFixedDevices();

    /// PlanOptions::copiedConstants as (node, device); names that match no constant or device
    /// are ignored (they come from a plan of the same graph).
    void resolveCopiedConstants();

    void resolveOptions();

    // ---- split regions (plan/Split.h) ------------------------------------------------------

    void resolveSplits();

    /// Plans the graph that runs: each region once per shard, every other node held where
    /// this plan put it. Its memory plan, each shard on its own device, is the plan's.
    void planShards();
    /// PlanOptions::microBatches: the graph cut into micro-batches (Plan::splits, Plan::sharded)
    /// once every node has its device.
    void resolveMicroBatches();
    /// The split request PlanOptions::microBatches (or streamBatches) makes: the whole graph, cut
    /// on the batch.
    SplitRequest microBatchRequest() const;

    /// The prediction of a split plan is the sharded graph's: a split node starts with its
    /// first shard and ends with its last, and its time is its shards' together (its work, as a
    /// run's node times sum the shards').
    void foldShardPrediction();
    /// The prediction's problem under `assignment` simulated event by event on the cost
    /// model's devices (plan/RunSimulator.h): PlanOptions::simulate.
    std::shared_ptr<const Simulation> simulateOnDevices(const PlacementProblem& problem,
                                                        const std::vector<int>& assignment);

    void collectOutputDemands();

    // ---- kernels ---------------------------------------------------------------------------

    bool canRun(std::uint32_t i, DeviceId device) const;

    /// Where a node goes when the device it would get cannot run it; invalid if no device can.
    DeviceId fallbackTarget(std::uint32_t i) const;

    bool isPinned(std::uint32_t i) const;

    // ---- phase 1: fixed devices ------------------------------------------------------------

    void computeFixedDevices();

    /// The first rule whose glob matches the op, or -1; matched once per distinct op.
    std::int32_t ruleFor(const OpDef* op);

    void applyRules(std::uint32_t i);

    void replaceUnrunnableFixedDevice(std::uint32_t i);

    void reportRejectedPins(std::uint32_t i);

    void reportPinOnCopy(std::uint32_t i);

    // ---- phase 2: classes (unify) ----------------------------------------------------------

    /// A constant that will be replicated constrains nobody: it is on every device that needs
    /// it, so its out-edges are soft (a pin only says where its first instance lives).
    bool isReplicatedConstant(std::uint32_t i) const;

    bool isHardEdge(std::uint32_t producer, std::uint32_t consumer) const;

    void buildClasses();

    // ---- phase 3: assignment ---------------------------------------------------------------

    void assignDevices();

    /// The device most consumers of node i run on; ties to the default, then the lowest index.
    DeviceId voteByConsumers(std::uint32_t i, Reason* reason);

    void reportUnsupportedOps();

    // ---- phase 3b: auto ---------------------------------------------------------------------

    /// The options' cost model when it was made for this device set, else assumed costs.
    const CostModel& costs();

    /// The placement problem of the graph: a task per op, explicit copy and pinned input, with
    /// its time on every device that can run it. `budget`: per device, the bytes it may hold.
    PlacementProblem buildProblem(const std::vector<std::int64_t>& budget);

    void placeByCost();

    /// One search within `budget` (per device, bytes; < 0: none), from the demand plan; with
    /// `weightsMayLeave`, the constants the ops read do not count against a limited device.
    void placeWithin(const std::vector<std::int64_t>& budget, const std::vector<DeviceId>& demand,
                     const std::vector<Reason>& demandReasons, bool weightsMayLeave);

    /// PlanOptions::microBatches in auto mode: contiguous stages over the devices by the stage
    /// model (plan/PipelineStages.h) on `kept` (the problem with every constant kept on the
    /// devices that read it), unless the search's placement (`searched`) is predicted faster
    /// pipelined; says which in m_stagesNote.
    void pipelineStages(const PlacementProblem& kept, const std::vector<int>& searched);
    /// The stage model's task costs in `problem` from the graph that will run: each op at its
    /// micro-batch's shapes (the workspace measures those kernels) and fused as a run on one
    /// device fuses it, not the whole batch's unfused time divided by the micro-batches.
    void costMicroBatches(PlacementProblem& problem);

    /// What follows the placement: unsupported ops, copies and replicas, the memory plan.
    void finishPlacement(std::size_t conflicts);

    /// Per device: how far its memory plan exceeds its capacity (0 when it fits or has none).
    std::vector<std::int64_t> overflow() const;

    /// Frees each full device's `excess` by no longer keeping the constants it reads, largest
    /// first: each is copied to it on every run (PlanOptions::constants stays what it says for
    /// the others). A constant whose only instance is there moves to the device with the most
    /// room (ReasonKind::Offloaded). False when there was nothing more to stream.
    bool streamConstants(const std::vector<std::int64_t>& excess);

    /// Another device than `full` with room for `bytes` more: one without a capacity, else the
    /// one with the most room left in the memory plan; invalid when none has.
    DeviceId roomFor(std::int64_t bytes, DeviceId full) const;

    /// The problem as the run will meet it under `assignment`: a group the run fuses (per node,
    /// `fusedInto`: its head) is one op, its members taking no time of their own and its head
    /// the group's (`members`: each head's); a constant copied to a device on every run arrives
    /// there after its copy.
    PlacementProblem predictionProblem(const std::vector<int>& assignment,
                                       const std::vector<NodeId>& fusedInto,
                                       std::map<std::uint32_t, std::vector<NodeId>>* members,
                                       bool constantCopies = true);

    /// Per task, the device the plan gives it.
    std::vector<int> currentAssignment() const;
    /// The makespan of `assignment` (per task) with the fused groups it makes counted, the
    /// nodes that are no task on `others`' devices; constants copied on every run not counted.
    double fusedMakespan(const std::vector<int>& assignment, const std::vector<DeviceId>& others);

    /// The makespan predicted for the plan as it stands (auto mode's placement).
    double predictedMakespan();

    /// The schedule the plan predicts: the executor's policy on the cost model's times, on the
    /// problem auto mode built (`problemBuilt`) or one built here.
    void predict(bool problemBuilt);

    // ---- phase 4: copies -------------------------------------------------------------------

    void insertCopies();

    bool isOutputValue(ValueRef value, DeviceId device) const;

    void emitTransfers(ValueRef value, DeviceId home, std::vector<std::vector<NodeId>>& consumersOn,
                       std::vector<char>& outputOn);

    void recordExplicitCopy(std::uint32_t copyNode, ValueRef input);

    // ---- phase 5: capacity -----------------------------------------------------------------

    void checkCapacities();

    const Graph& m_graph;
    /// m_graph typed at PlanOptions::costAt, where that is set and the graph's shapes follow
    /// named dimensions.
    std::optional<Graph> m_sized;
    const DeviceSet& m_devices;
    const PlanOptions& m_options;
    PlanWorkspace& m_workspace;
    GraphIndex& m_index;
    Plan m_plan;

    std::vector<DeviceId>& m_fixed;
    std::vector<FixedSource>& m_fixedSource;
    std::vector<DeviceId> m_ruleDevices;
    std::unordered_map<const OpDef*, std::int32_t> m_ruleOfOp;
    DeviceId m_fallback;
    /// Per device: out of service (PlanOptions::outOfService), so that nothing runs there.
    std::vector<char> m_outOfService;
    std::multimap<std::uint32_t, DeviceId> m_outputDemands;

    std::vector<std::int32_t> m_voteCounts;
    std::vector<NodeId> m_firstVoter;

    std::vector<std::uint32_t>& m_classOf;
    std::vector<ClassConstraint>& m_classConstraints;

    SplitAnalysis m_split;
    bool m_splitting = false;

    // Auto mode and the prediction.
    std::optional<CostModel> m_assumedCosts;
    std::vector<std::int32_t> m_taskOf;
    std::vector<std::uint32_t> m_nodeOfTask;
    PlacementProblem m_problem;
    AutoPlacement m_auto;
    /// (constant, device): read on the device but not kept there, copied in on every run (auto
    /// mode, when the device's memory cannot keep it; replicas elsewhere as the policy says).
    std::set<std::pair<std::uint32_t, std::int32_t>> m_streamed;
    /// Those PlanOptions::copiedConstants asks for.
    std::set<std::pair<std::uint32_t, std::int32_t>> m_copiedConstants;
    /// The note of pipelineStages(), kept among the plan's notes.
    std::string m_stagesNote;
    /// Values used on several devices described by a note, and those past the limit.
    std::size_t m_valueNotes = 0, m_unnotedValues = 0;
};

} // namespace placer
