// Plan options on the command line, and loading and planning through the session, shared by
// `placer plan`, `compile`, `run` and `plans save`.
#include "cli/PlanSetup.h"

#include "cli/PlacerCli.h"
#include "session/PlanOptionText.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <istream>
#include <ostream>
#include <sstream>

namespace placer::cli {

const char* const kPlanOptionsHelp = R"(  --format relay|json|onnx|auto
                             input format (default: from the file name, then the content)
  --input-shape NAME=D1,D2,...
                             fix the shape of an ONNX graph input with symbolic dimensions
                             (repeatable; without it they are planned as 1, with a warning);
                             NAME[K] gives element K of a sequence input NAME
  --devices LIST             virtual devices, NAME:KIND[:mem=SIZE][:dtype=bf16|f16][:ordinal=N],...
                             KIND is cpu, cuda or vcpu; SIZE like 8GiB or 512MB;
                             dtype= computes the device's float32 work in 16 bits, with
                             casts where values cross to and from float32
                             (default: cpu:cpu,gpu:cuda, or the devices a JSON graph names).
                             Relay meta[VirtualDevice][i] is the i-th device of this list.
  --machine FILE             plan for the machine FILE describes (docs/user/machines.md): its
                             devices, named HOST.DEVICE (node0.cuda0), and its profiles and
                             links to cost the plan in every mode; placer machine describe
                             writes this machine's. Such a plan is not run here
  --default NAME             where unconstrained work goes (default: first non-host device)
  --host NAME                where host-only ops run (default: first cpu device)
  --pin NODE=DEV             run NODE on DEV; NODE is a name, alias or glob, or re:REGEX
                             searched in node and tensor names ('re:blocks\.1[2-9]\.=cpu',
                             as llama.cpp's -ot) (repeatable)
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
  --shard NODES=DEV[:SHARE],DEV[:SHARE],...
                             cut the ops NODES matches inside, across the devices: each holds
                             its share of the weights' columns (MatMul, Gemm, Conv by output
                             channels), the next product its rows, giving partial sums that
                             one AllReduce adds up; shardings (R, S(axis), P) follow through
                             element-wise ops, reshapes, transposes, normalisations; where
                             they meet, or an op has no rule, an AllGather or AllReduce makes
                             the value whole (docs/user/planning.md) (repeatable)
  --mode demand|unify|auto   demand (default): unpinned nodes go where their consumers are;
                             unify: TVM-compatible, nodes joined by hard edges share a device;
                             auto: unpinned ops go where the cost model predicts the shortest
                             latency (pins and rules are kept), with the predicted schedule;
                             on calibrated devices it also weighs every op sharded (--shard)
                             and takes that when predicted a sixth faster
  --exact                    auto: also solve the exact programme (GLPK) on small graphs
  --db FILE                  the workspace: its calibration (placer calibrate) and the node
                             times of earlier runs make auto mode's costs (default
                             $XDG_DATA_HOME/placement-explorer/workspace.db); placer run keeps
                             its node times there, and its --save-run records there
  --constants replicate|copy constants used on several devices: one instance per device made
                             at load time (default), or copied on every run
  --cost-at NAME=SIZE,...    auto mode: cost and predict at these sizes of the dimensions the
                             model's inputs name (seq=128,batch=8), where the plan is made at
                             stand-ins for them; --input-shape plans at real sizes instead
  --micro-batches M          pipeline the plan: the batch is cut on axis 0 into M micro-batches
                             that flow through the devices as the ops are placed, each device
                             working on one micro-batch while the next works on the one before
                             (ops that mix the batch's rows run once, on the whole batch);
                             with --mode auto, the ops are cut into contiguous stages, one per
                             device, chosen to finish the pipeline soonest
  --stream N                 throughput mode: N batches back to back through the pipeline,
                             the next batch entering the first device while the last one
                             drains; every input is the N batches stacked on axis 0 (data of
                             one batch is repeated), every op must keep the batch's rows apart,
                             and the run reports items per second and each batch's latency
)";

namespace {

std::string readAll(std::istream& in) {
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

} // namespace

std::string formatHelp(const char* text) {
    std::string help = text;
    const std::size_t at = help.find("%s");
    if (at != std::string::npos)
        help.replace(at, 2, kPlanOptionsHelp);
    return help;
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
    while (list.next(&arg)) {
        const std::string name = list.optionName(arg);
        std::string value, error;
        if (name == "-h" || name == "--help") {
            out << help;
            return Ok;
        }
        if (name == "--exact") {
            parsed->request.options.exact = true;
            continue;
        }
        const auto sets = std::find_if(own.switches.begin(), own.switches.end(),
                                       [&](const auto& entry) { return entry.first == name; });
        if (sets != own.switches.end()) {
            *sets->second.first = sets->second.second;
            continue;
        }
        if (contains(own.flags, name)) {
            if (auto problem = own.handle(name, ""))
                return usage(*problem);
            continue;
        }
        if (name.size() > 1 && name[0] == '-') {
            const std::string bare = name.starts_with("--") ? name.substr(2) : name;
            const bool planOption =
                name.starts_with("--") && (contains(planOptionNames(), bare) || bare == "db");
            const bool isOutput = own.output && (name == "-o" || name == "--output");
            const bool isMap = own.maps && name == "--map";
            if (!planOption && !isOutput && !isMap && !contains(own.withValue, name))
                return usage("unknown option '" + name + "'");
            if (!list.value(name, &value, &error))
                return usage(error);
            std::optional<std::string> problem;
            if (name == "--db")
                parsed->db = value;
            else if (isOutput)
                *own.output = value;
            else if (isMap)
                problem = takeMapOption(value, own.maps);
            else if (planOption)
                problem = takePlanOption(bare, value, &parsed->source, &parsed->request);
            else
                problem = own.handle(name, value);
            if (problem)
                return usage(*problem);
            continue;
        }
        if (!parsed->source.path.empty())
            return usage("more than one model given ('" + parsed->source.path + "' and '" + arg +
                         "')");
        parsed->source.path = arg;
    }
    if (parsed->source.path.empty())
        return usage("no model given");
    return std::nullopt;
}

SessionOptions sessionOptions(const PlanArguments& args) {
    return SessionOptions{args.db};
}

std::optional<int> loadAndPlan(const std::string& command, const PlanArguments& args,
                               Session& session, std::istream& in, std::ostream& err,
                               PlannedModel* planned,
                               const std::function<bool(const std::string&)>& said) {
    ModelSource source = args.source;
    if (source.path == "-") {
        source.text = readAll(in);
        source.path = "<stdin>";
    }
    auto opened = session.open(source, args.request);
    if (!opened) {
        err << "placer " << command << ": error: " << opened.error().toString() << "\n";
        return UserError;
    }
    *planned = opened.take();
    for (const std::string& warning : planned->warnings) {
        if (!said || said(warning))
            err << "placer " << command << ": warning: " << warning << "\n";
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

bool parseInt(const std::string& text, int minimum, int* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value >= minimum;
}

bool parseDouble(const std::string& text, double* value) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
    return ec == std::errc() && end == text.data() + text.size() && *value >= 0;
}

std::optional<std::string> takeMapOption(const std::string& value,
                                         std::vector<DeviceMapRequest>* maps) {
    auto split = splitAssignment(value, SplitAt::FirstEquals);
    if (!split)
        return "--map " + split.error().message;
    maps->push_back({split.value().lhs, split.value().rhs});
    return std::nullopt;
}

} // namespace placer::cli
