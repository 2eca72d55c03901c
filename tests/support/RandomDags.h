// Random task graphs for the automatic placement, made as the scheduling literature makes them
// (Topcuoglu, Hariri and Wu, "Performance-effective and low-complexity task scheduling for
// heterogeneous computing", 2002): tasks in levels, edges from one level to later ones, a mean
// computation cost per task varied per device by a heterogeneity factor, and edge volumes set so
// that the mean copy takes `ccr` times the mean computation.
#pragma once

#include "plan/AutoPlacer.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace placer::testing {

struct RandomDagSpec {
    int tasks = 100;
    int devices = 3;
    double ccr = 1;           ///< communication to computation ratio
    double shape = 1;         ///< levels ~ sqrt(tasks) / shape
    double heterogeneity = 1; ///< per-device cost factor in [1 - h/2, 1 + h/2]
    int outDegree = 3;        ///< mean edges out of a task
    double meanCost = 50;     ///< µs
    std::uint64_t seed = 1;
};

inline PlacementProblem randomDag(const RandomDagSpec& spec) {
    std::mt19937_64 random(spec.seed);
    const auto uniform = [&](double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(random);
    };
    const int n = std::max(2, spec.tasks);
    const int levels =
        std::max(2, static_cast<int>(std::lround(std::sqrt(static_cast<double>(n)) / spec.shape)));
    // Each task's level: every level gets at least one, the rest at random; sorted so that the
    // task numbering is topological.
    std::vector<int> level(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t)
        level[static_cast<std::size_t>(t)] =
            t < levels ? t : std::uniform_int_distribution<int>(0, levels - 1)(random);
    std::sort(level.begin(), level.end());
    std::vector<int> firstOfLevel(static_cast<std::size_t>(levels) + 1, n);
    for (int t = n; t-- > 0;)
        firstOfLevel[static_cast<std::size_t>(level[static_cast<std::size_t>(t)])] = t;

    PlacementProblem problem;
    problem.devices = spec.devices;
    for (int d = 0; d < spec.devices; ++d)
        problem.resourceOf.push_back(d);
    problem.setLinks(1.0, 1.0); // 1 µs latency, a byte per µs: bytes are µs
    // Edges: each task past the first level reads one task of the level before, plus more from
    // any earlier level up to the out-degree on average.
    std::vector<std::vector<std::uint32_t>> successors(static_cast<std::size_t>(n));
    for (int t = 0; t < n; ++t) {
        const int l = level[static_cast<std::size_t>(t)];
        if (l == 0)
            continue;
        const int from = firstOfLevel[static_cast<std::size_t>(l - 1)];
        const int to = firstOfLevel[static_cast<std::size_t>(l)] - 1;
        const int p = std::uniform_int_distribution<int>(from, to)(random);
        successors[static_cast<std::size_t>(p)].push_back(static_cast<std::uint32_t>(t));
    }
    const double extraPerTask = std::max(0.0, spec.outDegree - 1.0);
    for (int t = 0; t < n; ++t) {
        const int l = level[static_cast<std::size_t>(t)];
        const int later = firstOfLevel[static_cast<std::size_t>(l + 1)];
        if (later >= n)
            continue;
        const int extra = std::poisson_distribution<int>(extraPerTask)(random);
        for (int k = 0; k < extra; ++k) {
            const int s = std::uniform_int_distribution<int>(later, n - 1)(random);
            successors[static_cast<std::size_t>(t)].push_back(static_cast<std::uint32_t>(s));
        }
    }
    for (auto& list : successors) {
        std::sort(list.begin(), list.end());
        list.erase(std::unique(list.begin(), list.end()), list.end());
    }
    const double meanComm = spec.ccr * spec.meanCost;
    std::vector<double> costs(static_cast<std::size_t>(spec.devices));
    for (int t = 0; t < n; ++t) {
        const double mean = uniform(0.0, 2 * spec.meanCost);
        for (int d = 0; d < spec.devices; ++d)
            costs[static_cast<std::size_t>(d)] = std::max(
                0.5, mean * uniform(1 - spec.heterogeneity / 2, 1 + spec.heterogeneity / 2));
        problem.addTask(costs);
        for (std::uint32_t s : successors[static_cast<std::size_t>(t)])
            problem.addEdge(s, static_cast<std::int64_t>(std::llround(uniform(0.0, 2 * meanComm))));
        problem.outputBytes.back() = 1;
    }
    return problem;
}

} // namespace placer::testing
