// Plans and runs in one SQLite file per workspace: graphs (by content hash, so a plan opens even
// when the model file moved), plans (devices, pins, rules, options, the planner's answer), runs.
// Every save is one transaction; the schema is versioned (PRAGMA user_version) and migrated in
// place after a backup copy.
#pragma once

#include "io/ModelLoader.h"
#include "plan/CostModel.h"
#include "plan/Plan.h"
#include "store/Sqlite.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace placer::store {

inline constexpr int kSchemaVersion = 5;

struct PlanSummary {
    std::string name;
    std::string graph;   ///< the graph's display name
    std::string devices; ///< "cpu, gpu"
    std::int64_t copies = 0;
    std::int64_t copiedBytes = 0;
    std::int64_t conflicts = 0;
    std::string note;
    std::string created;
    std::string updated;
    double lastRunMs = -1; ///< the latest run's median latency, or -1
};

/// A plan as saved: its graph (with pins and device set) and options, and the planner's answer
/// when it was saved.
struct StoredPlan {
    std::string name;
    std::string note;
    LoadedModel model; ///< the graph with the plan's pins, and its devices
    PlanOptions options;
    std::vector<std::string> savedDevices; ///< per node: the device name the plan had
    std::vector<std::string> savedCopies;  ///< "value from->to bytes", in plan order
};

/// What re-planning a stored plan gives, against what was saved.
struct PlanCheck {
    Plan plan;
    std::vector<std::string> differences; ///< empty when the planner's answer is unchanged
};

struct PlanDiff {
    std::vector<std::string> movedNodes;    ///< "conv1: gpu -> cpu"
    std::vector<std::string> copiesAdded;   ///< in B, not in A
    std::vector<std::string> copiesRemoved; ///< in A, not in B
    std::int64_t bytesA = 0;
    std::int64_t bytesB = 0;
};

struct RunRecord {
    std::string mapping; ///< "gpu=vcpu1, cpu=cpu"
    std::string machine; ///< a line about the machine
    int iterations = 0;
    double latencyMs = 0;
    std::string report; ///< the JSON run report
};

/// A generation of a plan (placer generate --save-run, Python Generation.save): the prompt's
/// and the new tokens' counts, time to first token, decode tokens/s and the JSON report
/// (session/Generate.h's generationJson).
struct GenerationRecord {
    std::string mapping; ///< "a=vcpu1, b=vcpu2"
    std::string machine; ///< a line about the machine
    int promptTokens = 0;
    int newTokens = 0;
    double timeToFirstTokenMs = 0;
    double tokensPerSecond = 0;
    std::string report;
    std::string created; ///< when it was kept (as read back)
};

/// How many runs' worth the cost table's history of a key weighs at most against a new run.
inline constexpr int kCostMemory = 7;

/// A node's measured median on a physical device, as the cost model keys it
/// (CostModel::nodeKey, CostModel::costClass).
struct MeasuredCost {
    std::string key;
    std::string physical;
    double micros = 0;
    int runs = 1; ///< how many runs it stands for
};

/// An unsaved edit state of a plan, kept while a window edits it (autosave): what the window
/// shows, journaled on every edit, apart from the saved plans until the user saves.
struct DraftSummary {
    std::int64_t id = 0;
    std::string owner;  ///< the window that keeps it (draftOwner)
    std::string plan;   ///< the saved plan it edits, or "" for one never saved
    std::string source; ///< the model the window opened ("plan NAME" for a saved plan)
    std::string graph;  ///< the graph's display name
    std::string devices;
    std::int64_t copies = 0;
    std::int64_t copiedBytes = 0;
    std::int64_t conflicts = 0;
    std::string updated;
    /// Its window's process is gone (an unclean exit): the draft is offered back at the next
    /// start. Otherwise a window still edits it.
    bool abandoned = false;
    /// "resnet50" for a draft of a saved plan, "(unsaved) tiny_resnet" for one never saved.
    std::string title() const;
};

struct StoredDraft {
    DraftSummary summary;
    StoredPlan plan; ///< the graph with its pins, the devices and the options, as edited
};

/// The owner of a window's draft: this process (host, pid and start time) and the window's
/// number in it, so that two windows keep separate drafts.
std::string draftOwner(int window);
/// Whether the process `owner` names still runs here (its pid with the same start time); false
/// for another host's process only when it is this host's pid that is gone.
bool draftOwnerRunning(const std::string& owner);

class PlanStore {
public:
    /// Opens or creates the workspace file. Refuses (file untouched) a newer schema, a file that
    /// is not SQLite, or a damaged one; migrates an older schema after copying it to FILE.bak.
    static Result<std::unique_ptr<PlanStore>> open(const std::string& path);
    /// The default workspace: $XDG_DATA_HOME (or ~/.local/share)/placement-explorer/workspace.db.
    static std::string defaultPath();
    /// The file it was opened from.
    const std::string& path() const { return m_path; }
    /// Opened for reading only: the file, its folder or its file system cannot be written
    /// (plans list, show and open; every save fails saying so).
    bool readOnly() const { return m_readOnly; }

    /// Saves (or replaces) the plan called `name`, in one transaction.
    Status savePlan(const std::string& name, const std::string& note, const Graph& graph,
                    const DeviceSet& devices, const PlanOptions& options, const Plan& plan);
    Result<StoredPlan> loadPlan(const std::string& name);
    /// Re-plans a stored plan and says what differs from the saved answer.
    static PlanCheck check(const StoredPlan& stored);
    Result<std::vector<PlanSummary>> listPlans();
    Status deletePlan(const std::string& name);
    Status renamePlan(const std::string& from, const std::string& to);
    Status duplicatePlan(const std::string& from, const std::string& to);
    Result<PlanDiff> diffPlans(const std::string& a, const std::string& b);
    Status saveRun(const std::string& planName, const RunRecord& run);
    /// The latest run recorded for a plan, if any.
    Result<std::optional<RunRecord>> lastRun(const std::string& planName);
    Status saveGeneration(const std::string& planName, const GenerationRecord& generation);
    /// A plan's generations, the latest first, at most `limit`.
    Result<std::vector<GenerationRecord>> generations(const std::string& planName, int limit = 20);

    /// Folds one run's measured node times into the machine's cost table, in one transaction:
    /// a key keeps the mean of its runs' medians over its first kCostMemory + 1 runs, then a
    /// moving mean in which this run weighs 1 / (kCostMemory + 1). Entries of one key in `costs`
    /// are one measurement.
    Status recordCosts(const std::string& machine, const std::vector<MeasuredCost>& costs);
    Result<std::vector<MeasuredCost>> loadCosts(const std::string& machine);
    /// Replaces the machine's calibration.
    Status saveCalibration(const Calibration& calibration);
    Result<std::optional<Calibration>> loadCalibration(const std::string& machine);

    /// Drafts (autosave): replaces `owner`'s draft with this edit state, in one transaction.
    Status saveDraft(const std::string& owner, const std::string& planName,
                     const std::string& source, const Graph& graph, const DeviceSet& devices,
                     const PlanOptions& options, const Plan& plan);
    /// The same with the plan's figures given (copies, bytes copied, conflicts), so that a
    /// snapshot of the edit state can be written on another thread without the plan.
    Status saveDraft(const std::string& owner, const std::string& planName,
                     const std::string& source, const Graph& graph, const DeviceSet& devices,
                     const PlanOptions& options, std::int64_t copies, std::int64_t copiedBytes,
                     std::int64_t conflicts);
    /// Every draft, oldest first, each marked abandoned or not.
    Result<std::vector<DraftSummary>> listDrafts();
    Result<StoredDraft> loadDraft(std::int64_t id);
    /// Deletes `owner`'s draft (none is fine).
    Status deleteDraft(const std::string& owner);
    Status deleteDraft(std::int64_t id);

    Database& database() { return *m_db; }

private:
    PlanStore(std::unique_ptr<Database> db, std::string path, bool readOnly = false)
        : m_db(std::move(db)), m_path(std::move(path)), m_readOnly(readOnly) {}
    Result<std::int64_t> planId(const std::string& name);
    /// Runs `sql`, an INSERT of a row that belongs to plan `planName`, in one transaction:
    /// `bind` binds its values, given the plan's row id.
    Status insertForPlan(const std::string& planName, const char* sql,
                         const std::function<void(Statement&, std::int64_t)>& bind);
    /// In `transaction` (an error when it did not begin), stores the graph with its devices once
    /// (by the content hash of its JSON body); its row id.
    Result<std::int64_t> storeGraph(const Transaction& transaction, const Graph& graph,
                                    const DeviceSet& devices);
    /// Deletes the graphs no plan or draft uses.
    Status dropUnusedGraphs();
    /// Renames or copies plan `from` as `to` with `sql` (?1 new name, ?2 time, ?3 plan id), in
    /// one transaction, after checking `from` exists and `to` does not.
    Status underNewName(const std::string& from, const std::string& to, const char* sql);
    std::unique_ptr<Database> m_db;
    std::string m_path;
    bool m_readOnly = false;
};

} // namespace placer::store
