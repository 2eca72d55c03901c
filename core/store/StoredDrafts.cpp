// Drafts in the workspace (store/PlanStore.h): every edit autosaved, and whose process still runs.
#include "store/PlanStore.h"

#include "io/JsonGraph.h"
#include "store/StoreText.h"

#include <fstream>
#include <sstream>

#include <unistd.h>

namespace placer::store {

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
    Transaction transaction(*m_db);
    auto stored = storeGraph(transaction, graph, devices);
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
    return selectRows<DraftSummary>(
        *m_db,
        "SELECT d.id, d.owner, d.plan, d.source, " + planCountColumns("d") +
            ", d.updated FROM drafts d JOIN graphs g ON g.id = d.graph_id ORDER BY d.updated, d.id",
        [](const Statement& st) {
            DraftSummary d;
            d.id = st.integer(0);
            d.owner = st.text(1);
            d.plan = st.text(2);
            d.source = st.text(3);
            readPlanCounts(st, 4, &d);
            d.updated = st.text(9);
            d.abandoned = !draftOwnerRunning(d.owner);
            return d;
        });
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
