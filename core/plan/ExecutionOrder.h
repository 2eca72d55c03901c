// The order a plan's work is expected to run in, and the cost estimates behind it. The memory
// planner assigns storages in this order and the lowering emits instructions in it, so storage
// reuse follows the order the devices are expected to work in: a tensor never takes a storage
// whose previous tenant another device is still expected to be producing or reading, and the
// dataflow executor (vm/Executor.cpp) is not made to serialize independent branches.
#pragma once

#include "ir/Graph.h"
#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace placer {

struct GraphIndex;

/// Whether `graph` is a pipelined plan's graph (--micro-batches): some node computes a
/// micro-batch (Node::microBatch). Its order is then the micro-batches' order, which the
/// execution order, the executor's priority and the prediction follow.
bool runsInMicroBatches(const Graph& graph);

/// Estimated microseconds for a node's kernel on a device of roughly one CPU core's speed:
/// multiply-adds for convolutions and matrix products, bytes moved for the rest; 0 for
/// parameters, constants and device copies. Only ratios matter.
double estimateNodeMicros(const Graph& graph, NodeId node);
/// Estimated microseconds for a copy of `bytes` between two devices.
double estimateCopyMicros(std::int64_t bytes);

/// List scheduling over a DAG of work items, each on one resource (a device, or a lane of one):
/// whenever a resource is free it takes, of its items whose predecessors have ended (plus the
/// edge's delay), the one with the highest priority (ties: lower index); an item waits for its
/// predecessors otherwise. The executor's policy, simulated with estimated costs.
struct ListScheduling {
    /// An item on no resource: it ends its cost after it is ready, whatever else runs.
    static constexpr int kInstant = -2;
    std::vector<int> resource; ///< per item; -1: not scheduled; kInstant
    std::vector<double> cost;  ///< per item, µs
    /// Successors, compressed: item i's are successor[successorOffset[i] .. [i+1]), each edge
    /// with its delay (a copy between devices). successorOffset has one entry more than items.
    std::vector<std::uint32_t> successorOffset;
    std::vector<std::uint32_t> successor;
    std::vector<double> delay;
    std::vector<double> priority; ///< per item; higher goes first
    /// Per item: the earliest it may start (an input that arrives from outside the schedule,
    /// such as a constant copied in on every run); empty: 0 for all.
    std::vector<double> release;

    ListScheduling() = default;
    /// Room for `items` items and `edges` edges; add each item's edges, then closeItem().
    ListScheduling(std::size_t items, std::size_t edges) : resource(items), cost(items) {
        successorOffset.reserve(items + 1);
        successorOffset.push_back(0);
        successor.reserve(edges);
        delay.reserve(edges);
    }

    std::size_t size() const { return cost.size(); }
    /// Appends item i's successors (items must be added in order).
    void addEdge(std::uint32_t next, double edgeDelay) {
        successor.push_back(next);
        delay.push_back(edgeDelay);
    }
    void closeItem() { successorOffset.push_back(static_cast<std::uint32_t>(successor.size())); }
};
struct ListSchedule {
    std::vector<double> start, end;   ///< per item
    std::vector<std::uint32_t> order; ///< the items as scheduled (by start, per resource)
    double makespan = 0;
};
ListSchedule listSchedule(const ListScheduling& problem);
/// Per item: its cost plus the longest (delay + priority) over its successors, for items whose
/// successors all have higher indices (a topological numbering).
std::vector<double> longestPathToEnd(const ListScheduling& problem);

/// The nodes in the order they can start: each as soon as its inputs have arrived (a copy delays
/// its consumers by its estimated time), as a dataflow device takes whatever work is ready, so
/// work on different devices interleaves as it will run and work that waits for another device
/// comes after work that does not. Ties go to graph order, so the result is deterministic and a
/// topological order of the graph. Linear in the graph (one pass, then a counting sort by start
/// time): the GUI pays it on every edit. A plan on one device keeps the graph's order (any
/// topological order runs the same there).
/// Working arrays executionOrder() keeps between calls (in a PlanWorkspace).
struct OrderScratch {
    std::vector<double> start, end;
    std::vector<std::uint32_t> bucketStart, bucketOf;
};
/// `into`: an array to fill (its capacity is reused).
std::vector<NodeId> executionOrder(const Graph& graph, const GraphIndex& index, const Plan& plan,
                                   int deviceCount, OrderScratch& scratch,
                                   std::vector<NodeId> into = {});

} // namespace placer
