// Plan reports.
#include "report/PlanReport.h"

#include "plan/Precision.h"
#include "plan/Split.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace placer {

namespace {

Json nameList(const Graph& graph, const std::vector<NodeId>& nodes) {
    Json list = Json::array();
    for (NodeId id : nodes)
        list.push(graph.node(id).name);
    return list;
}

std::string joinNames(const Graph& graph, const std::vector<NodeId>& nodes) {
    std::string out;
    for (NodeId id : nodes)
        out += (out.empty() ? "" : ", ") + graph.node(id).name;
    return out;
}

Json predictionJson(const DeviceSet& devices, const PlanOptions& options, const Prediction& p) {
    Json json = Json::object();
    json.set("latency_ms", p.makespanMicros / 1000);
    Json busy = Json::array();
    for (int d = 0; d < devices.size(); ++d) {
        Json entry = Json::object();
        entry.set("device", devices[DeviceId(d)].name);
        entry.set("busy_ms", p.deviceBusyMicros[static_cast<std::size_t>(d)] / 1000);
        busy.push(std::move(entry));
    }
    json.set("devices", std::move(busy));
    if (options.mode == PlanMode::Auto) {
        json.set("heft_ms", p.heftMicros / 1000);
        if (std::isfinite(p.singleDeviceMicros))
            json.set("best_single_device_ms", p.singleDeviceMicros / 1000);
        json.set("evaluations", p.evaluations);
        json.set("kept_single_device", p.keptSingleDevice);
        json.set("exact", p.exactStatus);
        if (p.exactOptimumMicros)
            json.set("exact_optimum_ms", *p.exactOptimumMicros / 1000);
    }
    return json;
}

} // namespace

namespace {

/// "v0+v1": the devices a split node runs on.
std::string shardDevices(const DeviceSet& devices, const SplitRegion& region) {
    std::string text;
    for (const Shard& shard : region.shards)
        text += (text.empty() ? "" : "+") +
                (shard.device.valid() ? devices[shard.device].name : std::string("its device"));
    return text;
}

/// What a split region inserted and moves: its Split and Concat nodes, where they run, and the
/// copies of the sharded plan that carry its rows.
struct SplitBorder {
    struct Inserted {
        std::string name, value, device;
    };
    std::vector<Inserted> splits, concats;
    std::vector<const CopyPlan*> copies;
    std::int64_t sharedConstantBytes = 0;
    int sharedConstants = 0;
};

SplitBorder splitBorder(const Graph& graph, const DeviceSet& devices, const Plan& plan,
                        std::size_t r) {
    SplitBorder border;
    const SplitRegion& region = plan.splits[r];
    for (ValueRef value : region.shared) {
        if (graph.node(value.node).isConstant()) {
            ++border.sharedConstants;
            border.sharedConstantBytes += graph.type(value).bytes();
        }
    }
    if (!plan.sharded)
        return border;
    const ShardedGraph& sharded = *plan.sharded;
    const Plan& inner = *sharded.plan;
    for (std::uint32_t j = 0; j < sharded.graph.size(); ++j) {
        const Node& node = sharded.graph.nodes()[j];
        if (sharded.region[j] != static_cast<std::int32_t>(r) || sharded.origin[j].valid() ||
            sharded.shard[j] >= 0)
            continue;
        const KernelFamily family = node.op->kernel.family;
        SplitBorder::Inserted entry{
            node.name,
            family == KernelFamily::Split ? sharded.graph.valueName(node.inputs[0]) : node.name,
            inner.devices[j].valid() ? devices[inner.devices[j]].name : "-"};
        (family == KernelFamily::Split ? border.splits : border.concats).push_back(entry);
    }
    for (const CopyPlan& copy : inner.copies) {
        const std::uint32_t from = copy.value.node.index;
        bool touches = sharded.region[from] == static_cast<std::int32_t>(r);
        for (NodeId consumer : copy.consumers)
            touches = touches || sharded.region[consumer.index] == static_cast<std::int32_t>(r);
        if (touches && !sharded.graph.node(copy.value.node).isConstant())
            border.copies.push_back(&copy);
    }
    return border;
}

/// A tensor-sharded region's shardings per op, with the rule that chose each, and its
/// collectives with their bytes.
void tensorRegionJson(const Graph& graph, const SplitRegion& region, Json& entry) {
    entry.set("tensor", true);
    Json ops = Json::array();
    for (std::size_t k = 0; k < region.nodes.size() && k < region.ops.size(); ++k) {
        Json op = Json::object();
        op.set("node", graph.node(region.nodes[k]).name);
        Json outputs = Json::array();
        for (const Sharding& sharding : region.ops[k].outputs)
            outputs.push(sharding.text());
        op.set("outputs", std::move(outputs));
        op.set("why", region.ops[k].why);
        ops.push(std::move(op));
    }
    entry.set("ops", std::move(ops));
    Json collectives = Json::array();
    for (const Collective& collective : region.collectives) {
        Json c = Json::object();
        c.set("kind", std::string(collectiveName(collective.kind)));
        c.set("value", graph.valueName(collective.value));
        c.set("bytes", collective.bytes);
        c.set("for", collective.reason);
        collectives.push(std::move(c));
    }
    entry.set("collectives", std::move(collectives));
}

/// A tensor-sharded region for people: each op's sharding and the collectives it costs.
std::string tensorRegionSummary(const Graph& graph, const DeviceSet& devices,
                                const SplitRegion& region) {
    std::string out = "  " + std::to_string(region.nodes.size()) + " ops cut across";
    for (std::size_t s = 0; s < region.shards.size(); ++s) {
        const Shard& shard = region.shards[s];
        out += (s ? ", " : " ") +
               (shard.device.valid() ? devices[shard.device].name : std::to_string(s)) +
               " (share " + std::to_string(shard.rows()) + "/" + std::to_string(region.batch) + ")";
    }
    out += "\n";
    for (std::size_t k = 0; k < region.nodes.size() && k < region.ops.size(); ++k) {
        std::string held;
        for (const Sharding& sharding : region.ops[k].outputs)
            held += (held.empty() ? "" : ",") + sharding.text();
        out += "    " + graph.node(region.nodes[k]).name + "  " + held + "  " + region.ops[k].why +
               "\n";
    }
    for (const Collective& collective : region.collectives)
        out += "    " + std::string(collectiveName(collective.kind)) + ": " +
               graph.valueName(collective.value) + "  " + formatBytes(collective.bytes) + "  for " +
               collective.reason + "\n";
    return out;
}

Json splitsJson(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    Json list = Json::array();
    for (std::size_t r = 0; r < plan.splits.size(); ++r) {
        const SplitRegion& region = plan.splits[r];
        Json entry = Json::object();
        entry.set("name", region.name);
        if (!region.requested.empty())
            entry.set("request", region.requested);
        if (region.autoChosen)
            entry.set("auto", true);
        entry.set("batch", region.batch);
        entry.set("nodes", nameList(graph, region.nodes));
        Json shards = Json::array();
        if (region.microBatched)
            entry.set("micro_batches",
                      static_cast<std::int64_t>(region.shards.size()) / region.batches);
        if (region.batches > 1)
            entry.set("stream_batches", std::int64_t{region.batches});
        for (const Shard& shard : region.shards) {
            Json s = Json::object();
            s.set("device", shard.device.valid() ? Json(devices[shard.device].name) : Json());
            s.set("share", shard.share);
            s.set("begin", shard.begin);
            s.set("end", shard.end);
            shards.push(std::move(s));
        }
        entry.set("shards", std::move(shards));
        if (region.tensor)
            tensorRegionJson(graph, region, entry);
        const SplitBorder border = splitBorder(graph, devices, plan, r);
        for (const auto& [key, inserted] :
             {std::pair{"split", &border.splits}, std::pair{"concat", &border.concats}}) {
            Json nodes = Json::array();
            for (const SplitBorder::Inserted& node : *inserted) {
                Json n = Json::object();
                n.set("name", node.name);
                n.set("device", node.device);
                nodes.push(std::move(n));
            }
            entry.set(key, std::move(nodes));
        }
        Json values = Json::array();
        for (ValueRef value : region.inputs)
            values.push(graph.valueName(value));
        entry.set("inputs", std::move(values));
        Json outputs = Json::array();
        for (ValueRef value : region.outputs)
            outputs.push(graph.valueName(value));
        entry.set("outputs", std::move(outputs));
        Json shared = Json::array();
        for (ValueRef value : region.shared) {
            Json v = Json::object();
            v.set("value", graph.valueName(value));
            v.set("bytes", graph.type(value).bytes());
            v.set("constant", graph.node(value.node).isConstant());
            shared.push(std::move(v));
        }
        entry.set("shared", std::move(shared));
        Json copies = Json::array();
        for (const CopyPlan* copy : border.copies) {
            Json c = Json::object();
            c.set("value", plan.sharded->graph.valueName(copy->value));
            c.set("from", devices[copy->from].name);
            c.set("to", devices[copy->to].name);
            c.set("bytes", copy->bytes);
            copies.push(std::move(c));
        }
        entry.set("copies", std::move(copies));
        list.push(std::move(entry));
    }
    return list;
}

/// The precision policies for people: which devices compute in 16 bits, how many nodes, and
/// each cast; empty when no device has a policy.
std::string castsSummary(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    if (!hasPrecisionPolicy(devices))
        return {};
    const std::vector<DType> types = computeTypes(graph, devices, plan.devices);
    std::string out = "precision:";
    bool first = true;
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        if (device.computeType == DType::Float32)
            continue;
        const std::int64_t narrowed = narrowedOn(types, plan, DeviceId(d));
        out += std::string(first ? " " : "; ") + device.name + " computes in " +
               std::string(dtypeName(device.computeType)) + " (" + std::to_string(narrowed) +
               (narrowed == 1 ? " node)" : " nodes)");
        first = false;
    }
    out += "\n";
    if (plan.casts.empty())
        return out + "casts: none\n";
    out += "casts: " + std::to_string(plan.casts.size()) + ", " +
           formatBytes(castBytesPerRun(plan)) + " converted per run\n";
    for (const CastPlan& cast : plan.casts) {
        std::string readers = joinNames(graph, cast.consumers);
        if (cast.toOutput)
            readers += std::string(readers.empty() ? "" : ", ") + "the result";
        out += "  " + graph.valueName(cast.value) + "  " + std::string(dtypeName(cast.from)) +
               " -> " + std::string(dtypeName(cast.to)) + "  on " + devices[cast.device].name +
               "  " + formatBytes(cast.bytes) + (readers.empty() ? "" : "  for " + readers) +
               (cast.atLoad ? "  (once, at load)" : "") + "\n";
    }
    return out;
}

/// The split regions for people: shards, inserted nodes, copies and replicated weights.
std::string splitsSummary(const Graph& graph, const DeviceSet& devices, const Plan& plan) {
    std::string out = "split regions: " + std::to_string(plan.splits.size()) + "\n";
    for (std::size_t r = 0; r < plan.splits.size(); ++r) {
        const SplitRegion& region = plan.splits[r];
        out += "  " + region.name;
        if (!region.requested.empty())
            out += std::string(region.tensor ? "  --shard '" : "  --split '") + region.requested +
                   "'" + (region.autoChosen ? " (chosen by auto mode)" : "");
        if (region.nodes.empty()) {
            out += "  nothing split (see the conflicts)\n";
            continue;
        }
        if (region.tensor) {
            out += tensorRegionSummary(graph, devices, region);
            continue;
        }
        if (region.batches > 1)
            out += "  --stream " + std::to_string(region.batches) + " of " +
                   std::to_string(region.shards.size() / static_cast<std::size_t>(region.batches)) +
                   " micro-batches each, the batches stacked on axis 0, each op on its own device";
        else if (region.microBatched)
            out += "  --micro-batches " + std::to_string(region.shards.size()) +
                   ", each op on its own device";
        out += "  " + std::to_string(region.nodes.size()) + " ops, batch " +
               std::to_string(region.batch) +
               (region.microBatched ? "\n    micro-batches:" : "\n    shards:");
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            const Shard& shard = region.shards[s];
            out += (s ? ", " : " ") +
                   (shard.device.valid() ? devices[shard.device].name : std::to_string(s)) +
                   " rows " + std::to_string(shard.begin) + "-" + std::to_string(shard.end - 1) +
                   " (" + std::to_string(shard.rows()) + ")";
        }
        out += "\n";
        const SplitBorder border = splitBorder(graph, devices, plan, r);
        for (const SplitBorder::Inserted& split : border.splits)
            out +=
                "    split:  " + split.value + " by " + split.name + " on " + split.device + "\n";
        for (const SplitBorder::Inserted& concat : border.concats)
            out += "    concat: " + concat.name + " on " + concat.device + "\n";
        for (const CopyPlan* copy : border.copies)
            out += "    copy:   " + plan.sharded->graph.valueName(copy->value) + "  " +
                   devices[copy->from].name + " -> " + devices[copy->to].name + "  " +
                   formatBytes(copy->bytes) + "\n";
        if (border.sharedConstants > 0)
            out += "    replicated weights: " + std::to_string(border.sharedConstants) +
                   " constants, " + formatBytes(border.sharedConstantBytes) + " on each of " +
                   shardDevices(devices, region) + "\n";
    }
    return out;
}

/// The device column of a node: a split node's devices, joined.
std::string nodeDevice(const DeviceSet& devices, const Plan& plan, std::uint32_t i) {
    if (const SplitRegion* split = plan.splitOf(NodeId(i)))
        return shardDevices(devices, *split);
    return plan.devices[i].valid() ? devices[plan.devices[i]].name : "-";
}

} // namespace

Json planReportJson(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                    const Plan& plan) {
    Json report = Json::object();
    if (!graph.name.empty())
        report.set("graph", graph.name);
    report.set("mode", std::string(planModeName(options.mode)));
    if (graph.foldedNodes() > 0)
        report.set("folded_at_load", static_cast<std::int64_t>(graph.foldedNodes()));
    Json deviceList = Json::array();
    for (const VirtualDevice& d : devices.devices()) {
        Json entry = Json::object();
        entry.set("name", d.name);
        entry.set("kind", std::string(deviceKindName(d.kind)));
        if (d.memoryCapacity)
            entry.set("memory", *d.memoryCapacity);
        deviceList.push(std::move(entry));
    }
    report.set("devices", std::move(deviceList));
    report.set("default", devices.defaultDevice().valid()
                              ? Json(devices[devices.defaultDevice()].name)
                              : Json());
    report.set("host",
               devices.hostDevice().valid() ? Json(devices[devices.hostDevice()].name) : Json());

    Json nodes = Json::array();
    const std::vector<NodeId> roots = plan.reasonRoots();
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.insertedCopy)
            continue;
        Json entry = Json::object();
        entry.set("name", node.name);
        if (!node.aliases.empty()) {
            Json aliases = Json::array();
            for (const std::string& alias : node.aliases)
                aliases.push(alias);
            entry.set("aliases", std::move(aliases));
        }
        entry.set("op", node.op->name);
        const DeviceId device = plan.devices[i];
        entry.set("device", device.valid() ? Json(devices[device].name) : Json());
        if (const SplitRegion* split = plan.splitOf(NodeId(i))) {
            entry.set("split", split->name);
            Json shardDevicesJson = Json::array();
            for (const Shard& shard : split->shards)
                shardDevicesJson.push(devices[shard.device].name);
            entry.set("devices", std::move(shardDevicesJson));
        }
        entry.set("pinned", node.pin.active());
        entry.set("reason", plan.explain(graph, devices, options, NodeId(i)));
        if (roots[i].valid())
            entry.set("decided_by", graph.node(roots[i]).name);
        if (plan.prediction && node.role() == OpRole::Compute) {
            entry.set("predicted_start_ms", plan.prediction->start[i] / 1000);
            entry.set("predicted_ms", plan.prediction->micros[i] / 1000);
            if (plan.prediction->measured[i])
                entry.set("predicted_from", "measured");
            if (i < plan.prediction->fusedInto.size() && plan.prediction->fusedInto[i].valid())
                entry.set("predicted_fused_into", graph.node(plan.prediction->fusedInto[i]).name);
        }
        nodes.push(std::move(entry));
    }
    report.set("nodes", std::move(nodes));

    Json copies = Json::array();
    for (const CopyPlan& copy : plan.copies) {
        Json entry = Json::object();
        entry.set("value", graph.valueName(copy.value));
        entry.set("from", devices[copy.from].name);
        entry.set("to", devices[copy.to].name);
        entry.set("bytes", copy.bytes);
        if (copy.sizeAtRun)
            entry.set("size_at_run_time", true); // bytes is the planned stand-in's
        if (!copy.symbolicSize.empty())
            entry.set("symbolic_size", copy.symbolicSize); // bytes is at the planned values
        entry.set("consumers", nameList(graph, copy.consumers));
        if (copy.toOutput)
            entry.set("result", true);
        if (copy.isExplicit)
            entry.set("explicit", graph.node(copy.copyNode).name);
        copies.push(std::move(entry));
    }
    report.set("copies", std::move(copies));
    if (hasPrecisionPolicy(devices)) {
        const std::vector<DType> types = computeTypes(graph, devices, plan.devices);
        Json precision = Json::array();
        for (const VirtualDevice& device : devices.devices()) {
            if (device.computeType == DType::Float32)
                continue;
            const std::int64_t narrowed = narrowedOn(types, plan, *devices.find(device.name));
            precision.push(Json::object({{"device", device.name},
                                         {"dtype", std::string(dtypeName(device.computeType))},
                                         {"nodes", narrowed}}));
        }
        report.set("precision", std::move(precision));
    }
    Json casts = Json::array();
    for (const CastPlan& cast : plan.casts) {
        Json entry = Json::object();
        entry.set("value", graph.valueName(cast.value));
        entry.set("device", devices[cast.device].name);
        entry.set("from", std::string(dtypeName(cast.from)));
        entry.set("to", std::string(dtypeName(cast.to)));
        entry.set("bytes", cast.bytes);
        entry.set("consumers", nameList(graph, cast.consumers));
        if (cast.toOutput)
            entry.set("result", true);
        if (cast.atLoad)
            entry.set("at_load", true);
        casts.push(std::move(entry));
    }
    report.set("casts", std::move(casts));

    Json replicas = Json::array();
    for (const Replica& replica : plan.replicas) {
        Json entry = Json::object();
        entry.set("value", graph.valueName(replica.value));
        Json list = Json::array();
        list.push(devices[replica.home].name);
        for (DeviceId d : replica.devices)
            list.push(devices[d].name);
        entry.set("devices", std::move(list));
        entry.set("bytes", graph.type(replica.value).bytes());
        replicas.push(std::move(entry));
    }
    report.set("replicas", std::move(replicas));

    Json conflicts = Json::array();
    for (const Conflict& conflict : plan.conflicts) {
        Json entry = Json::object();
        entry.set("kind", std::string(conflictKindName(conflict.kind)));
        entry.set("nodes", nameList(graph, conflict.nodes));
        Json sources = Json::array();
        for (const std::string& source : conflict.sources)
            sources.push(source);
        entry.set("sources", std::move(sources));
        entry.set("message", conflict.message);
        entry.set("suggestion", conflict.suggestion);
        conflicts.push(std::move(entry));
    }
    report.set("conflicts", std::move(conflicts));

    Json notes = Json::array();
    for (const std::string& note : plan.notes)
        notes.push(note);
    report.set("notes", std::move(notes));

    Json memory = Json::array();
    for (const DeviceMemory& m : plan.memory.devices) {
        Json entry = Json::object();
        entry.set("device", devices[m.device].name);
        entry.set("peak_bytes", m.peakBytes);
        entry.set("live_bytes", m.liveBytes);
        Json storages = Json::array();
        for (std::int32_t id : m.storages) {
            Json storage = Json::object();
            storage.set("id", id);
            storage.set("bytes", plan.memory.storages[id].bytes);
            storages.push(std::move(storage));
        }
        entry.set("storages", std::move(storages));
        memory.push(std::move(entry));
    }
    report.set("memory", std::move(memory));
    report.set("copied_bytes", plan.copiedBytes());
    if (!plan.splits.empty())
        report.set("splits", splitsJson(graph, devices, plan));
    if (plan.prediction)
        report.set("prediction", predictionJson(devices, options, *plan.prediction));
    return report;
}

namespace {

/// " at batch=1, seq=1": the sizes of named dimensions figures are at; empty for none.
std::string atSizes(const SymbolValues& values) {
    return values.empty() ? std::string() : " at " + symbolValuesText(values);
}

/// "predicted latency: 1.23 ms", then each device's busy time and its ops in start order.
std::string predictionSummary(const Graph& graph, const DeviceSet& devices,
                              const PlanOptions& options, const Plan& plan,
                              std::size_t deviceWidth) {
    constexpr std::size_t kShown = 8;
    const Prediction& p = *plan.prediction;
    // A plan that splits runs its sharded graph: that graph's schedule, each shard on its device
    // (a pipeline's micro-batches too).
    const bool sharded = plan.sharded && plan.sharded->plan->prediction;
    const Graph& ran = sharded ? plan.sharded->graph : graph;
    const Plan& ranPlan = sharded ? *plan.sharded->plan : plan;
    const Prediction& schedule = sharded ? *ranPlan.prediction : p;
    // Costed at other sizes of the named dimensions than the plan's (--cost-at): say which.
    const std::string at = graph.symbolValues.empty() ? "" : atSizes(options.costAt);
    std::string out = "predicted latency" + at + ": " + formatMillis(schedule.makespanMicros);
    if (const SplitRegion* stream = streamRegion(plan); stream && schedule.makespanMicros > 0)
        out += " for a stream of " + std::to_string(stream->batches) + " batches of " +
               std::to_string(stream->batch) + ", " +
               formatItemsPerSecond(static_cast<double>(stream->batches * stream->batch),
                                    schedule.makespanMicros);
    if (options.mode == PlanMode::Auto) {
        // The search's figures are of one batch, unpipelined.
        out += std::string(streamRegion(plan) ? " (one batch alone: " : " (") +
               "HEFT's placement: " + formatMillis(p.heftMicros);
        if (std::isfinite(p.singleDeviceMicros))
            out += "; the best single device: " + formatMillis(p.singleDeviceMicros);
        // Pipelined, the stages decide (their note says how); the margin is the search's.
        if (p.keptSingleDevice && options.microBatches <= 1 && options.streamBatches <= 1)
            out += "; the unpinned ops stay on one device: no split over CPUs promised 20 % more";
        if (p.exactOptimumMicros)
            out += "; the exact optimum: " + formatMillis(*p.exactOptimumMicros);
        else if (options.exact)
            out += "; exact programme: " + p.exactStatus;
        out += ")";
    }
    out += "\npredicted schedule:\n";
    for (int d = 0; d < devices.size(); ++d) {
        std::vector<std::uint32_t> ops;
        for (std::uint32_t i = 0; i < ran.size(); ++i) {
            if (ranPlan.devices[i] == DeviceId(d) && ran.nodes()[i].role() == OpRole::Compute)
                ops.push_back(i);
        }
        std::stable_sort(ops.begin(), ops.end(), [&](std::uint32_t a, std::uint32_t b) {
            return schedule.start[a] < schedule.start[b];
        });
        const std::string& name = devices[DeviceId(d)].name;
        out += "  " + name +
               std::string(deviceWidth > name.size() ? deviceWidth - name.size() : 0, ' ') +
               "  busy " + formatMillis(p.deviceBusyMicros[static_cast<std::size_t>(d)]) + ", " +
               std::to_string(ops.size()) + " op" + (ops.size() == 1 ? "" : "s");
        for (std::size_t k = 0; k < ops.size() && k < kShown; ++k) {
            char times[64];
            std::snprintf(times, sizeof times, " %.3f-%.3f", schedule.start[ops[k]] / 1000,
                          schedule.end[ops[k]] / 1000);
            out += (k ? "," : ":") + std::string(" ") + ran.nodes()[ops[k]].name + times;
        }
        if (ops.size() > kShown)
            out += ", ... " + std::to_string(ops.size() - kShown) + " more (--json has all)";
        out += "\n";
    }
    return out;
}

} // namespace

std::string planSummary(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                        const Plan& plan) {
    std::string out;
    std::size_t parameters = 0;
    for (const Node& node : graph.nodes())
        parameters += node.isParameter() ? 1 : 0;
    out += "graph " + graph.name + ": " + std::to_string(graph.size()) + " nodes (" +
           std::to_string(parameters) + " parameters" +
           (graph.foldedNodes() > 0
                ? "; " + std::to_string(graph.foldedNodes()) + " more folded into constants at load"
                : std::string()) +
           "), mode " + std::string(planModeName(options.mode)) + "\n";
    out += "devices:";
    for (int d = 0; d < devices.size(); ++d) {
        const VirtualDevice& device = devices[DeviceId(d)];
        out += (d ? ", " : " ") + device.name + " (" + std::string(deviceKindName(device.kind));
        if (device.memoryCapacity)
            out += ", " + formatBytes(*device.memoryCapacity);
        if (DeviceId(d) == devices.defaultDevice())
            out += ", default";
        if (DeviceId(d) == devices.hostDevice())
            out += ", host";
        out += ")";
    }
    out += "\n\n";

    // Node table with aligned columns.
    struct Row {
        std::string name, op, device, pinned, reason;
    };
    std::vector<Row> rows;
    Row header{"node", "op", "device", "", "why"};
    std::size_t wName = header.name.size(), wOp = header.op.size(), wDevice = header.device.size();
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.insertedCopy)
            continue;
        Row row;
        row.name = node.name;
        for (const std::string& alias : node.aliases)
            row.name += " " + alias;
        row.op = node.op->name;
        row.device = nodeDevice(devices, plan, i);
        row.pinned = node.pin.active() ? "*" : " ";
        row.reason = plan.explain(graph, devices, options, NodeId(i));
        wName = std::max(wName, row.name.size());
        wOp = std::max(wOp, row.op.size());
        wDevice = std::max(wDevice, row.device.size());
        rows.push_back(std::move(row));
    }
    auto pad = [](const std::string& s, std::size_t width) {
        return s + std::string(width > s.size() ? width - s.size() : 0, ' ');
    };
    out += pad(header.name, wName) + "  " + pad(header.op, wOp) + "  " +
           pad(header.device, wDevice) + "    " + header.reason + "\n";
    for (const Row& row : rows)
        out += pad(row.name, wName) + "  " + pad(row.op, wOp) + "  " + pad(row.device, wDevice) +
               " " + row.pinned + "  " + row.reason + "\n";
    const bool anyPinned =
        std::any_of(rows.begin(), rows.end(), [](const Row& row) { return row.pinned == "*"; });
    out += anyPinned ? "(* pinned)\n\n" : "\n";

    if (plan.copies.empty()) {
        out += "copies: none\n";
    } else {
        const bool symbolic =
            std::any_of(plan.copies.begin(), plan.copies.end(),
                        [](const CopyPlan& c) { return !c.symbolicSize.empty(); });
        const std::string at = atSizes(graph.symbolValues);
        out += "copies: " + std::to_string(plan.copies.size()) + ", " +
               formatBytes(plan.copiedBytes()) + " per run" + (symbolic ? at : "") + "\n";
        for (const CopyPlan& copy : plan.copies) {
            std::string readers = joinNames(graph, copy.consumers);
            if (copy.toOutput)
                readers += std::string(readers.empty() ? "" : ", ") + "the result";
            out += "  " + graph.valueName(copy.value) + "  " + devices[copy.from].name + " -> " +
                   devices[copy.to].name + "  " +
                   (!copy.symbolicSize.empty() ? copy.symbolicSize
                    : copy.sizeAtRun           ? std::string("size known at run time")
                                               : formatBytes(copy.bytes)) +
                   (readers.empty() ? "" : "  for " + readers) +
                   (copy.isExplicit ? "  (explicit " + graph.node(copy.copyNode).name + ")" : "") +
                   "\n";
        }
    }
    out += castsSummary(graph, devices, plan);
    if (!plan.replicas.empty()) {
        out += "replicas:\n";
        for (const Replica& replica : plan.replicas) {
            out += "  " + graph.valueName(replica.value) + "  on " + devices[replica.home].name;
            for (DeviceId d : replica.devices)
                out += ", " + devices[d].name;
            out += "\n";
        }
    }
    if (!plan.splits.empty())
        out += splitsSummary(graph, devices, plan);
    if (!plan.notes.empty()) {
        out += "notes:\n";
        for (const std::string& note : plan.notes)
            out += "  " + note + "\n";
    }
    if (!plan.memory.devices.empty()) {
        out += "memory:\n";
        for (const DeviceMemory& m : plan.memory.devices) {
            const VirtualDevice& device = devices[m.device];
            out += "  " + pad(device.name, wDevice) + "  " + formatBytes(m.peakBytes) + " in " +
                   std::to_string(m.storages.size()) + " storage" +
                   (m.storages.size() == 1 ? "" : "s") + " (live at most " +
                   formatBytes(m.liveBytes) + ")";
            if (device.memoryCapacity)
                out += " of " + formatBytes(*device.memoryCapacity);
            out += "\n";
        }
    }
    if (plan.prediction)
        out += predictionSummary(graph, devices, options, plan, wDevice);
    if (plan.conflicts.empty()) {
        out += "conflicts: none\n";
    } else {
        out += "conflicts: " + std::to_string(plan.conflicts.size()) + "\n";
        for (const Conflict& conflict : plan.conflicts) {
            out += "  [" + std::string(conflictKindName(conflict.kind)) + "] " + conflict.message +
                   "\n";
            if (!conflict.suggestion.empty())
                out += "    suggestion: " + conflict.suggestion + "\n";
        }
    }
    return out;
}

} // namespace placer
