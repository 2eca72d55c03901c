// A simulated run's summary, JSON and trace (report/SimulationReport.h).
#include "report/SimulationReport.h"

#include "ir/OpRegistry.h"
#include "ir/TensorType.h"
#include "plan/CostModel.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace placer {

namespace {

/// "node0/cuda:0" -> "node0"; a name with no host is its own.
std::string hostOf(const std::string& physical) {
    const std::size_t slash = physical.find('/');
    return slash == std::string::npos ? std::string() : physical.substr(0, slash);
}

std::string linkName(const SimulationView& view, const Simulation::Transfer& transfer) {
    const std::string& from = view.physical[static_cast<std::size_t>(transfer.from.index)];
    const std::string& to = view.physical[static_cast<std::size_t>(transfer.to.index)];
    if (transfer.betweenHosts)
        return hostOf(from) + " -> " + hostOf(to);
    return from + " -> " + to;
}

std::string percent(double part, double whole) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f %%", whole > 0 ? 100 * part / whole : 0.0);
    return text;
}

double toMs(double micros) {
    return micros / 1000;
}

} // namespace

SimulationView simulationView(const Graph& userGraph, const Plan& plan, const DeviceSet& devices,
                              const CostModel* costs, const std::string& machine) {
    SimulationView view;
    view.simulation = plan.simulation.get();
    const bool sharded = view.simulation && view.simulation->ofShardedGraph && plan.sharded;
    view.graph = sharded ? &plan.sharded->graph : &userGraph;
    view.plan = sharded ? plan.sharded->plan.get() : &plan;
    view.devices = &devices;
    view.machine = machine;
    view.predictedMicros = plan.prediction ? plan.prediction->makespanMicros : 0;
    for (int d = 0; d < devices.size(); ++d)
        view.physical.push_back(costs && d < costs->deviceCount()
                                    ? costs->physical(DeviceId(d)).name
                                    : devices[DeviceId(d)].name);
    if (!view.simulation)
        return view;
    std::map<std::string, SimulatedLink> links;
    for (const Simulation::Transfer& transfer : view.simulation->transfers) {
        SimulatedLink& link = links[linkName(view, transfer)];
        ++link.transfers;
        link.bytes += transfer.bytes;
        link.busyMicros += transfer.end - transfer.start;
        const double added = transfer.end - transfer.start - transfer.alone;
        link.contentionMicros += added > 1e-9 * std::max(1.0, transfer.alone) ? added : 0;
    }
    for (auto& [name, link] : links) {
        link.name = name;
        view.links.push_back(link);
    }
    return view;
}

std::string simulationSummary(const SimulationView& view) {
    std::ostringstream out;
    const Simulation& s = *view.simulation;
    out << "simulated on " << view.machine << ": " << formatMillis(s.makespanMicros)
        << " a run (nothing ran: the executor's schedule, event by event, on the machine's "
           "devices and links)\n";
    if (view.predictedMicros > 0)
        out << "the plan's prediction (copies as delays, links unshared): "
            << formatMillis(view.predictedMicros) << "\n";
    out << "devices:\n";
    std::string idle;
    int idleCount = 0;
    for (int d = 0; d < view.devices->size(); ++d) {
        const double busy = d < static_cast<int>(s.deviceBusyMicros.size())
                                ? s.deviceBusyMicros[static_cast<std::size_t>(d)]
                                : 0;
        const std::string& name = (*view.devices)[DeviceId(d)].name;
        if (busy <= 0) {
            idle += (idleCount++ == 0 ? "" : ", ") + name;
            continue;
        }
        out << "  " << name << " (" << view.physical[static_cast<std::size_t>(d)] << "): busy "
            << formatMillis(busy) << " (" << percent(busy, s.makespanMicros) << ")\n";
    }
    if (idleCount > 0)
        out << "  no work on " << idleCount << (idleCount == 1 ? " device: " : " devices: ") << idle
            << "\n";
    if (!view.links.empty()) {
        out << "links:\n";
        for (const SimulatedLink& link : view.links)
            out << "  " << link.name << ": " << link.transfers
                << (link.transfers == 1 ? " transfer, " : " transfers, ") << formatBytes(link.bytes)
                << ", " << formatMillis(link.busyMicros)
                << (link.contentionMicros > 0
                        ? " (" + formatMillis(link.contentionMicros) + " of it sharing)"
                        : std::string())
                << "\n";
    }
    out << "where the time goes: compute " << formatMillis(s.computeMicros) << ", launch "
        << formatMillis(s.launchMicros) << ", copies " << formatMillis(s.copyMicros) << " (+"
        << formatMillis(s.contentionMicros) << " sharing links), the run's fixed time "
        << formatMillis(s.runOverheadMicros) << "\n";
    return out.str();
}

Json simulationJson(const SimulationView& view) {
    const Simulation& s = *view.simulation;
    Json out = Json::object({{"simulated", true},
                             {"machine", view.machine},
                             {"latency_ms", toMs(s.makespanMicros)},
                             {"predicted_ms", toMs(view.predictedMicros)},
                             {"graph", s.ofShardedGraph ? "sharded" : "user"}});
    Json devices = Json::array();
    for (int d = 0; d < view.devices->size(); ++d) {
        Json device = Json::object();
        device.set("name", (*view.devices)[DeviceId(d)].name);
        device.set("physical", view.physical[static_cast<std::size_t>(d)]);
        device.set("busy_ms", toMs(d < static_cast<int>(s.deviceBusyMicros.size())
                                       ? s.deviceBusyMicros[static_cast<std::size_t>(d)]
                                       : 0));
        devices.push(std::move(device));
    }
    out.set("devices", std::move(devices));
    Json links = Json::array();
    for (const SimulatedLink& link : view.links) {
        links.push(Json::object({{"name", link.name},
                                 {"transfers", link.transfers},
                                 {"bytes", link.bytes},
                                 {"busy_ms", toMs(link.busyMicros)},
                                 {"contention_ms", toMs(link.contentionMicros)}}));
    }
    out.set("links", std::move(links));
    Json terms = Json::object({{"compute_ms", toMs(s.computeMicros)},
                               {"launch_ms", toMs(s.launchMicros)},
                               {"copies_ms", toMs(s.copyMicros)},
                               {"contention_ms", toMs(s.contentionMicros)},
                               {"run_overhead_ms", toMs(s.runOverheadMicros)}});
    out.set("terms", std::move(terms));
    Json nodes = Json::array();
    const Graph& graph = *view.graph;
    for (std::size_t i = 0; i < graph.size() && i < s.end.size(); ++i) {
        if (s.end[i] <= s.start[i])
            continue;
        const Node& node = graph.node(NodeId(static_cast<std::uint32_t>(i)));
        nodes.push(Json::object({{"name", node.name},
                                 {"op", node.op->name},
                                 {"device", (*view.devices)[view.plan->devices[i]].name},
                                 {"start_ms", toMs(s.start[i])},
                                 {"end_ms", toMs(s.end[i])}}));
    }
    out.set("nodes", std::move(nodes));
    Json transfers = Json::array();
    for (const Simulation::Transfer& transfer : s.transfers) {
        transfers.push(Json::object({{"producer", graph.node(transfer.producer).name},
                                     {"from", (*view.devices)[transfer.from].name},
                                     {"to", (*view.devices)[transfer.to].name},
                                     {"link", linkName(view, transfer)},
                                     {"bytes", transfer.bytes},
                                     {"start_ms", toMs(transfer.start)},
                                     {"end_ms", toMs(transfer.end)},
                                     {"alone_ms", toMs(transfer.alone)}}));
    }
    out.set("transfers", std::move(transfers));
    return out;
}

Json simulationTrace(const SimulationView& view) {
    const Simulation& s = *view.simulation;
    const Graph& graph = *view.graph;
    Json events = Json::array();
    const auto meta = [&](const char* what, int pid, int tid, const std::string& name) {
        Json e = Json::object({{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}});
        Json args = Json::object();
        args.set("name", name);
        e.set("args", std::move(args));
        events.push(std::move(e));
    };
    const auto slice = [&](const std::string& name, int pid, int tid, double start, double end,
                           Json args) {
        Json e = Json::object({{"name", name},
                               {"ph", "X"},
                               {"pid", pid},
                               {"tid", tid},
                               {"ts", start},
                               {"dur", std::max(0.0, end - start)}});
        e.set("args", std::move(args));
        events.push(std::move(e));
    };
    const int devices = view.devices->size();
    for (int d = 0; d < devices; ++d) {
        meta("process_name", d + 1, 0,
             (*view.devices)[DeviceId(d)].name + " on " +
                 view.physical[static_cast<std::size_t>(d)] + " (simulated)");
        meta("thread_name", d + 1, 1, "compute");
        meta("thread_name", d + 1, 2, "copies in");
    }
    const int linksPid = devices + 1;
    meta("process_name", linksPid, 0, "links (simulated)");
    std::map<std::string, int> laneOf;
    for (const SimulatedLink& link : view.links) {
        const int tid = static_cast<int>(laneOf.size()) + 1;
        laneOf[link.name] = tid;
        meta("thread_name", linksPid, tid, link.name);
    }
    for (std::size_t i = 0; i < graph.size() && i < s.end.size(); ++i) {
        if (s.end[i] <= s.start[i])
            continue;
        const Node& node = graph.node(NodeId(static_cast<std::uint32_t>(i)));
        Json args = Json::object();
        args.set("op", node.op->name);
        slice(node.name, view.plan->devices[i].index + 1, 1, s.start[i], s.end[i], std::move(args));
    }
    for (const Simulation::Transfer& transfer : s.transfers) {
        const std::string name =
            graph.node(transfer.producer).name + " -> " + (*view.devices)[transfer.to].name;
        Json args = Json::object();
        args.set("bytes", transfer.bytes);
        args.set("alone_us", transfer.alone);
        slice(name, transfer.to.index + 1, 2, transfer.start, transfer.end, args);
        slice(name, linksPid, laneOf[linkName(view, transfer)], transfer.start, transfer.end,
              std::move(args));
    }
    Json trace = Json::object();
    trace.set("traceEvents", std::move(events));
    trace.set("displayTimeUnit", "ms");
    Json other = Json::object(
        {{"simulated", true}, {"machine", view.machine}, {"latency_ms", toMs(s.makespanMicros)}});
    trace.set("otherData", std::move(other));
    return trace;
}

} // namespace placer
