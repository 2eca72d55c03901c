// Pipeline stages by dynamic programming over cut positions (plan/PipelineStages.h has the
// model and the method).
#include "plan/PipelineStages.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace placer {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

/// Per task, its producers: (source task, bytes) for each in-edge.
std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>>
producersOf(const PlacementProblem& problem) {
    std::vector<std::vector<std::pair<std::uint32_t, std::int64_t>>> in(problem.tasks());
    for (std::uint32_t t = 0; t < problem.tasks(); ++t)
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e)
            in[problem.edgeTarget[e]].emplace_back(t, problem.edgeBytes[e]);
    return in;
}

double perMicroBatch(double micros, int microBatches) {
    return micros / static_cast<double>(microBatches);
}

/// Task t's time on device d for one micro-batch: its fixed overhead, and its share of the rest.
double taskPerMicroBatch(const PlacementProblem& problem, std::size_t t, int d, int microBatches) {
    const double cost = problem.taskCost(t, d);
    const double overhead =
        static_cast<std::size_t>(d) < problem.taskOverheadMicros.size()
            ? std::min(cost, problem.taskOverheadMicros[static_cast<std::size_t>(d)])
            : 0.0;
    return overhead + perMicroBatch(cost - overhead, microBatches);
}

std::int64_t bytesPerMicroBatch(std::int64_t bytes, int microBatches) {
    return (bytes + microBatches - 1) / microBatches;
}

int resourceOf(const PlacementProblem& problem, int device) {
    return static_cast<std::size_t>(device) < problem.resourceOf.size()
               ? problem.resourceOf[static_cast<std::size_t>(device)]
               : device;
}

} // namespace

double pipelinedLatency(const PlacementProblem& problem, const std::vector<int>& a,
                        int microBatches, std::vector<PipelineStage>* out, int batches) {
    const int m = std::max(1, microBatches);
    const int count = m * std::max(1, batches); // micro-batches through the pipeline
    const auto in = producersOf(problem);
    std::vector<PipelineStage> stages;
    for (std::size_t t = 0; t < problem.tasks(); ++t) {
        if (problem.instant[t])
            continue;
        if (stages.empty() || stages.back().device != a[t]) {
            if (!stages.empty())
                stages.back().end = t;
            PipelineStage stage;
            stage.begin = stages.empty() ? 0 : t;
            stage.device = a[t];
            stages.push_back(stage);
        }
    }
    if (stages.empty())
        return problem.runOverhead(a);
    stages.back().end = problem.tasks();
    // Devices that share a resource (vcpus beyond the cores) share its busy time.
    std::vector<double> busy(static_cast<std::size_t>(problem.devices), 0.0);
    double sum = 0;
    for (PipelineStage& stage : stages) {
        std::unordered_map<std::uint32_t, std::int64_t> incoming; // source -> largest bytes
        for (std::size_t t = stage.begin; t < stage.end; ++t) {
            if (problem.instant[t])
                continue;
            stage.computeMicros += taskPerMicroBatch(problem, t, stage.device, m);
            for (const auto& [source, bytes] : in[t]) {
                if (a[source] == stage.device)
                    continue;
                std::int64_t& largest = incoming[source];
                largest = std::max(largest, bytes);
            }
        }
        for (const auto& [source, bytes] : incoming)
            stage.copyInMicros +=
                problem.copyMicros(a[source], stage.device, bytesPerMicroBatch(bytes, m));
        sum += stage.computeMicros + stage.copyInMicros;
        busy[static_cast<std::size_t>(resourceOf(problem, stage.device))] += stage.computeMicros;
    }
    if (out)
        *out = stages;
    return sum + (count - 1) * *std::max_element(busy.begin(), busy.end()) + problem.runOverhead(a);
}

std::int64_t stageMemoryBytes(const PlacementProblem& problem, std::size_t begin, std::size_t end,
                              int microBatches) {
    std::vector<char> seen(problem.weightBytes.size(), 0);
    std::int64_t weights = 0, largest = 0;
    for (std::size_t t = begin; t < end; ++t) {
        if (!problem.outputBytes.empty())
            largest = std::max(largest, problem.outputBytes[t]);
        if (problem.weightOffset.size() <= t + 1)
            continue;
        for (std::uint32_t w = problem.weightOffset[t]; w < problem.weightOffset[t + 1]; ++w) {
            const std::uint32_t id = problem.weightId[w];
            if (!seen[id]) {
                seen[id] = 1;
                weights += problem.weightBytes[id];
            }
        }
    }
    return weights + 2 * bytesPerMicroBatch(largest, std::max(1, microBatches));
}

std::optional<PipelineStages> choosePipelineStages(const PlacementProblem& problem,
                                                   int microBatches,
                                                   const PipelineStageOptions& options) {
    const int m = std::max(1, microBatches);
    const int count = m * std::max(1, options.batches); // micro-batches through the pipeline
    const std::size_t n = problem.tasks();
    const int devices = problem.devices;
    if (n == 0 || devices <= 0)
        return std::nullopt;
    // Devices in any order while 2^D states stay small; beyond, in the problem's order.
    const bool anyOrder = devices <= 6;
    const std::size_t masks = anyOrder ? (std::size_t{1} << devices) : 1;
    const std::size_t frontLimit = std::max<std::size_t>(2, options.frontLimit);

    // Cut positions: every task boundary while the work allows, else evenly spaced ones.
    const double perPosition2 =
        static_cast<double>(masks) * devices * devices; // transitions per (position pair)
    // At most 1,024 positions: the tables below hold a few words per pair of positions.
    const auto fitting = std::min<std::size_t>(
        1024, static_cast<std::size_t>(std::max(
                  2.0, std::floor(std::sqrt(options.work / std::max(1.0, perPosition2))))));
    std::vector<std::size_t> position;
    if (n + 1 <= fitting) {
        for (std::size_t p = 0; p <= n; ++p)
            position.push_back(p);
    } else {
        const std::size_t cuts = fitting - 1;
        for (std::size_t k = 0; k <= cuts; ++k)
            position.push_back(k * n / cuts);
        position.erase(std::unique(position.begin(), position.end()), position.end());
    }
    const std::size_t positions = position.size();
    PipelineStages result;
    result.positions = positions;
    result.exact = positions == n + 1;

    // Per device, prefix sums of the per-micro-batch costs and of the tasks it may not take.
    std::vector<std::vector<double>> costPrefix(static_cast<std::size_t>(devices),
                                                std::vector<double>(n + 1, 0.0));
    std::vector<std::vector<std::uint32_t>> barredPrefix(static_cast<std::size_t>(devices),
                                                         std::vector<std::uint32_t>(n + 1, 0));
    for (int d = 0; d < devices; ++d) {
        auto& cost = costPrefix[static_cast<std::size_t>(d)];
        auto& barred = barredPrefix[static_cast<std::size_t>(d)];
        for (std::size_t t = 0; t < n; ++t) {
            const bool free = problem.instant[t] != 0;
            const bool allowed = free || problem.allowed(t, d);
            cost[t + 1] = cost[t] + (free || !allowed ? 0.0 : taskPerMicroBatch(problem, t, d, m));
            barred[t + 1] = barred[t] + (allowed ? 0 : 1);
        }
    }
    // Fixed instant tasks (pinned inputs) stay where they are: their values are copied to any
    // other stage that reads them. Unfixed ones sit in the stage around them.
    const auto in = producersOf(problem);
    const auto fixedInstant = [&](std::uint32_t t) {
        return problem.instant[t] && problem.fixed[t] >= 0;
    };
    // Per pair of positions (a < b): the values produced before position a that tasks in
    // [a, b) read (count, and bytes per micro-batch), and the stage's memory.
    const std::size_t pairs = positions * positions;
    std::vector<std::uint32_t> inCount(pairs, 0);
    std::vector<std::int64_t> inBytes(pairs, 0);
    std::vector<std::int64_t> memory(pairs, 0);
    const bool limited = std::any_of(problem.capacity.begin(), problem.capacity.end(),
                                     [](std::int64_t c) { return c >= 0; });
    {
        std::vector<std::int64_t> largestFrom(n, -1);
        std::vector<std::uint32_t> touched;
        std::vector<char> seenWeight(problem.weightBytes.size(), 0);
        std::vector<std::uint32_t> seenList;
        for (std::size_t a = 0; a + 1 < positions; ++a) {
            std::uint32_t count = 0;
            std::int64_t bytes = 0, weights = 0, largestOutput = 0;
            std::size_t t = position[a];
            for (std::size_t b = a + 1; b < positions; ++b) {
                for (; t < position[b]; ++t) {
                    if (!problem.instant[t]) {
                        for (const auto& [source, edgeBytes] : in[t]) {
                            if (source >= position[a] || fixedInstant(source))
                                continue;
                            const std::int64_t per = bytesPerMicroBatch(edgeBytes, m);
                            std::int64_t& largest = largestFrom[source];
                            if (largest < 0) {
                                touched.push_back(source);
                                ++count;
                                largest = 0;
                            }
                            if (per > largest) {
                                bytes += per - largest;
                                largest = per;
                            }
                        }
                    }
                    if (limited) {
                        if (!problem.outputBytes.empty())
                            largestOutput = std::max(largestOutput, problem.outputBytes[t]);
                        if (problem.weightOffset.size() > t + 1)
                            for (std::uint32_t w = problem.weightOffset[t];
                                 w < problem.weightOffset[t + 1]; ++w) {
                                const std::uint32_t id = problem.weightId[w];
                                if (!seenWeight[id]) {
                                    seenWeight[id] = 1;
                                    seenList.push_back(id);
                                    weights += problem.weightBytes[id];
                                }
                            }
                    }
                }
                inCount[a * positions + b] = count;
                inBytes[a * positions + b] = bytes;
                memory[a * positions + b] = weights + 2 * bytesPerMicroBatch(largestOutput, m);
            }
            for (std::uint32_t s : touched)
                largestFrom[s] = -1;
            touched.clear();
            for (std::uint32_t id : seenList)
                seenWeight[id] = 0;
            seenList.clear();
        }
    }
    // Fixed instants' consumers, by task, to find which stages read them.
    std::vector<std::pair<std::uint32_t, std::vector<std::uint32_t>>> pinnedInputs;
    for (std::uint32_t t = 0; t < n; ++t) {
        if (!fixedInstant(t))
            continue;
        std::vector<std::uint32_t> readers;
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e)
            if (!problem.instant[problem.edgeTarget[e]])
                readers.push_back(problem.edgeTarget[e]);
        std::sort(readers.begin(), readers.end());
        pinnedInputs.emplace_back(t, std::move(readers));
    }
    std::vector<std::vector<std::int64_t>> pinnedBytes(pinnedInputs.size());
    for (std::size_t k = 0; k < pinnedInputs.size(); ++k) {
        const std::uint32_t t = pinnedInputs[k].first;
        for (std::uint32_t reader : pinnedInputs[k].second) {
            std::int64_t bytes = 0;
            for (const auto& [source, edgeBytes] : in[reader])
                if (source == t)
                    bytes = std::max(bytes, edgeBytes);
            pinnedBytes[k].push_back(bytesPerMicroBatch(bytes, m));
        }
    }

    const auto stageCopies = [&](std::size_t a, std::size_t b, int from, int to) {
        double micros = 0;
        const std::uint32_t count = inCount[a * positions + b];
        if (count > 0 && from >= 0) {
            const auto link = static_cast<std::size_t>(from * devices + to);
            micros +=
                count * problem.linkLatency[link] +
                static_cast<double>(inBytes[a * positions + b]) / problem.linkBytesPerMicro[link];
        }
        for (std::size_t k = 0; k < pinnedInputs.size(); ++k) {
            const int home = problem.fixed[pinnedInputs[k].first];
            if (home == to)
                continue;
            std::int64_t bytes = -1;
            const auto& readers = pinnedInputs[k].second;
            for (std::size_t r = 0; r < readers.size(); ++r)
                if (readers[r] >= position[a] && readers[r] < position[b])
                    bytes = std::max(bytes, pinnedBytes[k][r]);
            if (bytes >= 0)
                micros += problem.copyMicros(home, to, bytes);
        }
        return micros;
    };

    // States (mask, last device, position), each with its Pareto front.
    struct Entry {
        double sum = 0, slowest = 0;
        std::uint32_t fromState = 0, fromEntry = 0; ///< the state before the last stage
        bool first = false;
    };
    const auto stateOf = [&](std::size_t mask, int last, std::size_t p) {
        return (mask * static_cast<std::size_t>(devices) + static_cast<std::size_t>(last)) *
                   positions +
               p;
    };
    std::vector<std::vector<Entry>> front(masks * static_cast<std::size_t>(devices) * positions);
    const auto offer = [&](std::vector<Entry>& list, const Entry& e) {
        // Keep the non-dominated entries, sorted by the slowest stage.
        for (const Entry& k : list)
            if (k.slowest <= e.slowest && k.sum <= e.sum)
                return;
        list.erase(std::remove_if(
                       list.begin(), list.end(),
                       [&](const Entry& k) { return e.slowest <= k.slowest && e.sum <= k.sum; }),
                   list.end());
        list.insert(
            std::upper_bound(list.begin(), list.end(), e,
                             [](const Entry& x, const Entry& y) { return x.slowest < y.slowest; }),
            e);
    };
    const auto fits = [&](std::size_t a, std::size_t b, int d) {
        const std::int64_t capacity =
            problem.capacity.empty() ? -1 : problem.capacity[static_cast<std::size_t>(d)];
        return capacity < 0 || memory[a * positions + b] <= capacity;
    };
    const auto allowedOn = [&](std::size_t a, std::size_t b, int d) {
        const auto& barred = barredPrefix[static_cast<std::size_t>(d)];
        return barred[position[b]] == barred[position[a]] && fits(a, b, d);
    };
    const auto compute = [&](std::size_t a, std::size_t b, int d) {
        const auto& cost = costPrefix[static_cast<std::size_t>(d)];
        return cost[position[b]] - cost[position[a]];
    };
    for (int d = 0; d < devices; ++d)
        for (std::size_t b = 1; b < positions; ++b) {
            if (!allowedOn(0, b, d))
                continue;
            const double c = compute(0, b, d);
            Entry e;
            e.sum = c + stageCopies(0, b, -1, d);
            e.slowest = c;
            e.first = true;
            const std::size_t mask = anyOrder ? (std::size_t{1} << d) : 0;
            offer(front[stateOf(mask, d, b)], e);
        }
    // Positions grow along every transition, so one sweep over positions settles each state
    // before it is extended.
    for (std::size_t a = 1; a + 1 < positions; ++a)
        for (std::size_t mask = 0; mask < masks; ++mask)
            for (int last = 0; last < devices; ++last) {
                std::vector<Entry>& here = front[stateOf(mask, last, a)];
                if (here.empty())
                    continue;
                if (here.size() > frontLimit) {
                    result.exact = false;
                    // Keep evenly spaced entries, the extremes included.
                    std::vector<Entry> kept;
                    for (std::size_t k = 0; k < frontLimit; ++k)
                        kept.push_back(here[k * (here.size() - 1) / (frontLimit - 1)]);
                    here = std::move(kept);
                }
                const auto fromState = static_cast<std::uint32_t>(stateOf(mask, last, a));
                for (int d = 0; d < devices; ++d) {
                    if (anyOrder ? (mask >> d) & 1 : d <= last)
                        continue;
                    // One stage per resource: devices sharing one would take turns.
                    bool shared = false;
                    for (int u = 0; u < devices && anyOrder; ++u)
                        shared = shared || ((mask >> u) & 1 &&
                                            resourceOf(problem, u) == resourceOf(problem, d));
                    if (shared)
                        continue;
                    const std::size_t next = anyOrder ? mask | (std::size_t{1} << d) : 0;
                    for (std::size_t b = a + 1; b < positions; ++b) {
                        if (!allowedOn(a, b, d))
                            break; // a barred task or the memory stays for every longer stage
                        const double c = compute(a, b, d);
                        const double x = stageCopies(a, b, last, d);
                        std::vector<Entry>& there = front[stateOf(next, d, b)];
                        for (std::uint32_t k = 0; k < here.size(); ++k) {
                            Entry e;
                            e.sum = here[k].sum + c + x;
                            e.slowest = std::max(here[k].slowest, c);
                            e.fromState = fromState;
                            e.fromEntry = k;
                            offer(there, e);
                        }
                    }
                }
            }

    // The best finished state; then the stages back along the pointers.
    double best = kInfinity;
    std::size_t bestState = 0, bestEntry = 0;
    for (std::size_t mask = 0; mask < masks; ++mask)
        for (int last = 0; last < devices; ++last) {
            const std::size_t s = stateOf(mask, last, positions - 1);
            // The run's fixed overhead: the largest of the devices used.
            double overhead = 0;
            for (int d = 0; d < devices && !problem.runMicros.empty(); ++d)
                if (anyOrder ? (mask >> d) & 1 : d == last)
                    overhead = std::max(overhead, problem.runMicros[static_cast<std::size_t>(d)]);
            for (std::size_t k = 0; k < front[s].size(); ++k) {
                const double latency =
                    front[s][k].sum + (count - 1) * front[s][k].slowest + overhead;
                if (latency < best) {
                    best = latency;
                    bestState = s;
                    bestEntry = k;
                }
            }
        }
    if (best == kInfinity)
        return std::nullopt;
    result.assignment.assign(n, -1);
    std::size_t s = bestState, k = bestEntry;
    while (true) {
        const int device = static_cast<int>((s / positions) % static_cast<std::size_t>(devices));
        const std::size_t end = position[s % positions];
        const Entry& e = front[s][k];
        const std::size_t begin = e.first ? 0 : position[e.fromState % positions];
        for (std::size_t t = begin; t < end; ++t)
            result.assignment[t] =
                fixedInstant(static_cast<std::uint32_t>(t)) ? problem.fixed[t] : device;
        if (e.first)
            break;
        s = e.fromState;
        k = e.fromEntry;
    }
    result.latencyMicros =
        pipelinedLatency(problem, result.assignment, m, &result.stages, options.batches);
    return result;
}

} // namespace placer
