// Runs that re-place their work or leave a failed device out while they go
// (session/RunAdaptation.h): the speed watch, and the session's loop over a run's segments, each
// a program that runs until a device drifts or fails.
#include "session/RunAdaptation.h"

#include "device/DeviceRegistry.h"
#include "device/Ranks.h"
#include "plan/Planner.h"
#include "report/RunReport.h"
#include "session/RunSteps.h"
#include "session/Session.h"
#include "store/RunRecords.h"
#include "vm/MemoryCheck.h"
#include "vm/ReferenceRun.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace placer {

namespace {

/// Below this a device's predicted work per iteration is too little to time against it.
constexpr double kMinWatchedMicros = 50;
/// A device predicted less than this share of the busiest device's work is not watched either:
/// its few small ops (the inputs' handling a plan leaves on a device it moved the rest off)
/// time too noisily to say its speed, and a plan made on such a reading moves real work.
constexpr double kMinWatchedShare = 0.1;
/// How many of a device's latest readings within the margin its usual ratio is the median of.
constexpr std::size_t kUsualWindow = 8;

std::string factorText(double factor) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1fx", factor);
    return text;
}

} // namespace

SpeedWatch::SpeedWatch(double margin, int iterations, int baseline)
    : m_margin(margin), m_iterations(iterations), m_baseline(baseline) {}

void SpeedWatch::follow(const Plan& plan, const std::map<std::string, double>& slowdowns) {
    // Each plan's ratios are its own: how far the cost model misjudges a device depends on
    // the ops it was given, so a new plan's usual ratios are measured anew (at the slowdowns
    // it was planned with).
    m_watched.clear();
    m_usual.clear();
    m_first.clear();
    // A program's first iteration runs cold (memory touched for the first time, kernels'
    // caches filled): it says nothing of the devices' speed. One swapped in mid-run, its
    // second too (its storages are new, and the devices' caches still hold the old one's).
    m_skip = m_plans++ == 0 ? 1 : 2;
    m_predicted = plan.prediction ? plan.prediction->deviceBusyMicros : std::vector<double>{};
    m_slowdowns = slowdowns;
}

std::vector<SpeedDrift> SpeedWatch::observe(const RunResult& soFar) {
    std::vector<SpeedDrift> drifts;
    if (m_skip > 0) {
        --m_skip;
        return drifts;
    }
    if (m_watched.size() != soFar.streams.size()) {
        m_watched.clear();
        for (const StreamInfo& stream : soFar.streams) {
            Watched watched;
            watched.physical = stream.physical;
            watched.virtuals = stream.virtuals;
            for (DeviceId v : stream.virtuals) {
                if (static_cast<std::size_t>(v.index) < m_predicted.size())
                    watched.predicted += m_predicted[v.index];
            }
            if (const auto found = m_slowdowns.find(stream.physical); found != m_slowdowns.end())
                watched.slowdown = found->second;
            m_watched.push_back(std::move(watched));
        }
    }
    bool triggered = false;
    double busiest = 0;
    for (const Watched& watched : m_watched)
        busiest = std::max(busiest, watched.predicted);
    for (std::size_t s = 0; s < m_watched.size() && s < soFar.streams.size(); ++s) {
        Watched& watched = m_watched[s];
        const std::vector<double>& busy = soFar.streams[s].busyMicros;
        if (busy.empty() || watched.predicted < kMinWatchedMicros ||
            watched.predicted < kMinWatchedShare * busiest)
            continue;
        // Its time for its work, the moments it had work and could not start included (a
        // process competing for its core costs those more than its kernels' time), against
        // what the plan assumed, its slowdown included.
        const std::vector<double>& stalled = soFar.streams[s].stalledMicros;
        const double took = busy.back() + (stalled.size() == busy.size() ? stalled.back() : 0);
        const double ratio = took / watched.predicted;
        const auto usual = m_usual.find(watched.physical);
        if (usual == m_usual.end()) {
            // The device's usual ratio on this plan: the cost model's own error for its ops,
            // which is no drift.
            std::vector<double>& first = m_first[watched.physical];
            first.push_back(ratio);
            if (static_cast<int>(first.size()) >= m_baseline)
                m_usual[watched.physical] = median(first);
            continue;
        }
        const double deviation = ratio / usual->second;
        watched.recent.push_back(deviation);
        if (static_cast<int>(watched.recent.size()) > m_iterations)
            watched.recent.erase(watched.recent.begin());
        const bool slow = deviation > m_margin;
        const bool fast = deviation < 1 / m_margin;
        if (!slow && !fast) {
            watched.streak.clear();
            // The usual ratio follows what stays within the margin: work that grows by the
            // iteration (a generation's cache, a step longer) is no drift.
            std::vector<double>& window = m_first[watched.physical];
            window.push_back(ratio);
            if (window.size() > kUsualWindow)
                window.erase(window.begin());
            usual->second = median(window);
            continue;
        }
        if (!watched.streak.empty() && (watched.streak.back() > 1) != slow)
            watched.streak.clear();
        watched.streak.push_back(deviation);
        triggered = triggered || static_cast<int>(watched.streak.size()) >= m_iterations;
    }
    if (!triggered)
        return drifts;
    // One device's drift re-plans for every device's speed now: a load that slows one device
    // often slows another (a core's SMT sibling), and a plan made for one alone would move work
    // onto the other.
    for (Watched& watched : m_watched) {
        if (watched.recent.size() < 2)
            continue;
        const double ratio = median(watched.recent);
        if (ratio <= m_margin && ratio >= 1 / m_margin)
            continue;
        SpeedDrift drift;
        drift.physical = watched.physical;
        drift.virtuals = watched.virtuals;
        drift.ratio = ratio;
        drift.factor = watched.slowdown * ratio;
        // Back within the margin of its usual speed: planned as that again.
        if (std::abs(std::log(drift.factor)) < std::log(m_margin))
            drift.factor = 1;
        drift.iterations = static_cast<int>(watched.recent.size());
        drifts.push_back(std::move(drift));
    }
    for (Watched& watched : m_watched) {
        watched.streak.clear();
        watched.recent.clear();
    }
    return drifts;
}

std::string movedText(const Graph& graph, const DeviceSet& devices, const Plan& before,
                      const Plan& after, int* moved) {
    std::map<std::pair<int, int>, int> moves; // (from, to) -> nodes
    std::map<int, int> into;
    *moved = 0;
    for (std::size_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(static_cast<std::uint32_t>(i)));
        if (node.role() != OpRole::Compute || i >= before.devices.size() ||
            i >= after.devices.size() || before.devices[i] == after.devices[i] ||
            !after.devices[i].valid())
            continue;
        ++moves[{before.devices[i].valid() ? before.devices[i].index : -1, after.devices[i].index}];
        ++into[after.devices[i].index];
        ++*moved;
    }
    if (*moved == 0)
        return "nothing moved";
    const auto ops = [](int n) { return std::to_string(n) + (n == 1 ? " op" : " ops"); };
    if (into.size() == 1)
        return ops(*moved) + " moved to " + devices[DeviceId(into.begin()->first)].name;
    std::string text;
    for (const auto& [pair, count] : moves) {
        text +=
            (text.empty() ? ops(count) + " moved from " : ", " + std::to_string(count) + " from ") +
            (pair.first >= 0 ? devices[DeviceId(pair.first)].name : std::string("?")) + " to " +
            devices[DeviceId(pair.second)].name;
    }
    return text;
}

namespace {

/// Into `model`: the median time of each node of `plan` over the last `iterations` of `result`
/// (run by the program `outcome` holds now), as a run records them (store::measuredCosts); those
/// on a device of `drifts` divided by its ratio, its slowdown since the plan was made, so that
/// the model gives its speed before the drift and the slowdown goes on top
/// (CostModel::setSlowdown). Where an undrifted device of the same cost class ran a node of the
/// same kind, its time stands.
void recordSegmentCosts(const RunOutcome& outcome, const std::shared_ptr<const PlannedModel>& plan,
                        const RunResult& result, int iterations,
                        const std::vector<SpeedDrift>& drifts, CostModel* model) {
    RunOutcome recent;
    recent.userGraph = outcome.userGraph;
    recent.userPlan = plan->plan;
    recent.devices = outcome.devices;
    recent.ran = outcome.ran;
    recent.executor = outcome.executor;
    recent.result.streams = result.streams;
    recent.result.instrMicros.resize(result.instrMicros.size());
    for (std::size_t k = 0; k < result.instrMicros.size(); ++k) {
        const std::vector<double>& all = result.instrMicros[k];
        const std::size_t keep = std::min(all.size(), static_cast<std::size_t>(iterations));
        recent.result.instrMicros[k].assign(all.end() - static_cast<long>(keep), all.end());
    }
    // Each drifted device's virtual devices under a name of their own, so that its times come
    // apart from those of its cost class's other devices.
    std::map<std::string, const SpeedDrift*> apart;
    std::vector<std::string> physical = outcome.physical;
    for (std::string& name : physical) {
        for (const SpeedDrift& drift : drifts) {
            if (name == drift.physical) {
                name = "(drifted) " + drift.physical;
                apart[name] = &drift;
            }
        }
    }
    const MedianTimes times = userMedianTimes(recent);
    // A fused group's time also stands for its head run alone (a matrix product without the
    // activation it took): the new plan may cut the group. Then the times as they ran, which
    // win where both say something of one key.
    std::vector<store::MeasuredCost> costs = store::measuredCosts(
        *recent.userGraph, recent.userPlan, std::vector<NodeId>{}, physical, times);
    std::vector<store::MeasuredCost> asRan = store::measuredCosts(
        *recent.userGraph, recent.userPlan, recent.ran->fusedInto, physical, times);
    const auto drifting = [&](const store::MeasuredCost& cost) {
        return apart.count(cost.physical) > 0;
    };
    std::stable_partition(costs.begin(), costs.end(), drifting);
    std::stable_partition(asRan.begin(), asRan.end(), drifting);
    costs.insert(costs.end(), asRan.begin(), asRan.end());
    for (const store::MeasuredCost& cost : costs) {
        if (const auto found = apart.find(cost.physical); found != apart.end())
            model->recordMeasured(cost.key, found->second->physical,
                                  cost.micros / found->second->ratio);
        else
            model->recordMeasured(cost.key, cost.physical, cost.micros);
    }
}

} // namespace

int describeDrifts(const std::vector<SpeedDrift>& drifts, const DeviceSet& devices, RunEvent* event,
                   std::map<std::string, double>* slowdowns, const std::string& unit) {
    int streak = 0;
    for (const SpeedDrift& drift : drifts) {
        std::string names;
        for (DeviceId v : drift.virtuals)
            names += (names.empty() ? "" : ", ") + devices[v].name;
        const bool slower = drift.ratio > 1;
        event->device += (event->device.empty() ? "" : ", ") + drift.physical;
        event->reason += (event->reason.empty() ? "" : "; ") + names + " (" + drift.physical +
                         ") " + factorText(slower ? drift.ratio : 1 / drift.ratio) +
                         (slower ? " slower" : " faster") + " than assumed";
        streak = std::max(streak, drift.iterations);
        (*slowdowns)[drift.physical] = drift.factor;
    }
    event->reason += " for " + std::to_string(streak) + " " + unit;
    return streak;
}

void applySlowdowns(const std::map<std::string, double>& slowdowns,
                    const std::vector<StreamInfo>& streams, CostModel* model) {
    for (const auto& [physical, factor] : slowdowns) {
        for (const StreamInfo& stream : streams) {
            if (stream.physical != physical)
                continue;
            for (DeviceId v : stream.virtuals)
                model->setSlowdown(model->physical(v).name, factor);
        }
    }
}

Plan withPrediction(const PlannedModel& model, const std::function<CostModel()>& costs) {
    // The speed watch compares with a prediction: a plan made without costs is predicted with
    // the session's, its placement unchanged.
    if (model.plan.prediction)
        return model.plan;
    PlanOptions costed = model.options;
    costed.costs = std::make_shared<const CostModel>(costs());
    return planDevices(model.model.graph, model.model.devices, costed);
}

std::string leaveOut(const DeviceFault& fault, PlannedModel* planned) {
    std::vector<std::pair<std::string, std::string>> out = planned->options.outOfService;
    std::string names;
    for (DeviceId v : fault.virtuals) {
        const std::string& name = planned->model.devices[v].name;
        names += (names.empty() ? "" : ", ") + name;
        out.emplace_back(name, fault.physical + " failed at iteration " +
                                   std::to_string(fault.iteration) + ": " + fault.message);
    }
    leaveOut(std::move(out), planned);
    return names + " (" + fault.physical + ") failed at iteration " +
           std::to_string(fault.iteration) + " (" + fault.kind + "): " + fault.message;
}

void leaveOut(std::vector<std::pair<std::string, std::string>> outOfService,
              PlannedModel* planned) {
    DeviceSet& set = planned->model.devices;
    PlanOptions& options = planned->options;
    options.outOfService = std::move(outOfService);
    // Host-only work and work no device claims need a device in service.
    const auto out = [&](DeviceId d) {
        return d.valid() && options.outOfServiceWhy(set[d].name) != nullptr;
    };
    for (int d = 0; d < set.size() && (out(set.hostDevice()) || out(set.defaultDevice())); ++d) {
        if (out(DeviceId(d)))
            continue;
        if (out(set.hostDevice()) && set[DeviceId(d)].kind != DeviceKind::Cuda)
            set.setHostDevice(DeviceId(d));
        if (out(set.defaultDevice()))
            set.setDefaultDevice(DeviceId(d));
    }
}

Result<std::string> checkReplanned(const PlannedModel& replanned, const std::string& reason,
                                   const std::string& from) {
    int pinsMoved = 0;
    const Conflict* firstPin = nullptr;
    for (const Conflict& conflict : replanned.plan.conflicts) {
        if (conflict.kind == ConflictKind::Unsupported) {
            std::string out;
            for (const auto& [name, why] : replanned.options.outOfService)
                out += (out.empty() ? "" : ", ") + name;
            return SourceError::sentence(reason +
                                         "; the run cannot go on: no device left in service (" +
                                         out + " out) can run what it ran: " + conflict.message);
        }
        if (conflict.kind == ConflictKind::OutOfService) {
            firstPin = firstPin ? firstPin : &conflict;
            ++pinsMoved;
        }
    }
    if (!firstPin)
        return std::string();
    return std::to_string(pinsMoved) +
           (pinsMoved == 1 ? " pinned node runs" : " pinned nodes run") + " elsewhere from " +
           from + " on (" + firstPin->message + (pinsMoved > 1 ? ", and so on" : "") + ")";
}

Result<RunResult> Session::runSegments(std::shared_ptr<const PlannedModel> planned,
                                       const RunRequest& request,
                                       const std::vector<Device*>& mapping,
                                       std::vector<HostTensor> inputs, RunOptions options,
                                       const RunCallbacks& callbacks, RunOutcome& outcome) {
    const DeviceSet& devices = planned->model.devices;
    // Several ranks plan and load together; one device has nowhere else to go.
    const bool canMove = rankCount() <= 1 && devices.size() > 1;
    options.faultsEndRun = request.failover && canMove;
    options.firstIteration = request.firstIteration;
    const int total = std::max(0, options.warmup) + std::max(1, options.iterations);
    std::optional<SpeedWatch> watch;
    std::vector<SpeedDrift> drifts;
    // Per physical device: the slowdown the plan that runs was made with.
    std::map<std::string, double> slowdowns;
    std::shared_ptr<const PlannedModel> current = planned;
    std::shared_ptr<Executor> executor = outcome.executor;
    // The graph inputs by name: another program may take them in another order.
    std::map<std::string, HostTensor> byName;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        byName[outcome.graph().node(executor->program().inputs[i]).name] = inputs[i];
    const auto costedPlan = [&](const PlannedModel& model) {
        return withPrediction(model,
                              [&] { return costs(devices, request.maps, request.optimize); });
    };
    RunResult result;
    std::vector<double> latencies;
    int done = 0; // measured iterations so far
    for (int segment = 0;; ++segment) {
        const int base = segment == 0 ? 0 : std::max(0, request.warmup) + done;
        options.progress = [&callbacks, base, total](int completed, int) {
            if (callbacks.progress)
                callbacks.progress(base + completed, total);
        };
        if (request.adapt && canMove) {
            if (!watch) {
                watch.emplace();
                watch->follow(costedPlan(*current), slowdowns);
            }
            options.afterIteration = [&](const RunResult& soFar) {
                drifts = watch->observe(soFar);
                return !drifts.empty();
            };
        }
        auto ran = executor->run(inputs, options);
        if (!ran)
            return ran.error();
        result = ran.take();
        latencies.insert(latencies.end(), result.latencyMicros.begin(), result.latencyMicros.end());
        const double beforeMs =
            result.latencyMicros.empty() ? 0 : median(result.latencyMicros) / 1000;
        done += static_cast<int>(result.latencyMicros.size());
        if (result.cancelled || (!result.fault && !result.stopped))
            break;
        if (done >= std::max(1, request.iterations) && !result.fault)
            break;
        // ---- plan again: without the failed device, or with the drifted one's speed
        const auto started = std::chrono::steady_clock::now();
        RunEvent event;
        event.iteration = request.firstIteration + done;
        event.beforeMs = beforeMs;
        PlannedModel again = *current;
        PlanOptions& planOptions = again.options;
        if (result.fault) {
            event.kind = RunEvent::Kind::DeviceFailed;
            event.device = result.fault->physical;
            event.reason = leaveOut(*result.fault, &again);
        } else {
            event.kind = RunEvent::Kind::Replaced;
            const int streak = describeDrifts(drifts, devices, &event, &slowdowns);
            CostModel model = planOptions.costs ? *planOptions.costs
                                                : costs(devices, request.maps, request.optimize);
            // What this plan's ops took in the iterations that showed the drift, a drifted
            // device's at its speed before it: the new plan weighs them, not the estimates,
            // whose error differs from op to op.
            recordSegmentCosts(outcome, current, result, streak, drifts, &model);
            applySlowdowns(slowdowns, result.streams, &model);
            planOptions.mode = PlanMode::Auto;
            planOptions.costs = std::make_shared<const CostModel>(std::move(model));
        }
        auto replanned = std::make_shared<PlannedModel>(again);
        ++m_counters.plansMade;
        replanned->plan = planDevices(again.model.graph, again.model.devices, planOptions);
        auto pins =
            checkReplanned(*replanned, event.reason, "iteration " + std::to_string(done + 1));
        if (!pins)
            return pins.error();
        if (!pins.value().empty())
            outcome.warnings.push_back(pins.take());
        OptimizeOptions passes = request.optimize ? OptimizeOptions{} : OptimizeOptions::none();
        passes.packWeights = passes.packWeights && request.packWeights;
        auto compiled = lowerPlanned(*replanned, mapping, passes);
        if (!compiled)
            return SourceError::sentence(event.reason +
                                         "; planning again: " + compiled.error().message);
        auto ranGraph = std::make_shared<const OptimizedGraph>(std::move(compiled.value().ran));
        const Graph& graph = ranGraph->graph;
        if (Status fits = checkMemoryFits(compiled.value().program, replanned->model.devices,
                                          mapping, hostInputOutputBytes(compiled.value().program),
                                          &graph, graph.onnxOpset());
            !fits.ok())
            return SourceError::sentence(
                event.reason + "; the plan without it does not fit: " + fits.error().message);
        auto loaded =
            Executor::load(graph, replanned->model.devices, std::move(compiled.value().program),
                           mapping, graph.onnxOpset(), {}, m_constants);
        if (!loaded)
            return SourceError::sentence(event.reason +
                                         "; loading the new plan: " + loaded.error().message);
        ++m_counters.programsLoaded;
        executor = std::shared_ptr<Executor>(loaded.take());
        std::vector<HostTensor> next;
        for (NodeId input : executor->program().inputs)
            next.push_back(byName.at(graph.node(input).name));
        inputs = std::move(next);
        event.moved = movedText(planned->model.graph, devices, current->plan, replanned->plan,
                                &event.nodesMoved);
        event.replanMs =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
                .count();
        if (!outcome.firstPlan) {
            outcome.firstPlan = planned->plan;
            outcome.firstOptions = planned->options;
        }
        outcome.events.push_back(std::move(event));
        outcome.ran = ranGraph;
        outcome.executor = executor;
        outcome.userPlan = replanned->plan;
        outcome.planOptions = replanned->options;
        outcome.deviceLeases.push_back(replanned);
        current = replanned;
        // The rest of the iterations, numbered on; the failed one again.
        options.warmup = 0;
        options.iterations = std::max(1, request.iterations) - done;
        options.firstIteration = request.firstIteration + done;
        if (watch)
            watch->follow(costedPlan(*current), slowdowns);
        drifts.clear();
    }
    // The latencies of every segment, in order; the rest is the last program's.
    result.latencyMicros = std::move(latencies);
    for (std::size_t e = 0; e < outcome.events.size(); ++e) {
        // After each event: the median of the iterations up to the next one.
        const int first = request.firstIteration;
        const int from = outcome.events[e].iteration - first;
        const int to = e + 1 < outcome.events.size()
                           ? outcome.events[e + 1].iteration - first
                           : static_cast<int>(result.latencyMicros.size());
        if (from >= 0 && to > from && to <= static_cast<int>(result.latencyMicros.size()))
            outcome.events[e].afterMs =
                median(std::vector<double>(result.latencyMicros.begin() + from,
                                           result.latencyMicros.begin() + to)) /
                1000;
    }
    return result;
}

} // namespace placer
