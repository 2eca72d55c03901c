// `placer plan`: read a model, apply pins and rules, plan, and emit a report.
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "report/PlanExport.h"

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
                             DeviceCopy nodes; ONNX models only), netron (the same, each node
                             documented with its device and why), me-devices (Model Explorer
                             node data: each node's device)
  --json                     same as --emit json
  -o, --output FILE          write to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error

exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error
)";

} // namespace

int runPlanCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                   std::ostream& err) {
    PlanExportKind emit = PlanExportKind::Summary;
    std::string output;
    CommandOptions own;
    own.withValue = {"--emit"};
    own.output = &output;
    own.flags = {"--json"};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        if (name == "--json") {
            emit = PlanExportKind::Report;
        } else if (name == "--emit") {
            const auto kind = planExportKind(value);
            if (!kind || *kind == PlanExportKind::ModelExplorerTimes)
                return "--emit must be summary, json, relay, dot, graph, onnx, netron or "
                       "me-devices, not '" +
                       value + "'";
            emit = *kind;
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
    PlanExportSources sources;
    sources.graph = &planned.model.graph;
    sources.devices = &planned.model.devices;
    sources.options = &planned.options;
    sources.plan = &planned.plan;
    auto rendered = renderPlanExport(emit, sources);
    if (!rendered) {
        err << "placer plan: error: --emit " << planExportName(emit) << ": "
            << rendered.error().message << "\n";
        return UserError;
    }
    return writeOutput("plan", rendered.value(), output, out, err);
}

} // namespace placer::cli
