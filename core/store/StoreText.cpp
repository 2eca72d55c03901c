// The workspace's stamps and text forms (store/StoreText.h).
#include "store/StoreText.h"

#include "plan/CostModel.h"
#include "plan/Planner.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace placer::store {

std::string now() {
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&t, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

/// FNV-1a, 64 bits, as hex: the identity of a graph's stored text.
std::string contentHash(const std::string& text) {
    std::uint64_t hash = 1469598103934665603ull;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
    return hex;
}

std::vector<std::string> describeCopies(const Graph& graph, const DeviceSet& devices,
                                        const Plan& plan) {
    std::vector<std::string> copies;
    for (const CopyPlan& copy : plan.copies)
        copies.push_back(graph.valueName(copy.value) + " " + devices[copy.from].name + "->" +
                         devices[copy.to].name + " " + std::to_string(copy.bytes));
    return copies;
}

Json optionsJson(const PlanOptions& options) {
    Json json = Json::object();
    json.set("mode", std::string(planModeName(options.mode)));
    if (options.exact)
        json.set("exact", true);
    // The cost snapshot the plan was made with, so that reloading re-plans to the same result.
    if (options.costs)
        json.set("costs", options.costs->toJson());
    json.set("constants", options.constants == ConstantPolicy::Replicate ? "replicate" : "copy");
    Json rules = Json::array();
    for (const OpRule& rule : options.rules) {
        Json r = Json::object();
        r.set("op", rule.opPattern);
        r.set("device", rule.device);
        rules.push(std::move(r));
    }
    json.set("rules", std::move(rules));
    json.set("fallback", options.fallbackDevice);
    if (options.microBatches > 1)
        json.set("micro_batches", std::int64_t{options.microBatches});
    if (options.streamBatches > 1)
        json.set("stream_batches", std::int64_t{options.streamBatches});
    if (!options.splits.empty()) {
        Json splits = Json::array();
        for (const SplitRequest& request : options.splits) {
            Json r = Json::object();
            r.set("nodes", request.nodePattern);
            Json shards = Json::array();
            for (const SplitShare& share : request.shards) {
                Json s = Json::object();
                s.set("device", share.device);
                if (share.share > 0)
                    s.set("share", share.share);
                shards.push(std::move(s));
            }
            r.set("shards", std::move(shards));
            if (request.tensor)
                r.set("tensor", true);
            splits.push(std::move(r));
        }
        json.set("splits", std::move(splits));
    }
    return json;
}

PlanOptions optionsFrom(const Json& json) {
    PlanOptions options;
    auto text = [&](const char* key) {
        const Json* member = json.find(key);
        return member && member->isString() ? member->asString() : std::string();
    };
    options.mode = parsePlanMode(text("mode")).value_or(PlanMode::Demand);
    if (const Json* exact = json.find("exact"); exact && exact->isBool())
        options.exact = exact->asBool();
    if (const Json* costs = json.find("costs")) {
        if (auto model = CostModel::fromJson(*costs))
            options.costs = std::make_shared<const CostModel>(model.take());
    }
    options.constants =
        text("constants") == "copy" ? ConstantPolicy::Copy : ConstantPolicy::Replicate;
    options.fallbackDevice = text("fallback");
    if (const Json* micro = json.find("micro_batches"); micro && micro->isNumber())
        options.microBatches =
            static_cast<std::int32_t>(std::clamp<double>(micro->asDouble(), 1, 1 << 16));
    if (const Json* stream = json.find("stream_batches"); stream && stream->isNumber())
        options.streamBatches =
            static_cast<std::int32_t>(std::clamp<double>(stream->asDouble(), 1, 4096));
    if (const Json* rules = json.find("rules"); rules && rules->isArray()) {
        for (const Json& rule : rules->items()) {
            const Json* op = rule.find("op");
            const Json* device = rule.find("device");
            if (op && device && op->isString() && device->isString())
                options.rules.push_back(OpRule{op->asString(), device->asString()});
        }
    }
    if (const Json* splits = json.find("splits"); splits && splits->isArray()) {
        for (const Json& split : splits->items()) {
            const Json* nodes = split.find("nodes");
            const Json* shards = split.find("shards");
            if (!nodes || !nodes->isString() || !shards || !shards->isArray())
                continue;
            SplitRequest request{nodes->asString(), {}};
            for (const Json& shard : shards->items()) {
                const Json* device = shard.find("device");
                const Json* share = shard.find("share");
                if (!device || !device->isString())
                    continue;
                request.shards.push_back(SplitShare{
                    device->asString(), share && share->isNumber() ? share->asInt() : 0});
            }
            if (const Json* tensor = split.find("tensor"); tensor && tensor->isBool())
                request.tensor = tensor->asBool();
            options.splits.push_back(std::move(request));
        }
    }
    return options;
}

Json stringArray(const std::vector<std::string>& values) {
    Json array = Json::array();
    for (const std::string& value : values)
        array.push(value);
    return array;
}

std::vector<std::string> stringsFrom(const std::string& text) {
    std::vector<std::string> values;
    auto json = Json::parse(text, "stored plan");
    if (json && json.value().isArray()) {
        for (const Json& item : json.value().items())
            values.push_back(item.isString() ? item.asString() : std::string());
    }
    return values;
}

SourceError storeError(const std::string& path, std::string message) {
    return SourceError{path, 0, 0, std::move(message)};
}

} // namespace placer::store
