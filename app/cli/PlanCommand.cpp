// `placer plan`: read a model, apply pins and rules, plan, and emit a report.
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "report/DotWriter.h"
#include "io/JsonGraph.h"
#include "io/OnnxWriter.h"
#include "report/PlanReport.h"
#include "io/RelayWriter.h"
#include "plan/PlannedGraph.h"

#include <ostream>
#include <string>

namespace placer::cli {

namespace {

constexpr const char* kPlanHelp = R"(usage: placer plan MODEL [OPTIONS]

Plans where every node of MODEL runs and reports it: the device of every node and why, the
copies the placement needs (with bytes), conflicts with suggestions, and memory per device.

MODEL is Relay text (#[version = "0.0.5"], .relay), a JSON graph (.json) or an ONNX model
(.onnx, opsets 11-17); - reads it from standard input (the format then comes from --format or
the content).

options:
%s  --emit KIND                summary (default), json (the plan report), relay (the planned
                             program with on_device/device_copy), dot (Graphviz, coloured by
                             device), graph (the planned graph as a JSON graph), onnx (the
                             planned ONNX model: devices and pins in its metadata, copies as
                             DeviceCopy nodes; ONNX models only)
  --json                     same as --emit json
  -o, --output FILE          write to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error

exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error
)";

/// The requested output, or the reason it cannot be written.
Result<std::string> render(const std::string& emit, const PlanOptions& options, const Graph& graph,
                           const DeviceSet& devices, const Plan& plan) {
    if (emit == "json")
        return planReportJson(graph, devices, options, plan).dump() + "\n";
    if (emit == "summary")
        return planSummary(graph, devices, options, plan);
    const Graph planned = applyPlan(graph, devices, plan);
    if (emit == "relay") {
        for (const Node& node : planned.nodes()) {
            if (node.op->dialect != OpDialect::Relay)
                return SourceError{"", 0, 0,
                                   "'" + node.op->name +
                                       "' is not a Relay operator: a model read "
                                       "from ONNX can be written as onnx, graph, json or dot"};
        }
        return writeRelay(planned, devices);
    }
    if (emit == "graph")
        return writeJsonGraph(planned, devices).dump() + "\n";
    if (emit == "onnx")
        return writeOnnx(planned, devices);
    return writeDot(planned, devices, conflictedNodeNames(graph, plan));
}

} // namespace

int runPlanCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                   std::ostream& err) {
    std::string emit = "summary";
    std::string output;
    CommandOptions own;
    own.withValue = {"--emit", "-o", "--output"};
    own.flags = {"--json"};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        if (name == "--json") {
            emit = "json";
        } else if (name == "--emit") {
            if (value != "summary" && value != "json" && value != "relay" && value != "dot" &&
                value != "graph" && value != "onnx")
                return "--emit must be summary, json, relay, dot, graph or onnx, not '" + value +
                       "'";
            emit = value;
        } else {
            output = value;
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    const std::string help = formatHelp(kPlanHelp);
    if (const auto exit = parseCommandLine("plan", help.c_str(), args, &parsed, own, out, err))
        return *exit;
    Session session(sessionOptions(parsed));
    PlannedModel planned;
    if (const auto exit = loadAndPlan("plan", parsed, session, in, err, &planned))
        return *exit;
    auto rendered =
        render(emit, planned.options, planned.model.graph, planned.model.devices, planned.plan);
    if (!rendered) {
        err << "placer plan: error: --emit " << emit << ": " << rendered.error().message << "\n";
        return UserError;
    }
    return writeOutput("plan", rendered.value(), output, out, err);
}

} // namespace placer::cli
