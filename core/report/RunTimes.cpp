// A run's times as the reports read them (report/RunReport.h): medians per node and copy, the
// user's graph's times from the optimised graph's, split regions, streams, and the sizes ran.
#include "report/RunReport.h"

#include "report/RunViews.h"

#include <algorithm>

namespace placer {

using namespace runview;

MedianTimes medianTimes(const Program& program, const RunResult& result, std::size_t nodeCount,
                        std::size_t copyCount) {
    MedianTimes times{std::vector<double>(nodeCount, -1), std::vector<double>(copyCount, -1)};
    for (std::size_t k = program.runStart; k < program.code.size() && k < result.instrMicros.size();
         ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::Invoke && instr.node.index < nodeCount)
            times.nodeMillis[instr.node.index] = median(result.instrMicros[k]) / 1000.0;
        else if (instr.op == Opcode::DeviceCopy && instr.index >= 0 &&
                 static_cast<std::size_t>(instr.index) < copyCount)
            times.copyMillis[static_cast<std::size_t>(instr.index)] =
                median(result.instrMicros[k]) / 1000.0;
    }
    return times;
}

std::string idleReason(const RunOutcome& input, const IdleStretch& stretch) {
    const Views v{input.graph(), input.devices, input.executor->program(), input.result};
    return idleReasonIn(v, *input.executor, stretch);
}

MedianTimes userMedianTimes(const MedianTimes& ran, const Graph& graph, const Plan& plan,
                            const std::vector<NodeId>& origin, std::size_t userNodes,
                            const Plan& userPlan) {
    MedianTimes user{std::vector<double>(userNodes, -1),
                     std::vector<double>(userPlan.copies.size(), -1)};
    // The user's value a node of the run stands for: its own, or for an inserted node, the value
    // it changes (inserted nodes read one value).
    auto userValue = [&](ValueRef value) -> std::optional<ValueRef> {
        while (value.node.index < origin.size()) {
            if (origin[value.node.index].valid())
                return ValueRef{origin[value.node.index], value.output};
            const Node& inserted = graph.node(value.node);
            if (inserted.inputs.empty() || !(inserted.inputs[0].node < value.node))
                return std::nullopt;
            value = inserted.inputs[0];
        }
        return std::nullopt;
    };
    for (std::uint32_t i = 0; i < graph.size() && i < ran.nodeMillis.size(); ++i) {
        const auto value = userValue(ValueRef{NodeId(i), 0});
        if (ran.nodeMillis[i] < 0 || !value || value->node.index >= userNodes)
            continue;
        double& t = user.nodeMillis[value->node.index];
        t = std::max(t, 0.0) + ran.nodeMillis[i];
    }
    for (std::size_t c = 0; c < plan.copies.size() && c < ran.copyMillis.size(); ++c) {
        const auto value = userValue(plan.copies[c].value);
        for (std::size_t u = 0; value && u < userPlan.copies.size(); ++u) {
            if (userPlan.copies[u].value == *value && userPlan.copies[u].to == plan.copies[c].to)
                user.copyMillis[u] = ran.copyMillis[c];
        }
    }
    return user;
}

std::vector<SplitRunTimes> splitRunTimes(const RunOutcome& input) {
    std::vector<SplitRunTimes> times;
    if (input.userPlan.splits.empty() || input.ran->region.empty())
        return times;
    const Program& program = input.executor->program();
    const RunResult& result = input.result;
    for (const SplitRegion& region : input.userPlan.splits) {
        SplitRunTimes entry;
        entry.name = region.name;
        entry.shardMicros.assign(region.shards.size(), 0);
        times.push_back(std::move(entry));
    }
    auto regionOf = [&](std::size_t k) -> std::int32_t {
        const NodeId node = program.code[k].node;
        return node.valid() && node.index < input.ran->region.size() ? input.ran->region[node.index]
                                                                     : -1;
    };
    // Each shard's kernels: per iteration, summed; then the median iteration.
    for (std::size_t r = 0; r < times.size(); ++r) {
        for (std::size_t s = 0; s < times[r].shardMicros.size(); ++s) {
            times[r].shardMicros[s] = medianOfSums(program, result, [&](std::size_t k) {
                return program.code[k].op == Opcode::Invoke && regionOf(k) == static_cast<int>(r) &&
                       input.ran->shard[program.code[k].node.index] == static_cast<std::int32_t>(s);
            });
        }
    }
    // The span in the traced iteration: its kernels, splits, concats and their copies.
    std::vector<std::pair<double, double>> span(times.size(), {INFINITY, -INFINITY});
    for (const TimedEvent& event : result.trace) {
        const std::int32_t r = regionOf(event.instruction);
        if (r < 0 || static_cast<std::size_t>(r) >= span.size())
            continue;
        span[static_cast<std::size_t>(r)].first =
            std::min(span[static_cast<std::size_t>(r)].first, event.start);
        span[static_cast<std::size_t>(r)].second =
            std::max(span[static_cast<std::size_t>(r)].second, event.end);
    }
    for (std::size_t r = 0; r < times.size(); ++r)
        times[r].spanMicros = span[r].second > span[r].first ? span[r].second - span[r].first : 0;
    return times;
}

std::optional<StreamRunTimes> streamRunTimes(const RunOutcome& input) {
    const std::vector<SplitRegion>& regions = input.userPlan.splits;
    const auto found = std::find_if(regions.begin(), regions.end(), [](const SplitRegion& r) {
        return r.batches > 1 && !r.shards.empty();
    });
    if (found == regions.end() || !input.executor || input.ran->region.empty())
        return std::nullopt;
    const SplitRegion& region = *found;
    const auto r = static_cast<std::int32_t>(found - regions.begin());
    StreamRunTimes times;
    times.batches = region.batches;
    times.batch = region.batch;
    times.microBatches =
        static_cast<std::int32_t>(region.shards.size()) / std::max(region.batches, 1);
    times.medianMicros = median(input.result.latencyMicros);
    if (times.medianMicros > 0)
        times.itemsPerSecond =
            static_cast<double>(times.batches * times.batch) / (times.medianMicros / 1e6);
    if (input.userPlan.sharded && input.userPlan.sharded->plan &&
        input.userPlan.sharded->plan->prediction)
        times.predictedMicros = input.userPlan.sharded->plan->prediction->makespanMicros;
    const Program& program = input.executor->program();
    std::vector<std::pair<double, double>> span(static_cast<std::size_t>(times.batches),
                                                {INFINITY, -INFINITY});
    for (const TimedEvent& event : input.result.trace) {
        const NodeId node = program.code[event.instruction].node;
        if (!node.valid() || node.index >= input.ran->region.size() ||
            input.ran->region[node.index] != r || input.ran->shard[node.index] < 0)
            continue;
        const auto b = static_cast<std::size_t>(input.ran->shard[node.index] / times.microBatches);
        if (b >= span.size())
            continue;
        span[b].first = std::min(span[b].first, event.start);
        span[b].second = std::max(span[b].second, event.end);
    }
    for (const auto& [first, last] : span) {
        times.spanMicros.push_back(last > first ? last - first : 0);
        times.doneMicros.push_back(last > first ? last - input.result.traceOrigin : 0);
    }
    times.batchMicros = median(times.spanMicros);
    return times;
}

RanSizes ranSizes(const RunOutcome& input) {
    RanSizes sizes;
    if (input.userGraph)
        sizes.symbols = input.userGraph->symbolValues;
    if (!input.executor)
        return sizes;
    const Views v{input.graph(), input.devices, input.executor->program(), input.result};
    for (const Views::FoundShape& found : v.foundShapes()) {
        const Instruction& instr = v.at(found.instruction);
        sizes.found[{v.graph.node(instr.node).name, static_cast<std::uint32_t>(found.output)}] =
            found.shapes->back().shape;
    }
    return sizes;
}

} // namespace placer
