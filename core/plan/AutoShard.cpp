// Auto mode's choice between placing whole ops and sharding them (plan/TensorShard.h's
// weighSharding).
#include "plan/DevicePlanner.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "plan/TensorShard.h"

#include <map>
#include <optional>

namespace placer {

namespace {

/// Auto mode's other candidate: every op sharded inside across the largest group of devices of
/// one kind (the first such group on a tie), or nothing when no kind has two devices.
std::optional<SplitRequest> shardingCandidate(const DeviceSet& devices) {
    std::map<DeviceKind, std::vector<DeviceId>> byKind;
    for (int d = 0; d < devices.size(); ++d)
        byKind[devices[DeviceId(d)].kind].push_back(DeviceId(d));
    const std::vector<DeviceId>* best = nullptr;
    for (int d = 0; d < devices.size(); ++d) {
        const auto& group = byKind[devices[DeviceId(d)].kind];
        if (group.size() >= 2 && (!best || group.size() > best->size()))
            best = &group;
    }
    if (!best)
        return std::nullopt;
    SplitRequest request;
    request.nodePattern = "*";
    request.tensor = true;
    for (DeviceId id : *best)
        request.shards.push_back(SplitShare{devices[id].name, 0});
    return request;
}

} // namespace

Plan weighSharding(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                   Plan plan) {
    // (Costed at other sizes than planned, the sharded graph, cut at the planned sizes, could
    // not be predicted at them.)
    if (options.mode != PlanMode::Auto || !options.autoShard || !options.splits.empty() ||
        options.microBatches > 1 || options.streamBatches > 1 || !options.costAt.empty() ||
        !plan.prediction)
        return plan;
    const std::optional<SplitRequest> request = shardingCandidate(devices);
    if (!request)
        return plan;
    // The same plan with every op sharded: its prediction is the sharded graph's schedule.
    PlanOptions sharded = options;
    sharded.splits = {*request};
    PlanWorkspace own;
    Plan candidate = DevicePlanner(graph, devices, sharded, own).run();
    const std::string spelled = "--shard '" + formatSplitRequest(*request) + "'";
    const double placed = plan.prediction->makespanMicros;
    if (!candidate.prediction || !candidate.sharded || !candidate.sharded->plan->prediction)
        return plan;
    if (candidate.conflicts.size() > plan.conflicts.size()) {
        plan.notes.push_back("auto: every op sharded (" + spelled + ") would add " +
                             std::to_string(candidate.conflicts.size() - plan.conflicts.size()) +
                             " conflict(s) (plan with " + spelled +
                             " to see them), so the ops stay whole");
        return plan;
    }
    const double cut = candidate.prediction->makespanMicros;
    if (!(cut * 6 < placed * 5)) {
        plan.notes.push_back("auto: every op sharded (" + spelled + ") is predicted " +
                             formatMillis(cut) + " against " + formatMillis(placed) +
                             " placed, so the ops stay whole");
        return plan;
    }
    // Assumed rates misjudge small kernels against the hand-offs every collective costs: only
    // devices measured by placer calibrate are sharded unasked.
    bool calibrated = options.costs && options.costs->deviceCount() == devices.size();
    for (std::size_t s = 0; calibrated && s < request->shards.size(); ++s) {
        const auto id = devices.find(request->shards[s].device);
        calibrated = id && options.costs->physical(*id).calibrated;
    }
    if (!calibrated) {
        plan.notes.push_back("auto: every op sharded (" + spelled + ") is predicted " +
                             formatMillis(cut) + " against " + formatMillis(placed) +
                             " placed, but at assumed rates, which misjudge small kernels "
                             "against the collectives: calibrate the devices (placer calibrate) "
                             "for auto mode to shard, or give " +
                             spelled + " yourself");
        return plan;
    }
    for (SplitRegion& region : candidate.splits)
        region.autoChosen = true;
    candidate.notes.push_back("auto: every op sharded (" + spelled + ") is predicted " +
                              formatMillis(cut) + " against " + formatMillis(placed) +
                              " for the best placement of whole ops, so auto mode shards them");
    return candidate;
}

} // namespace placer
