// The SQLite workspace: its schema and migrations, and opening it. Plans (StoredPlans.cpp),
// runs and costs (StoredRuns.cpp) and drafts (StoredDrafts.cpp) have files of their own.
#include "store/PlanStore.h"

#include "store/StoreText.h"

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

// Version 5 added generations: token-by-token runs of a plan, with their figures.
constexpr const char* kMigrateV4ToV5 = R"sql(
CREATE TABLE generations(
    id INTEGER PRIMARY KEY,
    plan_id INTEGER NOT NULL REFERENCES plans(id) ON DELETE CASCADE,
    created TEXT NOT NULL,
    machine TEXT NOT NULL,
    mapping TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    new_tokens INTEGER NOT NULL,
    ttft_ms REAL NOT NULL,
    tokens_per_s REAL NOT NULL,
    report TEXT NOT NULL);
CREATE INDEX generations_by_plan ON generations(plan_id);
)sql";

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
        if (version < 5) {
            if (Status status = db->exec(kMigrateV4ToV5); !status.ok())
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

} // namespace placer::store
