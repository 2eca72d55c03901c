// What the workspace's files share (private to core/store): the time and hash it stamps, and
// plans' options and lists as the text it keeps.
#pragma once

#include "io/Json.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "plan/Plan.h"
#include "store/Sqlite.h"

#include <string>
#include <vector>

namespace placer::store {

/// The time now in UTC, as the workspace stamps rows: "2026-11-28T12:00:00Z".
std::string now();

/// FNV-1a, 64 bits, as hex: the identity of a graph's stored text.
std::string contentHash(const std::string& text);

/// Each copy of `plan` as "value from->to bytes", as a plan row lists them.
std::vector<std::string> describeCopies(const Graph& graph, const DeviceSet& devices,
                                        const Plan& plan);

/// A plan's options as the workspace keeps them, and back (what is absent takes its default).
Json optionsJson(const PlanOptions& options);
PlanOptions optionsFrom(const Json& json);

/// A list of strings as a JSON array's text, and back (text that is no such array: none).
Json stringArray(const std::vector<std::string>& values);
std::vector<std::string> stringsFrom(const std::string& text);

/// An error of the workspace at `path`.
SourceError storeError(const std::string& path, std::string message);

/// Every row `sql` selects, each made into a T by `row(statement)`.
template <typename T, typename Row>
Result<std::vector<T>> selectRows(Database& db, std::string_view sql, Row row) {
    auto query = db.prepare(sql);
    if (!query)
        return query.error();
    std::vector<T> rows;
    const Status read =
        query.value().forEachRow([&](const Statement& st) { rows.push_back(row(st)); });
    if (!read.ok())
        return read.error();
    return rows;
}

/// The five columns readPlanCounts reads, of the plans or drafts table as `alias`, joined with
/// graphs as g.
inline std::string planCountColumns(const std::string& alias) {
    return "g.name, " + alias + ".devices, " + alias + ".copy_count, " + alias + ".copied_bytes, " +
           alias + ".conflicts";
}

/// A listed plan's or draft's graph name, devices, copies, copied bytes and conflicts, read from
/// five columns from `first` on (PlanSummary, DraftSummary).
template <typename Summary> void readPlanCounts(const Statement& st, int first, Summary* summary) {
    summary->graph = st.text(first);
    summary->devices = st.text(first + 1);
    summary->copies = st.integer(first + 2);
    summary->copiedBytes = st.integer(first + 3);
    summary->conflicts = st.integer(first + 4);
}

} // namespace placer::store
