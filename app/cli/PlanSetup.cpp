// Plan options, loading and planning shared by `placer plan`, `compile` and `run`.
#include "cli/PlanSetup.h"

#include "cli/PlacerCli.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "runtime/Calibrate.h"
#include "runtime/DeviceRegistry.h"
#include "passes/PassManager.h"
#include "passes/PostOpFusion.h"
#include "store/PlanStore.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>
#include <thread>

namespace placer::cli {

const char* const kPlanOptionsHelp = R"(  --format relay|json|onnx|auto
                             input format (default: from the file name, then the content)
  --input-shape NAME=D1,D2,...
                             fix the shape of an ONNX graph input with symbolic dimensions
                             (repeatable; without it they are planned as 1, with a warning);
                             NAME[K] gives element K of a sequence input NAME
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
  --split NODES=DEV[:SHARE],DEV[:SHARE],...
                             run the ops NODES matches (a name, alias or glob, or several
                             joined by '|'; '*' is the whole graph) once per device, each on
                             its rows of the batch: split on axis 0 where the region starts,
                             concatenated where it ends. SHARE weighs the rows
                             ('*=gpu:3,cpu:1'); even without. Ops that mix rows are conflicts
                             and run unsplit (repeatable, for disjoint regions)
  --mode demand|unify|auto   demand (default): unpinned nodes go where their consumers are;
                             unify: TVM-compatible, nodes joined by hard edges share a device;
                             auto: unpinned ops go where the cost model predicts the shortest
                             latency (pins and rules are kept), with the predicted schedule
  --exact                    auto: also solve the exact programme (GLPK) on small graphs
  --db FILE                  the workspace: its calibration (placer calibrate) and the node
                             times of earlier runs make auto mode's costs (default
                             $XDG_DATA_HOME/placement-explorer/workspace.db); placer run keeps
                             its node times there, and its --save-run records there
  --constants replicate|copy constants used on several devices: one instance per device made
                             at load time (default), or copied on every run
)";

namespace {

std::string readAll(std::istream& in) {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

/// The device set from --devices, --default and --host; std::nullopt when --devices is absent.
std::optional<DeviceSet> explicitDevices(const PlanArguments& args, std::string* error) {
    if (!args.devices)
        return std::nullopt;
    auto set = DeviceSet::parse(*args.devices);
    if (!set) {
        *error = set.error().message;
        return std::nullopt;
    }
    return set.take();
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

} // namespace

std::string formatHelp(const char* text) {
    std::string help = text;
    const std::size_t at = help.find("%s");
    if (at != std::string::npos)
        help.replace(at, 2, kPlanOptionsHelp);
    return help;
}

std::optional<std::string> takePlanOption(const std::string& name, const std::string& value,
                                          PlanArguments* parsed) {
    if (name == "--format") {
        const auto format = parseGraphFormat(value);
        if (!format)
            return "--format must be relay, json, onnx or auto, not '" + value + "'";
        parsed->format = *format;
    } else if (name == "--input-shape") {
        auto shape = parseInputShape(value);
        if (!shape)
            return "--input-shape " + shape.error().message;
        parsed->inputShapes[shape.value().first] = shape.value().second;
    } else if (name == "--devices") {
        parsed->devices = value;
    } else if (name == "--default") {
        parsed->defaultDevice = value;
    } else if (name == "--host") {
        parsed->hostDevice = value;
    } else if (name == "--pin" || name == "--pin-fixed") {
        auto split = splitAssignment(value);
        if (!split)
            return name + " " + split.error().message;
        parsed->pins.push_back({split.value().lhs, split.value().rhs, name == "--pin-fixed"});
    } else if (name == "--split") {
        auto request = parseSplitRequest(value);
        if (!request)
            return request.error().message;
        parsed->options.splits.push_back(request.take());
    } else if (name == "--rule") {
        auto split = splitAssignment(value);
        if (!split)
            return "--rule " + split.error().message;
        parsed->options.rules.push_back({split.value().lhs, split.value().rhs});
    } else if (name == "--fallback") {
        parsed->options.fallbackDevice = value;
    } else if (name == "--mode") {
        const auto mode = parsePlanMode(value);
        if (!mode)
            return "--mode must be demand, unify or auto, not '" + value + "'";
        parsed->options.mode = *mode;
    } else if (name == "--db") {
        parsed->db = value;
    } else if (name == "--constants") {
        if (value != "replicate" && value != "copy")
            return "--constants must be replicate or copy, not '" + value + "'";
        parsed->options.constants =
            value == "replicate" ? ConstantPolicy::Replicate : ConstantPolicy::Copy;
    } else {
        return "unknown option '" + name + "'";
    }
    return std::nullopt;
}

std::optional<int> parseCommandLine(const std::string& command, const char* help,
                                    const std::vector<std::string>& args, PlanArguments* parsed,
                                    const CommandOptions& own, std::ostream& out,
                                    std::ostream& err) {
    ArgumentList list(args);
    std::string arg;
    auto usage = [&](const std::string& message) {
        err << "placer " << command << ": " << message << "\nrun 'placer " << command
            << " --help' for the options\n";
        return std::optional<int>(UsageError);
    };
    auto contains = [](const std::vector<std::string>& names, const std::string& name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    static const std::vector<std::string> kPlanWithValue = {
        "--format", "--input-shape", "--devices", "--default",   "--host", "--pin",  "--pin-fixed",
        "--rule",   "--fallback",    "--mode",    "--constants", "--db",   "--split"};
    while (list.next(&arg)) {
        const std::string name = list.optionName(arg);
        std::string value, error;
        if (name == "-h" || name == "--help") {
            out << help;
            return Ok;
        }
        if (name == "--exact") {
            parsed->options.exact = true;
            continue;
        }
        if (contains(own.flags, name)) {
            if (auto problem = own.handle(name, ""))
                return usage(*problem);
            continue;
        }
        if (name.size() > 1 && name[0] == '-') {
            const bool planOption = contains(kPlanWithValue, name);
            if (!planOption && !contains(own.withValue, name))
                return usage("unknown option '" + name + "'");
            if (!list.value(name, &value, &error))
                return usage(error);
            auto problem =
                planOption ? takePlanOption(name, value, parsed) : own.handle(name, value);
            if (problem)
                return usage(*problem);
            continue;
        }
        if (!parsed->model.empty())
            return usage("more than one model given ('" + parsed->model + "' and '" + arg + "')");
        parsed->model = arg;
    }
    if (parsed->model.empty())
        return usage("no model given");
    return std::nullopt;
}

CostModel machineCosts(const DeviceSet& devices, store::PlanStore* workspace,
                       const std::vector<std::pair<std::string, std::string>>& maps) {
    static const bool hasCuda = DeviceRegistry().hasKind(DeviceKind::Cuda);
    CostModel model = CostModel::assumed(
        devices, static_cast<int>(std::thread::hardware_concurrency()), maps, hasCuda);
    // Runs fuse post-ops and written-out layer norms (passes/PassManager.h): predict them so.
    model.setFusion(fusedGroups);
    if (!workspace)
        return model;
    const std::string machine = machineName();
    if (auto calibration = workspace->loadCalibration(machine); calibration && calibration.value())
        model.apply(*calibration.value());
    if (auto costs = workspace->loadCosts(machine)) {
        for (const store::MeasuredCost& cost : costs.value())
            model.recordMeasured(cost.key, cost.physical, cost.micros);
    }
    return model;
}

CostModel machineCosts(const DeviceSet& devices, const std::string& db,
                       const std::vector<std::pair<std::string, std::string>>& maps) {
    if (!std::filesystem::exists(db))
        return machineCosts(devices, static_cast<store::PlanStore*>(nullptr), maps);
    auto opened = store::PlanStore::open(db);
    return machineCosts(devices, opened ? opened.value().get() : nullptr, maps);
}

namespace {

/// Auto placement on a machine the workspace `db` has no calibration of would place by assumed
/// rates (a CPU core at 100 GFLOP/s, 20 GB/s), far from most machines: calibrate it first, as
/// `placer calibrate` would (about a second), and keep the result. Returns what to tell the
/// user, if anything.
std::optional<std::string> calibrateIfMissing(const std::string& db) {
    auto opened = store::PlanStore::open(db);
    if (!opened)
        return "cannot open the workspace to calibrate this machine (" + opened.error().toString() +
               "): auto placement uses assumed rates";
    if (auto known = opened.value()->loadCalibration(machineName()); !known || known.value())
        return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    auto calibration = calibrateThisMachine(CalibrationOptions{});
    if (!calibration)
        return "calibrating this machine failed (" + calibration.error().message +
               "): auto placement uses assumed rates";
    if (Status saved = opened.value()->saveCalibration(calibration.value()); !saved.ok())
        return "cannot keep this machine's calibration (" + saved.error().toString() +
               "): auto placement uses assumed rates";
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    char took[32];
    std::snprintf(took, sizeof took, "%.1f s", seconds);
    return "this machine had no calibration: measured it now (" + std::string(took) + ", kept in " +
           db + "); 'placer calibrate' measures it again";
}

} // namespace

std::optional<std::string> loadPlanned(const PlanArguments& args,
                                       const std::optional<std::string>& text,
                                       std::vector<std::string>* warnings, PlannedModel* planned) {
    std::string error;
    std::optional<DeviceSet> devices = explicitDevices(args, &error);
    if (args.devices && !devices)
        return "--devices: " + error;
    if (devices && !chooseRoles(args, *devices, &error))
        return error;
    auto loaded = text ? loadModelText(*text, args.model, args.format, devices, args.inputShapes)
                       : loadModelFile(args.model, args.format, devices, args.inputShapes);
    if (!loaded)
        return loaded.error().toString();
    planned->model = loaded.take();
    LoadedModel& model = planned->model;
    warnings->insert(warnings->end(), model.warnings.begin(), model.warnings.end());
    if (!devices && !chooseRoles(args, model.devices, &error))
        return error;
    if (const Status pinned = applyPinRequests(model.graph, model.devices, args.pins); !pinned.ok())
        return pinned.error().message;
    if (const Status valid = validateRules(model.graph, model.devices, args.options, warnings);
        !valid.ok())
        return valid.error().message;
    PlanOptions options = args.options;
    if (options.mode == PlanMode::Auto && !options.costs) {
        const std::string db = args.db.empty() ? store::PlanStore::defaultPath() : args.db;
        if (auto note = calibrateIfMissing(db))
            warnings->push_back(*note);
        CostModel costs = machineCosts(model.devices, db, args.maps);
        if (!args.fusion)
            costs.setFusion({});
        options.costs = std::make_shared<const CostModel>(std::move(costs));
    }
    planned->plan = planDevices(model.graph, model.devices, options);
    planned->options = options;
    return std::nullopt;
}

std::optional<int> loadAndPlan(const std::string& command, const PlanArguments& args,
                               std::istream& in, std::ostream& err, PlannedModel* planned) {
    std::vector<std::string> warnings;
    std::optional<std::string> text;
    PlanArguments named = args;
    if (args.model == "-") {
        text = readAll(in);
        named.model = "<stdin>";
    }
    const auto error = loadPlanned(named, text, &warnings, planned);
    for (const std::string& warning : warnings)
        err << "placer " << command << ": warning: " << warning << "\n";
    if (error) {
        err << "placer " << command << ": error: " << *error << "\n";
        return UserError;
    }
    return std::nullopt;
}

int writeOutput(const std::string& command, const std::string& text, const std::string& path,
                std::ostream& out, std::ostream& err) {
    if (path.empty() || path == "-") {
        out << text;
        return Ok;
    }
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file << text;
    file.close();
    if (!file) {
        err << "placer " << command << ": error: cannot write '" << path << "'\n";
        return UserError;
    }
    return Ok;
}

} // namespace placer::cli
