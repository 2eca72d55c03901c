// The session (session/Session.h): loading, planning, costs, calibration and the workspace.
// Compiling and running are in RunPipeline.cpp.
#include "session/Session.h"

#include "device/DeviceRegistry.h"
#include "device/Ranks.h"
#include "io/TextFile.h"
#include "ir/ConstantFolding.h"
#include "passes/PostOpFusion.h"
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"
#include "vm/ConstantCache.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

namespace placer {

namespace {

/// The device set the request names, with its roles; std::nullopt when it names none.
Result<std::optional<DeviceSet>> requestedDevices(const PlanRequest& request) {
    if (!request.devices)
        return std::optional<DeviceSet>();
    auto set = DeviceSet::parse(*request.devices);
    if (!set)
        return SourceError::sentence("--devices: " + set.error().message);
    return std::optional<DeviceSet>(set.take());
}

/// Sets the default and host devices the request names.
Status chooseRoles(const PlanRequest& request, DeviceSet& devices) {
    for (const auto& [option, name] :
         {std::pair{"--default", request.defaultDevice}, std::pair{"--host", request.hostDevice}}) {
        if (!name)
            continue;
        const auto id = devices.find(*name);
        if (!id)
            return SourceError::sentence(std::string(option) + " " + *name +
                                         ": unknown device (devices: " + devices.namesList() + ")");
        if (std::string_view(option) == "--default")
            devices.setDefaultDevice(*id);
        else
            devices.setHostDevice(*id);
    }
    return {};
}

/// Auto placement on a machine the workspace has no calibration of would place by assumed
/// rates (a CPU core at 100 GFLOP/s, 20 GB/s), far from most machines: calibrate it first (about
/// a second), and keep the result. Returns what to tell the user, if anything.
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

CostModel machineCosts(const DeviceSet& devices, store::PlanStore* workspace,
                       const std::vector<DeviceMapRequest>& maps, bool optimize) {
    static const bool hasCuda = DeviceRegistry().hasKind(DeviceKind::Cuda);
    std::vector<std::pair<std::string, std::string>> mapped;
    for (const DeviceMapRequest& map : maps)
        mapped.emplace_back(map.device, map.physical);
    CostModel model = CostModel::assumed(
        devices, static_cast<int>(std::thread::hardware_concurrency()), mapped, hasCuda);
    if (RankTransport* transport = rankTransport()) {
        std::vector<std::string> hosts;
        for (int r = 0; r < transport->size(); ++r)
            hosts.push_back(transport->hostName(r));
        model.setRankHosts(std::move(hosts));
    }
    // Optimised runs fuse post-ops and written-out layer norms (passes/PostOpFusion.h): predict
    // them so.
    if (optimize)
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

Session::Session(SessionOptions options)
    : m_workspace(options.workspace.empty() ? store::PlanStore::defaultPath()
                                            : std::move(options.workspace)),
      m_registry(std::make_shared<DeviceRegistry>()),
      m_constants(std::make_shared<ConstantCache>()) {
    // Models read through a session fold what is known at load with the kernels a backend offers
    // (the CPU's, which registers itself), whichever front end made it.
    installOfferedConstantEvaluator();
}

Session::~Session() = default;

Result<LoadedModel> Session::load(const ModelSource& source, const PlanRequest& request) const {
    auto devices = requestedDevices(request);
    if (!devices)
        return devices.error();
    std::optional<DeviceSet> set = devices.take();
    if (set) {
        if (Status roles = chooseRoles(request, *set); !roles.ok())
            return roles.error();
    }
    return loadSource(source, set);
}

Result<LoadedModel> loadSource(const ModelSource& source, const std::optional<DeviceSet>& devices) {
    return source.text ? loadModelText(*source.text, source.path, source.format, devices,
                                       source.inputShapes, source.runInputs)
                       : loadModelFile(source.path, source.format, devices, source.inputShapes,
                                       source.runInputs);
}

Result<PlannedModel> Session::open(const ModelSource& source, const PlanRequest& request) {
    auto loaded = load(source, request);
    if (!loaded)
        return loaded.error();
    ++m_counters.modelsRead;
    auto planned = plan(loaded.take(), request);
    if (planned) {
        planned.value().source = source;
        planned.value().source->runInputs.clear();
    }
    return planned;
}

Plan Session::replan(const LoadedModel& model, const PlanOptions& options, PlanWorkspace& workspace,
                     Plan previous) {
    workspace.recycle(std::move(previous));
    std::atomic_ref<int>(m_counters.plansMade).fetch_add(1, std::memory_order_relaxed);
    return planDevices(model.graph, model.devices, options, workspace);
}

Result<PlannedModel> Session::plan(LoadedModel model, const PlanRequest& request) {
    ++m_counters.plansMade;
    PlannedModel planned;
    planned.warnings = model.warnings;
    if (!request.devices) {
        if (Status roles = chooseRoles(request, model.devices); !roles.ok())
            return roles.error();
    }
    if (Status pinned = applyPinRequests(model.graph, model.devices, request.pins); !pinned.ok())
        return pinned.error();
    if (Status valid =
            validateRules(model.graph, model.devices, request.options, &planned.warnings);
        !valid.ok())
        return valid.error();
    PlanOptions options = request.options;
    if (request.machine && !options.costs)
        options.costs =
            std::make_shared<const CostModel>(machineFileCosts(*request.machine, model.devices));
    if (options.mode == PlanMode::Auto && !options.costs) {
        if (auto note = calibrateIfMissing(m_workspace))
            planned.warnings.push_back(*note);
        options.costs =
            std::make_shared<const CostModel>(costs(model.devices, request.maps, request.optimize));
    }
    planned.plan = planDevices(model.graph, model.devices, options);
    planned.options = std::move(options);
    planned.model = std::move(model);
    planned.request = request;
    return planned;
}

CostModel Session::costs(const DeviceSet& devices, const std::vector<DeviceMapRequest>& maps,
                         bool optimize) const {
    if (!std::filesystem::exists(m_workspace))
        return machineCosts(devices, nullptr, maps, optimize);
    auto opened = store::PlanStore::open(m_workspace);
    return machineCosts(devices, opened ? opened.value().get() : nullptr, maps, optimize);
}

Result<Calibration> Session::calibrate(const CalibrationOptions& options,
                                       const CalibrationProgress& progress) {
    std::lock_guard lock(m_running);
    // Under mpirun, rank 0 measures its devices and every rank the links between ranks; rank 0
    // keeps the result.
    Result<Calibration> calibration =
        localRank() == 0
            ? calibrateDevices(devicesToCalibrate(*m_registry), machineName(), options, progress)
            : Result<Calibration>(Calibration{machineName(), {}, {}});
    if (!calibration)
        return calibration.error();
    auto links = measureRankLinks(options);
    if (!links)
        return links.error();
    for (const auto& [pair, link] : links.value())
        calibration.value().links[pair] = link;
    if (localRank() != 0)
        return calibration;
    auto opened = store::PlanStore::open(m_workspace);
    if (!opened)
        return opened.error();
    if (Status saved = opened.value()->saveCalibration(calibration.value()); !saved.ok())
        return saved.error();
    return calibration;
}

Result<std::size_t> recordCostsIn(store::PlanStore& workspace, const RunOutcome& outcome) {
    if (!outcome.executor || outcome.result.latencyMicros.empty())
        return std::size_t{0};
    std::vector<store::MeasuredCost> costs =
        store::measuredCosts(*outcome.userGraph, outcome.userPlan, outcome.ran->fusedInto,
                             outcome.physical, userMedianTimes(outcome));
    // Where the plan splits, each shard at its own shapes (a micro-batch's kernels are not the
    // whole batch's divided).
    for (store::MeasuredCost& cost : store::shardCosts(outcome))
        costs.push_back(std::move(cost));
    if (costs.empty())
        return std::size_t{0};
    if (Status status = workspace.recordCosts(machineName(), costs); !status.ok())
        return status.error();
    return costs.size();
}

namespace {

/// Plan `name` in `workspace` for a run or generation of `plan`: saved when there is none of
/// that name (`saved` says so); an error when the stored one places nodes differently.
Status planKeptAs(store::PlanStore& workspace, const Graph& graph, const DeviceSet& devices,
                  const PlanOptions& options, const Plan& plan, const std::string& name,
                  bool* saved) {
    if (saved)
        *saved = false;
    auto stored = workspace.loadPlan(name);
    if (!stored) {
        if (Status status = workspace.savePlan(name, "", graph, devices, options, plan);
            !status.ok())
            return status;
        if (saved)
            *saved = true;
        return {};
    }
    const auto& kept = stored.value().savedDevices;
    bool same = kept.size() == graph.size();
    for (std::size_t i = 0; same && i < graph.size(); ++i)
        same = plan.devices[i].valid() && kept[i] == devices[plan.devices[i]].name;
    // A split runs its nodes on every shard's device: the splits must agree too.
    same = same && stored.value().options.splits == options.splits;
    if (!same)
        return SourceError::sentence("plan '" + name + "' in " + workspace.path() +
                                     " places nodes differently from the plan that ran; "
                                     "give another plan name");
    return {};
}

} // namespace

Status recordRunIn(store::PlanStore& workspace, const RunOutcome& outcome, const std::string& name,
                   bool* saved) {
    if (!outcome.executor || outcome.result.latencyMicros.empty())
        return SourceError::sentence("the run measured nothing to record");
    // A run that re-placed its work is recorded against the plan it started from.
    if (Status status = planKeptAs(workspace, *outcome.userGraph, outcome.devices,
                                   outcome.startOptions(), outcome.startPlan(), name, saved);
        !status.ok())
        return status;
    return workspace.saveRun(name, store::runRecord(outcome));
}

Status Session::recordGeneration(const PlannedModel& planned, const GenerationReport& report,
                                 const std::string& name, bool* saved) const {
    if (report.steps.empty())
        return SourceError::sentence("the generation made no step to record");
    auto opened = store::PlanStore::open(m_workspace);
    if (!opened)
        return opened.error();
    store::PlanStore& workspace = *opened.value();
    if (Status status = planKeptAs(workspace, planned.model.graph, planned.model.devices,
                                   planned.options, planned.plan, name, saved);
        !status.ok())
        return status;
    return workspace.saveGeneration(name, generationRecord(report));
}

store::GenerationRecord generationRecord(const GenerationReport& report) {
    store::GenerationRecord record;
    record.mapping = report.mapping;
    record.machine = std::to_string(std::thread::hardware_concurrency()) + " cores";
    record.promptTokens = static_cast<int>(report.prompt.size());
    record.newTokens = static_cast<int>(report.tokens.size());
    record.timeToFirstTokenMs = report.timeToFirstTokenMs();
    record.tokensPerSecond = report.decodeTokensPerSecond();
    record.report = generationJson(report);
    return record;
}

Result<ProfileImport> Session::importProfile(const Graph& graph, const std::string& path) const {
    auto text = readTextFile(path);
    if (!text)
        return text.error();
    return importOnnxRuntimeProfile(graph, text.value(), path);
}

Result<std::size_t> Session::recordCosts(const RunOutcome& outcome) const {
    auto opened = store::PlanStore::open(m_workspace);
    if (!opened)
        return opened.error();
    return recordCostsIn(*opened.value(), outcome);
}

Status Session::recordRun(const RunOutcome& outcome, const std::string& name, bool* saved) const {
    auto opened = store::PlanStore::open(m_workspace);
    if (!opened)
        return opened.error();
    return recordRunIn(*opened.value(), outcome, name, saved);
}

} // namespace placer
