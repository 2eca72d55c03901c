// A generation's figures and how they are written (session/Generate.h): time to the first
// token, decode tokens/s and percentiles, busy per token, the JSON report and the summary.
#include "session/Generate.h"

#include "io/Json.h"
#include "report/RunReport.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace placer {

namespace {

double percentileOf(std::vector<double> values, double percentile) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const double at = percentile / 100.0 * static_cast<double>(values.size() - 1);
    const auto low = static_cast<std::size_t>(std::floor(at));
    const std::size_t high = std::min(values.size() - 1, low + 1);
    return values[low] + (values[high] - values[low]) * (at - static_cast<double>(low));
}

} // namespace

double GenerationReport::timeToFirstTokenMs() const {
    return steps.empty() ? 0 : steps.front().wallMs;
}

double GenerationReport::decodeTokensPerSecond() const {
    double wall = 0;
    for (std::size_t s = 1; s < steps.size(); ++s)
        wall += steps[s].wallMs;
    return wall > 0 ? static_cast<double>(steps.size() - 1) / (wall / 1000.0) : 0;
}

double GenerationReport::decodeLatencyMs(double percentile) const {
    std::vector<double> walls;
    for (std::size_t s = 1; s < steps.size(); ++s)
        walls.push_back(steps[s].wallMs);
    return percentileOf(std::move(walls), percentile);
}

std::vector<std::pair<std::string, double>> GenerationReport::busyPerTokenMs() const {
    std::vector<std::pair<std::string, double>> out;
    std::size_t counted = 0;
    for (std::size_t s = 1; s < steps.size(); ++s, ++counted) {
        for (const auto& busy : steps[s].busyMs) {
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const auto& entry) { return entry.first == busy.first; });
            if (it == out.end())
                out.push_back(busy);
            else
                it->second += busy.second;
        }
    }
    for (auto& entry : out)
        entry.second /= static_cast<double>(std::max<std::size_t>(counted, 1));
    return out;
}

double GenerationReport::overheadShare() const {
    double wall = 0, kernels = 0;
    for (std::size_t s = 1; s < steps.size(); ++s) {
        wall += steps[s].wallMs;
        kernels += steps[s].kernelsMs;
    }
    return wall > 0 ? std::max(0.0, (wall - kernels) / wall) : 0;
}

std::string generationJson(const GenerationReport& report) {
    const auto ids = [](const std::vector<std::int64_t>& values) {
        Json out = Json::array();
        for (const std::int64_t v : values)
            out.push(v);
        return out;
    };
    const auto busy = [](const std::vector<std::pair<std::string, double>>& entries) {
        Json out = Json::object();
        for (const auto& [device, ms] : entries)
            out.set(device, ms);
        return out;
    };
    Json out = Json::object({{"prompt", ids(report.prompt)},
                             {"tokens", ids(report.tokens)},
                             {"stop_reason", report.stopReason},
                             {"ids_input", report.idsInput},
                             {"logits_output", report.logitsOutput},
                             {"vocabulary", report.vocabulary},
                             {"mapping", report.mapping},
                             {"storage", report.storage}});
    Json cache = Json::array();
    for (const auto& [present, past] : report.cache) {
        Json pair = Json::object();
        pair.set("present", present);
        pair.set("past", past);
        cache.push(std::move(pair));
    }
    out.set("cache", std::move(cache));
    Json sampling = Json::object({{"temperature", report.sampling.temperature},
                                  {"top_k", report.sampling.topK},
                                  {"top_p", report.sampling.topP},
                                  {"seed", report.sampling.seed}});
    out.set("sampling", std::move(sampling));
    out.set("prepare_ms", report.prepareMs);
    out.set("time_to_first_token_ms", report.timeToFirstTokenMs());
    out.set("prefill_kernels_ms", report.steps.empty() ? 0.0 : report.steps.front().kernelsMs);
    out.set("decode_tokens_per_s", report.decodeTokensPerSecond());
    out.set("decode_p50_ms", report.decodeLatencyMs(50));
    out.set("decode_p99_ms", report.decodeLatencyMs(99));
    out.set("overhead_share", report.overheadShare());
    out.set("steps_on_one_program", report.sizedSteps);
    out.set("busy_per_token_ms", busy(report.busyPerTokenMs()));
    Json steps = Json::array();
    for (const GenerateStep& step : report.steps) {
        steps.push(Json::object({{"tokens", step.tokens},
                                 {"wall_ms", step.wallMs},
                                 {"kernels_ms", step.kernelsMs},
                                 {"busy_ms", busy(step.busyMs)}}));
    }
    out.set("steps", std::move(steps));
    Json warnings = Json::array();
    for (const std::string& warning : report.warnings)
        warnings.push(warning);
    out.set("warnings", std::move(warnings));
    out.set("events", runEventsJson(report.events));
    return out.dump();
}

std::string generationSummary(const GenerationReport& report) {
    std::ostringstream out;
    out.setf(std::ios::fixed);
    out.precision(2);
    out << "generated " << report.tokens.size() << " tokens after a prompt of "
        << report.prompt.size() << " (stopped: " << report.stopReason << ")\n";
    out << "time to first token: " << report.timeToFirstTokenMs() << " ms";
    if (!report.steps.empty())
        out << " (the prompt's run " << report.steps.front().kernelsMs << " ms)";
    if (report.prepareMs > 0)
        out << "; the program made before it in " << report.prepareMs << " ms";
    out << '\n';
    if (report.steps.size() > 1) {
        out << "decode: " << report.decodeTokensPerSecond() << " tokens/s, per token p50 "
            << report.decodeLatencyMs(50) << " ms, p99 " << report.decodeLatencyMs(99)
            << " ms; kernels " << (100.0 * (1.0 - report.overheadShare()))
            << " % of the step's wall time; " << report.sizedSteps << " of " << report.steps.size()
            << " steps on one program for every size\n";
        out << "busy per token:";
        for (const auto& [device, ms] : report.busyPerTokenMs())
            out << "  " << device << " " << ms << " ms";
        out << '\n';
    }
    out << "cache: " << report.cache.size() << " tensors bound (";
    for (std::size_t i = 0; i < report.cache.size() && i < 2; ++i)
        out << (i ? ", " : "") << report.cache[i].first << " -> " << report.cache[i].second;
    if (report.cache.size() > 2)
        out << ", ...";
    out << ")";
    if (!report.storage.empty() && report.sizedSteps > 0)
        out << "; storages " << report.storage;
    out << "\n";
    for (const RunEvent& event : report.events) {
        if (event.kind == RunEvent::Kind::DeviceFailed)
            out << "device failed at step " << event.iteration << ": " << event.text()
                << "; planned again and swapped in " << event.replanMs
                << " ms, the step run again\n";
        else
            out << "re-placed before step " << event.iteration << ": " << event.text()
                << "; planned again and swapped in " << event.replanMs << " ms; a step took "
                << event.beforeMs << " ms before, " << event.afterMs << " ms after\n";
    }
    return out.str();
}

} // namespace placer
