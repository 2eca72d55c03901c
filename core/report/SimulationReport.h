// A simulated run written as a run is (plan/RunSimulator.h, Plan::simulation): the summary,
// the JSON report and a Chrome trace with a lane per device and per link, each marked
// "simulated" and naming the machine. What `placer run --machine` prints and writes.
#pragma once

#include "io/Json.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"

#include <string>
#include <vector>

namespace placer {

/// A transfer's link, by its ends: "vcpu1 -> vcpu2", or the hosts' "node0 -> node1" between
/// hosts, with what went over it.
struct SimulatedLink {
    std::string name;
    int transfers = 0;
    std::int64_t bytes = 0;
    double busyMicros = 0;       ///< its transfers' time (overlapping ones each counted)
    double contentionMicros = 0; ///< what sharing added to them
};

/// What the writers read: the graph and plan the simulation's nodes are of (a split plan's
/// sharded graph), the devices with their physical names, and the machine's name.
struct SimulationView {
    const Graph* graph = nullptr;
    const Plan* plan = nullptr;
    const DeviceSet* devices = nullptr;
    const Simulation* simulation = nullptr;
    std::vector<std::string> physical; ///< per device
    std::string machine;
    /// The plan's list-scheduled prediction, which the simulation refines.
    double predictedMicros = 0;
    std::vector<SimulatedLink> links;
};

/// The view of `plan`'s simulation (which it must have) of `userGraph` on `devices`, the
/// physical names from `costs` (may be null), on the machine `machine`.
SimulationView simulationView(const Graph& userGraph, const Plan& plan, const DeviceSet& devices,
                              const CostModel* costs, const std::string& machine);

/// "simulated on 2x8-h100: 0.083 ms a run (nothing ran) ...", each device's and link's time,
/// and where the time went.
std::string simulationSummary(const SimulationView& view);
/// {"simulated": true, "machine", "latency_ms", "predicted_ms", "devices", "links", "terms",
/// "nodes", "transfers"}.
Json simulationJson(const SimulationView& view);
/// A Chrome trace: a process per device with its compute lane and, for a device that copies
/// asynchronously, its copy lane; a process of links with a lane each; "simulated" in every
/// process's name and in otherData.
Json simulationTrace(const SimulationView& view);

} // namespace placer
