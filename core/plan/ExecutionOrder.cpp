#include "plan/ExecutionOrder.h"

#include "plan/GraphIndex.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace placer {

namespace {
constexpr double kFlopsPerMicro = 5e4;  // 50 GFLOP/s
constexpr double kBytesPerMicro = 1e4;  // 10 GB/s
constexpr double kInvokeOverhead = 1.0; // µs
constexpr double kCopyOverhead = 5.0;
} // namespace

double estimateNodeMicros(const Graph& graph, NodeId id) {
    const Node& node = graph.node(id);
    if (node.role() != OpRole::Compute)
        return 0;
    double bytes = 0;
    for (const ValueRef input : node.inputs)
        bytes += static_cast<double>(graph.type(input).bytes());
    double outElems = 0;
    for (const TensorType& output : node.outputs) {
        bytes += static_cast<double>(output.bytes());
        outElems += static_cast<double>(output.elementCount());
    }
    double flops = outElems;
    const KernelFamily family = node.op->kernel.family;
    if (family == KernelFamily::Conv && node.inputs.size() >= 2) {
        // Per output element, one multiply-add per weight of its group's filter.
        const TensorType& weights = graph.type(node.inputs[1]);
        const double perFilter =
            weights.shape.empty()
                ? 1.0
                : static_cast<double>(weights.elementCount()) /
                      static_cast<double>(std::max<std::int64_t>(1, weights.shape[0]));
        flops = 2 * outElems * perFilter;
    } else if (family == KernelFamily::Matmul && node.inputs.size() >= 2) {
        // The inner dimension: the one A and B share (A's last unless A is transposed).
        const TensorType& a = graph.type(node.inputs[0]);
        const TensorType& b = graph.type(node.inputs[1]);
        double inner = a.shape.empty() ? 1.0 : static_cast<double>(a.shape.back());
        if (a.rank() >= 2 && b.rank() >= 2 && a.shape.back() != b.shape[b.shape.size() - 2] &&
            a.shape.back() != b.shape.back())
            inner = static_cast<double>(a.shape[a.shape.size() - 2]);
        flops = 2 * outElems * inner;
    }
    return kInvokeOverhead + std::max(flops / kFlopsPerMicro, bytes / kBytesPerMicro);
}

double estimateCopyMicros(std::int64_t bytes) {
    return kCopyOverhead + static_cast<double>(bytes) / kBytesPerMicro;
}

std::vector<double> longestPathToEnd(const ListScheduling& problem) {
    const std::size_t n = problem.cost.size();
    std::vector<double> rank(n, 0);
    for (std::size_t i = n; i-- > 0;) {
        double longest = 0;
        for (const auto& [next, delay] : problem.successors[i])
            longest = std::max(longest, delay + rank[next]);
        rank[i] = problem.cost[i] + longest;
    }
    return rank;
}

ListSchedule listSchedule(const ListScheduling& problem) {
    const std::size_t n = problem.cost.size();
    const auto before = [&](std::uint32_t a, std::uint32_t b) {
        return problem.priority[a] != problem.priority[b] ? problem.priority[a] > problem.priority[b]
                                                          : a < b;
    };
    int resources = 0;
    std::vector<int> remaining(n, 0);
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (problem.resource[i] < 0)
            continue;
        resources = std::max(resources, problem.resource[i] + 1);
        ++total;
        for (const auto& edge : problem.successors[i])
            ++remaining[edge.first];
    }
    ListSchedule result;
    result.start.assign(n, 0);
    result.end.assign(n, 0);
    result.order.reserve(total);
    std::vector<double> readyAt(n, 0), freeAt(static_cast<std::size_t>(resources), 0);
    // Per resource: items whose predecessors are scheduled, by when they are ready, and those
    // ready by the time the resource is free, by priority.
    std::vector<std::multimap<double, std::uint32_t>> pending(freeAt.size());
    std::vector<std::set<std::uint32_t, decltype(before)>> available(
        freeAt.size(), std::set<std::uint32_t, decltype(before)>(before));
    for (std::size_t i = 0; i < n; ++i) {
        if (problem.resource[i] >= 0 && remaining[i] == 0)
            pending[static_cast<std::size_t>(problem.resource[i])].emplace(
                0.0, static_cast<std::uint32_t>(i));
    }
    while (result.order.size() < total) {
        // Each resource's next item; the resource that can start soonest goes first.
        int best = -1;
        double bestStart = std::numeric_limits<double>::infinity();
        std::uint32_t bestItem = 0;
        for (std::size_t r = 0; r < freeAt.size(); ++r) {
            auto& waiting = pending[r];
            while (!waiting.empty() && waiting.begin()->first <= freeAt[r]) {
                available[r].insert(waiting.begin()->second);
                waiting.erase(waiting.begin());
            }
            double at;
            std::uint32_t candidate;
            if (!available[r].empty()) {
                candidate = *available[r].begin();
                at = freeAt[r];
            } else if (!waiting.empty()) {
                at = waiting.begin()->first;
                candidate = waiting.begin()->second;
                for (auto it = waiting.begin(); it != waiting.end() && it->first == at; ++it)
                    if (before(it->second, candidate))
                        candidate = it->second;
            } else {
                continue;
            }
            if (at < bestStart || (at == bestStart && best >= 0 && before(candidate, bestItem))) {
                best = static_cast<int>(r);
                bestStart = at;
                bestItem = candidate;
            }
        }
        if (best < 0)
            break; // a cycle: cannot happen for a DAG
        const auto r = static_cast<std::size_t>(best);
        if (!available[r].erase(bestItem)) {
            for (auto it = pending[r].begin(); it != pending[r].end(); ++it) {
                if (it->second == bestItem) {
                    pending[r].erase(it);
                    break;
                }
            }
        }
        result.start[bestItem] = bestStart;
        result.end[bestItem] = bestStart + problem.cost[bestItem];
        freeAt[r] = result.end[bestItem];
        result.makespan = std::max(result.makespan, result.end[bestItem]);
        result.order.push_back(bestItem);
        for (const auto& [next, delay] : problem.successors[bestItem]) {
            readyAt[next] = std::max(readyAt[next], result.end[bestItem] + delay);
            if (--remaining[next] == 0 && problem.resource[next] >= 0)
                pending[static_cast<std::size_t>(problem.resource[next])].emplace(readyAt[next],
                                                                                  next);
        }
    }
    return result;
}

std::vector<NodeId> executionOrder(const Graph& graph, const GraphIndex& index, const Plan& plan,
                                   int deviceCount) {
    const auto n = static_cast<std::uint32_t>(index.size());
    ListScheduling problem;
    problem.resource.resize(n);
    problem.cost.resize(n);
    problem.successors.resize(n);
    auto deviceOf = [&](std::uint32_t i) {
        const DeviceId d = i < plan.devices.size() ? plan.devices[i] : DeviceId();
        return d.valid() && static_cast<int>(d.index) < deviceCount ? static_cast<int>(d.index)
                                                                     : deviceCount;
    };
    for (std::uint32_t i = 0; i < n; ++i) {
        problem.resource[i] = deviceOf(i);
        problem.cost[i] = index.isDeviceCopy(i)
                              ? estimateCopyMicros(index.valueBytes[index.outputBase[i]])
                              : estimateNodeMicros(graph, NodeId(i));
        // An edge between devices costs a copy (an explicit device_copy node is its own copy).
        for (std::uint32_t e = index.consumerOffsets[i]; e < index.consumerOffsets[i + 1]; ++e) {
            const std::uint32_t c = index.consumer[e];
            const double delay =
                deviceOf(i) == deviceOf(c) || index.isDeviceCopy(c)
                    ? 0.0
                    : estimateCopyMicros(
                          index.valueBytes[index.outputBase[i] + index.consumedOutput[e]]);
            problem.successors[i].emplace_back(c, delay);
        }
    }
    problem.priority = longestPathToEnd(problem); // graph order is topological
    const ListSchedule schedule = listSchedule(problem);
    // By predicted start; ties (zero-cost nodes) in graph order, which keeps it topological.
    std::vector<std::uint32_t> sorted(schedule.order);
    std::stable_sort(sorted.begin(), sorted.end(), [&](std::uint32_t a, std::uint32_t b) {
        if (schedule.start[a] != schedule.start[b])
            return schedule.start[a] < schedule.start[b];
        return a < b;
    });
    std::vector<NodeId> result;
    result.reserve(sorted.size());
    for (std::uint32_t i : sorted)
        result.push_back(NodeId(i));
    return result;
}

} // namespace placer
