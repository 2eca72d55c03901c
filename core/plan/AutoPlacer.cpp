// Cost-based placement on an abstract problem: HEFT, single devices, local search and GLPK's
// optimum.
#include "plan/AutoPlacer.h"

#include "plan/ExecutionOrder.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace placer {

std::uint32_t PlacementProblem::addTask(const std::vector<double>& costs, int fixedDevice,
                                        bool isInstant) {
    const auto id = static_cast<std::uint32_t>(fixed.size());
    for (int d = 0; d < devices; ++d)
        cost.push_back(d < static_cast<int>(costs.size()) ? costs[static_cast<std::size_t>(d)]
                                                          : kCannotRun);
    fixed.push_back(fixedDevice);
    instant.push_back(isInstant ? 1 : 0);
    outputBytes.push_back(0);
    edgeOffset.push_back(static_cast<std::uint32_t>(edgeTarget.size()));
    weightOffset.push_back(static_cast<std::uint32_t>(weightId.size()));
    return id;
}

void PlacementProblem::addWeight(std::uint32_t id) {
    weightId.push_back(id);
    weightOffset.back() = static_cast<std::uint32_t>(weightId.size());
}

void PlacementProblem::addEdge(std::uint32_t to, std::int64_t bytes, double crossMicros) {
    if (crossMicros != 0 && edgeCrossMicros.size() < edgeTarget.size())
        edgeCrossMicros.resize(edgeTarget.size(), 0.0);
    if (!edgeCrossMicros.empty() || crossMicros != 0)
        edgeCrossMicros.push_back(crossMicros);
    edgeTarget.push_back(to);
    edgeBytes.push_back(bytes);
    edgeOffset.back() = static_cast<std::uint32_t>(edgeTarget.size());
}

void PlacementProblem::setLinks(double latency, double bytesPerMicro) {
    const auto pairs = static_cast<std::size_t>(devices * devices);
    linkLatency.assign(pairs, latency);
    linkBytesPerMicro.assign(pairs, bytesPerMicro);
}

std::optional<std::string> PlacementProblem::check() const {
    const std::size_t n = tasks();
    const auto d = static_cast<std::size_t>(devices);
    if (devices <= 0)
        return "no devices";
    if (resourceOf.size() != d)
        return "resourceOf needs one entry per device";
    if (cost.size() != n * d || instant.size() != n || outputBytes.size() != n)
        return "per-task arrays differ in length";
    if (edgeOffset.size() != n + 1 || edgeOffset.back() != edgeTarget.size() ||
        edgeBytes.size() != edgeTarget.size() ||
        (!edgeCrossMicros.empty() && edgeCrossMicros.size() != edgeTarget.size()))
        return "edge arrays are inconsistent";
    if (weightOffset.size() != n + 1 || weightOffset.back() != weightId.size())
        return "weight arrays are inconsistent";
    for (std::uint32_t w : weightId) {
        if (w >= weightBytes.size())
            return "a weight id has no size";
    }
    if (linkLatency.size() != d * d || linkBytesPerMicro.size() != d * d)
        return "links need one entry per ordered pair of devices";
    if (!capacity.empty() && capacity.size() != d)
        return "capacity needs one entry per device";
    for (std::size_t t = 0; t < n; ++t) {
        for (std::uint32_t e = edgeOffset[t]; e < edgeOffset[t + 1]; ++e) {
            if (edgeTarget[e] <= t || edgeTarget[e] >= n)
                return "edge " + std::to_string(t) + "->" + std::to_string(edgeTarget[e]) +
                       " does not go forward";
        }
        if (fixed[t] >= devices)
            return "task " + std::to_string(t) + " is fixed to an unknown device";
    }
    return std::nullopt;
}

namespace {

bool hasCapacities(const PlacementProblem& problem) {
    return std::any_of(problem.capacity.begin(), problem.capacity.end(),
                       [](std::int64_t c) { return c >= 0; });
}

double assignedCost(const PlacementProblem& problem, std::size_t t, int d) {
    if (problem.instant[t])
        return 0;
    const double c = problem.taskCost(t, d);
    return c == kCannotRun ? 1e12 : c;
}

/// Per task: its assigned cost plus the longest (copy + rank) over its successors: the
/// executor's priority.
std::vector<double> upwardRanks(const PlacementProblem& problem, const std::vector<int>& a) {
    const std::size_t n = problem.tasks();
    std::vector<double> rank(n, 0);
    for (std::size_t t = n; t-- > 0;) {
        double longest = 0;
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const std::uint32_t s = problem.edgeTarget[e];
            longest = std::max(longest, problem.edgeMicros(e, a[t], a[s]) + rank[s]);
        }
        rank[t] = assignedCost(problem, t, a[t]) + longest;
    }
    return rank;
}

/// Incoming edges, by target.
struct Predecessors {
    std::vector<std::uint32_t> offset, source, edge;
    explicit Predecessors(const PlacementProblem& problem) {
        const std::size_t n = problem.tasks();
        offset.assign(n + 1, 0);
        for (std::uint32_t t : problem.edgeTarget)
            ++offset[t + 1];
        std::partial_sum(offset.begin(), offset.end(), offset.begin());
        source.resize(problem.edgeTarget.size());
        edge.resize(problem.edgeTarget.size());
        std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
        for (std::uint32_t t = 0; t < n; ++t) {
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
                const std::uint32_t k = fill[problem.edgeTarget[e]]++;
                source[k] = t;
                edge[k] = e;
            }
        }
    }
};

/// The estimated bytes on each device as tasks are placed one by one: the constants its
/// tasks read, once each, and its largest working set (a task's inputs and outputs).
class MemoryTally {
public:
    explicit MemoryTally(const PlacementProblem& problem)
        : m_problem(problem), m_devices(static_cast<std::size_t>(problem.devices)),
          m_weights(m_devices, 0), m_working(m_devices, 0),
          m_seen(problem.weightBytes.size() * m_devices, 0), m_inBytes(problem.tasks(), 0) {
        for (std::size_t t = 0; t < problem.tasks(); ++t) {
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e)
                m_inBytes[problem.edgeTarget[e]] += problem.edgeBytes[e];
        }
    }
    /// What device d would hold with task t added.
    std::int64_t with(std::size_t t, int d) const {
        const auto k = static_cast<std::size_t>(d);
        std::int64_t weights = m_weights[k];
        for (std::uint32_t i = m_problem.weightOffset[t]; i < m_problem.weightOffset[t + 1]; ++i) {
            const std::uint32_t w = m_problem.weightId[i];
            if (!m_seen[w * m_devices + k])
                weights += m_problem.weightBytes[w];
        }
        return weights + std::max(m_working[k], workingSet(t));
    }
    void add(std::size_t t, int d) {
        const auto k = static_cast<std::size_t>(d);
        for (std::uint32_t i = m_problem.weightOffset[t]; i < m_problem.weightOffset[t + 1]; ++i) {
            const std::uint32_t w = m_problem.weightId[i];
            if (!m_seen[w * m_devices + k]) {
                m_seen[w * m_devices + k] = 1;
                m_weights[k] += m_problem.weightBytes[w];
            }
        }
        m_working[k] = std::max(m_working[k], workingSet(t));
    }
    std::vector<std::int64_t> perDevice() const {
        std::vector<std::int64_t> bytes(m_devices);
        for (std::size_t k = 0; k < m_devices; ++k)
            bytes[k] = m_weights[k] + m_working[k];
        return bytes;
    }

private:
    std::int64_t workingSet(std::size_t t) const { return m_inBytes[t] + m_problem.outputBytes[t]; }
    const PlacementProblem& m_problem;
    std::size_t m_devices;
    std::vector<std::int64_t> m_weights, m_working;
    std::vector<std::uint8_t> m_seen;
    std::vector<std::int64_t> m_inBytes;
};

} // namespace

std::vector<std::int64_t> estimatedMemory(const PlacementProblem& problem,
                                          const std::vector<int>& a) {
    MemoryTally tally(problem);
    for (std::size_t t = 0; t < problem.tasks(); ++t)
        tally.add(t, a[t]);
    return tally.perDevice();
}

double PlacementProblem::runOverhead(const std::vector<int>& a) const {
    if (runMicros.empty())
        return 0;
    double overhead = 0;
    for (std::size_t t = 0; t < a.size() && t < tasks(); ++t) {
        if (!instant[t] && a[t] >= 0 && static_cast<std::size_t>(a[t]) < runMicros.size())
            overhead = std::max(overhead, runMicros[static_cast<std::size_t>(a[t])]);
    }
    return overhead;
}

std::vector<double> executorPriorities(const PlacementProblem& problem, const std::vector<int>& a,
                                       const std::vector<double>& taskMicros) {
    const std::size_t n = problem.tasks();
    std::vector<double> priority = upwardRanks(problem, a);
    if (problem.wave.size() == n) {
        // A micro-batch's wave dominates the path; a task of none takes its inputs' latest.
        std::vector<std::int32_t> wave(n, -1), inherited(n, 0);
        std::int32_t last = 0;
        double total = 1;
        for (std::size_t t = 0; t < n; ++t) {
            wave[t] = problem.wave[t] >= 0 ? problem.wave[t] : inherited[t];
            last = std::max(last, wave[t]);
            total += taskMicros[t];
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e)
                inherited[problem.edgeTarget[e]] =
                    std::max(inherited[problem.edgeTarget[e]], wave[t]);
        }
        for (std::size_t t = 0; t < n; ++t)
            priority[t] += static_cast<double>(last - wave[t]) * total;
    }
    return priority;
}

SimulatedSchedule simulate(const PlacementProblem& problem, const std::vector<int>& a) {
    const std::size_t n = problem.tasks();
    // The executor's policy is list scheduling (plan/ExecutionOrder.h) on the assigned costs:
    // a resource per physical device, the longest path to the end first, a copy delaying its
    // consumer. The layout conversions of an edge between devices are work, half on each side.
    ListScheduling list(n, problem.edgeTarget.size());
    for (std::size_t t = 0; t < n; ++t) {
        list.resource[t] = problem.instant[t] ? ListScheduling::kInstant
                                              : problem.resourceOf[static_cast<std::size_t>(a[t])];
        list.cost[t] += assignedCost(problem, t, a[t]);
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const std::uint32_t s = problem.edgeTarget[e];
            list.addEdge(s, problem.copyMicros(a[t], a[s], problem.edgeBytes[e]));
            if (problem.edgeCrossMicros.empty() || a[t] == a[s])
                continue;
            const double half = problem.edgeCrossMicros[e] / 2;
            if (!problem.instant[t])
                list.cost[t] += half;
            if (!problem.instant[s])
                list.cost[s] += half;
        }
        list.closeItem();
    }
    list.priority = executorPriorities(problem, a, list.cost);
    if (problem.release.size() == n)
        list.release = problem.release;
    ListSchedule scheduled = listSchedule(list);
    SimulatedSchedule result;
    result.start = std::move(scheduled.start);
    result.end = std::move(scheduled.end);
    result.makespan = scheduled.makespan + problem.runOverhead(a);
    if (hasCapacities(problem)) {
        const std::vector<std::int64_t> memory = estimatedMemory(problem, a);
        for (std::size_t d = 0; d < memory.size(); ++d) {
            if (problem.capacity[d] >= 0 && memory[d] > problem.capacity[d])
                result.overflow += memory[d] - problem.capacity[d];
        }
    }
    return result;
}

std::vector<int> heftAssignment(const PlacementProblem& problem, double* heftMakespan) {
    const std::size_t n = problem.tasks();
    const int devices = problem.devices;
    const Predecessors preds(problem);

    // Mean costs over the devices a task may take, and the mean copy between two devices.
    std::vector<double> mean(n, 0);
    for (std::size_t t = 0; t < n; ++t) {
        if (problem.instant[t])
            continue;
        double sum = 0;
        int count = 0;
        for (int d = 0; d < devices; ++d) {
            if (problem.allowed(t, d)) {
                sum += problem.taskCost(t, d);
                ++count;
            }
        }
        mean[t] = count ? sum / count : 0;
    }
    double meanLatency = 0, meanInverse = 0;
    int pairs = 0;
    for (int x = 0; x < devices; ++x) {
        for (int y = 0; y < devices; ++y) {
            if (x == y)
                continue;
            meanLatency += problem.linkLatency[static_cast<std::size_t>(x * devices + y)];
            meanInverse +=
                1.0 / problem.linkBytesPerMicro[static_cast<std::size_t>(x * devices + y)];
            ++pairs;
        }
    }
    if (pairs) {
        meanLatency /= pairs;
        meanInverse /= pairs;
    }
    std::vector<double> rank(n, 0);
    for (std::size_t t = n; t-- > 0;) {
        double longest = 0;
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const double comm =
                pairs ? meanLatency + static_cast<double>(problem.edgeBytes[e]) * meanInverse +
                            (problem.edgeCrossMicros.empty() ? 0.0 : problem.edgeCrossMicros[e])
                      : 0;
            longest = std::max(longest, comm + rank[problem.edgeTarget[e]]);
        }
        rank[t] = mean[t] + longest;
    }
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::uint32_t x, std::uint32_t y) { return rank[x] > rank[y]; });

    int resources = 0;
    for (int r : problem.resourceOf)
        resources = std::max(resources, r + 1);
    // Busy intervals per resource, by start; insertion into gaps on graphs of moderate size.
    std::vector<std::vector<std::pair<double, double>>> busy(static_cast<std::size_t>(resources));
    const bool insertion = n <= 3000;
    const bool memoryBound = hasCapacities(problem);
    MemoryTally memory(problem);
    const auto fits = [&](std::size_t t, int d) {
        const auto k = static_cast<std::size_t>(d);
        return !memoryBound || problem.capacity[k] < 0 || memory.with(t, d) <= problem.capacity[k];
    };

    std::vector<int> assignment(n, 0);
    std::vector<double> finish(n, 0);
    double makespan = 0;
    for (std::uint32_t t : order) {
        int bestDevice = -1;
        double bestFinish = std::numeric_limits<double>::infinity();
        double bestStart = 0;
        bool bestFits = false;
        for (int d = 0; d < devices; ++d) {
            if (!problem.allowed(t, d))
                continue;
            double ready = 0;
            for (std::uint32_t k = preds.offset[t]; k < preds.offset[t + 1]; ++k) {
                const std::uint32_t p = preds.source[k];
                ready = std::max(ready,
                                 finish[p] + problem.edgeMicros(preds.edge[k], assignment[p], d));
            }
            double start = ready;
            const double c = problem.instant[t] ? 0 : problem.taskCost(t, d);
            if (!problem.instant[t]) {
                const auto& slots = busy[static_cast<std::size_t>(problem.resourceOf[d])];
                if (insertion) {
                    double previousEnd = 0;
                    start = -1;
                    for (const auto& [s, e] : slots) {
                        const double candidate = std::max(ready, previousEnd);
                        if (candidate + c <= s) {
                            start = candidate;
                            break;
                        }
                        previousEnd = std::max(previousEnd, e);
                    }
                    if (start < 0)
                        start = std::max(ready, previousEnd);
                } else {
                    start = std::max(ready, slots.empty() ? 0.0 : slots.back().second);
                }
            }
            const bool fit = fits(t, d);
            const double end = start + c;
            if (bestDevice < 0 || (fit && !bestFits) || (fit == bestFits && end < bestFinish)) {
                bestDevice = d;
                bestFinish = end;
                bestStart = start;
                bestFits = fit;
            }
        }
        if (bestDevice < 0)
            bestDevice = problem.fixed[t] >= 0 ? problem.fixed[t] : 0;
        assignment[t] = bestDevice;
        finish[t] = bestFinish == std::numeric_limits<double>::infinity() ? 0 : bestFinish;
        makespan = std::max(makespan, finish[t]);
        if (!problem.instant[t]) {
            auto& slots = busy[static_cast<std::size_t>(problem.resourceOf[bestDevice])];
            const std::pair<double, double> slot{bestStart, finish[t]};
            slots.insert(std::upper_bound(slots.begin(), slots.end(), slot), slot);
        }
        memory.add(t, bestDevice);
    }
    if (heftMakespan)
        *heftMakespan = makespan;
    return assignment;
}

namespace {

/// Better: fits where the other overflows, or less overflow, or a shorter makespan (by more
/// than rounding).
bool better(const SimulatedSchedule& x, const SimulatedSchedule& y) {
    if (x.overflow != y.overflow)
        return x.overflow < y.overflow;
    return x.makespan < y.makespan * (1 - 1e-9) - 1e-9;
}

/// Chains: maximal runs of free, timed tasks where each is the only successor of the one before
/// and that one its only predecessor. Per task, the chain it belongs to (index into `chains`).
struct Chains {
    std::vector<std::vector<std::uint32_t>> chains;
    std::vector<int> chainOf;
};

Chains findChains(const PlacementProblem& problem, const Predecessors& preds) {
    const std::size_t n = problem.tasks();
    Chains result;
    result.chainOf.assign(n, -1);
    const auto movable = [&](std::uint32_t t) {
        return problem.fixed[t] < 0 && !problem.instant[t];
    };
    const auto onlyNext = [&](std::uint32_t t) -> std::int64_t {
        if (problem.edgeOffset[t + 1] - problem.edgeOffset[t] != 1)
            return -1;
        const std::uint32_t s = problem.edgeTarget[problem.edgeOffset[t]];
        return preds.offset[s + 1] - preds.offset[s] == 1 && movable(s) ? std::int64_t{s}
                                                                        : std::int64_t{-1};
    };
    for (std::uint32_t t = 0; t < n; ++t) {
        if (!movable(t) || result.chainOf[t] >= 0)
            continue;
        // t starts a chain unless its only predecessor leads into it.
        if (preds.offset[t + 1] - preds.offset[t] == 1) {
            const std::uint32_t p = preds.source[preds.offset[t]];
            if (movable(p) && onlyNext(p) == static_cast<std::int64_t>(t))
                continue;
        }
        std::vector<std::uint32_t> chain{t};
        for (std::int64_t next = onlyNext(t); next >= 0;
             next = onlyNext(static_cast<std::uint32_t>(next)))
            chain.push_back(static_cast<std::uint32_t>(next));
        if (chain.size() < 2)
            continue;
        for (std::uint32_t member : chain)
            result.chainOf[member] = static_cast<int>(result.chains.size());
        result.chains.push_back(std::move(chain));
    }
    return result;
}

} // namespace

AutoPlacement autoPlace(const PlacementProblem& problem, const AutoPlaceOptions& options) {
    const std::size_t n = problem.tasks();
    const int devices = problem.devices;
    AutoPlacement result;
    result.exactStatus = "not asked";
    const double perEvaluation = static_cast<double>(n + problem.edgeTarget.size() + 1);
    double work = 0;
    const auto evaluate = [&](const std::vector<int>& a) {
        ++result.evaluations;
        work += perEvaluation;
        return simulate(problem, a);
    };

    // Starting points.
    std::vector<int> best = heftAssignment(problem);
    SimulatedSchedule bestSchedule = evaluate(best);
    result.heftAssignment = best;
    result.heftMakespan = bestSchedule.makespan;
    result.bestSingleDevice = std::numeric_limits<double>::infinity();
    std::vector<int> bestSingle;
    SimulatedSchedule bestSingleSchedule;
    // The preferred device first: among single devices that tie, it wins.
    std::vector<int> deviceOrder;
    if (options.preferredDevice >= 0 && options.preferredDevice < devices)
        deviceOrder.push_back(options.preferredDevice);
    for (int d = 0; d < devices; ++d) {
        if (d != options.preferredDevice)
            deviceOrder.push_back(d);
    }
    for (const int d : deviceOrder) {
        std::vector<int> single(n);
        bool everywhere = true;
        for (std::size_t t = 0; t < n; ++t) {
            if (problem.allowed(t, d)) {
                single[t] = d;
                continue;
            }
            if (problem.fixed[t] < 0)
                everywhere = false;
            // The cheapest device it may take.
            int pick = problem.fixed[t] >= 0 ? problem.fixed[t] : -1;
            for (int k = 0; k < devices && pick < 0; ++k) {
                if (problem.allowed(t, k))
                    pick = k;
            }
            single[t] = pick < 0 ? d : pick;
        }
        const SimulatedSchedule schedule = evaluate(single);
        if (everywhere && schedule.overflow == 0 && schedule.makespan < result.bestSingleDevice) {
            result.bestSingleDevice = schedule.makespan;
            bestSingle = single;
            bestSingleSchedule = schedule;
        }
        if (better(schedule, bestSchedule)) {
            best = std::move(single);
            bestSchedule = schedule;
        }
    }
    for (const std::vector<int>& seed : options.seeds) {
        if (seed.size() != n)
            continue;
        bool valid = true;
        for (std::size_t t = 0; t < n && valid; ++t)
            valid = seed[t] >= 0 && seed[t] < devices && problem.allowed(t, seed[t]);
        if (!valid)
            continue;
        const SimulatedSchedule schedule = evaluate(seed);
        if (better(schedule, bestSchedule)) {
            best = seed;
            bestSchedule = schedule;
        }
    }

    // Local search: single moves and chain moves, critical tasks first.
    const Predecessors preds(problem);
    const Chains chains = findChains(problem, preds);
    std::vector<std::uint32_t> movable;
    for (std::uint32_t t = 0; t < n; ++t) {
        if (problem.fixed[t] < 0 && !problem.instant[t])
            movable.push_back(t);
    }
    const auto budgetLeft = [&] { return work < options.searchWork; };
    /// Tasks by how close their start plus path to the end comes to the makespan.
    const auto criticalOrder = [&](const std::vector<int>& a, const SimulatedSchedule& s) {
        const std::vector<double> rank = upwardRanks(problem, a);
        std::vector<std::uint32_t> order = movable;
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
            return s.start[x] + rank[x] > s.start[y] + rank[y];
        });
        return order;
    };
    const auto descend = [&](std::vector<int>& a, SimulatedSchedule& schedule) {
        std::vector<int> trial = a;
        bool improved = true;
        while (improved && budgetLeft()) {
            improved = false;
            for (std::uint32_t t : criticalOrder(a, schedule)) {
                if (!budgetLeft())
                    break;
                for (int d = 0; d < devices; ++d) {
                    if (d == a[t] || !problem.allowed(t, d))
                        continue;
                    trial[t] = d;
                    SimulatedSchedule next = evaluate(trial);
                    if (better(next, schedule)) {
                        a[t] = d;
                        schedule = std::move(next);
                        ++result.improvements;
                        improved = true;
                        continue;
                    }
                    trial[t] = a[t];
                    // The whole chain, when t is in one.
                    const int chain = chains.chainOf[t];
                    if (chain < 0 || !budgetLeft())
                        continue;
                    const auto& members = chains.chains[static_cast<std::size_t>(chain)];
                    bool allowed = true;
                    for (std::uint32_t m : members)
                        allowed = allowed && problem.allowed(m, d);
                    if (!allowed)
                        continue;
                    for (std::uint32_t m : members)
                        trial[m] = d;
                    next = evaluate(trial);
                    if (better(next, schedule)) {
                        for (std::uint32_t m : members)
                            a[m] = d;
                        schedule = std::move(next);
                        ++result.improvements;
                        improved = true;
                    } else {
                        for (std::uint32_t m : members)
                            trial[m] = a[m];
                    }
                }
            }
        }
    };
    descend(best, bestSchedule);

    // Pairs: two tasks moved at once get past a copy that either move alone would add. The
    // critical tasks first, as far as the budget goes; a gain starts the descent again.
    const auto pairs = [&](std::vector<int>& a, SimulatedSchedule& schedule) {
        const std::vector<std::uint32_t> order = criticalOrder(a, schedule);
        std::vector<int> trial = a;
        for (std::size_t i = 0; i < order.size() && budgetLeft(); ++i) {
            for (std::size_t j = i + 1; j < order.size() && budgetLeft(); ++j) {
                const std::uint32_t x = order[i], y = order[j];
                for (int dx = 0; dx < devices; ++dx) {
                    for (int dy = 0; dy < devices; ++dy) {
                        if (dx == a[x] || dy == a[y] || !problem.allowed(x, dx) ||
                            !problem.allowed(y, dy) || !budgetLeft())
                            continue;
                        trial[x] = dx;
                        trial[y] = dy;
                        SimulatedSchedule next = evaluate(trial);
                        if (better(next, schedule)) {
                            a = trial;
                            schedule = std::move(next);
                            ++result.improvements;
                            return true;
                        }
                        trial[x] = a[x];
                        trial[y] = a[y];
                    }
                }
            }
        }
        return false;
    };
    while (budgetLeft() && pairs(best, bestSchedule))
        descend(best, bestSchedule);

    // Iterated local search: perturb a few tasks at random (a fixed seed: deterministic),
    // descend, keep what is better.
    if (!movable.empty() && devices > 1) {
        std::uint64_t state = 0x9E3779B97F4A7C15ull ^ n;
        const auto next = [&state] {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            return state;
        };
        const std::size_t kicks = std::max<std::size_t>(2, movable.size() / 8);
        for (int round = 0; round < options.perturbations && budgetLeft(); ++round) {
            std::vector<int> a = best;
            for (std::size_t k = 0; k < kicks; ++k) {
                const std::uint32_t t = movable[next() % movable.size()];
                const int d = static_cast<int>(next() % static_cast<std::uint64_t>(devices));
                if (problem.allowed(t, d))
                    a[t] = d;
            }
            SimulatedSchedule schedule = evaluate(a);
            descend(a, schedule);
            if (better(schedule, bestSchedule)) {
                best = std::move(a);
                bestSchedule = std::move(schedule);
                while (budgetLeft() && pairs(best, bestSchedule))
                    descend(best, bestSchedule);
            }
        }
    }

    if (options.exact) {
        std::size_t timed = 0;
        for (std::size_t t = 0; t < n; ++t)
            timed += problem.instant[t] ? 0 : 1;
        if (timed > options.exactMaxTasks) {
            result.exactStatus = "too large";
        } else {
            double optimum = 0;
            const auto exact =
                solveExact(problem, options.exactTimeLimitSeconds, &optimum, &result.exactStatus);
            if (exact) {
                if (result.exactStatus == "optimal")
                    result.exactOptimum = optimum + problem.runOverhead(*exact);
                const SimulatedSchedule schedule = evaluate(*exact);
                if (better(schedule, bestSchedule)) {
                    best = *exact;
                    bestSchedule = schedule;
                }
            }
        }
    }
    // A placement over several devices must promise more than the margin over the best single
    // device, or that device takes everything.
    if (!bestSingle.empty() && options.splitMargin > 0 && bestSchedule.overflow == 0 &&
        bestSchedule.makespan > result.bestSingleDevice * (1 - options.splitMargin)) {
        best = std::move(bestSingle);
        bestSchedule = std::move(bestSingleSchedule);
        result.keptSingleDevice = true;
    }
    result.assignment = std::move(best);
    result.schedule = std::move(bestSchedule);
    return result;
}

std::optional<std::vector<int>> solveExact(const PlacementProblem& problem, double timeLimitSeconds,
                                           double* optimum, std::string* status) {
    const std::size_t n = problem.tasks();
    const int devices = problem.devices;
    // Columns (1-based, GLPK's way): x[t][d] for allowed pairs, S[t], C, w[e], y[i][j].
    std::vector<int> xColumn(n * static_cast<std::size_t>(devices), 0);
    int columns = 0;
    std::vector<int> kinds;
    std::vector<std::pair<double, double>> bounds;
    const auto addColumn = [&](int kind, double lower, double upper) {
        kinds.push_back(kind);
        bounds.emplace_back(lower, upper);
        return ++columns;
    };
    double bigM = 0;
    for (std::size_t t = 0; t < n; ++t) {
        double longest = 0;
        bool any = false;
        for (int d = 0; d < devices; ++d) {
            if (!problem.allowed(t, d))
                continue;
            any = true;
            xColumn[t * static_cast<std::size_t>(devices) + static_cast<std::size_t>(d)] =
                addColumn(GLP_BV, 0, 1);
            if (!problem.instant[t])
                longest = std::max(longest, problem.taskCost(t, d));
        }
        if (!any) {
            *status = "task " + std::to_string(t) + " has no device";
            return std::nullopt;
        }
        bigM += longest;
    }
    for (std::size_t e = 0; e < problem.edgeTarget.size(); ++e) {
        double longest = 0;
        for (int x = 0; x < devices; ++x) {
            for (int y = 0; y < devices; ++y)
                longest =
                    std::max(longest, problem.edgeMicros(static_cast<std::uint32_t>(e), x, y));
        }
        bigM += longest;
    }
    bigM = std::max(bigM, 1.0);
    std::vector<int> sColumn(n);
    for (std::size_t t = 0; t < n; ++t)
        sColumn[t] = addColumn(GLP_CV, 0, bigM);
    const int cColumn = addColumn(GLP_CV, 0, bigM);

    struct Row {
        int type;
        double bound;
        std::vector<std::pair<int, double>> terms;
    };
    std::vector<Row> rows;
    const auto x = [&](std::size_t t, int d) {
        return xColumn[t * static_cast<std::size_t>(devices) + static_cast<std::size_t>(d)];
    };
    const auto addDuration = [&](Row& row, std::size_t t, double sign) {
        if (problem.instant[t])
            return;
        for (int d = 0; d < devices; ++d) {
            if (x(t, d))
                row.terms.emplace_back(x(t, d), sign * problem.taskCost(t, d));
        }
    };
    for (std::size_t t = 0; t < n; ++t) {
        Row one{GLP_FX, 1, {}};
        for (int d = 0; d < devices; ++d) {
            if (x(t, d))
                one.terms.emplace_back(x(t, d), 1);
        }
        rows.push_back(std::move(one));
        Row end{GLP_LO, 0, {{cColumn, 1}, {sColumn[t], -1}}};
        addDuration(end, t, -1);
        rows.push_back(std::move(end));
    }
    // Reachability, for the pairs that need an order.
    std::vector<std::vector<std::uint8_t>> reaches(n, std::vector<std::uint8_t>(n, 0));
    for (std::size_t t = n; t-- > 0;) {
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const std::uint32_t s = problem.edgeTarget[e];
            reaches[t][s] = 1;
            for (std::size_t k = 0; k < n; ++k)
                reaches[t][k] |= reaches[s][k];
        }
    }
    for (std::size_t t = 0; t < n; ++t) {
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const std::size_t s = problem.edgeTarget[e];
            const int w = addColumn(GLP_CV, 0, bigM);
            for (int a = 0; a < devices; ++a) {
                for (int b = 0; b < devices; ++b) {
                    const double copy = problem.edgeMicros(static_cast<std::uint32_t>(e), a, b);
                    if (a == b || !x(t, a) || !x(s, b) || copy <= 0)
                        continue;
                    rows.push_back(
                        Row{GLP_LO, -copy, {{w, 1}, {x(t, a), -copy}, {x(s, b), -copy}}});
                }
            }
            Row precedence{GLP_LO, 0, {{sColumn[s], 1}, {sColumn[t], -1}, {w, -1}}};
            addDuration(precedence, t, -1);
            rows.push_back(std::move(precedence));
        }
    }
    int resources = 0;
    for (int r : problem.resourceOf)
        resources = std::max(resources, r + 1);
    for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = i + 1; j < n; ++j) {
            if (problem.instant[i] || problem.instant[j] || reaches[i][j])
                continue;
            int y = 0;
            for (int r = 0; r < resources; ++r) {
                std::vector<std::pair<int, double>> onI, onJ;
                for (int d = 0; d < devices; ++d) {
                    if (problem.resourceOf[d] != r)
                        continue;
                    if (x(i, d))
                        onI.emplace_back(x(i, d), -bigM);
                    if (x(j, d))
                        onJ.emplace_back(x(j, d), -bigM);
                }
                if (onI.empty() || onJ.empty())
                    continue;
                if (!y)
                    y = addColumn(GLP_BV, 0, 1);
                // y = 1: i before j. S_j >= S_i + P_i - M(1 - y) - M(2 - X_ir - X_jr).
                Row iFirst{GLP_LO, -3 * bigM, {{sColumn[j], 1}, {sColumn[i], -1}, {y, -bigM}}};
                addDuration(iFirst, i, -1);
                iFirst.terms.insert(iFirst.terms.end(), onI.begin(), onI.end());
                iFirst.terms.insert(iFirst.terms.end(), onJ.begin(), onJ.end());
                rows.push_back(std::move(iFirst));
                // y = 0: j before i. S_i >= S_j + P_j - M y - M(2 - X_ir - X_jr).
                Row jFirst{GLP_LO, -2 * bigM, {{sColumn[i], 1}, {sColumn[j], -1}, {y, bigM}}};
                addDuration(jFirst, j, -1);
                jFirst.terms.insert(jFirst.terms.end(), onI.begin(), onI.end());
                jFirst.terms.insert(jFirst.terms.end(), onJ.begin(), onJ.end());
                rows.push_back(std::move(jFirst));
            }
        }
    }

    glp_term_out(GLP_OFF);
    glp_prob* lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_cols(lp, columns);
    for (int c = 1; c <= columns; ++c) {
        glp_set_col_kind(lp, c, kinds[static_cast<std::size_t>(c - 1)]);
        const auto [lower, upper] = bounds[static_cast<std::size_t>(c - 1)];
        glp_set_col_bnds(lp, c, GLP_DB, lower, upper);
    }
    glp_set_obj_coef(lp, cColumn, 1);
    glp_add_rows(lp, static_cast<int>(rows.size()));
    std::vector<int> ia{0}, ja{0};
    std::vector<double> ar{0};
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const int row = static_cast<int>(r) + 1;
        glp_set_row_bnds(lp, row, rows[r].type, rows[r].bound, rows[r].bound);
        // GLPK wants one entry per column in a row: merge repeats.
        std::vector<std::pair<int, double>> terms = rows[r].terms;
        std::sort(terms.begin(), terms.end());
        for (std::size_t k = 0; k < terms.size(); ++k) {
            if (k > 0 && terms[k].first == terms[k - 1].first) {
                ar.back() += terms[k].second;
                continue;
            }
            ia.push_back(row);
            ja.push_back(terms[k].first);
            ar.push_back(terms[k].second);
        }
    }
    glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
    glp_iocp parameters;
    glp_init_iocp(&parameters);
    parameters.presolve = GLP_ON;
    parameters.msg_lev = GLP_MSG_OFF;
    parameters.tm_lim = static_cast<int>(timeLimitSeconds * 1000);
    const int code = glp_intopt(lp, &parameters);
    const int mip = glp_mip_status(lp);
    std::optional<std::vector<int>> assignment;
    if ((code == 0 || code == GLP_ETMLIM) && (mip == GLP_OPT || mip == GLP_FEAS)) {
        std::vector<int> a(n, 0);
        for (std::size_t t = 0; t < n; ++t) {
            for (int d = 0; d < devices; ++d) {
                if (x(t, d) && glp_mip_col_val(lp, x(t, d)) > 0.5)
                    a[t] = d;
            }
        }
        assignment = std::move(a);
        *optimum = glp_mip_obj_val(lp);
        *status = mip == GLP_OPT && code == 0 ? "optimal" : "time limit";
    } else {
        *status = code == GLP_ETMLIM ? "time limit" : "no solution";
    }
    glp_delete_prob(lp);
    return assignment;
}

} // namespace placer
