// Runs, measured costs and calibrations in the workspace (store/PlanStore.h).
#include "store/PlanStore.h"

#include "plan/CostModel.h"
#include "store/StoreText.h"

#include <functional>
#include <map>

namespace placer::store {

Status PlanStore::insertForPlan(const std::string& planName, const char* sql,
                                const std::function<void(Statement&, std::int64_t)>& bind) {
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto id = planId(planName);
    if (!id)
        return id.error();
    auto insert = m_db->prepare(sql);
    if (!insert)
        return insert.error();
    bind(insert.value(), id.value());
    if (Status status = insert.value().run(); !status.ok())
        return status;
    return transaction.commit();
}

Status PlanStore::saveRun(const std::string& planName, const RunRecord& run) {
    return insertForPlan(
        planName,
        "INSERT INTO runs(plan_id, created, machine, mapping, iterations, latency_ms, report) "
        "VALUES(?, ?, ?, ?, ?, ?, ?)",
        [&](Statement& s, std::int64_t plan) {
            s.bind(1, plan).bind(2, std::string_view(now())).bind(3, std::string_view(run.machine));
            s.bind(4, std::string_view(run.mapping));
            s.bind(5, static_cast<std::int64_t>(run.iterations));
            s.bind(6, run.latencyMs).bind(7, std::string_view(run.report));
        });
}

Result<std::optional<RunRecord>> PlanStore::lastRun(const std::string& planName) {
    auto id = planId(planName);
    if (!id)
        return id.error();
    auto row = m_db->firstRow("SELECT mapping, machine, iterations, latency_ms, report FROM runs "
                              "WHERE plan_id = ? ORDER BY id DESC LIMIT 1",
                              id.value());
    if (!row)
        return row.error();
    if (!row.value())
        return std::optional<RunRecord>();
    Statement& s = *row.value();
    RunRecord run;
    run.mapping = s.text(0);
    run.machine = s.text(1);
    run.iterations = static_cast<int>(s.integer(2));
    run.latencyMs = s.real(3);
    run.report = s.text(4);
    return std::optional<RunRecord>(std::move(run));
}

Status PlanStore::saveGeneration(const std::string& planName, const GenerationRecord& generation) {
    return insertForPlan(
        planName,
        "INSERT INTO generations(plan_id, created, machine, mapping, prompt_tokens, new_tokens, "
        "ttft_ms, tokens_per_s, report) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [&](Statement& s, std::int64_t plan) {
            s.bind(1, plan).bind(2, std::string_view(now()));
            s.bind(3, std::string_view(generation.machine));
            s.bind(4, std::string_view(generation.mapping));
            s.bind(5, static_cast<std::int64_t>(generation.promptTokens));
            s.bind(6, static_cast<std::int64_t>(generation.newTokens));
            s.bind(7, generation.timeToFirstTokenMs).bind(8, generation.tokensPerSecond);
            s.bind(9, std::string_view(generation.report));
        });
}

Result<std::vector<GenerationRecord>> PlanStore::generations(const std::string& planName,
                                                             int limit) {
    auto id = planId(planName);
    if (!id)
        return id.error();
    auto query = m_db->prepare(
        "SELECT mapping, machine, prompt_tokens, new_tokens, ttft_ms, tokens_per_s, report, "
        "created FROM generations WHERE plan_id = ? ORDER BY id DESC LIMIT ?");
    if (!query)
        return query.error();
    Statement& s = query.value();
    s.bind(1, id.value()).bind(2, static_cast<std::int64_t>(limit));
    std::vector<GenerationRecord> out;
    while (true) {
        auto row = s.step();
        if (!row)
            return row.error();
        if (!row.value())
            break;
        GenerationRecord record;
        record.mapping = s.text(0);
        record.machine = s.text(1);
        record.promptTokens = static_cast<int>(s.integer(2));
        record.newTokens = static_cast<int>(s.integer(3));
        record.timeToFirstTokenMs = s.real(4);
        record.tokensPerSecond = s.real(5);
        record.report = s.text(6);
        record.created = s.text(7);
        out.push_back(std::move(record));
    }
    return out;
}

Status PlanStore::recordCosts(const std::string& machine, const std::vector<MeasuredCost>& costs) {
    // One entry per op and physical device: the ops of one run that share a key (ResNet's six
    // alike convolutions) are one measurement of this run, not six runs.
    std::map<std::pair<std::string, std::string>, MeasuredCost> merged;
    for (const MeasuredCost& cost : costs) {
        if (cost.runs <= 0)
            continue;
        auto [it, added] = merged.emplace(std::pair(cost.key, cost.physical), cost);
        if (added)
            continue;
        MeasuredCost& into = it->second;
        into.micros = (into.micros * into.runs + cost.micros * cost.runs) / (into.runs + cost.runs);
        into.runs += cost.runs;
    }
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    // The mean of the first kCostMemory + 1 runs, then a moving one: the history weighs at
    // most kCostMemory times this run, so that the estimate follows the machine (a faster
    // kernel, another load) within a few runs however many it has seen.
    auto upsert = m_db->prepare(
        "INSERT INTO costs(machine, key, physical, micros, runs, updated) VALUES(?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(machine, key, physical) DO UPDATE SET "
        "micros = (micros * MIN(runs, ?7 * excluded.runs) + excluded.micros * excluded.runs) / "
        "(MIN(runs, ?7 * excluded.runs) + excluded.runs), "
        "runs = runs + excluded.runs, updated = excluded.updated");
    if (!upsert)
        return upsert.error();
    const std::string time = now();
    for (const auto& [at, cost] : merged) {
        Statement& s = upsert.value();
        s.reset();
        s.bind(1, std::string_view(machine)).bind(2, std::string_view(cost.key));
        s.bind(3, std::string_view(cost.physical)).bind(4, cost.micros);
        s.bind(5, static_cast<std::int64_t>(cost.runs)).bind(6, std::string_view(time));
        s.bind(7, static_cast<std::int64_t>(kCostMemory));
        if (Status status = s.run(); !status.ok())
            return status;
    }
    return transaction.commit();
}

Result<std::vector<MeasuredCost>> PlanStore::loadCosts(const std::string& machine) {
    auto query = m_db->prepare(
        "SELECT key, physical, micros, runs FROM costs WHERE machine = ? ORDER BY key, physical");
    if (!query)
        return query.error();
    Statement& s = query.value();
    s.bind(1, std::string_view(machine));
    std::vector<MeasuredCost> costs;
    const Status read = s.forEachRow([&](const Statement& row) {
        costs.push_back(
            MeasuredCost{row.text(0), row.text(1), row.real(2), static_cast<int>(row.integer(3))});
    });
    if (!read.ok())
        return read.error();
    return costs;
}

Status PlanStore::saveCalibration(const Calibration& calibration) {
    auto upsert = m_db->prepare("INSERT OR REPLACE INTO calibrations(machine, created, body) "
                                "VALUES(?, ?, ?)");
    if (!upsert)
        return upsert.error();
    const std::string body = calibration.toJson().dump(-1);
    upsert.value().bind(1, std::string_view(calibration.machine));
    upsert.value().bind(2, std::string_view(now())).bind(3, std::string_view(body));
    return upsert.value().run();
}

Result<std::optional<Calibration>> PlanStore::loadCalibration(const std::string& machine) {
    auto row = m_db->firstRow("SELECT body FROM calibrations WHERE machine = ?", machine);
    if (!row)
        return row.error();
    if (!row.value())
        return std::optional<Calibration>();
    auto json = Json::parse(row.value()->text(0), "stored calibration");
    if (!json)
        return json.error();
    auto calibration = Calibration::fromJson(json.value());
    if (!calibration)
        return calibration.error();
    return std::optional<Calibration>(calibration.take());
}

} // namespace placer::store
