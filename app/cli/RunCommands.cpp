// `placer compile` (bytecode), `placer run` (execute a plan, time it, check it) and
// `placer devices` (what this machine has).
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "io/Json.h"
#include "io/Npy.h"
#include "report/RunReport.h"
#include "runtime/Bytecode.h"
#include "runtime/Calibrate.h"
#include "runtime/DeviceMapping.h"
#include "runtime/Executor.h"
#include "runtime/MemoryCheck.h"
#include "passes/PassManager.h"
#include "runtime/ReferenceRun.h"
#include "runtime/Schedule.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"
#include "runtime/RandomTensor.h"

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

Plans MODEL and lowers the plan to bytecode for the runtime's register VM: storages from the
memory plan, tensors, kernel invocations and device copies, each naming its device.

options:
%s  --emit bytecode            what to write (bytecode is the only kind so far)
  -o, --output FILE          write to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok, 1 user error, 2 usage error
)";

constexpr const char* kRunHelp = R"(usage: placer run MODEL [OPTIONS]

Plans MODEL, then runs the plan for real: every virtual device on a physical one (the host cpu,
a virtual CPU context vcpuN, or cuda:N), devices concurrently, copies between them. Reports the
latency, the time of every node and copy, busy time and memory per device, and checks the
outputs against a run of the whole graph on one device.

options:
%s  --map VDEV=PHYS            run virtual device VDEV on physical device PHYS: cpu,
                             cpu:threads=N, vcpuN, vcpuN:threads=M or cuda:N (repeatable).
                             Defaults: cpu-kind devices on cpu, vcpu-kind devices on a fresh
                             vcpuN each, cuda-kind devices on cuda:ORDINAL, or on a fresh
                             vcpuN when this machine has no CUDA device
  --iterations N             measured runs (default 10)
  --warmup K                 runs before measuring (default 1)
  --input NAME=FILE.npy      data for graph input NAME (repeatable); other inputs get seeded
                             random data: floats in [-1, 1), integers in [0, 4)
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

bool parseInt(const std::string& text, int minimum, int* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value >= minimum;
}

bool parseDouble(const std::string& text, double* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value >= 0;
}

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

/// Keeps the medians of the nodes that ran in the workspace's cost table.
std::optional<std::string> recordNodeCosts(const std::string& db, const PlannedModel& planned,
                                           const OptimizedGraph& ran,
                                           const std::vector<Device*>& mapping,
                                           const MedianTimes& times, std::string* said) {
    std::vector<std::string> physical;
    for (const Device* device : mapping)
        physical.push_back(device->name());
    const std::vector<store::MeasuredCost> costs =
        store::measuredCosts(planned.model.graph, planned.plan, ran.fusedInto, physical, times);
    if (costs.empty())
        return std::nullopt;
    auto opened = store::PlanStore::open(db);
    if (!opened)
        return opened.error().toString();
    if (Status status = opened.value()->recordCosts(machineName(), costs); !status.ok())
        return status.error().toString();
    *said = "cost table: " + std::to_string(costs.size()) + " node times kept in " + db;
    return std::nullopt;
}

/// Records a run in the workspace against plan `name`: saved first when there is none of that
/// name; refused when the stored plan places nodes differently from the plan that ran.
std::optional<std::string> recordRun(const std::string& db, const std::string& name,
                                     const PlannedModel& planned, const PlanOptions& options,
                                     const RunReportInput& report,
                                     const std::optional<PredictionCheck>& prediction,
                                     std::ostream& err) {
    auto opened = store::PlanStore::open(db);
    if (!opened)
        return opened.error().toString();
    store::PlanStore& plans = *opened.value();
    const Graph& graph = planned.model.graph;
    const DeviceSet& devices = planned.model.devices;
    auto stored = plans.loadPlan(name);
    if (!stored) {
        if (Status status = plans.savePlan(name, "", graph, devices, options, planned.plan);
            !status.ok())
            return status.error().toString();
        err << "placer run: saved the plan as '" << name << "' in " << db << "\n";
    } else {
        const auto& saved = stored.value().savedDevices;
        bool same = saved.size() == graph.size();
        for (std::size_t i = 0; same && i < graph.size(); ++i)
            same = planned.plan.devices[i].valid() &&
                   saved[i] == devices[planned.plan.devices[i]].name;
        // A split runs its nodes on every shard's device: the splits must agree too.
        same = same && stored.value().options.splits == options.splits;
        if (!same)
            return "plan '" + name + "' in " + db +
                   " places nodes differently from the plan that ran; give another --plan NAME";
    }
    store::RunRecord run = store::runRecord(report);
    if (prediction)
        store::attachPrediction(&run, *prediction);
    if (Status status = plans.saveRun(name, run); !status.ok())
        return status.error().toString();
    err << "placer run: recorded the run of '" << name << "' in " << db << "\n";
    return std::nullopt;
}

} // namespace

int runCompileCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                      std::ostream& err) {
    std::string output;
    CommandOptions own;
    own.withValue = {"--emit", "-o", "--output"};
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        if (name == "--emit") {
            if (value != "bytecode")
                return "--emit must be bytecode, not '" + value + "'";
        } else {
            output = value;
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    const std::string help = formatHelp(kCompileHelp);
    if (const auto exit = parseCommandLine("compile", help.c_str(), args, &parsed, own, out, err))
        return *exit;
    PlannedModel planned;
    if (const auto exit = loadAndPlan("compile", parsed, in, err, &planned))
        return *exit;
    // What runs: the user's graph, or the sharded graph when the plan splits.
    const OptimizedGraph lowered = unoptimized(planned.model.graph, planned.plan);
    auto program = lowerToBytecode(lowered.graph, planned.model.devices, lowered.plan);
    if (!program) {
        err << "placer compile: error: " << program.error().message << "\n";
        return UserError;
    }
    return writeOutput("compile",
                       printBytecode(program.value(), lowered.graph, planned.model.devices), output,
                       out, err);
}

int runRunCommand(const std::vector<std::string>& args, std::istream& in, std::ostream& out,
                  std::ostream& err) {
    std::vector<DeviceMapRequest> maps;
    std::vector<std::pair<std::string, std::string>> inputFiles;
    RunOptions options;
    int seed = 1;
    std::string saveDir, traceFile, csvFile, output;
    bool json = false, reference = true;
    double atol = 1e-4, rtol = 1e-3;
    CommandOptions own;
    own.withValue = {"--map",   "--iterations", "--warmup", "--input", "--seed", "--save-outputs",
                     "--trace", "--csv",        "--atol",   "--rtol",  "-o",     "--output",
                     "--plan"};
    own.flags = {"--json", "--no-reference", "--save-run", "--no-optimize", "--no-record"};
    bool record = true;
    bool optimize = true;
    bool saveRun = false;
    std::string planName;
    own.handle = [&](const std::string& name,
                     const std::string& value) -> std::optional<std::string> {
        if (name == "--json") {
            json = true;
        } else if (name == "--no-reference") {
            reference = false;
        } else if (name == "--no-optimize") {
            optimize = false;
        } else if (name == "--save-run") {
            saveRun = true;
        } else if (name == "--plan") {
            planName = value;
        } else if (name == "--no-record") {
            record = false;
        } else if (name == "--map") {
            auto split = splitAssignment(value, SplitAt::FirstEquals);
            if (!split)
                return "--map " + split.error().message;
            maps.push_back({split.value().lhs, split.value().rhs});
        } else if (name == "--input") {
            auto split = splitAssignment(value, SplitAt::FirstEquals);
            if (!split)
                return "--input " + split.error().message;
            inputFiles.emplace_back(split.value().lhs, split.value().rhs);
        } else if (name == "--iterations") {
            if (!parseInt(value, 1, &options.iterations))
                return "--iterations must be a whole number of at least 1, not '" + value + "'";
        } else if (name == "--warmup") {
            if (!parseInt(value, 0, &options.warmup))
                return "--warmup must be a whole number of at least 0, not '" + value + "'";
        } else if (name == "--seed") {
            if (!parseInt(value, 0, &seed))
                return "--seed must be a non-negative whole number, not '" + value + "'";
        } else if (name == "--atol" || name == "--rtol") {
            if (!parseDouble(value, name == "--atol" ? &atol : &rtol))
                return name + " must be a non-negative number, not '" + value + "'";
        } else if (name == "--save-outputs") {
            saveDir = value;
        } else if (name == "--trace") {
            traceFile = value;
        } else if (name == "--csv") {
            csvFile = value;
        } else {
            output = value;
        }
        return std::nullopt;
    };
    PlanArguments parsed;
    const std::string help = formatHelp(kRunHelp);
    if (const auto exit = parseCommandLine("run", help.c_str(), args, &parsed, own, out, err))
        return *exit;
    for (const DeviceMapRequest& map : maps)
        parsed.maps.emplace_back(map.device, map.physical);
    parsed.fusion = optimize;
    auto fail = [&](const std::string& message) {
        err << "placer run: error: " << message << "\n";
        return UserError;
    };
    PlannedModel planned;
    if (const auto exit = loadAndPlan("run", parsed, in, err, &planned))
        return *exit;
    const DeviceSet& devices = planned.model.devices;
    for (const Conflict& conflict : planned.plan.conflicts) {
        if (conflict.kind == ConflictKind::Unsupported)
            return fail("the plan cannot run: " + conflict.message);
        err << "placer run: warning: conflict: " << conflict.message << "\n";
    }
    DeviceRegistry registry;
    std::vector<std::string> warnings;
    auto mapping = mapDevices(devices, maps, registry, &warnings);
    if (!mapping)
        return fail(mapping.error().message);
    for (const std::string& warning : warnings)
        err << "placer run: warning: " << warning << "\n";
    // The graph that runs: the user's, optimised for each device after placement.
    OptimizeOptions optimizeOptions;
    optimizeOptions.channelsLast = optimize;
    optimizeOptions.fusion = optimize;
    optimizeOptions.transposes = optimize;
    optimizeOptions.packWeights = optimize;
    auto optimized = optimizeForDevices(planned.model.graph, devices, planned.plan, planned.options,
                                        mapping.value(), optimizeOptions);
    if (!optimized) {
        err << "placer run: warning: running the graph unoptimised: " << optimized.error().message
            << "\n";
        optimized = unoptimized(planned.model.graph, planned.plan);
    }
    const Graph& graph = optimized.value().graph;
    auto program = lowerToBytecode(graph, devices, optimized.value().plan);
    if (!program)
        return fail(program.error().message);
    // The executor orders each device's ready work by the plan's predicted times, where the
    // plan has them, so that the schedule it runs is the one the plan predicted.
    program.value().nodeMicros =
        predictedNodeMicros(planned.plan, optimized.value().origin, graph.size());

    // Inputs: files where given, seeded random data elsewhere.
    const std::vector<NodeId> inputNodes = program.value().inputs;
    std::vector<HostTensor> inputs(inputNodes.size());
    std::vector<bool> given(inputNodes.size(), false);
    for (const auto& [name, file] : inputFiles) {
        const auto node = graph.find(name);
        std::size_t index = inputNodes.size();
        for (std::size_t i = 0; node && i < inputNodes.size(); ++i) {
            if (inputNodes[i] == *node)
                index = i;
        }
        if (index == inputNodes.size()) {
            std::string names;
            for (NodeId id : inputNodes)
                names += (names.empty() ? "" : ", ") + graph.node(id).name;
            return fail("--input " + name +
                        ": the model has no input of that name (inputs: " + names + ")");
        }
        auto tensor = readNpy(file);
        if (!tensor)
            return fail("--input " + name + ": " + tensor.error().toString());
        const TensorType& want = graph.node(inputNodes[index]).outputs[0];
        if (tensor.value().type != want)
            return fail("--input " + name + ": " + file + " holds " +
                        tensor.value().type.toShortString() + " but the input is " +
                        want.toShortString());
        inputs[index] = tensor.take();
        given[index] = true;
    }

    const int opset = graph.onnxOpset();
    // A plan too large for its devices is refused before any input is made.
    if (Status fits = checkMemoryFits(program.value(), devices, mapping.value(),
                                      hostInputOutputBytes(program.value()));
        !fits.ok())
        return fail(fits.error().message);
    for (std::size_t i = 0; i < inputNodes.size(); ++i) {
        if (!given[i])
            inputs[i] = randomTensor(graph.node(inputNodes[i]).outputs[0],
                                     static_cast<std::uint64_t>(seed) * 1000003u + i);
    }
    // The reference runs first, and is gone before the run loads: the two never hold memory
    // at once. It runs the user's graph unoptimised, so it checks the optimisations too.
    std::optional<std::vector<HostTensor>> expected;
    if (reference) {
        auto outputs = runReference(planned.model.graph, inputs, opset);
        if (!outputs)
            return fail("reference run: " + outputs.error().message);
        expected = outputs.take();
    }
    auto executor = Executor::load(graph, devices, program.take(), mapping.value(), opset);
    if (!executor)
        return fail(executor.error().message);
    auto result = executor.value()->run(inputs, options);
    if (!result)
        return fail(result.error().message);

    RunReportInput report;
    report.graph = &graph;
    report.devices = &devices;
    report.executor = executor.value().get();
    report.result = &result.value();
    report.options = options;
    report.optimizations = optimized.value().notes;
    report.splits = &planned.plan.splits;
    report.nodeRegion = optimized.value().region;
    report.nodeShard = optimized.value().shard;
    report.hostPeakBytes = processPeakResidentBytes();
    if (expected)
        report.reference = compareOutputs(result.value().outputs, *expected, atol, rtol);
    if (!saveDir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(saveDir, ec);
        if (ec)
            return fail("--save-outputs " + saveDir + ": " + ec.message());
        for (std::size_t o = 0; o < result.value().outputs.size(); ++o) {
            const GraphOutput& graphOutput = graph.outputs()[o];
            const std::string name =
                graphOutput.name.empty() ? graph.valueName(graphOutput.value) : graphOutput.name;
            const std::string file = outputFileName(saveDir, name, o);
            if (Status status = writeNpy(file, result.value().outputs[o]); !status.ok())
                return fail(status.error().toString());
            report.outputFiles.resize(result.value().outputs.size());
            report.outputFiles[o] = file;
        }
    }
    for (const auto& [option, file, text] :
         {std::tuple{"--trace", traceFile,
                     traceFile.empty() ? "" : chromeTrace(report).dump(-1) + "\n"},
          std::tuple{"--csv", csvFile, csvFile.empty() ? "" : runTimingsCsv(report)}}) {
        if (file.empty())
            continue;
        std::ofstream stream(file, std::ios::binary | std::ios::trunc);
        stream << text;
        stream.close();
        if (!stream)
            return fail(std::string(option) + ": cannot write '" + file + "'");
    }
    // The user's nodes' medians: they flow back into the workspace's cost table, and are set
    // against the plan's prediction when it has one.
    const OptimizedGraph& ran = optimized.value();
    const MedianTimes userTimes =
        userMedianTimes(medianTimes(executor.value()->program(), result.value(), graph.size(),
                                    ran.plan.copies.size()),
                        graph, ran.plan, ran.origin, planned.model.graph.size(), planned.plan);
    const std::string workspace = parsed.db.empty() ? store::PlanStore::defaultPath() : parsed.db;
    std::string recorded;
    if (record) {
        if (auto error =
                recordNodeCosts(workspace, planned, ran, mapping.value(), userTimes, &recorded))
            err << "placer run: warning: the node times were not kept: " << *error << "\n";
    }
    std::optional<PredictionCheck> predicted;
    if (planned.plan.prediction)
        predicted = checkPrediction(planned.model.graph, planned.plan, result.value(), userTimes);
    std::string text;
    if (json) {
        Json document = runReportJson(report);
        if (predicted)
            document.set("prediction", predicted->toJson());
        text = document.dump() + "\n";
    } else {
        text = runSummary(report);
        if (predicted)
            text += predicted->summary();
        if (!recorded.empty())
            text += recorded + "\n";
    }
    const int written = writeOutput("run", text, output, out, err);
    if (written != Ok)
        return written;
    if (saveRun) {
        if (auto error = recordRun(workspace, planName.empty() ? graph.name : planName, planned,
                                   planned.options, report, predicted, err))
            return fail(*error);
    }
    if (report.reference && !report.reference->ok)
        return fail("the outputs differ from the single-device reference: " +
                    report.reference->mismatch);
    return Ok;
}

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
