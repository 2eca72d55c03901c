// `placer plan`: read a model, apply pins and rules, plan, and emit a report.
#include "cli/PlacerCli.h"

#include "io/DotWriter.h"
#include "io/JsonGraph.h"
#include "io/ModelLoader.h"
#include "io/OnnxWriter.h"
#include "io/PlanReport.h"
#include "io/RelayWriter.h"
#include "plan/Annotations.h"
#include "plan/PlannedGraph.h"
#include "plan/Planner.h"

#include <fstream>
#include <istream>
#include <optional>
#include <ostream>
#include <sstream>

namespace placer::cli {

namespace {

constexpr const char* kPlanHelp = R"(usage: placer plan MODEL [OPTIONS]

Plans where every node of MODEL runs and reports it: the device of every node and why, the
copies the placement needs (with bytes), conflicts with suggestions, and memory per device.

MODEL is Relay text (#[version = "0.0.5"], .relay), a JSON graph (.json) or an ONNX model
(.onnx, opsets 11-17); - reads it from standard input (the format then comes from --format or
the content).

options:
  --format relay|json|onnx|auto
                             input format (default: from the file name, then the content)
  --devices LIST             virtual devices, NAME:KIND[:mem=SIZE][:ordinal=N],...
                             KIND is cpu, cuda or vcpu; SIZE like 8GiB or 512MB
                             (default: cpu:cpu,gpu:cuda, or the devices a JSON graph names).
                             Relay meta[VirtualDevice][i] is the i-th device of this list.
  --default NAME             where unconstrained work goes (default: first non-host device)
  --host NAME                where host-only ops run (default: first cpu device)
  --pin NODE=DEV             run NODE on DEV; NODE is a name, alias or glob (repeatable)
  --pin-fixed NODE=DEV       like --pin, and the result stays on DEV (consumers follow in unify)
  --rule OP=DEV              run ops named OP (glob, e.g. 'nn.conv*') on DEV (repeatable,
                             first match wins)
  --fallback DEV             ops no rule covers, and ops without a kernel where they would
                             run, go to DEV
  --mode demand|unify        demand (default): unpinned nodes go where their consumers are;
                             unify: TVM-compatible, nodes joined by hard edges share a device
  --constants replicate|copy constants used on several devices: one instance per device made
                             at load time (default), or copied on every run
  --emit KIND                summary (default), json (the plan report), relay (the planned
                             program with on_device/device_copy), dot (Graphviz, coloured by
                             device), graph (the planned graph as a JSON graph), onnx (the
                             planned ONNX model: devices and pins in its metadata, copies as
                             DeviceCopy nodes; ONNX models only)
  --json                     same as --emit json
  -o, --output FILE          write to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok (conflicts are reported, not failures), 1 user error, 2 usage error
)";

struct PlanArguments {
    std::string model;
    GraphFormat format = GraphFormat::Auto;
    std::optional<std::string> devices;
    std::optional<std::string> defaultDevice;
    std::optional<std::string> hostDevice;
    std::vector<PinRequest> pins;
    PlanOptions options;
    std::string emit = "summary";
    std::string output;
};

/// Parses the arguments; returns an exit code when parsing ends the command.
std::optional<int> parseArguments(const std::vector<std::string>& args, PlanArguments* parsed,
                                  std::ostream& out, std::ostream& err) {
    ArgumentList list(args);
    std::string arg;
    auto usage = [&](const std::string& message) {
        err << "placer plan: " << message << "\nrun 'placer plan --help' for the options\n";
        return std::optional<int>(UsageError);
    };
    while (list.next(&arg)) {
        const std::string name = list.optionName(arg);
        std::string value, error;
        auto needValue = [&]() { return list.value(name, &value, &error); };
        if (name == "-h" || name == "--help") {
            out << kPlanHelp;
            return Ok;
        }
        if (name == "--json") {
            parsed->emit = "json";
            continue;
        }
        if (name.size() > 1 && name[0] == '-') {
            static const char* const kWithValue[] = {
                "--format",    "--devices", "--default",  "--host", "--pin",
                "--pin-fixed", "--rule",    "--fallback", "--mode", "--constants",
                "--emit",      "-o",        "--output"};
            bool known = false;
            for (const char* option : kWithValue)
                known = known || name == option;
            if (!known)
                return usage("unknown option '" + name + "'");
            if (!needValue())
                return usage(error);
        }
        if (name == "--format") {
            const auto format = parseGraphFormat(value);
            if (!format)
                return usage("--format must be relay, json, onnx or auto, not '" + value + "'");
            parsed->format = *format;
        } else if (name == "--devices") {
            parsed->devices = value;
        } else if (name == "--default") {
            parsed->defaultDevice = value;
        } else if (name == "--host") {
            parsed->hostDevice = value;
        } else if (name == "--pin" || name == "--pin-fixed") {
            PinRequest pin;
            if (!splitAssignment(value, &pin.nodePattern, &pin.device, &error))
                return usage(name + " " + error);
            pin.fixed = name == "--pin-fixed";
            parsed->pins.push_back(pin);
        } else if (name == "--rule") {
            OpRule rule;
            if (!splitAssignment(value, &rule.opPattern, &rule.device, &error))
                return usage("--rule " + error);
            parsed->options.rules.push_back(rule);
        } else if (name == "--fallback") {
            parsed->options.fallbackDevice = value;
        } else if (name == "--mode") {
            if (value != "demand" && value != "unify")
                return usage("--mode must be demand or unify, not '" + value + "'");
            parsed->options.mode = value == "demand" ? PlanMode::Demand : PlanMode::Unify;
        } else if (name == "--constants") {
            if (value != "replicate" && value != "copy")
                return usage("--constants must be replicate or copy, not '" + value + "'");
            parsed->options.constants =
                value == "replicate" ? ConstantPolicy::Replicate : ConstantPolicy::Copy;
        } else if (name == "--emit") {
            if (value != "summary" && value != "json" && value != "relay" && value != "dot" &&
                value != "graph" && value != "onnx")
                return usage("--emit must be summary, json, relay, dot, graph or onnx, not '" +
                             value + "'");
            parsed->emit = value;
        } else if (name == "-o" || name == "--output") {
            parsed->output = value;
        } else if (!parsed->model.empty()) {
            return usage("more than one model given ('" + parsed->model + "' and '" + arg + "')");
        } else {
            parsed->model = arg;
        }
    }
    if (parsed->model.empty())
        return usage("no model given");
    return std::nullopt;
}

/// The device set from --devices, --default and --host; std::nullopt when --devices is absent.
std::optional<DeviceSet> explicitDevices(const PlanArguments& args, std::string* error) {
    if (!args.devices)
        return std::nullopt;
    return DeviceSet::parse(*args.devices, error);
}

bool chooseRoles(const PlanArguments& args, DeviceSet& devices, std::string* error) {
    for (const auto& [option, name] :
         {std::pair{"--default", args.defaultDevice}, std::pair{"--host", args.hostDevice}}) {
        if (!name)
            continue;
        const auto id = devices.find(*name);
        if (!id) {
            *error = std::string(option) + " " + *name +
                     ": unknown device (devices: " + devices.namesList() + ")";
            return false;
        }
        if (std::string_view(option) == "--default")
            devices.setDefaultDevice(*id);
        else
            devices.setHostDevice(*id);
    }
    return true;
}

/// The requested output, or the reason it cannot be written.
Result<std::string> render(const PlanArguments& args, const Graph& graph, const DeviceSet& devices,
                           const Plan& plan) {
    if (args.emit == "json")
        return planReportJson(graph, devices, args.options, plan).dump() + "\n";
    if (args.emit == "summary")
        return planSummary(graph, devices, args.options, plan);
    const Graph planned = applyPlan(graph, devices, plan);
    if (args.emit == "relay") {
        for (const Node& node : planned.nodes()) {
            if (node.op->dialect != OpDialect::Relay)
                return SourceError{"", 0, 0,
                                   "'" + node.op->name +
                                       "' is not a Relay operator: a model read "
                                       "from ONNX can be written as onnx, graph, json or dot"};
        }
        return writeRelay(planned, devices);
    }
    if (args.emit == "graph")
        return writeJsonGraph(planned, devices).dump() + "\n";
    if (args.emit == "onnx")
        return writeOnnx(planned, devices);
    return writeDot(planned, devices, conflictedNodeNames(graph, plan));
}

std::string readAll(std::istream& in) {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

} // namespace

int runPlanCommand(const std::vector<std::string>& rawArgs, std::istream& in, std::ostream& out,
                   std::ostream& err) {
    PlanArguments args;
    if (const auto exit = parseArguments(rawArgs, &args, out, err))
        return *exit;
    auto fail = [&](const std::string& message) {
        err << "placer plan: error: " << message << "\n";
        return UserError;
    };
    std::string error;
    std::optional<DeviceSet> devices = explicitDevices(args, &error);
    if (args.devices && !devices)
        return fail("--devices: " + error);
    if (devices && !chooseRoles(args, *devices, &error))
        return fail(error);

    auto loaded = args.model == "-" ? loadModelText(readAll(in), "<stdin>", args.format, devices)
                                    : loadModelFile(args.model, args.format, devices);
    if (!loaded)
        return fail(loaded.error().toString());
    LoadedModel& model = loaded.value();
    for (const std::string& warning : model.warnings)
        err << "placer plan: warning: " << warning << "\n";
    if (!devices && !chooseRoles(args, model.devices, &error))
        return fail(error);
    if (!applyPinRequests(model.graph, model.devices, args.pins, &error))
        return fail(error);
    std::vector<std::string> warnings;
    if (!validateRules(model.graph, model.devices, args.options, &error, &warnings))
        return fail(error);
    for (const std::string& warning : warnings)
        err << "placer plan: warning: " << warning << "\n";

    const Plan plan = planDevices(model.graph, model.devices, args.options);
    auto rendered = render(args, model.graph, model.devices, plan);
    if (!rendered)
        return fail("--emit " + args.emit + ": " + rendered.error().message);
    const std::string& text = rendered.value();
    if (args.output.empty() || args.output == "-") {
        out << text;
        return Ok;
    }
    std::ofstream file(args.output, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file)
        return fail("cannot write '" + args.output + "'");
    return Ok;
}

} // namespace placer::cli
