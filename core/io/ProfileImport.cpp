// ONNX Runtime's profiles on a model's graph (io/ProfileImport.h). The mapping rules, which
// docs/user/profiles.md states for users:
//
//  1. A node event is named NODE_kernel_time (the _fence_before/_fence_after events around it
//     are not times of the node), with its op and provider in its args.
//  2. The name is the model's node's when ONNX Runtime ran the node as it is.
//  3. Otherwise the suffixes its graph transformers add are taken off, repeatedly: _nchwc (the
//     NCHWc layout), _token_N (a copy of a name), _new_reshape, /XFusion and /XFusion/ (a fusion
//     named after the node it started from); then VALUE_output_N names the node VALUE's output,
//     as PyTorch's exporter names values after their nodes.
//  4. A node found so whose op is not the event's (a Relu named, a Conv run) anchors a fused
//     node: the event's op is looked for up the node's first input (Conv, BatchNormalization,
//     Relu: three steps at most), and the nodes on the way are its members. A Gemm or a
//     FusedMatMul run for a MatMul takes the Add or Mul after it as a member.
//  5. Nodes inside a Loop, If or Scan body add their time to the control-flow node.
//  6. A node's time is the median over runs (model_run spans) of the sum of its events in the
//     run.
//  7. An NCHWc convolution (_nchwc) runs the element-wise nodes after it (a residual Add, the
//     activation): those without an event of their own are its members.
//  8. Nodes ONNX Runtime fused and named by their op alone (SkipLayerNormalization, Gelu,
//     Gelu_token_3) are matched by order: in every run, the k-th such event is the k-th island of
//     connected compute nodes left without a time, in graph order; not at all when the counts
//     differ.
#include "io/ProfileImport.h"

#include "ir/OpSemantics.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <sstream>
#include <unordered_map>

namespace placer {

namespace {

struct Event {
    std::string name, op, provider;
    double ts = 0, dur = 0;
};

bool endsWith(std::string_view text, std::string_view tail) {
    return text.size() >= tail.size() && text.substr(text.size() - tail.size()) == tail;
}

/// One ONNX Runtime suffix taken off `name`, or false when it has none (rule 3).
bool stripOnce(std::string& name) {
    if (name.size() > 1 && name.back() == '/') {
        name.pop_back();
        return true;
    }
    for (const char* tail : {"_nchwc", "_new_reshape"}) {
        if (endsWith(name, tail) && name.size() > std::string_view(tail).size()) {
            name.resize(name.size() - std::string_view(tail).size());
            return true;
        }
    }
    // _token_N
    std::size_t digits = 0;
    while (digits < name.size() &&
           std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits])))
        ++digits;
    if (digits > 0 && endsWith(std::string_view(name).substr(0, name.size() - digits), "_token_") &&
        name.size() > digits + 7) {
        name.resize(name.size() - digits - 7);
        return true;
    }
    // /XFusion
    const std::size_t slash = name.rfind('/');
    if (slash != std::string::npos && slash > 0 && endsWith(name, "Fusion")) {
        name.resize(slash);
        return true;
    }
    return false;
}

/// VALUE_output_N -> VALUE, or nullopt.
std::optional<std::string> producerOf(const std::string& name) {
    std::size_t digits = 0;
    while (digits < name.size() &&
           std::isdigit(static_cast<unsigned char>(name[name.size() - 1 - digits])))
        ++digits;
    const std::string_view head = std::string_view(name).substr(0, name.size() - digits);
    if (digits == 0 || !endsWith(head, "_output_") || head.size() <= 8)
        return std::nullopt;
    return std::string(head.substr(0, head.size() - 8));
}

/// The ONNX op type of a node ("Conv"; a contrib op without its domain).
std::string onnxType(const Node& node) {
    const std::string& name = node.op->name;
    const std::size_t dot = name.rfind('.');
    return dot == std::string::npos ? name : name.substr(dot + 1);
}

/// Whether ONNX Runtime named the event's node by its op alone: "Gelu", "Gelu_token_3".
bool namedByOp(const Event& event) {
    if (event.op.empty() || event.name.rfind(event.op, 0) != 0 ||
        event.op.rfind("Reorder", 0) == 0 || event.op.rfind("Memcpy", 0) == 0)
        return false;
    const std::string_view rest = std::string_view(event.name).substr(event.op.size());
    if (rest.empty())
        return true;
    if (rest.rfind("_token_", 0) != 0 || rest.size() == 7)
        return false;
    return std::all_of(rest.begin() + 7, rest.end(),
                       [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

/// Why ONNX Runtime ran a node the model does not have (rule-free names).
std::string whyUnmatched(const Event& event) {
    if (event.op.rfind("Reorder", 0) == 0 || event.name.rfind("Reorder", 0) == 0)
        return "ONNX Runtime's change of layout (NCHWc), not a node of the model";
    if (event.name.find("gemm_input_reshape") != std::string::npos ||
        event.name.find("gemm_output_reshape") != std::string::npos)
        return "a reshape ONNX Runtime put around a Gemm it fused, not a node of the model";
    if (event.op.rfind("Memcpy", 0) == 0)
        return "ONNX Runtime's copy between providers, not a node of the model";
    if (event.name == event.op)
        return "a node ONNX Runtime fused and named only by its op, not after the model's nodes";
    if (event.op == "Identity")
        return "an Identity, which placer takes out of the graph it reads";
    return "no node of that name in the model";
}

double median(std::vector<double> values) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

std::string ms(double micros) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f ms", micros / 1000);
    return text;
}

/// Every node name inside the bodies of `graph`'s control-flow nodes, to the top-level node that
/// holds it (rule 5).
void bodyNames(const Graph& body, NodeId holder, std::unordered_map<std::string, NodeId>* names) {
    for (const Node& node : body.nodes()) {
        names->emplace(node.name, holder);
        for (const Subgraph& sub : node.subgraphs) {
            if (sub.graph)
                bodyNames(*sub.graph, holder, names);
        }
    }
}

} // namespace

int ProfileImport::nodesWithTimes() const {
    int count = 0;
    for (const ImportedTime& time : times)
        count += 1 + static_cast<int>(time.fused.size());
    return count;
}

double ProfileImport::nodeMatchRate() const {
    return computeNodes > 0 ? static_cast<double>(nodesWithTimes()) / computeNodes : 0.0;
}

const ImportedTime* ProfileImport::timeOf(NodeId node) const {
    for (const ImportedTime& time : times) {
        if (time.node == node)
            return &time;
    }
    return nullptr;
}

Result<ProfileImport> importOnnxRuntimeProfile(const Graph& graph, std::string_view text,
                                               const std::string& path) {
    auto parsed = Json::parse(text, path);
    if (!parsed)
        return SourceError::sentence("the profile is not JSON: " + parsed.error().toString());
    const Json& document = parsed.value();
    // ONNX Runtime writes an array of events; a trace viewer's export wraps it in traceEvents.
    const Json* events = &document;
    if (document.isObject())
        events = document.find("traceEvents");
    if (!events || !events->isArray())
        return SourceError::sentence(path + ": not a profile: ONNX Runtime's is a JSON array of "
                                            "trace events (SessionOptions.enableProfiling)");
    std::vector<Event> nodeEvents;
    std::vector<std::pair<double, double>> runs; // start, end
    for (const Json& entry : events->items()) {
        if (!entry.isObject())
            continue;
        const Json* cat = entry.find("cat");
        const Json* name = entry.find("name");
        const Json* dur = entry.find("dur");
        const Json* ts = entry.find("ts");
        if (!cat || !cat->isString() || !name || !name->isString() || !dur || !dur->isNumber())
            continue;
        const double start = ts && ts->isNumber() ? ts->asDouble() : 0;
        if (cat->asString() == "Session") {
            if (name->asString() == "model_run")
                runs.emplace_back(start, start + dur->asDouble());
            continue;
        }
        if (cat->asString() != "Node" || !endsWith(name->asString(), "_kernel_time"))
            continue;
        Event event;
        event.name = name->asString().substr(0, name->asString().size() - 12);
        event.ts = start;
        event.dur = dur->asDouble();
        if (const Json* args = entry.find("args"); args && args->isObject()) {
            if (const Json* op = args->find("op_name"); op && op->isString())
                event.op = op->asString();
            if (const Json* provider = args->find("provider"); provider && provider->isString())
                event.provider = provider->asString();
        }
        nodeEvents.push_back(std::move(event));
    }
    if (nodeEvents.empty())
        return SourceError::sentence(
            path + ": the profile has no node events (NODE_kernel_time): was it written after "
                   "a run, with profiling on (SessionOptions.enableProfiling)?");
    std::sort(runs.begin(), runs.end());
    const auto runOf = [&](double ts) -> int {
        if (runs.empty())
            return -1;
        auto it = std::upper_bound(runs.begin(), runs.end(), std::make_pair(ts, 1e300));
        if (it == runs.begin())
            return 0;
        return static_cast<int>(it - runs.begin()) - 1;
    };

    std::unordered_map<std::string, NodeId> inBodies;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        for (const Subgraph& sub : graph.node(NodeId(i)).subgraphs) {
            if (sub.graph)
                bodyNames(*sub.graph, NodeId(i), &inBodies);
        }
    }
    // Consumers of each node's outputs, for rule 4.
    std::vector<std::vector<NodeId>> consumers(graph.size());
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        for (const ValueRef& input : graph.node(NodeId(i)).inputs)
            consumers[input.node.index].push_back(NodeId(i));
    }
    const auto find = [&](const std::string& name) -> std::optional<NodeId> {
        if (auto id = graph.find(name))
            return id;
        if (auto it = inBodies.find(name); it != inBodies.end())
            return it->second;
        return std::nullopt;
    };
    const auto resolve = [&](const std::string& name) -> std::optional<NodeId> {
        if (auto id = find(name))
            return id;
        std::string stripped = name;
        while (stripOnce(stripped)) {
            if (auto id = find(stripped))
                return id;
        }
        if (auto producer = producerOf(stripped))
            return find(*producer);
        return std::nullopt;
    };

    ProfileImport imported;
    imported.source = "onnxruntime";
    imported.path = path;
    imported.events = static_cast<int>(nodeEvents.size());
    struct Collected {
        std::map<int, double> perRun;     // run -> summed micros
        std::map<int, double> firstStart; // run -> the earliest event's start
        std::vector<double> alone;        // events outside any run span
        int events = 0;
        std::string provider, event, op;
        std::vector<NodeId> fused;
        /// Adds an event of run `run` (-1: outside any run); returns whether it is the first.
        bool add(const Event& e, int run) {
            if (run < 0) {
                alone.push_back(e.dur);
            } else {
                perRun[run] += e.dur;
                const auto [at, fresh] = firstStart.emplace(run, e.ts);
                if (!fresh)
                    at->second = std::min(at->second, e.ts);
            }
            ++events;
            if (!event.empty())
                return false;
            event = e.name;
            op = e.op;
            provider = e.provider;
            return true;
        }
    };
    std::map<std::uint32_t, Collected> collected;
    std::map<std::string, std::pair<ProfileImport::Unmatched, std::vector<double>>> unmatched;
    std::vector<bool> fusedMember(graph.size(), false);
    std::vector<const Event*> unnamed; // rule 8
    std::vector<NodeId> nchwcAnchors;  // rule 7
    for (const Event& event : nodeEvents) {
        const std::optional<NodeId> found = resolve(event.name);
        if (!found && namedByOp(event)) {
            unnamed.push_back(&event);
            continue;
        }
        if (!found) {
            auto& [entry, durations] = unmatched[event.name];
            entry.event = event.name;
            entry.op = event.op;
            entry.why = whyUnmatched(event);
            durations.push_back(event.dur);
            continue;
        }
        ++imported.matchedEvents;
        NodeId anchor = *found;
        std::vector<NodeId> members;
        std::string ran = event.op.rfind("Fused", 0) == 0 ? event.op.substr(5) : event.op;
        const auto matches = [&](NodeId id) {
            const std::string type = onnxType(graph.node(id));
            return type == ran || (ran == "Gemm" && type == "MatMul");
        };
        if (!ran.empty() && !matches(anchor) && !inBodies.count(event.name)) {
            // Rule 4: up the first input for the op that ran.
            NodeId at = anchor;
            std::vector<NodeId> path{anchor};
            for (int step = 0; step < 3; ++step) {
                const Node& node = graph.node(at);
                if (node.inputs.empty())
                    break;
                at = node.inputs[0].node;
                if (matches(at)) {
                    anchor = at;
                    members = path;
                    break;
                }
                path.push_back(at);
            }
        }
        if (members.empty() && (event.op == "Gemm" || event.op == "FusedMatMul") &&
            onnxType(graph.node(anchor)) == "MatMul" && consumers[anchor.index].size() == 1) {
            const NodeId next = consumers[anchor.index].front();
            const std::string type = onnxType(graph.node(next));
            if (type == "Add" || type == "Mul" || type == "Div")
                members.push_back(next);
        }
        if (endsWith(event.name, "_nchwc") && onnxType(graph.node(anchor)) == "Conv")
            nchwcAnchors.push_back(anchor);
        Collected& into = collected[anchor.index];
        into.add(event, runOf(event.ts));
        for (const NodeId member : members) {
            if (member != anchor &&
                std::find(into.fused.begin(), into.fused.end(), member) == into.fused.end()) {
                into.fused.push_back(member);
                fusedMember[member.index] = true;
            }
        }
    }
    const auto timed = [&](std::uint32_t i) { return collected.count(i) > 0 || fusedMember[i]; };
    // Rule 7: an NCHWc convolution runs the element-wise nodes after it (a residual Add, the
    // activation) inside it: those of them without an event of their own are its members.
    for (const NodeId conv : nchwcAnchors) {
        NodeId at = conv;
        for (int step = 0; step < 3; ++step) {
            if (consumers[at.index].size() != 1)
                break;
            const NodeId next = consumers[at.index].front();
            const std::string type = onnxType(graph.node(next));
            if (timed(next.index) ||
                (type != "Add" && type != "Relu" && type != "Clip" && type != "Sigmoid" &&
                 type != "LeakyRelu" && type != "HardSigmoid"))
                break;
            collected[conv.index].fused.push_back(next);
            fusedMember[next.index] = true;
            at = next;
        }
    }
    // Rule 8: nodes ONNX Runtime fused and named by their op alone (SkipLayerNormalization,
    // Gelu) are matched by order: in every run, the k-th such event is the k-th island of
    // connected compute nodes without a time, in graph order; unless the counts differ.
    if (!unnamed.empty()) {
        std::vector<int> island(graph.size(), -1);
        std::vector<std::vector<NodeId>> islands;
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            if (graph.node(NodeId(i)).role() != OpRole::Compute || timed(i) || island[i] >= 0)
                continue;
            islands.emplace_back();
            std::vector<std::uint32_t> stack{i};
            island[i] = static_cast<int>(islands.size()) - 1;
            while (!stack.empty()) {
                const std::uint32_t at = stack.back();
                stack.pop_back();
                islands.back().push_back(NodeId(at));
                std::vector<NodeId> next = consumers[at];
                for (const ValueRef& input : graph.node(NodeId(at)).inputs)
                    next.push_back(input.node);
                for (const NodeId n : next) {
                    if (island[n.index] < 0 && graph.node(n).role() == OpRole::Compute &&
                        !timed(n.index)) {
                        island[n.index] = island[i];
                        stack.push_back(n.index);
                    }
                }
            }
            std::sort(islands.back().begin(), islands.back().end(),
                      [](NodeId a, NodeId b) { return a.index < b.index; });
        }
        std::sort(islands.begin(), islands.end(),
                  [](const auto& a, const auto& b) { return a.front().index < b.front().index; });
        std::map<int, std::vector<const Event*>> byRun;
        for (const Event* event : unnamed)
            byRun[runOf(event->ts)].push_back(event);
        bool fits = !islands.empty();
        for (auto& [run, list] : byRun) {
            std::sort(list.begin(), list.end(),
                      [](const Event* a, const Event* b) { return a->ts < b->ts; });
            fits = fits && list.size() == islands.size();
        }
        for (auto& [run, list] : byRun) {
            for (std::size_t k = 0; k < list.size(); ++k) {
                const Event& event = *list[k];
                if (!fits) {
                    auto& [entry, durations] = unmatched[event.name];
                    entry.event = event.name;
                    entry.op = event.op;
                    entry.why = "a node ONNX Runtime fused and named only by its op; its " +
                                std::to_string(list.size()) +
                                " such nodes a run are not the model's " +
                                std::to_string(islands.size()) +
                                " runs of nodes without a time, so not matched by order";
                    durations.push_back(event.dur);
                    continue;
                }
                ++imported.matchedEvents;
                const std::vector<NodeId>& members = islands[k];
                Collected& into = collected[members.front().index];
                if (into.add(event, run)) {
                    for (std::size_t m = 1; m < members.size(); ++m) {
                        into.fused.push_back(members[m]);
                        fusedMember[members[m].index] = true;
                    }
                }
            }
        }
    }
    if (imported.matchedEvents == 0)
        return SourceError::sentence(
            path + ": none of the profile's " + std::to_string(nodeEvents.size()) +
            " node events is a node of this model (the first is '" + nodeEvents.front().name +
            "'): is it a profile of another model?");
    imported.runs = runs.empty() ? 1 : static_cast<int>(runs.size());
    for (auto& [index, into] : collected) {
        // A member of another node's fused group that also ran alone keeps its own time.
        fusedMember[index] = false;
        std::vector<double> samples = into.alone;
        for (const auto& [run, micros] : into.perRun)
            samples.push_back(micros);
        ImportedTime time;
        time.node = NodeId(index);
        time.medianMicros = median(samples);
        time.events = into.events;
        time.provider = into.provider;
        time.event = into.event;
        time.op = into.op;
        time.fused = into.fused;
        if (!runs.empty()) {
            const int last = static_cast<int>(runs.size()) - 1;
            if (const auto at = into.firstStart.find(last); at != into.firstStart.end())
                time.startMicros = at->second - runs[static_cast<std::size_t>(last)].first;
        }
        imported.times.push_back(std::move(time));
    }
    for (auto& [name, entry] : unmatched) {
        entry.first.medianMicros = median(entry.second);
        imported.unmatchedEvents.push_back(entry.first);
    }
    std::sort(imported.unmatchedEvents.begin(), imported.unmatchedEvents.end(),
              [](const auto& a, const auto& b) { return a.medianMicros > b.medianMicros; });
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.node(NodeId(i));
        if (node.role() != OpRole::Compute)
            continue;
        ++imported.computeNodes;
        if (collected.count(i) || fusedMember[i])
            continue;
        imported.missing.push_back(
            {NodeId(i), "no event: ONNX Runtime folded it at load, or fused it into a node it "
                        "named after no node of the model"});
    }
    if (imported.nodeMatchRate() < 0.5)
        imported.warnings.push_back(
            "only " + std::to_string(imported.nodesWithTimes()) + " of the model's " +
            std::to_string(imported.computeNodes) +
            " compute nodes have a time in the profile: is it a profile of another model, or of "
            "another version of it?");
    return imported;
}

Json profileImportJson(const Graph& graph, const ProfileImport& imported) {
    Json out = Json::object({{"source", imported.source},
                             {"profile", imported.path},
                             {"runs", std::int64_t{imported.runs}},
                             {"events", std::int64_t{imported.events}},
                             {"matched_events", std::int64_t{imported.matchedEvents}},
                             {"compute_nodes", std::int64_t{imported.computeNodes}},
                             {"nodes_with_times", std::int64_t{imported.nodesWithTimes()}},
                             {"node_match_rate", imported.nodeMatchRate()}});
    Json nodes = Json::array();
    for (const ImportedTime& time : imported.times) {
        const Node& node = graph.node(time.node);
        Json entry = Json::object({{"name", node.name},
                                   {"op", node.op->name},
                                   {"median_ms", time.medianMicros / 1000},
                                   {"events", std::int64_t{time.events}},
                                   {"provider", time.provider},
                                   {"profile_name", time.event},
                                   {"profile_op", time.op}});
        Json fused = Json::array();
        for (const NodeId member : time.fused)
            fused.push(graph.node(member).name);
        entry.set("fused", std::move(fused));
        nodes.push(std::move(entry));
    }
    out.set("nodes", std::move(nodes));
    Json events = Json::array();
    for (const auto& event : imported.unmatchedEvents) {
        events.push(Json::object({{"name", event.event},
                                  {"op", event.op},
                                  {"median_ms", event.medianMicros / 1000},
                                  {"why", event.why}}));
    }
    out.set("unmatched_events", std::move(events));
    Json missing = Json::array();
    for (const auto& node : imported.missing) {
        missing.push(Json::object({{"name", graph.node(node.node).name},
                                   {"op", graph.node(node.node).op->name},
                                   {"why", node.why}}));
    }
    out.set("missing_nodes", std::move(missing));
    Json warnings = Json::array();
    for (const std::string& warning : imported.warnings)
        warnings.push(warning);
    out.set("warnings", std::move(warnings));
    return out;
}

std::string profileImportSummary(const Graph& graph, const ProfileImport& imported) {
    std::ostringstream out;
    int fused = 0;
    std::map<std::string, int> providers;
    for (const ImportedTime& time : imported.times) {
        fused += static_cast<int>(time.fused.size());
        providers[time.provider.empty() ? std::string("(none said)") : time.provider] += 1;
    }
    char line[512];
    std::snprintf(line, sizeof line,
                  "%s (ONNX Runtime, %d run%s): %d of %d node events are nodes of the model; %d of "
                  "%d compute nodes have a time (%.1f %%, %d of them fused into another)\n",
                  imported.path.c_str(), imported.runs, imported.runs == 1 ? "" : "s",
                  imported.matchedEvents, imported.events, imported.nodesWithTimes(),
                  imported.computeNodes, 100 * imported.nodeMatchRate(), fused);
    out << line;
    for (const std::string& warning : imported.warnings)
        out << "warning: " << warning << "\n";
    out << "providers:";
    for (const auto& [provider, count] : providers)
        out << " " << provider << " " << count;
    out << "\n";
    std::vector<const ImportedTime*> slowest;
    for (const ImportedTime& time : imported.times)
        slowest.push_back(&time);
    std::sort(slowest.begin(), slowest.end(),
              [](const auto* a, const auto* b) { return a->medianMicros > b->medianMicros; });
    out << "slowest nodes (median over runs):\n";
    for (std::size_t k = 0; k < slowest.size() && k < 10; ++k) {
        const ImportedTime& time = *slowest[k];
        std::snprintf(line, sizeof line, "  %10s  %-22s %s", ms(time.medianMicros).c_str(),
                      graph.node(time.node).op->name.c_str(), graph.node(time.node).name.c_str());
        out << line;
        if (!time.fused.empty()) {
            out << "  (ran as " << time.op << " with";
            for (const NodeId member : time.fused)
                out << " " << graph.node(member).name;
            out << ")";
        }
        out << "\n";
    }
    if (!imported.unmatchedEvents.empty()) {
        out << "events that are no node of the model (" << imported.unmatchedEvents.size()
            << "):\n";
        for (std::size_t k = 0; k < imported.unmatchedEvents.size() && k < 10; ++k) {
            const auto& event = imported.unmatchedEvents[k];
            out << "  " << ms(event.medianMicros) << "  " << event.event << " (" << event.op
                << "): " << event.why << "\n";
        }
        if (imported.unmatchedEvents.size() > 10)
            out << "  ... " << imported.unmatchedEvents.size() - 10 << " more (--json lists all)\n";
    }
    if (!imported.missing.empty()) {
        out << "compute nodes without a time (" << imported.missing.size() << "):\n";
        for (std::size_t k = 0; k < imported.missing.size() && k < 10; ++k)
            out << "  " << graph.node(imported.missing[k].node).name << " ("
                << graph.node(imported.missing[k].node).op->name << "): " << imported.missing[k].why
                << "\n";
        if (imported.missing.size() > 10)
            out << "  ... " << imported.missing.size() - 10 << " more (--json lists all)\n";
    }
    return out.str();
}

} // namespace placer
