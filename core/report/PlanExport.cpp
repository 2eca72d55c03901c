// The text forms of a plan, each written by its writer (report/PlanExport.h).
#include "report/PlanExport.h"

#include "io/JsonGraph.h"
#include "io/OnnxWriter.h"
#include "io/RelayWriter.h"
#include "plan/PlannedGraph.h"
#include "report/DotWriter.h"
#include "report/ModelExplorerData.h"
#include "report/PlanReport.h"

#include <cstdio>

namespace placer {

namespace {

struct Named {
    std::string_view name;
    PlanExportKind kind;
};

constexpr Named kNames[] = {
    {"summary", PlanExportKind::Summary},
    {"report", PlanExportKind::Report},
    {"json", PlanExportKind::Report},
    {"relay", PlanExportKind::Relay},
    {"graph", PlanExportKind::Graph},
    {"onnx", PlanExportKind::Onnx},
    {"dot", PlanExportKind::Dot},
    {"me-devices", PlanExportKind::ModelExplorerDevices},
    {"me-times", PlanExportKind::ModelExplorerTimes},
    {"netron", PlanExportKind::Netron},
};

SourceError exportError(std::string message) {
    return SourceError::sentence(std::move(message));
}

std::vector<std::string> defaultColours(int devices) {
    std::vector<std::string> colours;
    for (int d = 0; d < devices; ++d)
        colours.push_back(deviceColor(DeviceId(d)));
    return colours;
}

/// Per node of the planned graph: its device and why, and its median time when there was a run.
std::vector<std::string> netronDocs(const PlanExportSources& s, const Graph& planned) {
    const Graph& graph = *s.graph;
    const DeviceSet& devices = *s.devices;
    std::vector<std::string> docs(planned.size());
    for (std::uint32_t i = 0; i < planned.size(); ++i) {
        const Node& node = planned.nodes()[i];
        if (node.insertedCopy) {
            docs[i] = "placement: device copy " + devices[node.copySource].name + " -> " +
                      devices[node.copyDestination].name + ", " +
                      formatBytes(node.outputs[0].bytes());
            continue;
        }
        const auto original = graph.find(node.name);
        if (!original || !node.device.valid())
            continue;
        docs[i] = "placement: " + devices[node.device].name + " (" +
                  s.plan->explain(graph, devices, *s.options, *original) + ")";
        if (original->index < s.nodeMillis.size() && s.nodeMillis[original->index] >= 0) {
            char millis[32];
            std::snprintf(millis, sizeof millis, "%.3f", s.nodeMillis[original->index]);
            docs[i] += std::string("; median time ") + millis + " ms";
        }
    }
    return docs;
}

} // namespace

std::optional<PlanExportKind> planExportKind(std::string_view name) {
    for (const Named& named : kNames) {
        if (named.name == name)
            return named.kind;
    }
    return std::nullopt;
}

std::string_view planExportName(PlanExportKind kind) {
    for (const Named& named : kNames) {
        if (named.kind == kind)
            return named.name;
    }
    return "?";
}

Result<std::string> renderPlanExport(PlanExportKind kind, const PlanExportSources& s) {
    const Graph& graph = *s.graph;
    const DeviceSet& devices = *s.devices;
    const Plan& plan = *s.plan;
    switch (kind) {
    case PlanExportKind::Summary:
        return planSummary(graph, devices, *s.options, plan);
    case PlanExportKind::Report:
        return planReportJson(graph, devices, *s.options, plan).dump() + "\n";
    case PlanExportKind::ModelExplorerDevices: {
        const auto colours =
            s.deviceColours.empty() ? defaultColours(devices.size()) : s.deviceColours;
        return modelExplorerDeviceData(graph, devices, plan, colours).dump() + "\n";
    }
    case PlanExportKind::ModelExplorerTimes:
        if (s.nodeMillis.size() != graph.size())
            return exportError("there are no run times to export: run the plan first");
        return modelExplorerTimeData(graph, s.nodeMillis).dump() + "\n";
    default:
        break;
    }
    const Graph planned = applyPlan(graph, devices, plan);
    switch (kind) {
    case PlanExportKind::Relay:
        for (const Node& node : planned.nodes()) {
            if (node.op->dialect != OpDialect::Relay)
                return exportError("'" + node.op->name +
                                   "' is not a Relay operator: a model read from ONNX can be "
                                   "written as onnx, graph, report or dot");
        }
        return writeRelay(planned, devices);
    case PlanExportKind::Graph:
        return writeJsonGraph(planned, devices).dump() + "\n";
    case PlanExportKind::Onnx:
        return writeOnnx(planned, devices);
    case PlanExportKind::Netron:
        if (graph.sourceFormat != "onnx")
            return exportError("Netron annotations need a model read from ONNX: export a JSON "
                               "graph or the plan report instead");
        return writeOnnx(planned, devices, netronDocs(s, planned));
    case PlanExportKind::Dot:
        return writeDot(planned, devices, conflictedNodeNames(graph, plan));
    default:
        return exportError("unknown export");
    }
}

} // namespace placer
