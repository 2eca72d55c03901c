// The one pipeline every front end calls, as ONNX Runtime's InferenceSession is for its C, C++,
// Python and C# faces: load a model in any format, plan it with annotations and options,
// calibrate the machine, compile and run a plan with progress, per-iteration reports and cancel,
// and record what ran in the workspace. `placer` (app/cli), `placement-explorer` (app/gui) and
// the Python module call it; none of them wires these steps itself.
//
// Its interface takes and returns values (requests, a PlannedModel, a RunOutcome) and reports
// every failure a user can cause as a Result with a sentence; it keeps no globals, so several
// sessions, models and finished runs live side by side. Runs of one session execute one at a
// time (they share its physical devices and their clocks); loading and planning never wait.
#pragma once

#include "device/DeviceMapping.h"
#include "io/ModelLoader.h"
#include "io/ProfileImport.h"
#include "ir/HostTensor.h"
#include "ir/Result.h"
#include "plan/Annotations.h"
#include "plan/CostModel.h"
#include "plan/MachineFile.h"
#include "plan/Plan.h"
#include "plan/PlanWorkspace.h"
#include "report/RunOutcome.h"
#include "session/Generate.h"
#include "vm/Bytecode.h"
#include "vm/Calibrate.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace placer {

class ConstantCache;
class DeviceRegistry;

namespace store {
class PlanStore;
struct GenerationRecord;
} // namespace store

/// Where a model comes from.
struct ModelSource {
    /// The file; with `text`, the name the text is read as (its extension picks the format).
    std::string path;
    std::optional<std::string> text;
    GraphFormat format = GraphFormat::Auto;
    /// Shapes for inputs whose dimensions the model leaves open, by input name.
    InputShapes inputShapes;
    /// The data a run will give, by input name: the inputs the model leaves open are planned at
    /// its shapes, and inputs that set shapes for its values (placer run --input).
    RunInputs runInputs;
};

/// What a model is planned for, and how.
struct PlanRequest {
    /// The virtual devices, "NAME:KIND[:mem=SIZE][:dtype=bf16|f16][:ordinal=N],..."; none: the
    /// model's own (a JSON graph's), else cpu:cpu,gpu:cuda.
    std::optional<std::string> devices;
    std::optional<std::string> defaultDevice, hostDevice;
    std::vector<PinRequest> pins;
    /// Mode, rules, fallback device, splits, constants, exact solving. Auto mode's costs come
    /// from the session's workspace when `options.costs` is unset.
    PlanOptions options;
    /// The physical devices a run will use (auto mode costs those), and whether it will run
    /// optimised (auto mode predicts fused groups then).
    std::vector<DeviceMapRequest> maps;
    bool optimize = true;
    /// A machine the plan is for, which this one is not (plan/MachineFile.h): its devices are
    /// the plan's, and its profiles and links cost it (every mode predicts with them). Such a
    /// plan is not run here.
    std::shared_ptr<const MachineFile> machine;
};

/// A loaded model and its plan.
struct PlannedModel {
    LoadedModel model;
    Plan plan;
    /// The options the plan was made with: the request's, with auto mode's cost model.
    PlanOptions options;
    /// Things the user should hear that are not errors (symbolic dimensions taken as 1, rules
    /// that match nothing, a calibration made on first use).
    std::vector<std::string> warnings;
    /// Where the model was read from and what it was planned with (Session::open sets both):
    /// a run whose data has other shapes than the model's open inputs were planned for, or
    /// other values where inputs set shapes, reads and plans the model again for that data.
    std::optional<ModelSource> source;
    PlanRequest request;
};

/// What `placer compile` and a run lower: the optimised graph and its program.
struct CompiledPlan {
    OptimizedGraph ran;
    Program program;
    std::vector<std::string> physical; ///< per virtual device
    std::vector<std::string> warnings;
};

struct CompileRequest {
    std::vector<DeviceMapRequest> maps;
    /// Run the passes after placement (false: the plan's own graph, `--no-optimize`).
    bool optimize = true;
};

/// How a plan runs.
struct RunRequest {
    /// Where each virtual device runs; the rest by kind (device/DeviceMapping.h).
    std::vector<DeviceMapRequest> maps;
    /// The devices `maps` does not name by what the machine has free now (--map auto,
    /// device/LoadMapping.h) rather than by kind alone. A program run again in a loop keeps
    /// the mapping its first run chose.
    bool mapByLoad = false;
    /// Data for graph inputs, by input name; the others get seeded random data.
    std::vector<std::pair<std::string, HostTensor>> inputs;
    std::uint64_t seed = 1;
    int warmup = 1;
    int iterations = 10;
    /// Check the outputs against the user's graph run unoptimised on one device.
    bool reference = true;
    double atol = 1e-4, rtol = 1e-3;
    bool optimize = true;
    /// Constants laid out at load as their kernels prefer (a matrix product's weights packed):
    /// off for a run made once, which would pay the packing for one call and hold a second copy
    /// of the weights beside the one other programs share.
    bool packWeights = true;
    /// Re-place the work between iterations when a device's measured speed stays off what the
    /// plan assumed (session/RunAdaptation.h; placer run --adapt).
    bool adapt = false;
    /// A device that fails mid-run is left out: the plan is made again without it and the
    /// iteration runs again on the devices left (session/RunAdaptation.h).
    bool failover = true;
    /// Faults and slowdowns to make on purpose (vm/FaultInjection.h), besides those the
    /// environment asks for (PLACER_FAULT, PLACER_SLOW).
    std::vector<InjectedFault> faults;
    /// The number the first measured iteration counts as, for faults and events (a generation's
    /// step: session/Generate.h).
    int firstIteration = 1;
};

/// What a run tells while it goes; every callback is optional and is called on the thread that
/// runs.
struct RunCallbacks {
    /// Bytes of constants loaded so far, of all (a mapped model's weights are read from disk).
    std::function<void(std::int64_t done, std::int64_t total)> loading;
    /// After each iteration, warm-up included: how many are done, of how many.
    std::function<void(int done, int total)> progress;
    /// Asked before each step and iteration: true stops the run (RunOutcome::cancelled()).
    std::function<bool()> cancelled;
};

struct SessionOptions {
    /// The workspace file: calibrations, measured node times, saved plans and runs. Empty: the
    /// user's default one (store::PlanStore::defaultPath()).
    std::string workspace;
};

/// What a session did, for the figures that say a plan is made once.
struct SessionCounters {
    int modelsRead = 0;     ///< models read from their source (open, and planning again for data)
    int plansMade = 0;      ///< placements planned (Session::plan)
    int instantiated = 0;   ///< plans instantiated at the sizes of a run's data
    int programsLoaded = 0; ///< programs lowered and loaded by Session::run
    int programsReused = 0; ///< runs that ran the program an earlier run loaded
};

class Session {
public:
    explicit Session(SessionOptions options = {});
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    /// The workspace file this session reads costs from and records into.
    const std::string& workspacePath() const { return m_workspace; }
    /// The physical devices of this session (device/DeviceRegistry.h).
    DeviceRegistry& registry() { return *m_registry; }

    /// Reads a model in any format.
    Result<LoadedModel> load(const ModelSource& source, const PlanRequest& request = {}) const;
    /// Loads and plans: devices and their roles, pins, rules and the options of `request`.
    Result<PlannedModel> open(const ModelSource& source, const PlanRequest& request);
    /// Plans a loaded model (pins, rules and options of `request`; its devices are the model's).
    Result<PlannedModel> plan(LoadedModel model, const PlanRequest& request);

    /// Plans `model` again with `options`, where `previous` was its plan, reusing `workspace`'s
    /// arrays (the GUI's document on every edit: linear in the graph, no copy of it). Counted
    /// in counters().plansMade like plan().
    Plan replan(const LoadedModel& model, const PlanOptions& options, PlanWorkspace& workspace,
                Plan previous);

    /// This machine's cost model for `devices`: the workspace's calibration and measured node
    /// times (none: assumed rates), the physical devices `maps` names, and fused groups as an
    /// optimised run makes them (`optimize`).
    CostModel costs(const DeviceSet& devices, const std::vector<DeviceMapRequest>& maps = {},
                    bool optimize = true) const;
    /// Measures this machine's devices and keeps the result in the workspace.
    Result<Calibration> calibrate(const CalibrationOptions& options,
                                  const CalibrationProgress& progress = {});

    /// The program a run of `planned` executes: the optimised graph (or the plan's own with
    /// `optimize` off), lowered.
    Result<CompiledPlan> compile(const PlannedModel& planned, const CompileRequest& request);

    /// Runs `planned`: maps its devices, optimises, lowers, checks memory, makes inputs, runs
    /// the reference, loads, and runs the iterations. A plan with an unsupported conflict, a
    /// plan too large for its devices, a wrong input or a kernel failure is an error; a
    /// cancelled run is an outcome (RunOutcome::cancelled()).
    Result<std::shared_ptr<RunOutcome>> run(std::shared_ptr<const PlannedModel> planned,
                                            const RunRequest& request,
                                            const RunCallbacks& callbacks = {});

    /// A run of `planned` simulated event by event on its devices with its cost model
    /// (plan/RunSimulator.h): what `placer run` does for a plan made for a machine file
    /// (PlanRequest::machine), which runs nothing. The plan made again with
    /// PlanOptions::simulate, the same placement, its Plan::simulation set; an error where the
    /// plan has no cost model to simulate with.
    Result<std::shared_ptr<const PlannedModel>>
    simulate(std::shared_ptr<const PlannedModel> planned);

    /// Keeps the medians of the user's nodes that `outcome` ran in the workspace's cost table
    /// (auto mode's predictions learn from them); returns how many, or why not.
    Result<std::size_t> recordCosts(const RunOutcome& outcome) const;
    /// Records `outcome` in the workspace against plan `name`, saving the plan first when there
    /// is none of that name (`saved` tells whether it was). An error when the stored plan places
    /// nodes differently.
    Status recordRun(const RunOutcome& outcome, const std::string& name,
                     bool* saved = nullptr) const;

    /// Records a generation of `planned` in the workspace against plan `name`, saving the plan
    /// first as recordRun does (`saved` tells whether it was); the same refusal when the stored
    /// plan places nodes differently.
    Status recordGeneration(const PlannedModel& planned, const GenerationReport& report,
                            const std::string& name, bool* saved = nullptr) const;

    /// Generates from `planned`, a decoder whose cache is explicit inputs and outputs
    /// (session/Generate.h): the prompt, then a token a step, the cache bound from each step to
    /// the next, until `request.maxNewTokens`, a stop token, the maximum length or `onToken`
    /// saying stop. Every step runs this plan: the model is not read again.
    Result<GenerationReport> generate(std::shared_ptr<const PlannedModel> planned,
                                      const GenerateRequest& request,
                                      const TokenCallback& onToken = {});

    /// A profile made elsewhere (ONNX Runtime's JSON, the file at `path`) on `graph`'s nodes
    /// (io/ProfileImport.h): an error when the file cannot be read or is no profile of it.
    Result<ProfileImport> importProfile(const Graph& graph, const std::string& path) const;

    /// How many times this session read, planned and instantiated models.
    const SessionCounters& counters() const { return m_counters; }

private:
    friend class SizedRunner;
    /// `planned` for `data`, where the data has other shapes than its open inputs were planned
    /// for, or other values where inputs set shapes (then `note` says how): where only the
    /// sizes of named dimensions differ, the plan itself instantiated at the data's sizes (its
    /// graph's shapes and folded sizes evaluated there, its memory planned for them:
    /// instantiateAtSizes, planAtSizes); otherwise the model read and planned again for the
    /// data. Kept per shape signature, so that a plan run at several shapes one after another
    /// is made once, and instantiated or planned once per shape.
    /// Runs `outcome`'s loaded executor on `inputs` with `options`, and, where a device fails
    /// or drifts (RunRequest::failover, adapt), plans again and runs the rest of the iterations
    /// on the new program (session/RunAdaptation.h), recording each change in outcome.events.
    Result<RunResult> runSegments(std::shared_ptr<const PlannedModel> planned,
                                  const RunRequest& request, const std::vector<Device*>& mapping,
                                  std::vector<HostTensor> inputs, RunOptions options,
                                  const RunCallbacks& callbacks, RunOutcome& outcome);

    Result<std::shared_ptr<const PlannedModel>>
    forData(std::shared_ptr<const PlannedModel> planned,
            const std::vector<std::pair<std::string, HostTensor>>& data, std::string* note);

    std::string m_workspace;
    /// Shared with every RunOutcome, whose executor runs on its devices.
    std::shared_ptr<DeviceRegistry> m_registry;
    std::mutex m_running;
    struct Specialised {
        std::weak_ptr<const PlannedModel> base;
        std::string signature;
        std::shared_ptr<const PlannedModel> planned;
        std::string note; ///< how it was made
    };
    SessionCounters m_counters;
    std::vector<Specialised> m_specialised; ///< the latest first, at most a few
    /// Constants packed or uploaded by one run, kept for the next (vm/ConstantCache.h):
    /// declared after the registry, so freed before its devices go.
    std::shared_ptr<ConstantCache> m_constants;
    /// The program the latest run loaded, with its mapping and graph, which the next run of the
    /// same plan on the same devices runs again instead of lowering and loading anew (a call in
    /// a loop then costs its kernels). Dropped when another plan runs, before that one maps
    /// its devices; declared last, so freed first.
    struct LoadedRun;
    std::shared_ptr<LoadedRun> m_loaded;
};

/// Reads the model `source` names, against `devices` when given (as loadModelFile does).
Result<LoadedModel> loadSource(const ModelSource& source, const std::optional<DeviceSet>& devices);
/// Records `outcome` in an open workspace against plan `name`, as Session::recordRun does.
Status recordRunIn(store::PlanStore& workspace, const RunOutcome& outcome, const std::string& name,
                   bool* saved = nullptr);
/// What the workspace keeps of a generation (Session::recordGeneration, the GUI's Generate).
store::GenerationRecord generationRecord(const GenerationReport& report);
/// Keeps `outcome`'s node medians in an open workspace's cost table, as Session::recordCosts.
Result<std::size_t> recordCostsIn(store::PlanStore& workspace, const RunOutcome& outcome);
/// The cost model of `devices` from an open workspace (none: assumed rates), as
/// Session::costs.
CostModel machineCosts(const DeviceSet& devices, store::PlanStore* workspace,
                       const std::vector<DeviceMapRequest>& maps = {}, bool optimize = true);

} // namespace placer
