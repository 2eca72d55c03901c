// The SQLite workspace: schema and migrations, plans, runs, calibrations and the cost table.
#include "store/PlanStore.h"

#include "io/Json.h"
#include "io/JsonGraph.h"
#include "plan/CostModel.h"
#include "plan/Planner.h"
#include "report/PlanReport.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <unistd.h>

namespace placer::store {

namespace {

// Version 1 had graphs and plans; version 2 added runs.
constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE graphs(
    id INTEGER PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    format TEXT NOT NULL,
    body TEXT NOT NULL);
CREATE TABLE plans(
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    graph_id INTEGER NOT NULL REFERENCES graphs(id),
    devices TEXT NOT NULL,
    options TEXT NOT NULL,
    note TEXT NOT NULL,
    placement TEXT NOT NULL,
    copies TEXT NOT NULL,
    copy_count INTEGER NOT NULL,
    copied_bytes INTEGER NOT NULL,
    conflicts INTEGER NOT NULL,
    report TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL);
)sql";

constexpr const char* kMigrateV1ToV2 = R"sql(
CREATE TABLE runs(
    id INTEGER PRIMARY KEY,
    plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    created TEXT NOT NULL,
    machine TEXT NOT NULL,
    mapping TEXT NOT NULL,
    iterations INTEGER NOT NULL,
    latency_ms REAL NOT NULL,
    report TEXT NOT NULL);
CREATE INDEX runs_by_plan ON runs(plan_id);
)sql";

// Version 3 added the cost table (measured node times per machine) and calibrations.
constexpr const char* kMigrateV2ToV3 = R"sql(
CREATE TABLE costs(
    machine TEXT NOT NULL,
    key TEXT NOT NULL,
    physical TEXT NOT NULL,
    micros REAL NOT NULL,
    runs INTEGER NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY(machine, key, physical));
CREATE TABLE calibrations(
    machine TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    body TEXT NOT NULL);
)sql";

// Version 4 added drafts: the edit state of a window's plan, journaled as it changes.
constexpr const char* kMigrateV3ToV4 = R"sql(
CREATE TABLE drafts(
    id INTEGER PRIMARY KEY,
    owner TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL,
    source TEXT NOT NULL,
    graph_id INTEGER NOT NULL REFERENCES graphs(id),
    devices TEXT NOT NULL,
    options TEXT NOT NULL,
    copy_count INTEGER NOT NULL,
    copied_bytes INTEGER NOT NULL,
    conflicts INTEGER NOT NULL,
    updated TEXT NOT NULL);
)sql";

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

/// The header of an existing file: whether it is SQLite and its user_version (offset 60).
struct Header {
    bool exists = false;
    bool sqlite = false;
    std::uint32_t userVersion = 0;
};

Header readHeader(const std::string& path) {
    Header header;
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return header;
    char bytes[100] = {};
    file.read(bytes, sizeof bytes);
    const std::streamsize got = file.gcount();
    header.exists = true;
    if (got == 0) {
        header.sqlite = true; // an empty file becomes a new database
        return header;
    }
    header.sqlite = got == 100 && std::string(bytes, 16) == std::string("SQLite format 3\0", 16);
    if (header.sqlite)
        header.userVersion =
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[60])) << 24) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[61])) << 16) |
            (static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[62])) << 8) |
            static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[63]));
    return header;
}

} // namespace

std::string PlanStore::defaultPath() {
    std::string base;
    if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data)
        base = data;
    else if (const char* home = std::getenv("HOME"); home && *home)
        base = std::string(home) + "/.local/share";
    else
        base = ".";
    return base + "/placement-explorer/workspace.db";
}

Result<std::unique_ptr<PlanStore>> PlanStore::open(const std::string& path) {
    // Look before touching: a file that is not ours, or is newer than we are, stays as it is.
    const Header header = readHeader(path);
    if (header.exists && !header.sqlite)
        return storeError(path, "not a Placement Explorer workspace (the file is not SQLite); it "
                                "was left untouched");
    if (header.userVersion > static_cast<std::uint32_t>(kSchemaVersion))
        return storeError(path, "the workspace was written by a newer Placement Explorer (schema " +
                                    std::to_string(header.userVersion) + "; this one knows " +
                                    std::to_string(kSchemaVersion) + "); it was left untouched");
    if (!header.exists) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    }
    auto opened = Database::open(path);
    bool readOnly = false;
    if (!opened && header.exists && header.sqlite && header.userVersion > 0 &&
        ::access(path.c_str(), R_OK) == 0) {
        // A workspace that cannot be written (read-only file system, folder or file): read it
        // as it is, when it needs no migration.
        if (header.userVersion < static_cast<std::uint32_t>(kSchemaVersion))
            return storeError(path, "the workspace cannot be written (" + opened.error().message +
                                        ") and is of an older schema that would need migrating");
        auto again = Database::open(path, false, true);
        if (again) {
            opened = std::move(again);
            readOnly = true;
        }
    }
    if (!opened)
        return opened.error();
    std::unique_ptr<Database> db = opened.take();
    {
        auto check = db->prepare("PRAGMA quick_check");
        if (!check)
            return check.error();
        auto row = check.value().step();
        if (!row)
            return row.error();
        if (!row.value() || check.value().text(0) != "ok")
            return storeError(path, "the workspace is damaged (" + check.value().text(0) +
                                        "); open a backup or move the file away");
    }
    std::int64_t version = 0;
    {
        auto query = db->prepare("PRAGMA user_version");
        if (!query)
            return query.error();
        if (auto row = query.value().step(); !row)
            return row.error();
        version = query.value().integer(0);
    }
    if (version > 0 && version < kSchemaVersion) {
        // Migrate an older workspace in place, after a consistent copy of it.
        const std::string backup = path + ".bak";
        std::filesystem::remove(backup);
        auto vacuum = db->prepare("VACUUM INTO ?");
        if (!vacuum)
            return vacuum.error();
        vacuum.value().bind(1, std::string_view(backup));
        if (Status status = vacuum.value().run(); !status.ok())
            return storeError(path, "cannot back up the workspace before migrating it: " +
                                        status.error().message);
    }
    if (version < kSchemaVersion) {
        Transaction transaction(*db);
        if (!transaction.begun().ok())
            return transaction.begun().error();
        if (version < 1) {
            if (Status status = db->exec(kSchemaV1); !status.ok())
                return status.error();
        }
        if (version < 2) {
            if (Status status = db->exec(kMigrateV1ToV2); !status.ok())
                return status.error();
        }
        if (version < 3) {
            if (Status status = db->exec(kMigrateV2ToV3); !status.ok())
                return status.error();
        }
        if (version < 4) {
            if (Status status = db->exec(kMigrateV3ToV4); !status.ok())
                return status.error();
        }
        if (Status status = db->exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
            !status.ok())
            return status.error();
        if (Status status = transaction.commit(); !status.ok())
            return status.error();
    }
    return std::unique_ptr<PlanStore>(new PlanStore(std::move(db), path, readOnly));
}

Result<std::int64_t> PlanStore::planId(const std::string& name) {
    auto row = m_db->firstRow("SELECT id FROM plans WHERE name = ?", name);
    if (!row)
        return row.error();
    if (!row.value())
        return storeError(m_db->path(), "no plan called '" + name + "'");
    return row.value()->integer(0);
}

Status PlanStore::savePlan(const std::string& name, const std::string& note, const Graph& graph,
                           const DeviceSet& devices, const PlanOptions& options, const Plan& plan) {
    if (name.empty())
        return storeError(m_db->path(), "a plan needs a name");
    const std::string body = writeJsonGraph(graph, devices).dump(-1);
    std::vector<std::string> placement;
    for (DeviceId device : plan.devices)
        placement.push_back(device.valid() ? devices[device].name : std::string());
    const std::vector<std::string> copies = describeCopies(graph, devices, plan);
    const std::string time = now();

    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto stored = storeGraph(graph, body);
    if (!stored)
        return stored.error();
    const std::int64_t graphId = stored.value();
    auto upsert = m_db->prepare(
        "INSERT INTO plans(name, graph_id, devices, options, note, placement, copies, copy_count, "
        "copied_bytes, conflicts, report, created, updated) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
        "?, ?, ?) ON CONFLICT(name) DO UPDATE SET graph_id = excluded.graph_id, devices = "
        "excluded.devices, options = excluded.options, note = excluded.note, placement = "
        "excluded.placement, copies = excluded.copies, copy_count = excluded.copy_count, "
        "copied_bytes = excluded.copied_bytes, conflicts = excluded.conflicts, report = "
        "excluded.report, updated = excluded.updated");
    if (!upsert)
        return upsert.error();
    Statement& s = upsert.value();
    s.bind(1, std::string_view(name))
        .bind(2, graphId)
        .bind(3, std::string_view(devices.namesList()));
    s.bind(4, std::string_view(optionsJson(options).dump(-1))).bind(5, std::string_view(note));
    s.bind(6, std::string_view(stringArray(placement).dump(-1)));
    s.bind(7, std::string_view(stringArray(copies).dump(-1)));
    s.bind(8, static_cast<std::int64_t>(copies.size())).bind(9, plan.copiedBytes());
    s.bind(10, static_cast<std::int64_t>(plan.conflicts.size()));
    s.bind(11, std::string_view(planReportJson(graph, devices, options, plan).dump(-1)));
    s.bind(12, std::string_view(time)).bind(13, std::string_view(time));
    if (Status status = s.run(); !status.ok())
        return status;
    return transaction.commit();
}

Result<std::int64_t> PlanStore::storeGraph(const Graph& graph, const std::string& body) {
    const std::string hash = contentHash(body);
    auto insertGraph = m_db->prepare("INSERT INTO graphs(hash, name, format, body) VALUES(?, ?, ?, "
                                     "?) ON CONFLICT(hash) DO NOTHING");
    if (!insertGraph)
        return insertGraph.error();
    insertGraph.value().bind(1, std::string_view(hash)).bind(2, std::string_view(graph.name));
    insertGraph.value()
        .bind(3, std::string_view(graph.sourceFormat))
        .bind(4, std::string_view(body));
    if (Status status = insertGraph.value().run(); !status.ok())
        return status.error();
    auto graphRow = m_db->firstRow("SELECT id FROM graphs WHERE hash = ?", hash);
    if (!graphRow)
        return graphRow.error();
    if (!graphRow.value())
        return storeError(m_db->path(), "the graph was not stored");
    return graphRow.value()->integer(0);
}

Status PlanStore::dropUnusedGraphs() {
    return m_db->exec("DELETE FROM graphs WHERE id NOT IN (SELECT graph_id FROM plans) AND id NOT "
                      "IN (SELECT graph_id FROM drafts)");
}

Result<StoredPlan> PlanStore::loadPlan(const std::string& name) {
    auto row = m_db->firstRow(
        "SELECT p.note, p.options, p.placement, p.copies, g.body, g.name, g.format FROM plans p "
        "JOIN graphs g ON g.id = p.graph_id WHERE p.name = ?",
        name);
    if (!row)
        return row.error();
    if (!row.value())
        return storeError(m_db->path(), "no plan called '" + name + "'");
    Statement& s = *row.value();
    StoredPlan stored;
    stored.name = name;
    stored.note = s.text(0);
    auto options = Json::parse(s.text(1), "plan '" + name + "' options");
    if (!options)
        return options.error();
    stored.options = optionsFrom(options.value());
    stored.savedDevices = stringsFrom(s.text(2));
    stored.savedCopies = stringsFrom(s.text(3));
    auto model = loadModelText(s.text(4), "plan '" + name + "'", GraphFormat::Json, std::nullopt);
    if (!model)
        return model.error();
    stored.model = model.take();
    stored.model.graph.name = s.text(5);
    stored.model.graph.sourceFormat = s.text(6);
    return stored;
}

PlanCheck PlanStore::check(const StoredPlan& stored) {
    PlanCheck check;
    const Graph& graph = stored.model.graph;
    const DeviceSet& devices = stored.model.devices;
    check.plan = planDevices(graph, devices, stored.options);
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const DeviceId device = check.plan.devices[i];
        const std::string now = device.valid() ? devices[device].name : std::string();
        const std::string saved = i < stored.savedDevices.size() ? stored.savedDevices[i] : "";
        if (now != saved)
            check.differences.push_back(graph.nodes()[i].name + ": saved on " + saved +
                                        ", now planned on " + now);
    }
    const std::vector<std::string> copies = describeCopies(graph, devices, check.plan);
    const std::set<std::string> before(stored.savedCopies.begin(), stored.savedCopies.end());
    const std::set<std::string> after(copies.begin(), copies.end());
    for (const std::string& copy : after)
        if (!before.count(copy))
            check.differences.push_back("new copy " + copy);
    for (const std::string& copy : before)
        if (!after.count(copy))
            check.differences.push_back("copy no longer needed: " + copy);
    return check;
}

Result<std::vector<PlanSummary>> PlanStore::listPlans() {
    auto query = m_db->prepare(
        "SELECT p.name, g.name, p.devices, p.copy_count, p.copied_bytes, p.conflicts, p.note, "
        "p.created, p.updated, (SELECT r.latency_ms FROM runs r WHERE r.plan_id = p.id ORDER BY "
        "r.id DESC LIMIT 1) FROM plans p JOIN graphs g ON g.id = p.graph_id ORDER BY p.name");
    if (!query)
        return query.error();
    std::vector<PlanSummary> plans;
    const Status read = query.value().forEachRow([&](const Statement& s) {
        PlanSummary summary;
        summary.name = s.text(0);
        summary.graph = s.text(1);
        summary.devices = s.text(2);
        summary.copies = s.integer(3);
        summary.copiedBytes = s.integer(4);
        summary.conflicts = s.integer(5);
        summary.note = s.text(6);
        summary.created = s.text(7);
        summary.updated = s.text(8);
        summary.lastRunMs = s.isNull(9) ? -1 : s.real(9);
        plans.push_back(std::move(summary));
    });
    if (!read.ok())
        return read.error();
    return plans;
}

Status PlanStore::deletePlan(const std::string& name) {
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto id = planId(name);
    if (!id)
        return id.error();
    auto remove = m_db->prepare("DELETE FROM plans WHERE id = ?");
    if (!remove)
        return remove.error();
    remove.value().bind(1, id.value());
    if (Status status = remove.value().run(); !status.ok())
        return status;
    // Graphs no plan uses any more go too.
    if (Status status = dropUnusedGraphs(); !status.ok())
        return status;
    return transaction.commit();
}

Status PlanStore::renamePlan(const std::string& from, const std::string& to) {
    return underNewName(from, to, "UPDATE plans SET name = ?1, updated = ?2 WHERE id = ?3");
}

Status PlanStore::duplicatePlan(const std::string& from, const std::string& to) {
    return underNewName(
        from, to,
        "INSERT INTO plans(name, graph_id, devices, options, note, placement, copies, copy_count, "
        "copied_bytes, conflicts, report, created, updated) SELECT ?1, graph_id, devices, options, "
        "note, placement, copies, copy_count, copied_bytes, conflicts, report, ?2, ?2 FROM plans "
        "WHERE id = ?3");
}

Status PlanStore::underNewName(const std::string& from, const std::string& to, const char* sql) {
    if (to.empty())
        return storeError(m_db->path(), "a plan needs a name");
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto id = planId(from);
    if (!id)
        return id.error();
    if (planId(to))
        return storeError(m_db->path(), "a plan called '" + to + "' exists already");
    auto statement = m_db->prepare(sql);
    if (!statement)
        return statement.error();
    statement.value()
        .bind(1, std::string_view(to))
        .bind(2, std::string_view(now()))
        .bind(3, id.value());
    if (Status status = statement.value().run(); !status.ok())
        return status;
    return transaction.commit();
}

Result<PlanDiff> PlanStore::diffPlans(const std::string& a, const std::string& b) {
    auto first = loadPlan(a);
    if (!first)
        return first.error();
    auto second = loadPlan(b);
    if (!second)
        return second.error();
    PlanDiff diff;
    const StoredPlan& x = first.value();
    const StoredPlan& y = second.value();
    std::map<std::string, std::string> deviceOf;
    for (std::size_t i = 0; i < x.model.graph.size() && i < x.savedDevices.size(); ++i)
        deviceOf[x.model.graph.nodes()[i].name] = x.savedDevices[i];
    for (std::size_t i = 0; i < y.model.graph.size() && i < y.savedDevices.size(); ++i) {
        const std::string& name = y.model.graph.nodes()[i].name;
        const auto it = deviceOf.find(name);
        if (it != deviceOf.end() && it->second != y.savedDevices[i])
            diff.movedNodes.push_back(name + ": " + it->second + " -> " + y.savedDevices[i]);
    }
    const std::set<std::string> copiesA(x.savedCopies.begin(), x.savedCopies.end());
    const std::set<std::string> copiesB(y.savedCopies.begin(), y.savedCopies.end());
    auto bytes = [](const std::string& copy) {
        const std::size_t space = copy.rfind(' ');
        return space == std::string::npos ? 0 : std::atoll(copy.c_str() + space + 1);
    };
    for (const std::string& copy : copiesB) {
        diff.bytesB += bytes(copy);
        if (!copiesA.count(copy))
            diff.copiesAdded.push_back(copy);
    }
    for (const std::string& copy : copiesA) {
        diff.bytesA += bytes(copy);
        if (!copiesB.count(copy))
            diff.copiesRemoved.push_back(copy);
    }
    return diff;
}

Status PlanStore::saveRun(const std::string& planName, const RunRecord& run) {
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto id = planId(planName);
    if (!id)
        return id.error();
    auto insert = m_db->prepare(
        "INSERT INTO runs(plan_id, created, machine, mapping, iterations, latency_ms, report) "
        "VALUES(?, ?, ?, ?, ?, ?, ?)");
    if (!insert)
        return insert.error();
    Statement& s = insert.value();
    s.bind(1, id.value()).bind(2, std::string_view(now())).bind(3, std::string_view(run.machine));
    s.bind(4, std::string_view(run.mapping)).bind(5, static_cast<std::int64_t>(run.iterations));
    s.bind(6, run.latencyMs).bind(7, std::string_view(run.report));
    if (Status status = s.run(); !status.ok())
        return status;
    return transaction.commit();
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

// ---- drafts (autosave) -------------------------------------------------------------------------

namespace {

/// This process's start time in clock ticks since boot (/proc/PID/stat, field 22), or "".
std::string processStart(long pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const std::size_t close = text.rfind(')');
    if (close == std::string::npos)
        return {};
    std::istringstream fields(text.substr(close + 2));
    std::string field;
    for (int k = 3; k <= 22 && fields >> field; ++k) {
        if (k == 22)
            return field;
    }
    return {};
}

std::string hostName() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        return "localhost";
    return name;
}

} // namespace

std::string DraftSummary::title() const {
    return plan.empty() ? "(unsaved) " + graph : plan;
}

std::string draftOwner(int window) {
    const long pid = static_cast<long>(getpid());
    return hostName() + " " + std::to_string(pid) + " " + processStart(pid) + " " +
           std::to_string(window);
}

bool draftOwnerRunning(const std::string& owner) {
    std::istringstream fields(owner);
    std::string host, start;
    long pid = 0;
    if (!(fields >> host >> pid >> start))
        return false;
    if (host != hostName())
        return true; // another host's window: not ours to judge
    return processStart(pid) == start;
}

Status PlanStore::saveDraft(const std::string& owner, const std::string& planName,
                            const std::string& source, const Graph& graph, const DeviceSet& devices,
                            const PlanOptions& options, const Plan& plan) {
    return saveDraft(owner, planName, source, graph, devices, options,
                     static_cast<std::int64_t>(plan.copies.size()), plan.copiedBytes(),
                     static_cast<std::int64_t>(plan.conflicts.size()));
}

Status PlanStore::saveDraft(const std::string& owner, const std::string& planName,
                            const std::string& source, const Graph& graph, const DeviceSet& devices,
                            const PlanOptions& options, std::int64_t copies,
                            std::int64_t copiedBytes, std::int64_t conflicts) {
    const std::string body = writeJsonGraph(graph, devices).dump(-1);
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto stored = storeGraph(graph, body);
    if (!stored)
        return stored.error();
    auto upsert = m_db->prepare(
        "INSERT INTO drafts(owner, plan, source, graph_id, devices, options, copy_count, "
        "copied_bytes, conflicts, updated) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON "
        "CONFLICT(owner) DO UPDATE SET plan = excluded.plan, source = excluded.source, graph_id = "
        "excluded.graph_id, devices = excluded.devices, options = excluded.options, copy_count = "
        "excluded.copy_count, copied_bytes = excluded.copied_bytes, conflicts = "
        "excluded.conflicts, updated = excluded.updated");
    if (!upsert)
        return upsert.error();
    Statement& st = upsert.value();
    st.bind(1, std::string_view(owner))
        .bind(2, std::string_view(planName))
        .bind(3, std::string_view(source))
        .bind(4, stored.value());
    st.bind(5, std::string_view(devices.namesList()))
        .bind(6, std::string_view(optionsJson(options).dump(-1)));
    st.bind(7, copies).bind(8, copiedBytes);
    st.bind(9, conflicts);
    const std::string time = now();
    st.bind(10, std::string_view(time));
    if (Status status = st.run(); !status.ok())
        return status;
    // The draft's earlier graph, when no plan or other draft has it.
    if (Status status = dropUnusedGraphs(); !status.ok())
        return status;
    return transaction.commit();
}

Result<std::vector<DraftSummary>> PlanStore::listDrafts() {
    auto query = m_db->prepare(
        "SELECT d.id, d.owner, d.plan, d.source, g.name, d.devices, d.copy_count, "
        "d.copied_bytes, d.conflicts, d.updated FROM drafts d JOIN graphs g ON g.id = d.graph_id "
        "ORDER BY d.updated, d.id");
    if (!query)
        return query.error();
    std::vector<DraftSummary> drafts;
    const Status read = query.value().forEachRow([&](const Statement& st) {
        DraftSummary d;
        d.id = st.integer(0);
        d.owner = st.text(1);
        d.plan = st.text(2);
        d.source = st.text(3);
        d.graph = st.text(4);
        d.devices = st.text(5);
        d.copies = st.integer(6);
        d.copiedBytes = st.integer(7);
        d.conflicts = st.integer(8);
        d.updated = st.text(9);
        d.abandoned = !draftOwnerRunning(d.owner);
        drafts.push_back(std::move(d));
    });
    if (!read.ok())
        return read.error();
    return drafts;
}

Result<StoredDraft> PlanStore::loadDraft(std::int64_t id) {
    auto drafts = listDrafts();
    if (!drafts)
        return drafts.error();
    StoredDraft draft;
    bool found = false;
    for (DraftSummary& d : drafts.value()) {
        if (d.id == id) {
            draft.summary = std::move(d);
            found = true;
        }
    }
    if (!found)
        return storeError(m_db->path(), "no draft " + std::to_string(id));
    auto row = m_db->firstRow("SELECT d.options, g.body, g.name, g.format FROM drafts d JOIN "
                              "graphs g ON g.id = d.graph_id WHERE d.id = ?",
                              id);
    if (!row)
        return row.error();
    if (!row.value())
        return storeError(m_db->path(), "no draft " + std::to_string(id));
    Statement& st = *row.value();
    const std::string what = "draft " + std::to_string(id);
    auto options = Json::parse(st.text(0), what + " options");
    if (!options)
        return options.error();
    draft.plan.name = draft.summary.plan;
    draft.plan.options = optionsFrom(options.value());
    auto model = loadModelText(st.text(1), what, GraphFormat::Json, std::nullopt);
    if (!model)
        return model.error();
    draft.plan.model = model.take();
    draft.plan.model.graph.name = st.text(2);
    draft.plan.model.graph.sourceFormat = st.text(3);
    return draft;
}

Status PlanStore::deleteDraft(const std::string& owner) {
    Transaction transaction(*m_db);
    if (!transaction.begun().ok())
        return transaction.begun();
    auto remove = m_db->prepare("DELETE FROM drafts WHERE owner = ?");
    if (!remove)
        return remove.error();
    remove.value().bind(1, std::string_view(owner));
    if (Status status = remove.value().run(); !status.ok())
        return status;
    if (Status status = dropUnusedGraphs(); !status.ok())
        return status;
    return transaction.commit();
}

Status PlanStore::deleteDraft(std::int64_t id) {
    auto row = m_db->firstRow("SELECT owner FROM drafts WHERE id = ?", id);
    if (!row)
        return row.error();
    if (!row.value())
        return storeError(m_db->path(), "no draft " + std::to_string(id));
    return deleteDraft(row.value()->text(0));
}

} // namespace placer::store
