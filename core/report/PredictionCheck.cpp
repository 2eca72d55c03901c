// A plan's prediction set against its run (report/RunReport.h).
#include "report/RunReport.h"

#include "report/RunViews.h"

#include <cstdio>
#include <sstream>

namespace placer {

using namespace runview;

Json PredictionCheck::toJson() const {
    Json json = Json::object({{"predicted_ms", predictedMs},
                              {"measured_ms", measuredMs},
                              {"median_node_error", medianNodeError}});
    Json list = Json::array();
    for (const NodeTimes& node : nodes) {
        list.push(Json::object({{"name", node.name},
                                {"predicted_ms", node.predictedMs},
                                {"measured_ms", node.measuredMs}}));
    }
    json.set("nodes", std::move(list));
    Json devices = Json::array();
    for (const DeviceTimes& device : this->devices) {
        devices.push(Json::object({{"name", device.name},
                                   {"predicted_busy_ms", device.predictedBusyMs},
                                   {"measured_busy_ms", device.measuredBusyMs},
                                   {"predicted_idle_ms", device.predictedIdleMs},
                                   {"measured_idle_ms", device.measuredIdleMs}}));
    }
    json.set("devices", std::move(devices));
    return json;
}

std::string PredictionCheck::summary() const {
    char line[256];
    std::snprintf(line, sizeof line,
                  "predicted against measured: latency %.3f ms predicted, %.3f ms measured "
                  "(%+.0f %%); per node, median error %.0f %% over %zu ops\n",
                  predictedMs, measuredMs,
                  measuredMs > 0 ? (predictedMs / measuredMs - 1) * 100 : 0.0,
                  medianNodeError * 100, nodes.size());
    std::string out = line;
    for (const DeviceTimes& device : devices) {
        std::snprintf(line, sizeof line,
                      "  %-10s busy %.3f ms predicted, %.3f measured; idle %.3f ms predicted, "
                      "%.3f measured\n",
                      device.name.c_str(), device.predictedBusyMs, device.measuredBusyMs,
                      device.predictedIdleMs, device.measuredIdleMs);
        out += line;
    }
    std::vector<NodeTimes> worst = nodes;
    std::stable_sort(worst.begin(), worst.end(), [](const NodeTimes& a, const NodeTimes& b) {
        return std::abs(a.predictedMs - a.measuredMs) > std::abs(b.predictedMs - b.measuredMs);
    });
    for (std::size_t k = 0; k < worst.size() && k < 5; ++k) {
        std::snprintf(line, sizeof line, "  %s: %.3f ms predicted, %.3f ms measured\n",
                      worst[k].name.c_str(), worst[k].predictedMs, worst[k].measuredMs);
        out += line;
    }
    return out;
}

PredictionCheck checkPrediction(const Graph& graph, const Plan& plan, const DeviceSet& devices,
                                const Program& program, const RunResult& result,
                                const MedianTimes& times) {
    PredictionCheck check;
    const Prediction& p = *plan.prediction;
    check.predictedMs = p.makespanMicros / 1000;
    check.measuredMs = median(result.latencyMicros) / 1000;
    std::vector<double> errors;
    for (std::uint32_t i = 0; i < graph.size() && i < times.nodeMillis.size(); ++i) {
        if (graph.nodes()[i].role() != OpRole::Compute || times.nodeMillis[i] <= 0 ||
            p.micros[i] <= 0)
            continue;
        check.nodes.push_back({graph.nodes()[i].name, p.micros[i] / 1000, times.nodeMillis[i]});
        errors.push_back(std::abs(p.micros[i] / 1000 - times.nodeMillis[i]) / times.nodeMillis[i]);
    }
    check.medianNodeError = median(std::move(errors));
    for (int d = 0; d < devices.size() && d < static_cast<int>(p.deviceBusyMicros.size()); ++d) {
        const DeviceId id(d);
        const std::vector<double> busy = sumsPerIteration(
            program, result, [&](std::size_t k) { return program.code[k].device == id; });
        const double predicted = p.deviceBusyMicros[static_cast<std::size_t>(d)] / 1000;
        check.devices.push_back({devices[id].name, predicted, median(busy) / 1000,
                                 std::max(0.0, check.predictedMs - predicted),
                                 medianIdle(result.latencyMicros, busy) / 1000});
    }
    return check;
}

MedianTimes userMedianTimes(const RunOutcome& outcome) {
    const MedianTimes ran = medianTimes(outcome.executor->program(), outcome.result,
                                        outcome.graph().size(), outcome.plan().copies.size());
    return userMedianTimes(ran, outcome.graph(), outcome.plan(), outcome.ran->origin,
                           outcome.userGraph->size(), outcome.userPlan);
}

std::optional<PredictionCheck> checkPrediction(const RunOutcome& outcome) {
    if (!outcome.userPlan.prediction || !outcome.executor)
        return std::nullopt;
    return checkPrediction(*outcome.userGraph, outcome.userPlan, outcome.devices,
                           outcome.executor->program(), outcome.result, userMedianTimes(outcome));
}

} // namespace placer
