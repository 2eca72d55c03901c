// `placer plans`: save, list, show, diff, rename, duplicate and delete plans in the workspace.
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "io/Json.h"
#include "io/RelayWriter.h"
#include "plan/PlannedGraph.h"
#include "report/PlanReport.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace placer::cli {

namespace {

constexpr const char* kPlansHelp = R"(usage: placer plans COMMAND ... [--db FILE]

Keeps plans (and the runs of them) in one SQLite file per workspace, by default
$XDG_DATA_HOME/placement-explorer/workspace.db (~/.local/share/... without XDG_DATA_HOME).

commands:
  save MODEL --name NAME [--note TEXT] [plan options]
                       plan MODEL and save the plan (replacing one of that name)
  list [--json]        the saved plans: graph, devices, copies, last run latency; then the
                       drafts (draft-N): unsaved edits a window keeps, marked "abandoned"
                       when that window's process is gone (the GUI offers those back)
  show NAME [--emit summary|json|relay]
                       re-plan a saved plan or a draft (draft-N); says what differs if the
                       planner's answer changed
  diff A B [--json]    nodes whose device differs, copies added and removed, bytes moved,
                       and the last runs of both: latency and the nodes whose time changed most
  rename OLD NEW       rename a plan
  duplicate NAME NEW   copy a plan under a new name
  delete NAME          delete a plan and its runs

exit codes: 0 ok, 1 user error, 2 usage error
)";

std::string humanBytes(std::int64_t bytes) {
    return formatBytes(bytes);
}

int usage(std::ostream& err, const std::string& message) {
    err << "placer plans: " << message << "\nrun 'placer plans --help' for the commands\n";
    return UsageError;
}

int fail(std::ostream& err, const std::string& message) {
    err << "placer plans: error: " << message << "\n";
    return UserError;
}

} // namespace

int runPlansCommand(const std::vector<std::string>& rawArgs, std::istream& in, std::ostream& out,
                    std::ostream& err) {
    if (rawArgs.empty())
        return usage(err, "no command given");
    if (rawArgs[0] == "-h" || rawArgs[0] == "--help") {
        out << kPlansHelp;
        return Ok;
    }
    const std::string command = rawArgs[0];
    std::vector<std::string> args(rawArgs.begin() + 1, rawArgs.end());
    // --db FILE anywhere; the rest depends on the command.
    std::string db = store::PlanStore::defaultPath();
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--db" || args[i].rfind("--db=", 0) == 0) {
            if (args[i] == "--db") {
                if (i + 1 >= args.size())
                    return usage(err, "option --db needs a value");
                db = args[++i];
            } else {
                db = args[i].substr(5);
            }
            continue;
        }
        rest.push_back(args[i]);
    }
    auto openStore = [&]() { return store::PlanStore::open(db); };

    if (command == "save") {
        std::string name, note;
        CommandOptions own;
        own.withValue = {"--name", "--note"};
        own.handle = [&](const std::string& option,
                         const std::string& value) -> std::optional<std::string> {
            (option == "--name" ? name : note) = value;
            return std::nullopt;
        };
        PlanArguments parsed;
        if (const auto exit =
                parseCommandLine("plans save", kPlansHelp, rest, &parsed, own, out, err))
            return *exit;
        if (name.empty())
            return usage(err, "save needs --name NAME");
        parsed.db = db;
        Session session(sessionOptions(parsed));
        PlannedModel planned;
        if (const auto exit = loadAndPlan("plans save", parsed, session, in, err, &planned))
            return *exit;
        auto opened = openStore();
        if (!opened)
            return fail(err, opened.error().toString());
        const Status saved = opened.value()->savePlan(
            name, note, planned.model.graph, planned.model.devices, planned.options, planned.plan);
        if (!saved.ok())
            return fail(err, saved.error().toString());
        out << "saved plan '" << name << "' (" << planned.plan.copies.size() << " copies, "
            << humanBytes(planned.plan.copiedBytes()) << ", " << planned.plan.conflicts.size()
            << " conflicts) in " << db << "\n";
        return Ok;
    }

    auto opened = openStore();
    if (!opened)
        return fail(err, opened.error().toString());
    store::PlanStore& plans = *opened.value();
    const bool json = std::find(rest.begin(), rest.end(), "--json") != rest.end();
    std::vector<std::string> positional;
    std::string emit = "summary";
    for (std::size_t i = 0; i < rest.size(); ++i) {
        if (rest[i] == "--json")
            continue;
        if (rest[i] == "--emit" && i + 1 < rest.size()) {
            emit = rest[++i];
            continue;
        }
        if (rest[i].size() > 1 && rest[i][0] == '-')
            return usage(err, "unknown option '" + rest[i] + "'");
        positional.push_back(rest[i]);
    }
    auto need = [&](std::size_t count, const char* shape) -> std::optional<int> {
        if (positional.size() != count)
            return usage(err, std::string(command) + " takes " + shape);
        return std::nullopt;
    };

    if (command == "list") {
        if (auto bad = need(0, "no arguments"))
            return *bad;
        auto list = plans.listPlans();
        if (!list)
            return fail(err, list.error().toString());
        auto drafts = plans.listDrafts();
        if (!drafts)
            return fail(err, drafts.error().toString());
        if (json) {
            // What a plan and a draft share: its name, graph, devices and the planner's figures.
            const auto entryOf = [](const std::string& name, bool draft, const auto& summary) {
                Json entry = Json::object();
                entry.set("name", name);
                entry.set("draft", draft);
                entry.set("graph", summary.graph);
                entry.set("devices", summary.devices);
                entry.set("copies", summary.copies);
                entry.set("copied_bytes", summary.copiedBytes);
                entry.set("conflicts", summary.conflicts);
                entry.set("updated", summary.updated);
                return entry;
            };
            Json array = Json::array();
            for (const store::PlanSummary& p : list.value()) {
                Json entry = entryOf(p.name, false, p);
                entry.set("note", p.note);
                entry.set("created", p.created);
                entry.set("last_run_ms", p.lastRunMs < 0 ? Json(nullptr) : Json(p.lastRunMs));
                array.push(std::move(entry));
            }
            for (const store::DraftSummary& d : drafts.value()) {
                Json entry = entryOf("draft-" + std::to_string(d.id), true, d);
                entry.set("plan", d.plan);
                entry.set("source", d.source);
                entry.set("abandoned", d.abandoned);
                array.push(std::move(entry));
            }
            out << array.dump() << "\n";
            return Ok;
        }
        if (list.value().empty())
            out << "no plans in " << db << "\n";
        for (const store::PlanSummary& p : list.value()) {
            out << p.name << "  (" << p.graph << " on " << p.devices << ": " << p.copies
                << " copies, " << humanBytes(p.copiedBytes) << ", " << p.conflicts << " conflicts";
            if (p.lastRunMs >= 0)
                out << ", last run " << p.lastRunMs << " ms";
            out << ", updated " << p.updated << ")";
            if (!p.note.empty())
                out << "  " << p.note;
            out << "\n";
        }
        for (const store::DraftSummary& d : drafts.value()) {
            out << "draft-" << d.id << "  [draft of " << d.title() << ", "
                << (d.abandoned ? "abandoned: its window closed uncleanly" : "open in a window")
                << "] (" << d.graph << " on " << d.devices << ": " << d.copies << " copies, "
                << humanBytes(d.copiedBytes) << ", " << d.conflicts << " conflicts, updated "
                << d.updated << ")\n";
        }
        return Ok;
    }
    if (command == "show") {
        if (auto bad = need(1, "NAME"))
            return *bad;
        if (emit != "summary" && emit != "json" && emit != "relay")
            return usage(err, "--emit must be summary, json or relay, not '" + emit + "'");
        // A draft (draft-N) or a saved plan.
        Result<store::StoredPlan> stored = store::StoredPlan{};
        const std::string& name = positional[0];
        if (name.starts_with("draft-") && name.size() > 6 &&
            name.find_first_not_of("0123456789", 6) == std::string::npos) {
            auto draft = plans.loadDraft(std::stoll(name.substr(6)));
            if (!draft)
                return fail(err, draft.error().toString());
            if (emit == "summary")
                out << "draft of " << draft.value().summary.title() << " ("
                    << (draft.value().summary.abandoned ? "abandoned" : "open in a window")
                    << ", updated " << draft.value().summary.updated << ")\n";
            stored = std::move(draft.value().plan);
        } else {
            stored = plans.loadPlan(name);
        }
        if (!stored)
            return fail(err, stored.error().toString());
        const store::PlanCheck check = store::PlanStore::check(stored.value());
        // A draft keeps no answer of its own to differ from.
        if (!stored.value().savedDevices.empty())
            for (const std::string& difference : check.differences)
                err << "placer plans: the planner now answers differently: " << difference << "\n";
        const Graph& graph = stored.value().model.graph;
        const DeviceSet& devices = stored.value().model.devices;
        // A saved plan's generations (placer generate --save-run), the latest first.
        std::vector<store::GenerationRecord> generations;
        if (!stored.value().savedDevices.empty()) {
            auto kept = plans.generations(name);
            if (!kept)
                return fail(err, kept.error().toString());
            generations = kept.take();
        }
        if (emit == "json") {
            Json document = planReportJson(graph, devices, stored.value().options, check.plan);
            Json list = Json::array();
            for (const store::GenerationRecord& g : generations)
                list.push(store::generationRecordJson(g, false));
            document.set("generations", std::move(list));
            out << document.dump() << "\n";
        } else if (emit == "relay") {
            out << writeRelay(applyPlan(graph, devices, check.plan), devices);
        } else {
            if (!stored.value().note.empty())
                out << "note: " << stored.value().note << "\n";
            out << planSummary(graph, devices, stored.value().options, check.plan);
            if (!generations.empty()) {
                const store::GenerationRecord& g = generations.front();
                out << "generations: " << generations.size()
                    << (generations.size() >= 20 ? "+" : "") << " kept; the latest (" << g.created
                    << ", " << g.mapping << "): " << g.newTokens << " tokens after a prompt of "
                    << g.promptTokens << ", " << std::fixed << std::setprecision(1)
                    << g.tokensPerSecond << " tokens/s, first token in " << std::setprecision(2)
                    << g.timeToFirstTokenMs << " ms\n";
            }
        }
        return Ok;
    }
    if (command == "diff") {
        if (auto bad = need(2, "A B"))
            return *bad;
        auto diff = plans.diffPlans(positional[0], positional[1]);
        if (!diff)
            return fail(err, diff.error().toString());
        const store::PlanDiff& d = diff.value();
        auto runs = store::compareLastRuns(plans, positional[0], positional[1]);
        if (!runs)
            return fail(err, runs.error().toString());
        if (json) {
            Json result = Json::object();
            Json moved = Json::array(), added = Json::array(), removed = Json::array();
            for (const auto& m : d.movedNodes)
                moved.push(m);
            for (const auto& c : d.copiesAdded)
                added.push(c);
            for (const auto& c : d.copiesRemoved)
                removed.push(c);
            result.set("moved", std::move(moved));
            result.set("copies_added", std::move(added));
            result.set("copies_removed", std::move(removed));
            result.set("bytes_a", d.bytesA);
            result.set("bytes_b", d.bytesB);
            if (runs && runs.value()) {
                const store::RunComparison& c = *runs.value();
                Json last = Json::object(), changes = Json::array();
                last.set("latency_ms_a", c.a.latencyMs);
                last.set("latency_ms_b", c.b.latencyMs);
                last.set("mapping_a", c.a.mapping);
                last.set("mapping_b", c.b.mapping);
                last.set("predicted_ms_a", c.predictedMsA ? Json(*c.predictedMsA) : Json());
                last.set("predicted_ms_b", c.predictedMsB ? Json(*c.predictedMsB) : Json());
                for (const auto& [node, delta] : c.nodeChanges) {
                    Json change = Json::object();
                    change.set("node", node);
                    change.set("change_ms", delta);
                    changes.push(std::move(change));
                }
                last.set("node_changes", std::move(changes));
                result.set("last_runs", std::move(last));
            }
            out << result.dump() << "\n";
            return Ok;
        }
        out << d.movedNodes.size() << " nodes moved, " << d.copiesAdded.size() << " copies added, "
            << d.copiesRemoved.size() << " removed; bytes copied " << humanBytes(d.bytesA) << " -> "
            << humanBytes(d.bytesB) << "\n";
        for (const auto& m : d.movedNodes)
            out << "  moved " << m << "\n";
        for (const auto& c : d.copiesAdded)
            out << "  + copy " << c << "\n";
        for (const auto& c : d.copiesRemoved)
            out << "  - copy " << c << "\n";
        if (!runs.value()) {
            out << "last runs: run both plans (placer run --save-run) to compare their latency\n";
            return Ok;
        }
        const store::RunComparison& c = *runs.value();
        out << "last runs: " << std::fixed << std::setprecision(3) << c.a.latencyMs << " ms ("
            << c.a.mapping << ") -> " << c.b.latencyMs << " ms (" << c.b.mapping << ")\n";
        if (c.predictedMsA || c.predictedMsB) {
            const auto predicted = [](const std::optional<double>& ms) {
                std::ostringstream text;
                if (ms)
                    text << std::fixed << std::setprecision(3) << *ms << " ms";
                else
                    text << "none";
                return text.str();
            };
            out << "predicted:  " << predicted(c.predictedMsA) << " -> "
                << predicted(c.predictedMsB) << " (measured " << c.a.latencyMs << " -> "
                << c.b.latencyMs << " ms)\n";
        }
        for (std::size_t i = 0; i < c.nodeChanges.size() && i < 8; ++i)
            out << "  " << c.nodeChanges[i].first << " " << std::showpos << c.nodeChanges[i].second
                << std::noshowpos << " ms\n";
        return Ok;
    }
    if (command == "rename" || command == "duplicate") {
        if (auto bad = need(2, "NAME NEW"))
            return *bad;
        const Status status = command == "rename"
                                  ? plans.renamePlan(positional[0], positional[1])
                                  : plans.duplicatePlan(positional[0], positional[1]);
        if (!status.ok())
            return fail(err, status.error().toString());
        out << (command == "rename" ? "renamed '" : "duplicated '") << positional[0] << "' as '"
            << positional[1] << "'\n";
        return Ok;
    }
    if (command == "delete") {
        if (auto bad = need(1, "NAME"))
            return *bad;
        if (Status status = plans.deletePlan(positional[0]); !status.ok())
            return fail(err, status.error().toString());
        out << "deleted plan '" << positional[0] << "' and its runs\n";
        return Ok;
    }
    return usage(err, "unknown command '" + command + "'");
}

} // namespace placer::cli
