// Auto mode and the prediction (plan/DevicePlanner.h): the placement problem of the graph,
// placement by cost (plan/AutoPlacer.h) with memory capacities held by streaming constants or
// moving work, and the schedule a plan predicts from its cost model, which a run is later
// checked against.
#include "plan/DevicePlanner.h"
#include "plan/ExecutionOrder.h"
#include "plan/RunSimulator.h"

#include "plan/MemoryPlanner.h"
#include "plan/PipelineStages.h"
#include "plan/Split.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace placer {

namespace {

/// How much faster than the best single device a split must be predicted before auto mode
/// takes it.
constexpr double kSplitMargin = 0.2;

} // namespace

const CostModel& DevicePlanner::costs() {
    if (m_options.costs && m_options.costs->deviceCount() == m_devices.size())
        return *m_options.costs;
    if (!m_assumedCosts)
        m_assumedCosts = CostModel::assumed(m_devices);
    return *m_assumedCosts;
}

CostModel::NodeCost DevicePlanner::nodeCost(std::uint32_t i, int d) {
    const CostModel& model = costs();
    PlanWorkspace::NodeCosts& cache = m_workspace.nodeCosts;
    const std::size_t n = m_index.size();
    const int devices = m_devices.size();
    if (cache.revision != costGraph().revision() || cache.model != model.stamp() ||
        cache.devices != devices || cache.micros.size() != n * static_cast<std::size_t>(devices)) {
        cache.revision = costGraph().revision();
        cache.model = model.stamp();
        cache.devices = devices;
        cache.micros.assign(n * static_cast<std::size_t>(devices),
                            std::numeric_limits<double>::quiet_NaN());
        cache.measured.assign(cache.micros.size(), 0);
    }
    const std::size_t k = static_cast<std::size_t>(i) * static_cast<std::size_t>(devices) +
                          static_cast<std::size_t>(d);
    if (std::isnan(cache.micros[k])) {
        const CostModel::NodeCost cost = model.nodeCost(costGraph(), NodeId(i), DeviceId(d));
        cache.micros[k] = cost.micros;
        cache.measured[k] = cost.measured ? 1 : 0;
    }
    return {cache.micros[k], cache.measured[k] != 0};
}

PlacementProblem DevicePlanner::buildProblem(const std::vector<std::int64_t>& budget) {
    const CostModel& model = costs();
    const std::size_t n = m_index.size();
    const int deviceCount = m_devices.size();
    m_taskOf.assign(n, -1);
    m_nodeOfTask.clear();
    for (std::uint32_t i = 0; i < n; ++i) {
        const OpRole role = m_index.role[i];
        if (role == OpRole::Compute || role == OpRole::DeviceCopy ||
            (role == OpRole::Parameter && m_fixed[i].valid())) {
            m_taskOf[i] = static_cast<std::int32_t>(m_nodeOfTask.size());
            m_nodeOfTask.push_back(i);
        }
    }
    PlacementProblem problem;
    problem.devices = deviceCount;
    for (int d = 0; d < deviceCount; ++d) {
        problem.resourceOf.push_back(model.resourceOf(DeviceId(d)));
        problem.runMicros.push_back(model.physical(DeviceId(d)).runMicros);
        problem.taskOverheadMicros.push_back(model.physical(DeviceId(d)).launchMicros +
                                             model.physical(DeviceId(d)).dispatchMicros);
    }
    problem.linkLatency.resize(static_cast<std::size_t>(deviceCount * deviceCount));
    problem.linkBytesPerMicro.resize(problem.linkLatency.size());
    for (int a = 0; a < deviceCount; ++a) {
        for (int b = 0; b < deviceCount; ++b) {
            const auto k = static_cast<std::size_t>(a * deviceCount + b);
            if (a == b || model.resourceOf(DeviceId(a)) == model.resourceOf(DeviceId(b))) {
                problem.linkLatency[k] = 0;
                problem.linkBytesPerMicro[k] = 1e300;
                continue;
            }
            const LinkProfile link = model.link(DeviceId(a), DeviceId(b));
            problem.linkLatency[k] = link.latencyMicros;
            problem.linkBytesPerMicro[k] = link.bytesPerMicro;
        }
    }
    problem.capacity = budget;
    // A 4-D value that leaves a CPU device leaves its channels-last layout: the runtime
    // transposes it on the way out and again on the way in (passes/PassManager.h), two passes
    // over its bytes at about a third of the device's memory bandwidth each.
    double layoutMicrosPerByte = 0;
    int cpuDevices = 0;
    for (int d = 0; d < deviceCount; ++d) {
        const DeviceProfile& profile = model.physical(DeviceId(d));
        if (profile.gpu)
            continue;
        ++cpuDevices;
        layoutMicrosPerByte = std::max(layoutMicrosPerByte, 2 * 3 / profile.bytesPerMicro);
    }
    if (cpuDevices == 0)
        layoutMicrosPerByte = 0;
    std::unordered_map<std::uint32_t, std::uint32_t> weightOf;
    std::vector<double> cost(static_cast<std::size_t>(deviceCount));
    std::vector<std::pair<std::uint32_t, std::uint32_t>> consumed; // (task, output)
    for (std::uint32_t i : m_nodeOfTask) {
        const bool compute = m_index.role[i] == OpRole::Compute;
        int fixed = m_fixed[i].valid() ? m_fixed[i].index : -1;
        bool any = false;
        for (int d = 0; d < deviceCount; ++d) {
            // canRun takes any device for a parameter or copy, but none out of service.
            const bool runs = canRun(i, DeviceId(d));
            cost[static_cast<std::size_t>(d)] = !runs     ? kCannotRun
                                                : compute ? nodeCost(i, d).micros
                                                          : 0;
            any = any || (runs && (fixed < 0 || fixed == d));
        }
        if (!any) {
            // No device can run it (a conflict already says so): it stays where it is.
            std::fill(cost.begin(), cost.end(), 0.0);
            fixed = m_plan.devices[i].valid() ? m_plan.devices[i].index : 0;
        }
        problem.addTask(cost, fixed, !compute);
        consumed.clear();
        for (std::uint32_t e = m_index.consumerOffsets[i]; e < m_index.consumerOffsets[i + 1];
             ++e) {
            const std::int32_t task = m_taskOf[m_index.consumer[e]];
            if (task >= 0)
                consumed.emplace_back(static_cast<std::uint32_t>(task), m_index.consumedOutput[e]);
        }
        std::sort(consumed.begin(), consumed.end());
        consumed.erase(std::unique(consumed.begin(), consumed.end()), consumed.end());
        for (std::size_t k = 0; k < consumed.size(); ++k) {
            std::int64_t bytes = 0, layoutBytes = 0;
            const std::uint32_t target = consumed[k].first;
            for (; k < consumed.size() && consumed[k].first == target; ++k) {
                const std::int64_t b = costBytes(i, consumed[k].second);
                bytes += b;
                if (m_index.valueRank[m_index.outputBase[i] + consumed[k].second] == 4)
                    layoutBytes += b;
            }
            --k;
            problem.addEdge(target, bytes, static_cast<double>(layoutBytes) * layoutMicrosPerByte);
        }
        std::int64_t outputs = 0;
        for (std::uint32_t v = m_index.outputBase[i]; v < m_index.outputBase[i + 1]; ++v)
            outputs += m_index.valueBytes[v];
        problem.outputBytes.back() = outputs;
        for (std::uint32_t e = m_index.inputOffsets[i]; e < m_index.inputOffsets[i + 1]; ++e) {
            const std::uint32_t p = m_index.inputNode[e];
            if (!m_index.isConstant(p))
                continue;
            const auto [it, added] =
                weightOf.emplace(p, static_cast<std::uint32_t>(problem.weightBytes.size()));
            if (added)
                problem.weightBytes.push_back(
                    m_index.valueBytes[m_index.valueSlot({NodeId(p), m_index.inputOutput[e]})]);
            problem.addWeight(it->second);
        }
    }
    return problem;
}

void DevicePlanner::placeByCost() {
    const int deviceCount = m_devices.size();
    std::vector<std::int64_t> capacities(static_cast<std::size_t>(deviceCount), -1);
    for (int d = 0; d < deviceCount; ++d) {
        if (const auto& capacity = m_devices[DeviceId(d)].memoryCapacity)
            capacities[static_cast<std::size_t>(d)] = *capacity;
    }
    const bool limited = m_options.planMemory && std::any_of(capacities.begin(), capacities.end(),
                                                             [](std::int64_t c) { return c >= 0; });
    const std::vector<DeviceId> demand = m_plan.devices;
    const std::vector<Reason> demandReasons = m_plan.reasons;
    const std::size_t conflicts = m_plan.conflicts.size();
    // The plans that fit, the fastest kept.
    struct Fitting {
        Plan plan;
        AutoPlacement placement;
        PlacementProblem problem;
        std::set<std::pair<std::uint32_t, std::int32_t>> streamed;
        double makespan = 0;
    };
    std::optional<Fitting> best;
    const auto keep = [&] {
        const double makespan = predictedMakespan();
        if (!best || makespan < best->makespan)
            best = Fitting{m_plan, m_auto, m_problem, m_streamed, makespan};
    };
    const auto fits = [](const std::vector<std::int64_t>& excess) {
        return std::all_of(excess.begin(), excess.end(), [](std::int64_t e) { return e <= 0; });
    };
    // Where a device's memory is limited, two ways to fit it, and the prediction picks the
    // faster: first, place as if the constants needed not stay on it, then stream those it
    // cannot keep (copied in on every run); second, keep them, and place again with the
    // device's budget cut by the excess while the memory plan overflows (the search's
    // estimate of a device's memory is not the memory plan), streaming where that fits.
    bool finished = false;
    for (int variant = limited ? 0 : 1; variant < 2; ++variant) {
        const bool weightsMayLeave = variant == 0;
        std::vector<std::int64_t> budget = capacities;
        std::vector<int> previous;
        for (int attempt = 0;; ++attempt) {
            placeWithin(budget, demand, demandReasons, weightsMayLeave);
            if (m_auto.assignment == previous) {
                // A smaller budget moved nothing: nothing new to try.
                finishPlacement(conflicts);
                finished = true;
                break;
            }
            previous = m_auto.assignment;
            const std::vector<DeviceId> placed = m_plan.devices;
            const std::vector<Reason> placedReasons = m_plan.reasons;
            finishPlacement(conflicts);
            if (!m_options.planMemory)
                return;
            const std::vector<std::int64_t> excess = overflow();
            if (fits(excess)) {
                if (limited)
                    keep();
                finished = true;
                break;
            }
            std::vector<std::int64_t> still = excess;
            for (int round = 0; round < 3 && streamConstants(still); ++round) {
                finishPlacement(conflicts);
                still = overflow();
                if (fits(still)) {
                    keep();
                    break;
                }
            }
            m_streamed = m_copiedConstants;
            m_plan.devices = placed;
            m_plan.reasons = placedReasons;
            finished = false;
            if (weightsMayLeave)
                break;
            bool cut = false;
            for (std::size_t k = 0; k < excess.size(); ++k) {
                if (excess[k] > 0 && budget[k] > 0) {
                    budget[k] = std::max<std::int64_t>(0, budget[k] - excess[k]);
                    cut = true;
                }
            }
            if (!cut || attempt == 4)
                break;
        }
    }
    if (best) {
        m_plan = std::move(best->plan);
        m_auto = std::move(best->placement);
        m_problem = std::move(best->problem);
        m_streamed = std::move(best->streamed);
    } else if (!finished) {
        finishPlacement(conflicts); // nothing fits: the last placement, with its conflicts
    }
    checkCapacities();
}

void DevicePlanner::placeWithin(const std::vector<std::int64_t>& budget,
                                const std::vector<DeviceId>& demand,
                                const std::vector<Reason>& demandReasons, bool weightsMayLeave) {
    const int deviceCount = m_devices.size();
    m_streamed = m_copiedConstants;
    m_plan.devices = demand;
    m_plan.reasons = demandReasons;
    PlacementProblem problem = buildProblem(budget);
    // Pipeline stages hold every constant they read (pipelineStages).
    std::optional<PlacementProblem> withWeights;
    const bool pipelined = m_options.microBatches > 1 || m_options.streamBatches > 1;
    if (pipelined) {
        withWeights = problem;
        costMicroBatches(*withWeights);
    }
    if (weightsMayLeave)
        std::fill(problem.weightBytes.begin(), problem.weightBytes.end(), 0);
    AutoPlaceOptions options;
    options.exact = m_options.exact;
    // Plans live in the GUI on every edit: under 10 ms of search on a graph of
    // ResNet-50's size, and bounded on any graph.
    options.searchWork = 6e5;
    // Measured on this project's models with two vcpus on two cores: splits the
    // model predicted 5-20 % faster ran slower (cores share memory bandwidth and
    // caches, layout changes at every crossing), those predicted over 20 % faster ran
    // faster. So a split over CPU devices alone must promise more than that.
    bool cpusOnly = true;
    for (int d = 0; d < deviceCount; ++d)
        cpusOnly = cpusOnly && !costs().physical(DeviceId(d)).gpu;
    options.splitMargin = cpusOnly ? kSplitMargin : 0.0;
    options.preferredDevice =
        m_devices.defaultDevice().valid() ? m_devices.defaultDevice().index : -1;
    std::vector<int> seed(m_nodeOfTask.size());
    for (std::size_t t = 0; t < seed.size(); ++t)
        seed[t] = demand[m_nodeOfTask[t]].index;
    options.seeds.push_back(std::move(seed));
    m_auto = autoPlace(problem, options);
    m_problem = std::move(problem);
    m_stagesNote.clear();
    if (pipelined) {
        // Pipelined: contiguous stages by the stage model (plan/PipelineStages.h), within the
        // devices' memory with every constant kept, unless the search's own placement is
        // predicted faster pipelined.
        pipelineStages(*withWeights, m_auto.assignment);
    } else if (m_auto.heftAssignment != m_auto.assignment &&
               fusedMakespan(m_auto.heftAssignment, demand) <
                   fusedMakespan(m_auto.assignment, demand)) {
        // The search costs ops one by one; a run fuses post-ops on CPU devices, which changes
        // what each placement costs. Where HEFT's placement is predicted shorter with its fused
        // groups counted, it is the better one.
        m_auto.assignment = m_auto.heftAssignment;
        m_auto.schedule = simulate(m_problem, m_auto.assignment);
    }
    for (std::size_t t = 0; t < m_nodeOfTask.size(); ++t) {
        const std::uint32_t i = m_nodeOfTask[t];
        if (m_fixed[i].valid() || m_index.role[i] != OpRole::Compute)
            continue;
        m_plan.devices[i] = DeviceId(m_auto.assignment[t]);
        m_plan.reasons[i] = Reason{};
        m_plan.reasons[i].kind = ReasonKind::Auto;
    }
    // Inputs and constants follow their consumers, as in demand mode.
    for (std::uint32_t i = static_cast<std::uint32_t>(m_index.size()); i-- > 0;) {
        if (m_taskOf[i] >= 0 || m_fixed[i].valid())
            continue;
        m_plan.reasons[i] = Reason{};
        m_plan.devices[i] = voteByConsumers(i, &m_plan.reasons[i]);
    }
}

void DevicePlanner::costMicroBatches(PlacementProblem& problem) {
    const int m = std::max(m_options.microBatches, 1);
    SplitAnalysis analysis = analyzeSplits(costGraph(), m_devices, {microBatchRequest()});
    if (analysis.regions.empty() || analysis.regions.front().nodes.empty() ||
        analysis.regions.front().shards.empty())
        return; // nothing is cut (a batch smaller than M): the whole batch's costs stand
    Plan cut;
    cut.devices = m_plan.devices;
    cut.splits = std::move(analysis.regions);
    const ShardedGraph sharded = shardGraph(costGraph(), cut);
    const Graph& graph = sharded.graph;
    const CostModel& model = costs();
    const std::size_t n = m_index.size();
    for (int d = 0; d < problem.devices; ++d) {
        const DeviceId device(d);
        // Fused as a run with every op on d fuses (a stage's ops are contiguous: only the
        // groups a cut crosses differ).
        const std::vector<NodeId> fusedInto =
            model.fusedGroups(graph, std::vector<DeviceId>(graph.size(), device));
        const auto members = CostModel::membersByHead(fusedInto);
        // Per user node: its kernels' time over its micro-batches, their count, and whether it
        // runs once on the whole batch (an op that mixes rows).
        std::vector<double> micros(n, 0);
        std::vector<int> kernels(n, 0);
        std::vector<std::uint8_t> whole(n, 0);
        for (std::uint32_t j = 0; j < graph.size() && j < sharded.origin.size(); ++j) {
            const NodeId user = sharded.origin[j];
            if (!user.valid() || user.index >= n || graph.node(NodeId(j)).role() != OpRole::Compute)
                continue;
            double time = 0;
            if (j < fusedInto.size() && fusedInto[j].valid() && fusedInto[j].index != j)
                time = 0; // in its head's kernel
            else if (const auto group = members.find(j); group != members.end())
                time = model.groupCost(graph, NodeId(j), group->second, device).micros;
            else
                time = model.nodeCost(graph, NodeId(j), device).micros;
            micros[user.index] += time;
            ++kernels[user.index];
            whole[user.index] = whole[user.index] || sharded.shard[j] < 0;
        }
        const double overhead = static_cast<std::size_t>(d) < problem.taskOverheadMicros.size()
                                    ? problem.taskOverheadMicros[static_cast<std::size_t>(d)]
                                    : 0.0;
        for (std::size_t t = 0; t < m_nodeOfTask.size(); ++t) {
            const std::uint32_t i = m_nodeOfTask[t];
            double& cost = problem.cost[t * static_cast<std::size_t>(problem.devices) +
                                        static_cast<std::size_t>(d)];
            if (kernels[i] == 0 || cost == kCannotRun || m_index.role[i] != OpRole::Compute)
                continue;
            if (whole[i]) {
                cost = micros[i]; // once for the batch, as the stage model spreads it
                continue;
            }
            // What the stage model reads back as one micro-batch's time (taskPerMicroBatch):
            // the fixed overhead once, the rest shared by the micro-batches.
            const double perMicroBatch = micros[i] / kernels[i];
            cost = perMicroBatch < overhead ? perMicroBatch
                                            : overhead + m * (perMicroBatch - overhead);
        }
    }
}

void DevicePlanner::pipelineStages(const PlacementProblem& kept, const std::vector<int>& searched) {
    const int m = std::max(m_options.microBatches, 1);
    const int batches = std::max(m_options.streamBatches, 1);
    PipelineStageOptions stageOptions;
    stageOptions.batches = batches;
    const auto chosen = choosePipelineStages(kept, m, stageOptions);
    std::vector<PipelineStage> searchedStages;
    const double searchedLatency = pipelinedLatency(kept, searched, m, &searchedStages, batches);
    // What flows through: "8 micro-batches", "a stream of 4 batches in 2 micro-batches".
    const std::string flow =
        batches > 1 ? "a stream of " + std::to_string(batches) + " batches" +
                          (m > 1 ? " in " + std::to_string(m) + " micro-batches" : std::string())
                    : std::to_string(m) + " micro-batches";
    // The search's own placement is kept where it is predicted faster and fits the devices'
    // memory as the stages must (with measured times that favour one device, it may put every
    // weight on a device that cannot hold them).
    std::vector<std::int64_t> held(static_cast<std::size_t>(kept.devices), 0);
    for (const PipelineStage& stage : searchedStages) {
        if (stage.device >= 0 && stage.device < kept.devices)
            held[static_cast<std::size_t>(stage.device)] +=
                stageMemoryBytes(kept, stage.begin, stage.end, m);
    }
    bool searchedFits = true;
    for (std::size_t d = 0; d < held.size() && d < kept.capacity.size(); ++d)
        searchedFits = searchedFits && (kept.capacity[d] < 0 || held[d] <= kept.capacity[d]);
    if (!chosen || (searchedLatency < chosen->latencyMicros && searchedFits)) {
        m_stagesNote = "auto mode kept its own placement for " + flow +
                       (chosen ? "" : ": no contiguous stages fit the devices' memory");
        return;
    }
    m_auto.assignment = chosen->assignment;
    m_auto.schedule = simulate(m_problem, m_auto.assignment);
    // "pipeline stages for 8 micro-batches: a runs conv1 .. layer2 (12.1 ms a micro-batch), ..."
    const auto nodeName = [&](std::size_t task) { return node(m_nodeOfTask[task]).name; };
    std::string note = "pipeline stages for " + flow +
                       (chosen->exact ? ""
                                      : " (cut at " + std::to_string(chosen->positions) +
                                            " evenly spaced positions)") +
                       ":";
    for (std::size_t k = 0; k < chosen->stages.size(); ++k) {
        const PipelineStage& stage = chosen->stages[k];
        std::size_t first = stage.begin, last = stage.end;
        while (first < stage.end && kept.instant[first])
            ++first;
        while (last > first && kept.instant[last - 1])
            --last;
        note += std::string(k ? "," : "") + " " + m_devices[DeviceId(stage.device)].name +
                " runs " +
                (first < last ? nodeName(first) + " .. " + nodeName(last - 1) : "nothing") + " (" +
                formatMillis(stage.computeMicros) + " a micro-batch)";
    }
    m_stagesNote = note + "; predicted " + formatMillis(chosen->latencyMicros) +
                   (batches > 1 ? " for the stream" : " for the batch");
}

void DevicePlanner::finishPlacement(std::size_t conflicts) {
    m_plan.copies.clear();
    m_plan.replicas.clear();
    m_plan.notes.clear();
    if (!m_stagesNote.empty())
        m_plan.notes.push_back(m_stagesNote);
    m_plan.conflicts.resize(conflicts);
    reportUnsupportedOps();
    insertCopies();
    if (m_options.planMemory)
        m_plan.memory = planMemory(m_graph, m_workspace, m_devices, m_plan);
}

std::vector<std::int64_t> DevicePlanner::overflow() const {
    std::vector<std::int64_t> excess(static_cast<std::size_t>(m_devices.size()), 0);
    for (const DeviceMemory& memory : m_plan.memory.devices) {
        const auto& capacity = m_devices[memory.device].memoryCapacity;
        if (capacity && memory.peakBytes > *capacity)
            excess[static_cast<std::size_t>(memory.device.index)] = memory.peakBytes - *capacity;
    }
    return excess;
}

bool DevicePlanner::streamConstants(const std::vector<std::int64_t>& excess) {
    bool any = false;
    for (int d = 0; d < m_devices.size(); ++d) {
        if (excess[static_cast<std::size_t>(d)] <= 0)
            continue;
        std::vector<std::pair<std::int64_t, std::uint32_t>> kept; // (bytes, constant)
        for (std::uint32_t p = 0; p < m_index.size(); ++p) {
            if (!m_index.isConstant(p) || m_fixed[p].valid() || m_streamed.count({p, d}))
                continue;
            bool readHere = false;
            for (std::uint32_t e = m_index.consumerOffsets[p];
                 e < m_index.consumerOffsets[p + 1] && !readHere; ++e) {
                const std::uint32_t c = m_index.consumer[e];
                readHere = !m_index.isDeviceCopy(c) && m_plan.devices[c] == DeviceId(d);
            }
            if (readHere)
                kept.emplace_back(m_index.valueBytes[m_index.outputBase[p]], p);
        }
        std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
            return a.first != b.first ? a.first > b.first : a.second < b.second;
        });
        std::int64_t freed = 0;
        for (const auto& [bytes, p] : kept) {
            if (freed >= excess[static_cast<std::size_t>(d)])
                break;
            if (m_plan.devices[p] == DeviceId(d)) {
                const DeviceId home = roomFor(bytes, DeviceId(d));
                if (!home.valid())
                    continue;
                m_plan.devices[p] = home;
                m_plan.reasons[p] = Reason{};
                m_plan.reasons[p].kind = ReasonKind::Offloaded;
                m_plan.reasons[p].wanted = DeviceId(d);
            }
            m_streamed.insert({p, d});
            freed += bytes;
            any = true;
        }
    }
    return any;
}

DeviceId DevicePlanner::roomFor(std::int64_t bytes, DeviceId full) const {
    DeviceId best;
    std::int64_t bestRoom = -1;
    for (int d = 0; d < m_devices.size(); ++d) {
        if (DeviceId(d) == full)
            continue;
        const auto& capacity = m_devices[DeviceId(d)].memoryCapacity;
        std::int64_t room = std::numeric_limits<std::int64_t>::max();
        if (capacity) {
            std::int64_t peak = 0;
            for (const DeviceMemory& memory : m_plan.memory.devices)
                peak = memory.device == DeviceId(d) ? memory.peakBytes : peak;
            room = *capacity - peak;
        }
        if (room >= bytes && room > bestRoom) {
            best = DeviceId(d);
            bestRoom = room;
        }
    }
    return best;
}

PlacementProblem DevicePlanner::predictionProblem(
    const std::vector<int>& assignment, const std::vector<NodeId>& fusedInto,
    std::map<std::uint32_t, std::vector<NodeId>>* members, bool constantCopies) {
    const CostModel& model = costs();
    const std::size_t n = m_index.size();
    PlacementProblem problem = m_problem;
    *members = CostModel::membersByHead(fusedInto);
    // A pipelined graph's micro-batches, which the executor runs in order.
    if (runsInMicroBatches(m_graph)) {
        problem.wave.assign(problem.tasks(), -1);
        for (std::size_t t = 0; t < problem.tasks() && t < m_nodeOfTask.size(); ++t)
            problem.wave[t] = m_graph.nodes()[m_nodeOfTask[t]].microBatch;
    }
    for (const auto& [head, group] : *members) {
        for (const NodeId member : group) {
            if (member.index < n && m_taskOf[member.index] >= 0)
                problem.instant[static_cast<std::size_t>(m_taskOf[member.index])] = 1;
        }
        if (head >= n || m_taskOf[head] < 0)
            continue;
        const auto t = static_cast<std::size_t>(m_taskOf[head]);
        const DeviceId d(assignment[t]);
        problem.cost[t * static_cast<std::size_t>(problem.devices) +
                     static_cast<std::size_t>(d.index)] =
            model.groupCost(costGraph(), NodeId(head), group, d).micros;
    }
    for (const CopyPlan& copy : m_plan.copies) {
        if (!constantCopies || !m_index.isConstant(copy.value.node.index))
            continue;
        const double arrives = model.copyMicros(copy.bytes, copy.from, copy.to);
        for (const NodeId consumer : copy.consumers) {
            const std::int32_t t = m_taskOf[consumer.index];
            if (t < 0)
                continue;
            problem.release.resize(problem.tasks(), 0.0);
            double& release = problem.release[static_cast<std::size_t>(t)];
            release = std::max(release, arrives);
        }
    }
    return problem;
}

double DevicePlanner::fusedMakespan(const std::vector<int>& assignment,
                                    const std::vector<DeviceId>& others) {
    std::vector<DeviceId> devices = others;
    for (std::size_t t = 0; t < assignment.size(); ++t)
        devices[m_nodeOfTask[t]] = DeviceId(assignment[t]);
    std::map<std::uint32_t, std::vector<NodeId>> members;
    const PlacementProblem problem =
        predictionProblem(assignment, costs().fusedGroups(m_graph, devices), &members, false);
    return simulate(problem, assignment).makespan;
}

std::vector<int> DevicePlanner::currentAssignment() const {
    std::vector<int> assignment(m_nodeOfTask.size());
    for (std::size_t t = 0; t < assignment.size(); ++t) {
        const DeviceId d = m_plan.devices[m_nodeOfTask[t]];
        assignment[t] = d.valid() ? d.index : 0;
    }
    return assignment;
}

double DevicePlanner::predictedMakespan() {
    const std::vector<int> assignment = currentAssignment();
    std::map<std::uint32_t, std::vector<NodeId>> members;
    const PlacementProblem problem =
        predictionProblem(assignment, costs().fusedGroups(m_graph, m_plan.devices), &members);
    return simulate(problem, assignment).makespan;
}

void DevicePlanner::predict(bool problemBuilt) {
    if (!problemBuilt)
        m_problem =
            buildProblem(std::vector<std::int64_t>(static_cast<std::size_t>(m_devices.size()), -1));
    const std::size_t n = m_index.size();
    const std::vector<int> assignment = currentAssignment();
    const CostModel& model = costs();
    const std::vector<NodeId> fusedInto = model.fusedGroups(m_graph, m_plan.devices);
    std::map<std::uint32_t, std::vector<NodeId>> members; // by head
    const PlacementProblem problem = predictionProblem(assignment, fusedInto, &members);
    const SimulatedSchedule schedule = simulate(problem, assignment);
    Prediction p;
    p.makespanMicros = schedule.makespan;
    p.start.assign(n, 0);
    p.end.assign(n, 0);
    p.micros.assign(n, 0);
    p.measured.assign(n, 0);
    p.copyInMicros.assign(n, 0);
    p.alternative.assign(n, DeviceId());
    p.alternativeMicros.assign(n, 0);
    p.deviceBusyMicros.assign(static_cast<std::size_t>(m_devices.size()), 0);
    const int deviceCount = m_devices.size();
    // Copies into each task, per device it could take: (source task, bytes).
    // Flat: for task t, intoEdge/intoSource[intoOffset[t] .. intoOffset[t + 1]).
    std::vector<std::uint32_t> intoOffset(assignment.size() + 1, 0);
    for (std::uint32_t e = 0; e < problem.edgeOffset[assignment.size()]; ++e)
        ++intoOffset[problem.edgeTarget[e] + 1];
    for (std::size_t t = 0; t < assignment.size(); ++t)
        intoOffset[t + 1] += intoOffset[t];
    std::vector<std::uint32_t> intoEdge(intoOffset.back()), intoSource(intoOffset.back());
    {
        std::vector<std::uint32_t> fill(intoOffset.begin(), intoOffset.end() - 1);
        for (std::uint32_t t = 0; t < assignment.size(); ++t) {
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
                const std::uint32_t at = fill[problem.edgeTarget[e]]++;
                intoEdge[at] = e;
                intoSource[at] = t;
            }
        }
    }
    const auto copyIn = [&](std::size_t t, int d) {
        double total = 0;
        for (std::uint32_t k = intoOffset[t]; k < intoOffset[t + 1]; ++k)
            total += problem.edgeMicros(intoEdge[k], assignment[intoSource[k]], d);
        return total;
    };
    p.fusedInto.assign(n, NodeId());
    for (std::size_t t = 0; t < assignment.size(); ++t) {
        const std::uint32_t i = m_nodeOfTask[t];
        const int d = assignment[t];
        p.start[i] = schedule.start[t];
        p.end[i] = schedule.end[t];
        if (m_problem.instant[t])
            continue;
        const bool isAbsorbed = problem.instant[t] != 0;
        const auto group = members.find(i);
        // What the node (with its group, for a head) takes on device `at`.
        const auto costOn = [&](int at) {
            return group == members.end()
                       ? nodeCost(i, at)
                       : model.groupCost(costGraph(), NodeId(i), group->second, DeviceId(at));
        };
        if (isAbsorbed) {
            p.fusedInto[i] = fusedInto[i];
        } else {
            // The kernel's own time, as a run measures it: the executor's dispatch is in
            // the schedule, not in the node's time.
            const double own = problem.taskCost(t, d);
            p.micros[i] = own == kCannotRun
                              ? 0
                              : std::max(0.0, own - model.physical(DeviceId(d)).dispatchMicros);
            p.measured[i] = m_options.costs && !model.measured().empty() && costOn(d).measured;
            p.deviceBusyMicros[static_cast<std::size_t>(d)] += p.micros[i];
        }
        p.copyInMicros[i] = copyIn(t, d) + (problem.release.empty() ? 0.0 : problem.release[t]);
        if (m_plan.reasons[i].kind != ReasonKind::Auto)
            continue;
        double bestOther = kCannotRun;
        for (int other = 0; other < deviceCount; ++other) {
            if (other == d || !m_problem.allowed(t, other))
                continue;
            const double there = costOn(other).micros + copyIn(t, other);
            if (there < bestOther) {
                bestOther = there;
                p.alternative[i] = DeviceId(other);
            }
        }
        p.alternativeMicros[i] = bestOther == kCannotRun ? 0 : bestOther;
    }
    if (m_options.mode == PlanMode::Auto) {
        // HEFT's placement as this prediction costs it (fused groups counted), where the search
        // kept its assignment: what auto mode is set against.
        p.heftMicros = m_auto.heftAssignment.size() == assignment.size()
                           ? fusedMakespan(m_auto.heftAssignment, m_plan.devices)
                           : m_auto.heftMakespan;
        p.singleDeviceMicros = m_auto.bestSingleDevice;
        p.evaluations = m_auto.evaluations;
        p.exactStatus = m_auto.exactStatus;
        p.exactOptimumMicros = m_auto.exactOptimum;
        p.keptSingleDevice = m_auto.keptSingleDevice;
    }
    m_plan.prediction = std::move(p);
    if (m_options.simulate)
        m_plan.simulation = simulateOnDevices(problem, assignment);
}

std::shared_ptr<const Simulation>
DevicePlanner::simulateOnDevices(const PlacementProblem& problem,
                                 const std::vector<int>& assignment) {
    const CostModel& model = costs();
    SimulatedMachine machine;
    // A physical device named "host/device" (a machine file's, another rank's) is on that host.
    std::map<std::string, int> hosts;
    for (int d = 0; d < m_devices.size(); ++d) {
        const DeviceProfile& profile = model.physical(DeviceId(d));
        machine.asynchronous.push_back(profile.gpu ? 1 : 0);
        const std::size_t slash = profile.name.find('/');
        const std::string host = slash == std::string::npos ? "" : profile.name.substr(0, slash);
        machine.host.push_back(hosts.emplace(host, static_cast<int>(hosts.size())).first->second);
    }
    const SimulatedRun run = simulateRun(problem, assignment, machine);
    auto out = std::make_shared<Simulation>();
    const std::size_t n = m_index.size();
    out->start.assign(n, 0);
    out->end.assign(n, 0);
    for (std::size_t t = 0; t < assignment.size(); ++t) {
        const std::uint32_t i = m_nodeOfTask[t];
        out->start[i] = run.start[t];
        out->end[i] = run.end[t];
    }
    for (const SimulatedTransfer& transfer : run.transfers) {
        out->transfers.push_back(Simulation::Transfer{
            NodeId(m_nodeOfTask[transfer.source]), DeviceId(transfer.from), DeviceId(transfer.to),
            transfer.bytes, transfer.start, transfer.end, transfer.alone, transfer.betweenHosts});
    }
    out->makespanMicros = run.makespan;
    out->computeMicros = run.computeMicros;
    out->launchMicros = run.launchMicros;
    out->copyMicros = run.copyMicros;
    out->contentionMicros = run.contentionMicros;
    out->runOverheadMicros = run.runOverheadMicros;
    out->deviceBusyMicros = run.deviceBusyMicros;
    return out;
}

} // namespace placer
