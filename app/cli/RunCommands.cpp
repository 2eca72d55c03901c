// `placer compile` (bytecode), `placer run` (execute a plan, time it, check it) and
// `placer devices` (what this machine has).
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "io/Json.h"
#include "io/Npy.h"
#include "io/RunReport.h"
#include "runtime/Bytecode.h"
#include "runtime/DeviceMapping.h"
#include "runtime/Executor.h"
#include "runtime/MemoryCheck.h"
#include "runtime/Optimize.h"
#include "runtime/ReferenceRun.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"

#include <charconv>
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
  --db FILE                  the workspace file for --save-run
  -o, --output FILE          write the report to FILE instead of standard output
  -h, --help                 show this help

exit codes: 0 ok, 1 user error (including outputs that differ from the reference), 2 usage
)";

constexpr const char* kDevicesHelp = R"(usage: placer devices [--json]

Lists the physical devices this machine has for `placer run --map`: the host cpu, virtual CPU
contexts (vcpuN, created on demand), and CUDA GPUs, or why there are none.
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

/// Records a run in the workspace against plan `name`: saved first when there is none of that
/// name; refused when the stored plan places nodes differently from the plan that ran.
std::optional<std::string> recordRun(const std::string& db, const std::string& name,
                                     const PlannedModel& planned, const PlanOptions& options,
                                     const RunReportInput& report, std::ostream& err) {
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
        if (!same)
            return "plan '" + name + "' in " + db +
                   " places nodes differently from the plan that ran; give another --plan NAME";
    }
    const store::RunRecord run = store::runRecord(report);
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
    auto program = lowerToBytecode(planned.model.graph, planned.model.devices, planned.plan);
    if (!program) {
        err << "placer compile: error: " << program.error().message << "\n";
        return UserError;
    }
    return writeOutput("compile",
                       printBytecode(program.value(), planned.model.graph, planned.model.devices),
                       output, out, err);
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
                     "--plan",  "--db"};
    own.flags = {"--json", "--no-reference", "--save-run", "--no-optimize"};
    bool optimize = true;
    bool saveRun = false;
    std::string planName, db = store::PlanStore::defaultPath();
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
        } else if (name == "--db") {
            db = value;
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
    const std::string text = json ? runReportJson(report).dump() + "\n" : runSummary(report);
    const int written = writeOutput("run", text, output, out, err);
    if (written != Ok)
        return written;
    if (saveRun) {
        if (auto error = recordRun(db, planName.empty() ? graph.name : planName, planned,
                                   planned.options, report, err))
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
    for (const std::string& arg : args) {
        if (arg == "--json") {
            json = true;
        } else if (arg == "-h" || arg == "--help") {
            out << kDevicesHelp;
            return Ok;
        } else {
            err << "placer devices: unknown argument '" << arg << "'\n";
            return UsageError;
        }
    }
    DeviceRegistry registry;
    const auto list = registry.list();
    if (json) {
        Json devices = Json::array();
        for (const PhysicalDeviceInfo& info : list) {
            Json entry = Json::object();
            entry.set("name", info.name);
            entry.set("kind", std::string(physicalKindName(info.kind)));
            entry.set("available", info.available);
            entry.set("description", info.description);
            devices.push(std::move(entry));
        }
        out << devices.dump() << "\n";
        return Ok;
    }
    for (const PhysicalDeviceInfo& info : list)
        out << (info.available ? "  " : "- ") << info.name << ": " << info.description << "\n";
    return Ok;
}

} // namespace placer::cli
