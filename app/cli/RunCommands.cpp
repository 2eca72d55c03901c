// `placer compile` (bytecode), `placer run` (execute a plan, time it, check it) and
// `placer devices` (what this machine has).
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"
#include "report/SimulationReport.h"

#include "device/DeviceRegistry.h"
#include "device/Ranks.h"
#include "io/Json.h"
#include "io/Npy.h"
#include "report/RunReport.h"
#include "store/PlanStore.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <thread>
#include <tuple>

namespace placer::cli {

namespace {

constexpr const char* kCompileHelp = R"(usage: placer compile MODEL [OPTIONS]

Plans MODEL and lowers what a run of it executes to bytecode for the runtime's register VM:
storages from the memory plan, tensors, kernel invocations and device copies, each naming its
device. That is the graph optimised for the physical devices its virtual devices map to (as
placer run maps them), or with --no-optimize the plan's own graph.

options:
%s  --map VDEV=PHYS            as for placer run: the physical devices the program is
                             optimised for (repeatable)
  --no-optimize              the plan's own graph, without the optimisations after placement
  --emit bytecode            what to write (bytecode is the only kind so far)
  -o, --output FILE          write to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok, 1 user error, 2 usage error
)";

constexpr const char* kRunHelp = R"(usage: placer run MODEL [OPTIONS]

Plans MODEL, then runs the plan for real: every virtual device on a physical one (the host cpu,
a virtual CPU context vcpuN, or cuda:N), devices concurrently, copies between them. Reports the
latency, the time of every node and copy, busy time and memory per device, and checks the
outputs against a run of the whole graph on one device. With --machine FILE nothing runs: the
run is simulated event by event on the file's devices and links (copies as work on links that
concurrent transfers share), and the report, --json and --trace say "simulated".

options:
%s  --map VDEV=PHYS            run virtual device VDEV on physical device PHYS: cpu,
                             cpu:threads=N, vcpuN, vcpuN:threads=M or cuda:N (repeatable).
                             Defaults: cpu-kind devices on cpu, vcpu-kind devices on a fresh
                             vcpuN each, cuda-kind devices on cuda:ORDINAL, or on a fresh
                             vcpuN when this machine has no CUDA device
  --map auto                 map every virtual device by what the machine has free now:
                             vcpus bound to the least loaded cores, GPUs by free memory and
                             load (NVML); the report says what it chose and why
  --iterations N             measured runs (default 10)
  --warmup K                 runs before measuring (default 1)
  --adapt                    re-place the work between iterations when a device stays slower
                             or faster than the plan assumed (auto mode with the measured
                             speeds; pins and rules hold); each change is in the report
  --no-failover              end the run when a device fails, instead of planning again
                             without it and running the iteration again on the devices left
  --input NAME=FILE.npy      data for graph input NAME (repeatable); other inputs get seeded
                             random data: floats in [-1, 1), integers in [0, 4). The model is
                             planned for the data: dimensions it leaves open at the file's
                             shape, inputs that set shapes (a Slice's bounds) for its values;
                             bfloat16 data as uint16 bit patterns
  --seed N                   the seed for random inputs (default 1)
  --save-outputs DIR         write every output to DIR/NAME.npy
  --trace FILE.json          write a Chrome trace of the last run (Perfetto, chrome://tracing)
  --csv FILE.csv             write every node's and copy's median time as CSV
  --no-reference             skip the single-device reference run
  --no-optimize              run the graph as planned, without the optimisations made for
                             each device after placement (channels-last and post-op fusion
                             on CPUs), to compare
  --atol X, --rtol X         reference tolerance (default 1e-4 and 1e-3)
  --json                     write the run report as JSON
  --save-run                 record the run in the workspace (see placer plans), against the
                             plan --plan NAME (default: the model's name), saving the plan
                             first when there is none of that name
  --no-record                do not keep the nodes' median times in the workspace's cost
                             table (kept by default: auto mode's predictions learn from them)
  -o, --output FILE          write the report to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok, 1 user error (including outputs that differ from the reference), 2 usage
)";

constexpr const char* kDevicesHelp = R"(usage: placer devices [--db FILE] [--json]

Lists the physical devices this machine has for `placer run --map`: the host cpu, virtual CPU
contexts (vcpuN, created on demand), and CUDA GPUs, or why there are none; how many cores the
host has (vcpus and threads=N beyond them share the cores); and the calibration `placer
calibrate` kept in the workspace FILE for this machine, if any.
)";

/// "out/logits.npy" for an output called "logits"; names are made file-safe.
std::string outputFileName(const std::string& dir, const std::string& name, std::size_t index) {
    std::string safe;
    for (char c : name)
        safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')
                    ? c
                    : '_';
    while (!safe.empty() && safe.front() == '.')
        safe.erase(safe.begin());
    if (safe.empty())
        safe = "output_" + std::to_string(index);
    return (std::filesystem::path(dir) / (safe + ".npy")).string();
}

/// Parses a command that runs what it plans (compile, run), then tells the plan the devices the
/// run maps to and whether it is optimised: auto mode costs them fused as they will run.
std::optional<int> parseToRun(const std::string& command, const char* helpText,
                              const std::vector<std::string>& args, PlanArguments* parsed,
                              const CommandOptions& own, const std::vector<DeviceMapRequest>& maps,
                              const bool& optimize, std::ostream& out, std::ostream& err) {
    const std::string help = formatHelp(helpText);
    if (auto exit = parseCommandLine(command, help.c_str(), args, parsed, own, out, err))
        return exit;
    parsed->request.maps = maps;
    parsed->request.optimize = optimize;
    return std::nullopt;
}

} // namespace

int runCompileCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err) {
    std::string output;
    CompileRequest request;
    CommandOptions own;
    own.withValue = {"--emit"};
    own.output = &output;
    own.maps = &request.maps;
    own.switches = {{"--no-optimize", {&request.optimize, false}}};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        if (name == "--emit") {
            if (value != "bytecode")
                return "--emit must be bytecode, not '" + value + "'";
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    if (const auto exit = parseToRun("compile", kCompileHelp, args, &parsed, own, request.maps,
                                     request.optimize, out, err))
        return *exit;
    Session session(sessionOptions(parsed));
    PlannedModel planned;
    if (const auto exit = loadAndPlan("compile", parsed, session, in, err, &planned))
        return *exit;
    auto compiled = session.compile(planned, request);
    if (!compiled) {
        err << "placer compile: error: " << compiled.error().message << "\n";
        return UserError;
    }
    for (const std::string& warning : compiled.value().warnings)
        err << "placer compile: warning: " << warning << "\n";
    const CompiledPlan& program = compiled.value();
    return writeOutput("compile",
                       printBytecode(program.program, program.ran.graph, planned.model.devices),
                       output, out, err);
}

namespace {

/// `placer run --machine FILE`: the run simulated on the machine's devices, written as a run is.
int simulateRun(Session& session, const std::shared_ptr<PlannedModel>& planned, bool json,
                const std::string& traceFile, const std::string& output, std::ostream& out,
                std::ostream& err) {
    auto simulated = session.simulate(planned);
    if (!simulated) {
        err << "placer run: error: " << simulated.error().message << "\n";
        return UserError;
    }
    const PlannedModel& model = *simulated.value();
    const SimulationView view =
        simulationView(model.model.graph, model.plan, model.model.devices,
                       model.options.costs.get(), planned->request.machine->name);
    if (!traceFile.empty()) {
        std::ofstream stream(traceFile, std::ios::binary | std::ios::trunc);
        stream << simulationTrace(view).dump(-1) << "\n";
        stream.close();
        if (!stream) {
            err << "placer run: error: --trace: cannot write '" << traceFile << "'\n";
            return UserError;
        }
    }
    const std::string text = json ? simulationJson(view).dump() + "\n" : simulationSummary(view);
    return writeOutput("run", text, output, out, err);
}

} // namespace

int runRunCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err) {
    RunRequest request;
    std::vector<std::pair<std::string, std::string>> inputFiles;
    std::string saveDir, traceFile, csvFile, output, planName;
    bool json = false, record = true, saveRun = false;
    CommandOptions own;
    own.withValue = {"--map",   "--iterations", "--warmup", "--input", "--seed", "--save-outputs",
                     "--trace", "--csv",        "--atol",   "--rtol",  "--plan"};
    own.output = &output;
    own.switches = {{"--json", {&json, true}},
                    {"--adapt", {&request.adapt, true}},
                    {"--no-failover", {&request.failover, false}},
                    {"--no-reference", {&request.reference, false}},
                    {"--no-optimize", {&request.optimize, false}},
                    {"--save-run", {&saveRun, true}},
                    {"--no-record", {&record, false}}};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        int number = 0;
        if (name == "--plan") {
            planName = value;
        } else if (name == "--map" && value == "auto") {
            request.mapByLoad = true;
        } else if (name == "--map") {
            return takeMapOption(value, &request.maps);
        } else if (name == "--input") {
            auto split = splitAssignment(value, SplitAt::FirstEquals);
            if (!split)
                return "--input " + split.error().message;
            inputFiles.emplace_back(split.value().lhs, split.value().rhs);
        } else if (name == "--iterations") {
            if (!parseInt(value, 1, &request.iterations))
                return "--iterations must be a whole number of at least 1, not '" + value + "'";
        } else if (name == "--warmup") {
            if (!parseInt(value, 0, &request.warmup))
                return "--warmup must be a whole number of at least 0, not '" + value + "'";
        } else if (name == "--seed") {
            if (!parseInt(value, 0, &number))
                return "--seed must be a non-negative whole number, not '" + value + "'";
            request.seed = static_cast<std::uint64_t>(number);
        } else if (name == "--atol" || name == "--rtol") {
            if (!parseDouble(value, name == "--atol" ? &request.atol : &request.rtol))
                return name + " must be a non-negative number, not '" + value + "'";
        } else if (name == "--save-outputs") {
            saveDir = value;
        } else if (name == "--trace") {
            traceFile = value;
        } else if (name == "--csv") {
            csvFile = value;
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    if (const auto exit = parseToRun("run", kRunHelp, args, &parsed, own, request.maps,
                                     request.optimize, out, err))
        return *exit;
    auto fail = [&](const std::string& message) {
        err << "placer run: error: " << message << "\n";
        return UserError;
    };
    for (const auto& [name, file] : inputFiles) {
        auto tensor = readNpy(file);
        if (!tensor)
            return fail("--input " + name + ": " + tensor.error().toString());
        // The model is planned for the data: its open dimensions at the file's shape, inputs
        // that set shapes for the file's values.
        parsed.source.runInputs[name] = tensor.value();
        request.inputs.emplace_back(name, tensor.take());
    }
    Session session(sessionOptions(parsed));
    auto planned = std::make_shared<PlannedModel>();
    if (const auto exit = loadAndPlan("run", parsed, session, in, err, planned.get()))
        return *exit;
    if (planned->request.machine)
        return simulateRun(session, planned, json, traceFile, output, out, err);
    auto ran = session.run(planned, request);
    if (!ran)
        return fail(ran.error().message);
    // Under mpirun, rank 0 alone reports, writes files and records: it gathered the run.
    if (localRank() != 0)
        return Ok;
    RunOutcome& outcome = *ran.value();
    for (const std::string& warning : outcome.warnings)
        err << "placer run: warning: " << warning << "\n";

    const Graph& graph = outcome.graph();
    if (!saveDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(saveDir, ec);
        if (ec)
            return fail("--save-outputs " + saveDir + ": " + ec.message());
        outcome.outputFiles.resize(outcome.result.outputs.size());
        for (std::size_t o = 0; o < outcome.result.outputs.size(); ++o) {
            const GraphOutput& graphOutput = graph.outputs()[o];
            const std::string name =
                graphOutput.name.empty() ? graph.valueName(graphOutput.value) : graphOutput.name;
            const std::string file = outputFileName(saveDir, name, o);
            if (Status status = writeNpy(file, outcome.result.outputs[o]); !status.ok())
                return fail(status.error().toString());
            outcome.outputFiles[o] = file;
        }
    }
    for (const auto& [option, file, text] :
         {std::tuple{"--trace", traceFile,
                     traceFile.empty() ? "" : chromeTrace(outcome).dump(-1) + "\n"},
          std::tuple{"--csv", csvFile, csvFile.empty() ? "" : runTimingsCsv(outcome)}}) {
        if (file.empty())
            continue;
        std::ofstream stream(file, std::ios::binary | std::ios::trunc);
        stream << text;
        stream.close();
        if (!stream)
            return fail(std::string(option) + ": cannot write '" + file + "'");
    }
    // The user's nodes' medians flow back into the workspace's cost table.
    std::string recorded;
    if (record) {
        auto kept = session.recordCosts(outcome);
        if (!kept)
            err << "placer run: warning: the node times were not kept: " << kept.error().toString()
                << "\n";
        else if (kept.value() > 0)
            recorded = "cost table: " + std::to_string(kept.value()) + " node times kept in " +
                       session.workspacePath();
    }
    const std::optional<PredictionCheck> predicted = checkPrediction(outcome);
    std::string text;
    if (json) {
        Json document = runReportJson(outcome);
        if (predicted)
            document.set("prediction", predicted->toJson());
        text = document.dump() + "\n";
    } else {
        text = runSummary(outcome);
        if (predicted)
            text += predicted->summary();
        if (!recorded.empty())
            text += recorded + "\n";
    }
    const int written = writeOutput("run", text, output, out, err);
    if (written != Ok)
        return written;
    if (saveRun) {
        const std::string name = planName.empty() ? planned->model.graph.name : planName;
        bool saved = false;
        if (Status status = session.recordRun(outcome, name, &saved); !status.ok())
            return fail(status.error().toString());
        if (saved)
            err << "placer run: saved the plan as '" << name << "' in " << session.workspacePath()
                << "\n";
        err << "placer run: recorded the run of '" << name << "' in " << session.workspacePath()
            << "\n";
    }
    if (outcome.reference && !outcome.reference->ok)
        return fail("the outputs differ from the single-device reference: " +
                    outcome.reference->mismatch);
    return Ok;
}

namespace {

/// `placer devices` under mpirun: every rank's host and devices, named as --map names them
/// (rank1/vcpu1), written by rank 0.
int listRanksDevices(const std::vector<PhysicalDeviceInfo>& list, int cores, bool json,
                     std::ostream& out, std::ostream& err) {
    Json mine = Json::object();
    mine.set("rank", localRank());
    mine.set("host", rankTransport()->hostName(localRank()));
    mine.set("cores", cores);
    Json devices = Json::array();
    for (const PhysicalDeviceInfo& info : list) {
        Json entry = Json::object();
        entry.set("name", "rank" + std::to_string(localRank()) + "/" + info.name);
        entry.set("kind", std::string(deviceKindName(info.kind)));
        entry.set("available", info.available);
        entry.set("description", info.description);
        devices.push(std::move(entry));
    }
    mine.set("devices", std::move(devices));
    auto all = rankTransport()->allGather(mine.dump());
    if (!all) {
        err << "placer devices: " << all.error().message << "\n";
        return UserError;
    }
    if (localRank() != 0)
        return Ok;
    Json ranks = Json::array();
    for (const std::string& text : all.value()) {
        auto parsed = Json::parse(text, "rank list");
        if (!parsed) {
            err << "placer devices: a rank's list does not read: " << parsed.error().message
                << "\n";
            return UserError;
        }
        ranks.push(parsed.take());
    }
    if (json) {
        Json document = Json::object();
        document.set("ranks", std::move(ranks));
        out << document.dump() << "\n";
        return Ok;
    }
    static const Json none;
    auto member = [](const Json& object, std::string_view key) -> const Json& {
        const Json* found = object.find(key);
        return found ? *found : none;
    };
    for (std::size_t r = 0; r < ranks.size(); ++r) {
        const Json& rank = ranks.items()[r];
        out << "rank " << r << " on " << member(rank, "host").asString() << " ("
            << member(rank, "cores").asInt() << " cores):\n";
        for (const Json& device : member(rank, "devices").items())
            out << (member(device, "available").asBool() ? "  " : "- ")
                << member(device, "name").asString() << ": "
                << member(device, "description").asString() << "\n";
    }
    out << "map a virtual device to another rank's with --map NAME=rankN/DEVICE; without "
           "rankN/ a device is rank 0's\n";
    return Ok;
}

} // namespace

int runDevicesCommand(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                      std::ostream& err) {
    bool json = false;
    std::string db = store::PlanStore::defaultPath();
    ArgumentList arguments(args);
    std::string arg;
    while (arguments.next(&arg)) {
        const std::string name = arguments.optionName(arg);
        std::string error;
        if (name == "--json") {
            json = true;
        } else if (name == "--db") {
            if (!arguments.value(name, &db, &error)) {
                err << "placer devices: " << error << "\n";
                return UsageError;
            }
        } else if (name == "-h" || name == "--help") {
            out << kDevicesHelp;
            return Ok;
        } else {
            err << "placer devices: unknown argument '" << arg << "'\n";
            return UsageError;
        }
    }
    DeviceRegistry registry;
    const auto list = registry.list();
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (rankCount() > 1)
        return listRanksDevices(list, cores, json, out, err);
    std::optional<Calibration> calibration;
    if (std::filesystem::exists(db)) {
        if (auto opened = store::PlanStore::open(db)) {
            if (auto stored = opened.value()->loadCalibration(machineName()); stored)
                calibration = stored.value();
        }
    }
    const auto profileOf = [&](const std::string& name) -> const DeviceProfile* {
        if (!calibration)
            return nullptr;
        for (const DeviceProfile& profile : calibration->devices) {
            if (profile.name == name ||
                (name == "vcpuN" && CostModel::costClass(profile.name) == "vcpu"))
                return &profile;
        }
        return nullptr;
    };
    if (json) {
        Json document = Json::object();
        Json devices = Json::array();
        for (const PhysicalDeviceInfo& info : list) {
            Json entry = Json::object();
            entry.set("name", info.name);
            entry.set("kind", std::string(deviceKindName(info.kind)));
            entry.set("available", info.available);
            entry.set("description", info.description);
            devices.push(std::move(entry));
        }
        document.set("devices", std::move(devices));
        document.set("cores", cores);
        document.set("calibration", calibration ? calibration->toJson() : Json());
        out << document.dump() << "\n";
        return Ok;
    }
    for (const PhysicalDeviceInfo& info : list) {
        out << (info.available ? "  " : "- ") << info.name << ": " << info.description << "\n";
        if (const DeviceProfile* profile = profileOf(info.name))
            out << "      calibrated: " << describeProfile(*profile) << "\n";
    }
    out << "this machine has " << cores << " core" << (cores == 1 ? "" : "s")
        << ": the cpu device and every vcpu are threads on them, so more busy contexts (or "
           "threads=N) than that share the cores rather than run beside each other\n";
    if (calibration) {
        out << "calibration (placer calibrate) of " << calibration->machine << ":\n";
        for (const auto& [pair, link] : calibration->links)
            out << "  copy " << pair.first << " -> " << pair.second << ": " << describeLink(link)
                << "\n";
    } else {
        out << "not calibrated: auto mode assumes the rates (run placer calibrate)\n";
    }
    return Ok;
}

} // namespace placer::cli
