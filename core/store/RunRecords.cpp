// Run records for the workspace, built and compared for every front end (store/RunRecords.h).
#include "store/RunRecords.h"

#include "device/DeviceMapping.h"
#include "device/Ranks.h"
#include "io/Json.h"
#include "vm/ReferenceRun.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <thread>

namespace placer::store {

RunRecord runRecord(const RunOutcome& run) {
    const DeviceSet& devices = run.devices;
    const RunResult& result = run.result;
    RunRecord record;
    for (int d = 0; d < devices.size(); ++d) {
        for (const StreamInfo& stream : result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), DeviceId(d)) !=
                stream.virtuals.end())
                record.mapping += (record.mapping.empty() ? "" : ", ") + devices[DeviceId(d)].name +
                                  "=" + stream.physical;
        }
    }
    record.machine = std::to_string(std::thread::hardware_concurrency()) + " cores";
    // A run over several ranks names each rank's host.
    if (RankTransport* transport = rankTransport(); transport && transport->size() > 1) {
        record.machine += ", " + std::to_string(transport->size()) + " ranks:";
        for (int r = 0; r < transport->size(); ++r)
            record.machine += " rank" + std::to_string(r) + "@" + transport->hostName(r);
    }
    record.iterations = static_cast<int>(result.latencyMicros.size());
    record.latencyMs = median(result.latencyMicros) / 1000.0;
    Json report = runReportJson(run);
    if (const auto prediction = checkPrediction(run))
        report.set("prediction", prediction->toJson());
    record.report = report.dump(-1);
    return record;
}

Json generationRecordJson(const GenerationRecord& generation, bool withReport) {
    Json entry = Json::object({{"created", generation.created},
                               {"machine", generation.machine},
                               {"mapping", generation.mapping},
                               {"prompt_tokens", generation.promptTokens},
                               {"new_tokens", generation.newTokens},
                               {"time_to_first_token_ms", generation.timeToFirstTokenMs},
                               {"decode_tokens_per_s", generation.tokensPerSecond}});
    if (withReport) {
        auto report = Json::parse(generation.report, "generation report");
        entry.set("report", report ? report.take() : Json(nullptr));
    }
    return entry;
}

namespace {

/// Per node name, the median time in a stored run report ("nodes": [{"name", "median_ms"}]).
std::map<std::string, double> nodeTimes(const std::string& report) {
    std::map<std::string, double> byNode;
    auto json = Json::parse(report, "run report");
    if (!json)
        return byNode;
    const Json* nodes = json.value().find("nodes");
    if (!nodes || !nodes->isArray())
        return byNode;
    for (const Json& node : nodes->items()) {
        const Json* name = node.find("name");
        const Json* ms = node.find("median_ms");
        if (name && ms)
            byNode[name->asString()] = ms->asDouble();
    }
    return byNode;
}

std::optional<double> predictedMs(const std::string& report) {
    auto json = Json::parse(report, "run report");
    if (!json)
        return std::nullopt;
    const Json* prediction = json.value().find("prediction");
    const Json* ms = prediction ? prediction->find("predicted_ms") : nullptr;
    if (!ms || !ms->isNumber())
        return std::nullopt;
    return ms->asDouble();
}

} // namespace

std::vector<MeasuredCost> measuredCosts(const Graph& graph, const Plan& plan,
                                        const std::vector<NodeId>& fusedInto,
                                        const std::vector<std::string>& physical,
                                        const MedianTimes& times) {
    std::vector<MeasuredCost> costs;
    // A fused kernel's time is its group's, kept under the group's key (CostModel::groupKey).
    const auto members = CostModel::membersByHead(fusedInto);
    for (std::uint32_t i = 0; i < graph.size() && i < times.nodeMillis.size(); ++i) {
        const DeviceId device = i < plan.devices.size() ? plan.devices[i] : DeviceId();
        const bool folded = i < fusedInto.size() && fusedInto[i].valid() && fusedInto[i].index != i;
        // A split node's time is its shards' together, on several devices: no one device's.
        const bool split = plan.splitOf(NodeId(i)) != nullptr;
        if (graph.nodes()[i].role() != OpRole::Compute || folded || split ||
            times.nodeMillis[i] <= 0 || !device.valid() ||
            static_cast<std::size_t>(device.index) >= physical.size())
            continue;
        const auto group = members.find(i);
        costs.push_back(
            {group == members.end() ? CostModel::nodeKey(graph, NodeId(i))
                                    : CostModel::groupKey(graph, NodeId(i), group->second),
             CostModel::costClass(physical[device.index]), times.nodeMillis[i] * 1000, 1});
    }
    return costs;
}

std::vector<MeasuredCost> shardCosts(const RunOutcome& run) {
    std::vector<MeasuredCost> costs;
    const Plan& plan = run.userPlan;
    const OptimizedGraph& ran = *run.ran;
    if (!plan.sharded || !plan.sharded->plan || !run.executor ||
        ran.shard.size() != ran.graph.size())
        return costs;
    const ShardedGraph& sharded = *plan.sharded;
    // The sharded graph's node computing (user node, shard).
    std::map<std::pair<std::uint32_t, std::int32_t>, NodeId> nodeOf;
    for (std::uint32_t j = 0; j < sharded.graph.size() && j < sharded.shard.size(); ++j) {
        if (sharded.origin[j].valid() && sharded.shard[j] >= 0)
            nodeOf.emplace(std::pair(sharded.origin[j].index, sharded.shard[j]), NodeId(j));
    }
    // The kernels that ran for each (user node, shard): a fused kernel's time is its head's.
    const MedianTimes times =
        medianTimes(run.executor->program(), run.result, ran.graph.size(), ran.plan.copies.size());
    std::map<std::pair<std::uint32_t, std::int32_t>, double> millis;
    for (std::uint32_t i = 0; i < ran.graph.size() && i < times.nodeMillis.size(); ++i) {
        if (ran.origin[i].valid() && ran.shard[i] >= 0 && times.nodeMillis[i] > 0)
            millis[std::pair(ran.origin[i].index, ran.shard[i])] += times.nodeMillis[i];
    }
    const auto members = CostModel::membersByHead(ran.fusedInto);
    for (const auto& [at, ms] : millis) {
        const auto [user, shard] = at;
        const auto node = nodeOf.find(at);
        if (node == nodeOf.end() || sharded.graph.node(node->second).role() != OpRole::Compute)
            continue;
        const DeviceId device = sharded.plan->devices[node->second.index];
        if (!device.valid() || static_cast<std::size_t>(device.index) >= run.physical.size())
            continue;
        std::string key = CostModel::nodeKey(sharded.graph, node->second);
        if (const auto group = members.find(user); group != members.end()) {
            std::vector<NodeId> shardMembers;
            for (NodeId member : group->second) {
                const auto found = nodeOf.find(std::pair(member.index, shard));
                if (found == nodeOf.end())
                    break;
                shardMembers.push_back(found->second);
            }
            if (shardMembers.size() != group->second.size())
                continue; // a group the shards do not repeat: its time is no shard's
            key = CostModel::groupKey(sharded.graph, node->second, shardMembers);
        }
        costs.push_back(
            {std::move(key), CostModel::costClass(run.physical[device.index]), ms * 1000, 1});
    }
    return costs;
}

Result<std::optional<RunComparison>> compareLastRuns(PlanStore& store, const std::string& a,
                                                     const std::string& b) {
    auto lastA = store.lastRun(a);
    if (!lastA)
        return lastA.error();
    auto lastB = store.lastRun(b);
    if (!lastB)
        return lastB.error();
    if (!lastA.value() || !lastB.value())
        return std::optional<RunComparison>();
    RunComparison comparison{*lastA.value(), *lastB.value(), {}, {}, {}};
    comparison.predictedMsA = predictedMs(comparison.a.report);
    comparison.predictedMsB = predictedMs(comparison.b.report);
    const auto ta = nodeTimes(comparison.a.report), tb = nodeTimes(comparison.b.report);
    for (const auto& [node, ms] : tb) {
        if (auto it = ta.find(node); it != ta.end())
            comparison.nodeChanges.emplace_back(node, ms - it->second);
    }
    std::stable_sort(
        comparison.nodeChanges.begin(), comparison.nodeChanges.end(),
        [](const auto& x, const auto& y) { return std::abs(x.second) > std::abs(y.second); });
    return std::optional<RunComparison>(std::move(comparison));
}

} // namespace placer::store
