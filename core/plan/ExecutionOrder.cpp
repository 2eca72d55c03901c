// The expected execution order the memory plan follows, and the cost estimates behind it.
#include "plan/ExecutionOrder.h"

#include "plan/CostModel.h"
#include "plan/GraphIndex.h"

#include <algorithm>
#include <limits>

namespace placer {

namespace {
constexpr double kFlopsPerMicro = 5e4;  // 50 GFLOP/s
constexpr double kBytesPerMicro = 1e4;  // 10 GB/s
constexpr double kInvokeOverhead = 1.0; // µs
constexpr double kCopyOverhead = 5.0;

/// A kernel of `operations` arithmetic operations that moves `bytes`: bound by one or the other.
double kernelMicros(double operations, double bytes) {
    return kInvokeOverhead + std::max(operations / kFlopsPerMicro, bytes / kBytesPerMicro);
}
} // namespace

double estimateNodeMicros(const Graph& graph, NodeId id) {
    if (graph.node(id).role() != OpRole::Compute)
        return 0;
    const OpWork work = opWork(graph, id);
    return kernelMicros(work.flops, work.bytes);
}

double estimateCopyMicros(std::int64_t bytes) {
    return kCopyOverhead + static_cast<double>(bytes) / kBytesPerMicro;
}

std::vector<double> longestPathToEnd(const ListScheduling& problem) {
    const std::size_t n = problem.size();
    std::vector<double> rank(n, 0);
    for (std::size_t i = n; i-- > 0;) {
        double longest = 0;
        for (std::uint32_t e = problem.successorOffset[i]; e < problem.successorOffset[i + 1]; ++e)
            longest = std::max(longest, problem.delay[e] + rank[problem.successor[e]]);
        rank[i] = problem.cost[i] + longest;
    }
    return rank;
}

ListSchedule listSchedule(const ListScheduling& problem) {
    const std::size_t n = problem.size();
    // "a before b": a runs first among ready items (higher priority, then lower index).
    const auto before = [&](std::uint32_t a, std::uint32_t b) {
        return problem.priority[a] != problem.priority[b]
                   ? problem.priority[a] > problem.priority[b]
                   : a < b;
    };
    const auto scheduled = [&](std::size_t i) {
        return problem.resource[i] >= 0 || problem.resource[i] == ListScheduling::kInstant;
    };
    int resources = 0;
    std::vector<int> remaining(n, 0);
    std::size_t total = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!scheduled(i))
            continue;
        resources = std::max(resources, problem.resource[i] + 1);
        ++total;
        for (std::uint32_t e = problem.successorOffset[i]; e < problem.successorOffset[i + 1]; ++e)
            ++remaining[problem.successor[e]];
    }
    ListSchedule result;
    result.start.assign(n, 0);
    result.end.assign(n, 0);
    result.order.reserve(total);
    std::vector<double> readyAt(n, 0), freeAt(static_cast<std::size_t>(resources), 0);
    if (problem.release.size() == n)
        readyAt = problem.release;
    // Per resource, two heaps: items waiting for their inputs (soonest ready on top, then
    // first-to-run), and items ready by the time the resource is free (first-to-run on top).
    // Entries carry their keys, so the heaps compare without chasing the per-item arrays.
    struct Waiting {
        double ready, rank;
        std::uint32_t item;
    };
    struct Ready {
        double rank;
        std::uint32_t item;
    };
    // std heaps put the greatest on top: "greater" means "later".
    const auto laterReady = [](const Waiting& a, const Waiting& b) {
        if (a.ready != b.ready)
            return a.ready > b.ready;
        if (a.rank != b.rank)
            return a.rank < b.rank;
        return a.item > b.item;
    };
    const auto runsLater = [](const Ready& a, const Ready& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.item > b.item;
    };
    std::vector<std::vector<Waiting>> pending(freeAt.size());
    std::vector<std::vector<Ready>> available(freeAt.size());
    // Instant items whose predecessors have ended: they end when ready, on no resource.
    std::vector<std::uint32_t> instant;
    auto wait = [&](std::uint32_t i) {
        if (problem.resource[i] == ListScheduling::kInstant) {
            instant.push_back(i);
            return;
        }
        auto& heap = pending[static_cast<std::size_t>(problem.resource[i])];
        heap.push_back(Waiting{readyAt[i], problem.priority[i], i});
        std::push_heap(heap.begin(), heap.end(), laterReady);
    };
    auto finish = [&](std::uint32_t item, double start, double end) {
        result.start[item] = start;
        result.end[item] = end;
        result.makespan = std::max(result.makespan, end);
        result.order.push_back(item);
        for (std::uint32_t e = problem.successorOffset[item]; e < problem.successorOffset[item + 1];
             ++e) {
            const std::uint32_t next = problem.successor[e];
            readyAt[next] = std::max(readyAt[next], end + problem.delay[e]);
            if (--remaining[next] == 0 && scheduled(next))
                wait(next);
        }
    };
    auto drainInstant = [&] {
        while (!instant.empty()) {
            const std::uint32_t i = instant.back();
            instant.pop_back();
            finish(i, readyAt[i], readyAt[i] + problem.cost[i]);
        }
    };
    for (std::size_t i = 0; i < n; ++i) {
        if (scheduled(i) && remaining[i] == 0)
            wait(static_cast<std::uint32_t>(i));
    }
    drainInstant();
    while (result.order.size() < total) {
        // Each resource's next item; the resource that can start soonest goes first.
        int best = -1;
        double bestStart = std::numeric_limits<double>::infinity();
        std::uint32_t bestItem = 0;
        for (std::size_t r = 0; r < freeAt.size(); ++r) {
            auto& waiting = pending[r];
            auto& ready = available[r];
            while (!waiting.empty() && waiting.front().ready <= freeAt[r]) {
                std::pop_heap(waiting.begin(), waiting.end(), laterReady);
                ready.push_back(Ready{waiting.back().rank, waiting.back().item});
                waiting.pop_back();
                std::push_heap(ready.begin(), ready.end(), runsLater);
            }
            double at;
            std::uint32_t candidate;
            if (!ready.empty()) {
                candidate = ready.front().item;
                at = freeAt[r];
            } else if (!waiting.empty()) {
                candidate = waiting.front().item;
                at = waiting.front().ready;
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
        if (!available[r].empty()) {
            std::pop_heap(available[r].begin(), available[r].end(), runsLater);
            available[r].pop_back();
        } else {
            std::pop_heap(pending[r].begin(), pending[r].end(), laterReady);
            pending[r].pop_back();
        }
        freeAt[r] = bestStart + problem.cost[bestItem];
        finish(bestItem, bestStart, freeAt[r]);
        drainInstant();
    }
    return result;
}

bool runsInMicroBatches(const Graph& graph) {
    return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                       [](const Node& node) { return node.microBatch >= 0; });
}

std::vector<NodeId> executionOrder(const Graph& graph, const GraphIndex& index, const Plan& plan,
                                   int deviceCount, OrderScratch& scratch,
                                   std::vector<NodeId> result) {
    const auto n = static_cast<std::uint32_t>(index.size());
    auto deviceOf = [&](std::uint32_t i) {
        const DeviceId d = i < plan.devices.size() ? plan.devices[i] : DeviceId();
        return d.valid() && static_cast<int>(d.index) < deviceCount ? static_cast<int>(d.index)
                                                                    : deviceCount;
    };
    // On one device every topological order runs alike: keep the graph's. A pipelined graph
    // (--micro-batches) is in micro-batch order already, which is the order its devices work in
    // (vm/Schedule.h); by start times alone every micro-batch would seem to start at once.
    bool oneDevice = true;
    for (std::uint32_t i = 1; i < n && oneDevice; ++i)
        oneDevice = deviceOf(i) == deviceOf(0);
    const bool pipelined = runsInMicroBatches(graph);
    result.clear();
    result.reserve(n);
    if (oneDevice || pipelined) {
        for (std::uint32_t i = 0; i < n; ++i)
            result.push_back(NodeId(i));
        return result;
    }
    // Costs from the index where the shapes do not matter (the bytes are there already); the
    // graph only for convolutions and matrix products.
    auto cheapCost = [&](std::uint32_t i) {
        if (index.isDeviceCopy(i))
            return estimateCopyMicros(index.valueBytes[index.outputBase[i]]);
        if (index.role[i] != OpRole::Compute)
            return 0.0;
        const KernelFamily family = index.op[i]->kernel.family;
        if (family == KernelFamily::Conv || family == KernelFamily::Matmul)
            return estimateNodeMicros(graph, NodeId(i));
        // What estimateNodeMicros computes, from the sizes the index already has (output
        // elements at 4 bytes each: only ratios matter).
        double bytes = 0;
        for (std::uint32_t e = index.inputOffsets[i]; e < index.inputOffsets[i + 1]; ++e)
            bytes += static_cast<double>(
                index.valueBytes[index.outputBase[index.inputNode[e]] + index.inputOutput[e]]);
        double outBytes = 0;
        for (std::uint32_t v = index.outputBase[i]; v < index.outputBase[i + 1]; ++v)
            outBytes += static_cast<double>(index.valueBytes[v]);
        return kernelMicros(outBytes / 4, bytes + outBytes);
    };
    // Every node starts as soon as its inputs have arrived (a copy between devices delays them
    // by its estimated time): one pass in graph order, because a node's inputs come before it.
    // Work does not wait for its device here, as a dataflow device does not make ready work
    // wait for work that is not: what decides the order on a device is when its work can start,
    // and work that waits for another device comes after work that does not.
    std::vector<double>& start = scratch.start;
    start.assign(n, 0);
    std::vector<double>& end = scratch.end;
    end.assign(n, 0);
    double latest = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        const int device = deviceOf(i);
        double ready = 0;
        for (std::uint32_t e = index.inputOffsets[i]; e < index.inputOffsets[i + 1]; ++e) {
            const std::uint32_t p = index.inputNode[e];
            const bool crosses = deviceOf(p) != device && !index.isDeviceCopy(i);
            const double arrives =
                end[p] + (crosses
                              ? estimateCopyMicros(
                                    index.valueBytes[index.outputBase[p] + index.inputOutput[e]])
                              : 0.0);
            ready = std::max(ready, arrives);
        }
        start[i] = ready;
        end[i] = ready + cheapCost(i);
        latest = std::max(latest, ready);
    }
    // The order by start, ties in graph order: a counting sort over n buckets of equal time
    // (linear). It is topological: a node starts no earlier than its inputs, so it falls in the
    // same bucket (where graph order puts it after them) or a later one.
    std::vector<std::uint32_t>& bucketStart = scratch.bucketStart;
    bucketStart.assign(static_cast<std::size_t>(n) + 1, 0);
    std::vector<std::uint32_t>& bucketOf = scratch.bucketOf;
    bucketOf.resize(n);
    const double scale = latest > 0 ? static_cast<double>(n - 1) / latest : 0.0;
    for (std::uint32_t i = 0; i < n; ++i) {
        bucketOf[i] = std::min(n - 1, static_cast<std::uint32_t>(start[i] * scale));
        ++bucketStart[bucketOf[i] + 1];
    }
    for (std::size_t b = 1; b < bucketStart.size(); ++b)
        bucketStart[b] += bucketStart[b - 1];
    result.assign(n, NodeId());
    for (std::uint32_t i = 0; i < n; ++i)
        result[bucketStart[bucketOf[i]]++] = NodeId(i);
    return result;
}

} // namespace placer
