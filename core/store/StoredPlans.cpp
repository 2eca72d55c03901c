// Plans in the workspace (store/PlanStore.h): saved, loaded, checked, listed, renamed, diffed.
#include "store/PlanStore.h"

#include "io/JsonGraph.h"
#include "plan/Planner.h"
#include "report/PlanReport.h"
#include "store/StoreText.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace placer::store {

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
    std::vector<std::string> placement;
    for (DeviceId device : plan.devices)
        placement.push_back(device.valid() ? devices[device].name : std::string());
    const std::vector<std::string> copies = describeCopies(graph, devices, plan);
    const std::string time = now();

    Transaction transaction(*m_db);
    auto stored = storeGraph(transaction, graph, devices);
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

Result<std::int64_t> PlanStore::storeGraph(const Transaction& transaction, const Graph& graph,
                                           const DeviceSet& devices) {
    if (!transaction.begun().ok())
        return transaction.begun().error();
    const std::string body = writeJsonGraph(graph, devices).dump(-1);
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
    return selectRows<PlanSummary>(
        *m_db,
        "SELECT p.name, " + planCountColumns("p") +
            ", p.note, p.created, p.updated, (SELECT r.latency_ms FROM runs r WHERE r.plan_id = "
            "p.id ORDER BY r.id DESC LIMIT 1) FROM plans p JOIN graphs g ON g.id = p.graph_id "
            "ORDER BY p.name",
        [](const Statement& s) {
            PlanSummary summary;
            summary.name = s.text(0);
            readPlanCounts(s, 1, &summary);
            summary.note = s.text(6);
            summary.created = s.text(7);
            summary.updated = s.text(8);
            summary.lastRunMs = s.isNull(9) ? -1 : s.real(9);
            return summary;
        });
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

} // namespace placer::store
