// The run report as JSON (report/RunReport.h): latency, devices, idle stretches, nodes, copies,
// splits, links between ranks, the shapes found at run time, outputs and the reference check.
#include "report/RunReport.h"

#include "report/RunViews.h"

namespace placer {

using namespace runview;

Json runEventsJson(const std::vector<RunEvent>& events) {
    Json list = Json::array();
    for (const RunEvent& event : events) {
        list.push(Json::object({{"kind", std::string(runEventKindName(event.kind))},
                                {"iteration", event.iteration},
                                {"device", event.device},
                                {"reason", event.reason},
                                {"moved", event.moved},
                                {"nodes_moved", event.nodesMoved},
                                {"replan_ms", event.replanMs},
                                {"latency_before_ms", event.beforeMs},
                                {"latency_after_ms", event.afterMs}}));
    }
    return list;
}

Json runReportJson(const RunOutcome& input) {
    const Executor& executor = *input.executor;
    const Views v{input.graph(), input.devices, executor.program(), input.result};
    Json report = Json::object();
    const auto& latency = v.result.latencyMicros;
    Json latencyJson = Json::object();
    latencyJson.set("median", ms(median(latency)));
    latencyJson.set("min",
                    ms(latency.empty() ? 0 : *std::min_element(latency.begin(), latency.end())));
    latencyJson.set("max",
                    ms(latency.empty() ? 0 : *std::max_element(latency.begin(), latency.end())));
    report.set("latency_ms", latencyJson);
    if (const auto stream = streamRunTimes(input)) {
        Json entry = Json::object({{"batches", std::int64_t{stream->batches}},
                                   {"batch", stream->batch},
                                   {"micro_batches", std::int64_t{stream->microBatches}},
                                   {"ms", ms(stream->medianMicros)},
                                   {"items_per_s", stream->itemsPerSecond},
                                   {"batch_latency_ms", ms(stream->batchMicros)}});
        if (stream->predictedMicros > 0)
            entry.set("predicted_ms", ms(stream->predictedMicros));
        Json spans = Json::array(), done = Json::array();
        for (std::size_t b = 0; b < stream->spanMicros.size(); ++b) {
            spans.push(ms(stream->spanMicros[b]));
            done.push(ms(stream->doneMicros[b]));
        }
        entry.set("batch_spans_ms", std::move(spans));
        entry.set("batch_done_ms", std::move(done));
        report.set("stream", std::move(entry));
    }
    report.set("iterations", static_cast<std::int64_t>(latency.size()));
    report.set("warmup", input.warmup);
    Json optimizations = Json::array();
    for (const std::string& note : input.ran->notes)
        optimizations.push(Json(note));
    report.set("optimizations", std::move(optimizations));
    report.set("events", runEventsJson(input.events));

    Json devices = Json::array();
    for (int d = 0; d < v.devices.size(); ++d) {
        const DeviceId id(d);
        Json device = Json::object({{"name", v.devices[id].name},
                                    {"kind", std::string(deviceKindName(v.devices[id].kind))},
                                    {"physical", v.physicalOf(id, executor)},
                                    {"busy_ms", ms(v.busyMicros(id))}});
        // The physical device's arena high-water mark (shared by virtual devices mapped to it).
        std::int64_t peak = 0, live = 0;
        int uploads = 0;
        const std::vector<double>* physicalBusy = nullptr;
        for (const StreamInfo& stream : v.result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), id) !=
                stream.virtuals.end()) {
                peak = stream.peakBytes;
                live = stream.livePeakBytes;
                uploads = stream.constantUploads;
                physicalBusy = &stream.busyMicros;
            }
        }
        // The physical device's busy time counts overlapping work (a GPU's copy and compute
        // streams) once; the rest of the iteration it sat idle.
        device.set("physical_busy_ms", ms(physicalBusy ? median(*physicalBusy) : 0.0));
        device.set("idle_ms",
                   ms(physicalBusy ? medianIdle(latency, *physicalBusy) : median(latency)));
        device.set("peak_bytes", peak);
        device.set("planned_bytes", plannedBytes(v.program, id));
        device.set("live_peak_bytes", live);
        device.set("constant_uploads", uploads);
        if (static_cast<std::size_t>(d) < input.mappingReasons.size() &&
            !input.mappingReasons[static_cast<std::size_t>(d)].empty())
            device.set("mapped_by_load", input.mappingReasons[static_cast<std::size_t>(d)]);
        devices.push(std::move(device));
    }
    report.set("devices", std::move(devices));
    // Under mpirun: each rank's host, for grouping the devices (and a timeline's lanes) by host.
    if (const RankTransport* transport = rankTransport(); transport && transport->size() > 1) {
        Json ranks = Json::array();
        for (int r = 0; r < transport->size(); ++r) {
            Json entry = Json::object();
            entry.set("rank", r);
            entry.set("host", transport->hostName(r));
            ranks.push(std::move(entry));
        }
        report.set("ranks", std::move(ranks));
    }
    if (input.hostPeakBytes > 0)
        report.set("host_peak_resident_bytes", input.hostPeakBytes);

    // Where each physical device sat idle in the traced iteration, and what it waited for.
    Json idle = Json::array();
    for (const IdleStretch& stretch : v.result.idle) {
        idle.push(Json::object(
            {{"physical", v.result.streams[static_cast<std::size_t>(stretch.stream)].physical},
             {"start_ms", ms(stretch.start - v.result.traceOrigin)},
             {"ms", ms(stretch.end - stretch.start)},
             {"waited_for", idleReasonIn(v, executor, stretch)}}));
    }
    report.set("idle", std::move(idle));

    Json nodes = Json::array();
    Json copies = Json::array();
    for (std::size_t k = v.program.runStart; k < v.program.code.size(); ++k) {
        const Instruction& instr = v.at(k);
        if (instr.op == Opcode::Invoke) {
            const Node& node = v.graph.node(instr.node);
            nodes.push(Json::object({{"name", node.name},
                                     {"op", node.op->name},
                                     {"device", v.devices[instr.device].name},
                                     {"median_ms", ms(v.medianMicros(k))},
                                     {"kernel", executor.implementation(k)}}));
        } else if (instr.op == Opcode::DeviceCopy) {
            copies.push(Json::object({{"value", v.graph.valueName(v.reg(instr.src).value)},
                                      {"from", v.devices[instr.srcDevice].name},
                                      {"to", v.devices[instr.device].name},
                                      {"bytes", instr.bytes},
                                      {"median_ms", ms(v.medianMicros(k))},
                                      {"explicit", instr.index < 0}}));
        }
    }
    report.set("nodes", std::move(nodes));
    if (const auto splits = splitRunTimes(input); !splits.empty()) {
        Json list = Json::array();
        for (std::size_t r = 0; r < splits.size(); ++r) {
            const SplitRegion& region = input.userPlan.splits[r];
            Json entry = Json::object();
            entry.set("name", splits[r].name);
            entry.set("span_ms", ms(splits[r].spanMicros));
            Json shards = Json::array();
            for (std::size_t s = 0; s < region.shards.size(); ++s) {
                Json shard = Json::object();
                shard.set("device", region.shards[s].device.valid()
                                        ? Json(v.devices[region.shards[s].device].name)
                                        : Json());
                if (region.microBatched)
                    shard.set("micro_batch", static_cast<std::int64_t>(s));
                shard.set("begin", region.shards[s].begin);
                shard.set("end", region.shards[s].end);
                shard.set("kernels_ms", ms(splits[r].shardMicros[s]));
                shards.push(std::move(shard));
            }
            entry.set("shards", std::move(shards));
            list.push(std::move(entry));
        }
        report.set("splits", std::move(list));
    }
    report.set("copies", std::move(copies));
    if (const auto links = v.links(); !links.empty()) {
        Json list = Json::array();
        for (const auto& [ranks, link] : links) {
            list.push(Json::object(
                {{"from_rank", ranks.first},
                 {"from_host", rankTransport() ? rankTransport()->hostName(ranks.first) : ""},
                 {"to_rank", ranks.second},
                 {"to_host", rankTransport() ? rankTransport()->hostName(ranks.second) : ""},
                 {"copies", link.copies},
                 {"bytes", link.bytes},
                 {"ms", ms(link.micros)}}));
        }
        report.set("links_between_ranks", std::move(list));
    }

    if (const auto found = v.foundShapes(); !found.empty()) {
        Json list = Json::array();
        for (const Views::FoundShape& f : found) {
            const Instruction& instr = v.at(f.instruction);
            Json entry = Json::object(
                {{"node", v.graph.node(instr.node).name},
                 {"output", static_cast<std::int64_t>(f.output)},
                 {"device", v.devices[instr.device].name},
                 {"dtype", std::string(dtypeName(v.reg(instr.results[f.output]).type.dtype))}});
            Json shapes = Json::array();
            for (const RunResult::RanShape& ran : *f.shapes) {
                Json at = Json::object();
                at.set("iteration", ran.iteration);
                at.set("shape", shapeJson(TensorType{ran.shape, DType::Float32}));
                shapes.push(std::move(at));
            }
            entry.set("shapes", std::move(shapes));
            list.push(std::move(entry));
        }
        report.set("shapes_at_run_time", std::move(list));
    }

    Json outputs = Json::array();
    for (std::size_t o = 0; o < v.result.outputs.size(); ++o) {
        const HostTensor& tensor = v.result.outputs[o];
        const GraphOutput& output = v.graph.outputs()[o];
        Json entry = Json::object(
            {{"name", output.name.empty() ? v.graph.valueName(output.value) : output.name},
             {"shape", shapeJson(tensor.type)},
             {"dtype", std::string(dtypeName(tensor.type.dtype))}});
        entry.set("file", o < input.outputFiles.size() && !input.outputFiles[o].empty()
                              ? Json(input.outputFiles[o])
                              : Json(nullptr));
        outputs.push(std::move(entry));
    }
    report.set("outputs", std::move(outputs));
    if (input.reference) {
        Json check = Json::object({{"max_abs_diff", input.reference->maxAbsDiff},
                                   {"max_rel_diff", input.reference->maxRelDiff},
                                   {"ok", input.reference->ok},
                                   {"atol", input.reference->atol},
                                   {"rtol", input.reference->rtol}});
        if (!input.reference->toleranceOf.empty())
            check.set("tolerance_of", input.reference->toleranceOf);
        if (!input.reference->ok)
            check.set("mismatch", input.reference->mismatch);
        report.set("reference_check", std::move(check));
    } else {
        report.set("reference_check", nullptr);
    }
    return report;
}

} // namespace placer
