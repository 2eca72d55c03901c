// The run report, its CSV and summary, and the Chrome trace of a run (report/RunReport.h).
#include "report/RunReport.h"

#include "runtime/Ranks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace placer {

namespace {

/// Milliseconds, rounded to 0.1 µs so reports stay readable.
double ms(double micros) {
    return std::round(micros * 10.0) / 10000.0;
}

Json shapeJson(const TensorType& type) {
    Json shape = Json::array();
    for (std::int64_t d : type.shape)
        shape.push(d);
    return shape;
}

/// Per measured iteration, the summed times of the run's instructions that `take` accepts (by
/// index into Program::code).
template <typename Take>
std::vector<double> sumsPerIteration(const Program& program, const RunResult& result, Take take) {
    std::vector<double> perIteration;
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        if (!take(k))
            continue;
        const auto& times = result.instrMicros[k];
        if (perIteration.size() < times.size())
            perIteration.resize(times.size(), 0);
        for (std::size_t i = 0; i < times.size(); ++i)
            perIteration[i] += times[i];
    }
    return perIteration;
}

/// Their median over iterations.
template <typename Take>
double medianOfSums(const Program& program, const RunResult& result, Take take) {
    return median(sumsPerIteration(program, result, take));
}

/// A device's idle time: in each iteration its latency less the device's busy time, then the
/// median, so that a slow iteration's latency is not set against another's busy time.
double medianIdle(const std::vector<double>& latency, const std::vector<double>& busy) {
    std::vector<double> idle;
    for (std::size_t i = 0; i < busy.size() && i < latency.size(); ++i)
        idle.push_back(std::max(0.0, latency[i] - busy[i]));
    return median(std::move(idle));
}

struct Views {
    const Graph& graph;
    const DeviceSet& devices;
    const Program& program;
    const RunResult& result;

    const Instruction& at(std::size_t k) const { return program.code[k]; }
    double medianMicros(std::size_t k) const { return median(result.instrMicros[k]); }
    const Register& reg(std::int32_t r) const {
        return program.registers[static_cast<std::size_t>(r)];
    }
    /// Register r's type as the last iteration ran it: its planned one, with the shape found
    /// at run time where it has one.
    TensorType typeRan(std::int32_t r) const {
        TensorType type = reg(r).type;
        if (const auto it = result.ranShapes.find(r); it != result.ranShapes.end())
            type.shape = it->second.back().shape;
        return type;
    }
    /// The results of kernels whose shapes were found at run time, in program order.
    struct FoundShape {
        std::size_t instruction;
        std::size_t output;
        const std::vector<RunResult::RanShape>* shapes;
    };
    std::vector<FoundShape> foundShapes() const {
        std::vector<FoundShape> found;
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            const Instruction& instr = program.code[k];
            if (instr.op != Opcode::Invoke)
                continue;
            for (std::size_t i = 0; i < instr.results.size(); ++i) {
                if (const auto it = result.ranShapes.find(instr.results[i]);
                    it != result.ranShapes.end())
                    found.push_back(FoundShape{k, i, &it->second});
            }
        }
        return found;
    }
    std::string physicalOf(DeviceId device, const Executor& executor) const {
        for (std::size_t k = 0; k < program.code.size(); ++k) {
            if (program.code[k].device == device && executor.streamOf(k) >= 0)
                return result.streams[static_cast<std::size_t>(executor.streamOf(k))].physical;
        }
        for (const StreamInfo& stream : result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), device) !=
                stream.virtuals.end())
                return stream.physical;
        }
        return "";
    }
    /// The rank whose physical device runs virtual device `device` (runtime/Ranks.h).
    int rankOf(DeviceId device) const {
        for (const StreamInfo& stream : result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), device) !=
                stream.virtuals.end())
                return stream.rank;
        }
        return 0;
    }
    /// Copies between ranks, per link (source rank, destination rank): how many, their bytes
    /// and their median time (each timed by its sender).
    struct Link {
        int copies = 0;
        std::int64_t bytes = 0;
        double micros = 0;
    };
    std::map<std::pair<int, int>, Link> links() const {
        std::map<std::pair<int, int>, Link> links;
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            const Instruction& instr = program.code[k];
            if (instr.op != Opcode::DeviceCopy)
                continue;
            const int from = rankOf(instr.srcDevice), to = rankOf(instr.device);
            if (from == to)
                continue;
            Link& link = links[{from, to}];
            ++link.copies;
            link.bytes += instr.bytes;
            link.micros += medianMicros(k);
        }
        return links;
    }
    /// Per virtual device: the median over iterations of its instructions' summed time.
    double busyMicros(DeviceId device) const {
        return medianOfSums(program, result,
                            [&](std::size_t k) { return program.code[k].device == device; });
    }
};

std::string describeInstruction(const Views& v, const Executor& executor, std::size_t k) {
    const Instruction& instr = v.at(k);
    const int stream = executor.streamOf(k);
    const std::string physical =
        stream >= 0 ? " [" + v.result.streams[static_cast<std::size_t>(stream)].physical + "]" : "";
    switch (instr.op) {
    case Opcode::Invoke: {
        const Node& node = v.graph.node(instr.node);
        return node.name + " (" + node.op->name + ") on " + v.devices[instr.device].name + physical;
    }
    case Opcode::DeviceCopy:
        return "copy " + v.reg(instr.dst).name + " " + v.devices[instr.srcDevice].name + " -> " +
               v.devices[instr.device].name + physical;
    case Opcode::LoadInput:
        return "input " + v.graph.node(instr.node).name + " to " + v.devices[instr.device].name +
               physical;
    default:
        return std::string(opcodeName(instr.op));
    }
}

std::string idleReasonIn(const Views& v, const Executor& executor, const IdleStretch& stretch) {
    if (stretch.waitedFor >= 0)
        return describeInstruction(v, executor, static_cast<std::size_t>(stretch.waitedFor));
    return stretch.end >= v.result.traceEnd ? "nothing: done" : "the run's start";
}

std::int64_t plannedBytes(const Program& program, DeviceId device) {
    std::int64_t bytes = 0;
    for (std::size_t k = 0; k < program.runStart; ++k) {
        if (program.code[k].op == Opcode::AllocStorage && program.code[k].device == device)
            bytes += program.code[k].bytes;
    }
    return bytes;
}

} // namespace

MedianTimes medianTimes(const Program& program, const RunResult& result, std::size_t nodeCount,
                        std::size_t copyCount) {
    MedianTimes times{std::vector<double>(nodeCount, -1), std::vector<double>(copyCount, -1)};
    for (std::size_t k = program.runStart; k < program.code.size() && k < result.instrMicros.size();
         ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::Invoke && instr.node.index < nodeCount)
            times.nodeMillis[instr.node.index] = median(result.instrMicros[k]) / 1000.0;
        else if (instr.op == Opcode::DeviceCopy && instr.index >= 0 &&
                 static_cast<std::size_t>(instr.index) < copyCount)
            times.copyMillis[static_cast<std::size_t>(instr.index)] =
                median(result.instrMicros[k]) / 1000.0;
    }
    return times;
}

std::string idleReason(const RunOutcome& input, const IdleStretch& stretch) {
    const Views v{input.graph(), input.devices, input.executor->program(), input.result};
    return idleReasonIn(v, *input.executor, stretch);
}

MedianTimes userMedianTimes(const MedianTimes& ran, const Graph& graph, const Plan& plan,
                            const std::vector<NodeId>& origin, std::size_t userNodes,
                            const Plan& userPlan) {
    MedianTimes user{std::vector<double>(userNodes, -1),
                     std::vector<double>(userPlan.copies.size(), -1)};
    // The user's value a node of the run stands for: its own, or for an inserted node, the value
    // it changes (inserted nodes read one value).
    auto userValue = [&](ValueRef value) -> std::optional<ValueRef> {
        while (value.node.index < origin.size()) {
            if (origin[value.node.index].valid())
                return ValueRef{origin[value.node.index], value.output};
            const Node& inserted = graph.node(value.node);
            if (inserted.inputs.empty() || !(inserted.inputs[0].node < value.node))
                return std::nullopt;
            value = inserted.inputs[0];
        }
        return std::nullopt;
    };
    for (std::uint32_t i = 0; i < graph.size() && i < ran.nodeMillis.size(); ++i) {
        const auto value = userValue(ValueRef{NodeId(i), 0});
        if (ran.nodeMillis[i] < 0 || !value || value->node.index >= userNodes)
            continue;
        double& t = user.nodeMillis[value->node.index];
        t = std::max(t, 0.0) + ran.nodeMillis[i];
    }
    for (std::size_t c = 0; c < plan.copies.size() && c < ran.copyMillis.size(); ++c) {
        const auto value = userValue(plan.copies[c].value);
        for (std::size_t u = 0; value && u < userPlan.copies.size(); ++u) {
            if (userPlan.copies[u].value == *value && userPlan.copies[u].to == plan.copies[c].to)
                user.copyMillis[u] = ran.copyMillis[c];
        }
    }
    return user;
}

std::vector<SplitRunTimes> splitRunTimes(const RunOutcome& input) {
    std::vector<SplitRunTimes> times;
    if (input.userPlan.splits.empty() || input.ran.region.empty())
        return times;
    const Program& program = input.executor->program();
    const RunResult& result = input.result;
    for (const SplitRegion& region : input.userPlan.splits) {
        SplitRunTimes entry;
        entry.name = region.name;
        entry.shardMicros.assign(region.shards.size(), 0);
        times.push_back(std::move(entry));
    }
    auto regionOf = [&](std::size_t k) -> std::int32_t {
        const NodeId node = program.code[k].node;
        return node.valid() && node.index < input.ran.region.size() ? input.ran.region[node.index]
                                                                    : -1;
    };
    // Each shard's kernels: per iteration, summed; then the median iteration.
    for (std::size_t r = 0; r < times.size(); ++r) {
        for (std::size_t s = 0; s < times[r].shardMicros.size(); ++s) {
            times[r].shardMicros[s] = medianOfSums(program, result, [&](std::size_t k) {
                return program.code[k].op == Opcode::Invoke && regionOf(k) == static_cast<int>(r) &&
                       input.ran.shard[program.code[k].node.index] == static_cast<std::int32_t>(s);
            });
        }
    }
    // The span in the traced iteration: its kernels, splits, concats and their copies.
    std::vector<std::pair<double, double>> span(times.size(), {INFINITY, -INFINITY});
    for (const TimedEvent& event : result.trace) {
        const std::int32_t r = regionOf(event.instruction);
        if (r < 0 || static_cast<std::size_t>(r) >= span.size())
            continue;
        span[static_cast<std::size_t>(r)].first =
            std::min(span[static_cast<std::size_t>(r)].first, event.start);
        span[static_cast<std::size_t>(r)].second =
            std::max(span[static_cast<std::size_t>(r)].second, event.end);
    }
    for (std::size_t r = 0; r < times.size(); ++r)
        times[r].spanMicros = span[r].second > span[r].first ? span[r].second - span[r].first : 0;
    return times;
}

std::optional<StreamRunTimes> streamRunTimes(const RunOutcome& input) {
    const std::vector<SplitRegion>& regions = input.userPlan.splits;
    const auto found = std::find_if(regions.begin(), regions.end(), [](const SplitRegion& r) {
        return r.batches > 1 && !r.shards.empty();
    });
    if (found == regions.end() || !input.executor || input.ran.region.empty())
        return std::nullopt;
    const SplitRegion& region = *found;
    const auto r = static_cast<std::int32_t>(found - regions.begin());
    StreamRunTimes times;
    times.batches = region.batches;
    times.batch = region.batch;
    times.microBatches =
        static_cast<std::int32_t>(region.shards.size()) / std::max(region.batches, 1);
    times.medianMicros = median(input.result.latencyMicros);
    if (times.medianMicros > 0)
        times.itemsPerSecond =
            static_cast<double>(times.batches * times.batch) / (times.medianMicros / 1e6);
    if (input.userPlan.sharded && input.userPlan.sharded->plan &&
        input.userPlan.sharded->plan->prediction)
        times.predictedMicros = input.userPlan.sharded->plan->prediction->makespanMicros;
    const Program& program = input.executor->program();
    std::vector<std::pair<double, double>> span(static_cast<std::size_t>(times.batches),
                                                {INFINITY, -INFINITY});
    for (const TimedEvent& event : input.result.trace) {
        const NodeId node = program.code[event.instruction].node;
        if (!node.valid() || node.index >= input.ran.region.size() ||
            input.ran.region[node.index] != r || input.ran.shard[node.index] < 0)
            continue;
        const auto b = static_cast<std::size_t>(input.ran.shard[node.index] / times.microBatches);
        if (b >= span.size())
            continue;
        span[b].first = std::min(span[b].first, event.start);
        span[b].second = std::max(span[b].second, event.end);
    }
    for (const auto& [first, last] : span) {
        times.spanMicros.push_back(last > first ? last - first : 0);
        times.doneMicros.push_back(last > first ? last - input.result.traceOrigin : 0);
    }
    times.batchMicros = median(times.spanMicros);
    return times;
}

RanSizes ranSizes(const RunOutcome& input) {
    RanSizes sizes;
    if (input.userGraph)
        sizes.symbols = input.userGraph->symbolValues;
    if (!input.executor)
        return sizes;
    const Views v{input.graph(), input.devices, input.executor->program(), input.result};
    for (const Views::FoundShape& found : v.foundShapes()) {
        const Instruction& instr = v.at(found.instruction);
        sizes.found[{v.graph.node(instr.node).name, static_cast<std::uint32_t>(found.output)}] =
            found.shapes->back().shape;
    }
    return sizes;
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
        Json entry = Json::object();
        entry.set("batches", std::int64_t{stream->batches});
        entry.set("batch", stream->batch);
        entry.set("micro_batches", std::int64_t{stream->microBatches});
        entry.set("ms", ms(stream->medianMicros));
        entry.set("items_per_s", stream->itemsPerSecond);
        entry.set("batch_latency_ms", ms(stream->batchMicros));
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
    for (const std::string& note : input.ran.notes)
        optimizations.push(Json(note));
    report.set("optimizations", std::move(optimizations));

    Json devices = Json::array();
    for (int d = 0; d < v.devices.size(); ++d) {
        const DeviceId id(d);
        Json device = Json::object();
        device.set("name", v.devices[id].name);
        device.set("kind", std::string(deviceKindName(v.devices[id].kind)));
        device.set("physical", v.physicalOf(id, executor));
        device.set("busy_ms", ms(v.busyMicros(id)));
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
        Json entry = Json::object();
        entry.set("physical", v.result.streams[static_cast<std::size_t>(stretch.stream)].physical);
        entry.set("start_ms", ms(stretch.start - v.result.traceOrigin));
        entry.set("ms", ms(stretch.end - stretch.start));
        entry.set("waited_for", idleReasonIn(v, executor, stretch));
        idle.push(std::move(entry));
    }
    report.set("idle", std::move(idle));

    Json nodes = Json::array();
    Json copies = Json::array();
    for (std::size_t k = v.program.runStart; k < v.program.code.size(); ++k) {
        const Instruction& instr = v.at(k);
        if (instr.op == Opcode::Invoke) {
            const Node& node = v.graph.node(instr.node);
            Json entry = Json::object();
            entry.set("name", node.name);
            entry.set("op", node.op->name);
            entry.set("device", v.devices[instr.device].name);
            entry.set("median_ms", ms(v.medianMicros(k)));
            entry.set("kernel", executor.implementation(k));
            nodes.push(std::move(entry));
        } else if (instr.op == Opcode::DeviceCopy) {
            Json entry = Json::object();
            entry.set("value", v.graph.valueName(v.reg(instr.src).value));
            entry.set("from", v.devices[instr.srcDevice].name);
            entry.set("to", v.devices[instr.device].name);
            entry.set("bytes", instr.bytes);
            entry.set("median_ms", ms(v.medianMicros(k)));
            entry.set("explicit", instr.index < 0);
            copies.push(std::move(entry));
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
            Json entry = Json::object();
            entry.set("from_rank", ranks.first);
            entry.set("from_host", rankTransport() ? rankTransport()->hostName(ranks.first) : "");
            entry.set("to_rank", ranks.second);
            entry.set("to_host", rankTransport() ? rankTransport()->hostName(ranks.second) : "");
            entry.set("copies", link.copies);
            entry.set("bytes", link.bytes);
            entry.set("ms", ms(link.micros));
            list.push(std::move(entry));
        }
        report.set("links_between_ranks", std::move(list));
    }

    if (const auto found = v.foundShapes(); !found.empty()) {
        Json list = Json::array();
        for (const Views::FoundShape& f : found) {
            const Instruction& instr = v.at(f.instruction);
            Json entry = Json::object();
            entry.set("node", v.graph.node(instr.node).name);
            entry.set("output", static_cast<std::int64_t>(f.output));
            entry.set("device", v.devices[instr.device].name);
            entry.set("dtype", std::string(dtypeName(v.reg(instr.results[f.output]).type.dtype)));
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
        Json entry = Json::object();
        entry.set("name", output.name.empty() ? v.graph.valueName(output.value) : output.name);
        entry.set("shape", shapeJson(tensor.type));
        entry.set("dtype", std::string(dtypeName(tensor.type.dtype)));
        entry.set("file", o < input.outputFiles.size() && !input.outputFiles[o].empty()
                              ? Json(input.outputFiles[o])
                              : Json(nullptr));
        outputs.push(std::move(entry));
    }
    report.set("outputs", std::move(outputs));
    if (input.reference) {
        Json check = Json::object();
        check.set("max_abs_diff", input.reference->maxAbsDiff);
        check.set("max_rel_diff", input.reference->maxRelDiff);
        check.set("ok", input.reference->ok);
        if (!input.reference->ok)
            check.set("mismatch", input.reference->mismatch);
        report.set("reference_check", std::move(check));
    } else {
        report.set("reference_check", nullptr);
    }
    return report;
}

std::string runSummary(const RunOutcome& input) {
    const Executor& executor = *input.executor;
    const Views v{input.graph(), input.devices, executor.program(), input.result};
    std::ostringstream out;
    char line[512];
    const auto& latency = v.result.latencyMicros;
    std::snprintf(
        line, sizeof line,
        "latency: %.3f ms median (min %.3f, max %.3f) over %zu iterations after %d warm-up\n",
        median(latency) / 1000.0,
        latency.empty() ? 0.0 : *std::min_element(latency.begin(), latency.end()) / 1000.0,
        latency.empty() ? 0.0 : *std::max_element(latency.begin(), latency.end()) / 1000.0,
        latency.size(), input.warmup);
    out << line;
    if (const auto stream = streamRunTimes(input)) {
        std::snprintf(line, sizeof line,
                      "stream: %d batches of %lld (%d micro-batch%s each): %.3f ms for all, %s; "
                      "a batch's latency %.3f ms (median of the traced run's)",
                      stream->batches, static_cast<long long>(stream->batch), stream->microBatches,
                      stream->microBatches == 1 ? "" : "es", stream->medianMicros / 1000.0,
                      formatItemsPerSecond(static_cast<double>(stream->batches * stream->batch),
                                           stream->medianMicros)
                          .c_str(),
                      stream->batchMicros / 1000.0);
        out << line;
        if (stream->predictedMicros > 0)
            out << "; predicted "
                << formatMillis(stream->predictedMicros) + ", " +
                       formatItemsPerSecond(static_cast<double>(stream->batches * stream->batch),
                                            stream->predictedMicros);
        out << "\n";
        for (std::size_t b = 0; b < stream->spanMicros.size(); ++b) {
            std::snprintf(line, sizeof line,
                          "  batch %zu: %9.3f ms from its first kernel to its last, done at "
                          "%9.3f ms\n",
                          b, stream->spanMicros[b] / 1000.0, stream->doneMicros[b] / 1000.0);
            out << line;
        }
    }
    for (const std::string& note : input.ran.notes)
        out << "optimised: " << note << "\n";
    out << "devices:\n";
    // Columns as wide as the longest physical name ("rank1/cuda:0" under mpirun).
    int physicalWidth = 8;
    for (const StreamInfo& stream : v.result.streams)
        physicalWidth = std::max(physicalWidth, static_cast<int>(stream.physical.size()));
    for (int d = 0; d < v.devices.size(); ++d) {
        const DeviceId id(d);
        std::int64_t peak = 0;
        for (const StreamInfo& stream : v.result.streams) {
            if (std::find(stream.virtuals.begin(), stream.virtuals.end(), id) !=
                stream.virtuals.end())
                peak = stream.peakBytes;
        }
        std::snprintf(line, sizeof line, "  %-10s on %-*s busy %9.3f ms   memory %s (planned %s)\n",
                      v.devices[id].name.c_str(), physicalWidth, v.physicalOf(id, executor).c_str(),
                      v.busyMicros(id) / 1000.0, formatBytes(peak).c_str(),
                      formatBytes(plannedBytes(v.program, id)).c_str());
        out << line;
    }
    if (input.hostPeakBytes > 0)
        out << "  host memory: " << formatBytes(input.hostPeakBytes)
            << " at most resident in this process (model, weights, run and reference)\n";
    // Per physical device: idle time in the traced iteration, and its longest wait.
    for (std::size_t s = 0; s < v.result.streams.size(); ++s) {
        double total = 0;
        const IdleStretch* longest = nullptr;
        for (const IdleStretch& stretch : v.result.idle) {
            if (static_cast<std::size_t>(stretch.stream) != s)
                continue;
            total += stretch.end - stretch.start;
            if (stretch.waitedFor >= 0 &&
                (!longest || stretch.end - stretch.start > longest->end - longest->start))
                longest = &stretch;
        }
        if (total <= 0)
            continue;
        std::snprintf(line, sizeof line, "  %-*s idle %9.3f ms in the traced run",
                      std::max(10, physicalWidth), v.result.streams[s].physical.c_str(),
                      total / 1000.0);
        out << line;
        if (longest) {
            std::snprintf(line, sizeof line, "; longest wait %.3f ms, for ",
                          (longest->end - longest->start) / 1000.0);
            out << line << idleReasonIn(v, executor, *longest);
        }
        out << "\n";
    }
    struct Row {
        double micros;
        std::size_t k;
    };
    std::vector<Row> rows;
    std::int64_t copyBytes = 0;
    double copyMicros = 0;
    int copyCount = 0;
    for (std::size_t k = v.program.runStart; k < v.program.code.size(); ++k) {
        if (v.at(k).op == Opcode::Invoke)
            rows.push_back({v.medianMicros(k), k});
        if (v.at(k).op == Opcode::DeviceCopy) {
            ++copyCount;
            copyBytes += v.at(k).bytes;
            copyMicros += v.medianMicros(k);
        }
    }
    std::sort(rows.begin(), rows.end(),
              [](const Row& a, const Row& b) { return a.micros > b.micros; });
    std::snprintf(line, sizeof line, "copies: %d, %s, %.3f ms in total\n", copyCount,
                  formatBytes(copyBytes).c_str(), copyMicros / 1000.0);
    out << line;
    for (const auto& [ranks, link] : v.links()) {
        const double seconds = link.micros / 1e6;
        std::snprintf(line, sizeof line, ": %d cop%s, %s, %.3f ms (%.2f GB/s)\n", link.copies,
                      link.copies == 1 ? "y" : "ies", formatBytes(link.bytes).c_str(),
                      link.micros / 1000.0,
                      seconds > 0 ? static_cast<double>(link.bytes) / seconds / 1e9 : 0.0);
        out << "  " << describeRank(ranks.first) << " -> " << describeRank(ranks.second) << line;
    }
    const std::vector<SplitRunTimes> splits = splitRunTimes(input);
    if (!splits.empty())
        out << "split regions:\n";
    for (std::size_t r = 0; r < splits.size(); ++r) {
        const SplitRegion& region = input.userPlan.splits[r];
        std::snprintf(line, sizeof line,
                      "  %-8s %9.3f ms from its first split to its last concat (traced run)\n",
                      splits[r].name.c_str(), splits[r].spanMicros / 1000.0);
        out << line;
        // A long stream's micro-batches: the first ones, then how many more (the JSON has all).
        constexpr std::size_t kListedShards = 16;
        for (std::size_t s = 0; s < region.shards.size(); ++s) {
            const Shard& shard = region.shards[s];
            if (s == kListedShards && region.shards.size() > kListedShards + 1) {
                out << "    ... and " << region.shards.size() - s << " more\n";
                break;
            }
            if (region.microBatched)
                std::snprintf(
                    line, sizeof line, "    micro-batch %zu rows %lld-%lld  %9.3f ms of kernels\n",
                    s, static_cast<long long>(shard.begin), static_cast<long long>(shard.end - 1),
                    splits[r].shardMicros[s] / 1000.0);
            else
                std::snprintf(
                    line, sizeof line,
                    "    shard %zu on %-8s rows %lld-%lld  %9.3f ms of kernels\n", s,
                    v.devices[shard.device].name.c_str(), static_cast<long long>(shard.begin),
                    static_cast<long long>(shard.end - 1), splits[r].shardMicros[s] / 1000.0);
            out << line;
        }
    }
    out << "slowest nodes:\n";
    for (std::size_t i = 0; i < rows.size() && i < 10; ++i) {
        const Instruction& instr = v.at(rows[i].k);
        const Node& node = v.graph.node(instr.node);
        // The name last: a fused node's names every node it computes and may be long.
        std::snprintf(line, sizeof line, "  %9.3f ms  %-20s on %-8s ", rows[i].micros / 1000.0,
                      node.op->name.c_str(), v.devices[instr.device].name.c_str());
        out << line << node.name << "\n";
    }
    if (const auto found = v.foundShapes(); !found.empty()) {
        // What a shape function or a data-dependent kernel found, as the first measured
        // iteration ran it, then wherever it changed.
        out << "shapes found at run time (" << found.size() << "):\n";
        constexpr std::size_t kListed = 20;
        for (std::size_t i = 0; i < found.size() && i < kListed; ++i) {
            const Instruction& instr = v.at(found[i].instruction);
            const Node& node = v.graph.node(instr.node);
            const DType dtype = v.reg(instr.results[found[i].output]).type.dtype;
            std::string shapes;
            for (const RunResult::RanShape& ran : *found[i].shapes) {
                const std::string text = TensorType{ran.shape, dtype}.toShortString();
                shapes += shapes.empty()
                              ? text
                              : "; " + text.substr(0, text.find(' ')) + " from iteration " +
                                    std::to_string(ran.iteration + 1);
            }
            std::snprintf(line, sizeof line, "  %-20s on %-8s ", node.op->name.c_str(),
                          v.devices[instr.device].name.c_str());
            out << line << shapes << "  "
                << v.graph.valueName(
                       ValueRef{instr.node, static_cast<std::uint32_t>(found[i].output)})
                << "\n";
        }
        if (found.size() > kListed)
            out << "  ... and " << found.size() - kListed << " more (in the JSON report)\n";
    }
    if (input.reference) {
        std::snprintf(line, sizeof line,
                      "reference check: %s (max abs diff %.3g, max rel diff %.3g)%s%s\n",
                      input.reference->ok ? "ok" : "MISMATCH", input.reference->maxAbsDiff,
                      input.reference->maxRelDiff, input.reference->ok ? "" : ": ",
                      input.reference->mismatch.c_str());
        out << line;
    }
    for (std::size_t o = 0; o < input.outputFiles.size(); ++o) {
        if (!input.outputFiles[o].empty())
            out << "output " << o << ": " << input.outputFiles[o] << "\n";
    }
    return out.str();
}

std::string runTimingsCsv(const RunOutcome& input) {
    const Program& program = input.executor->program();
    const Graph& graph = input.graph();
    const DeviceSet& devices = input.devices;
    auto quote = [](const std::string& text) {
        std::string out = "\"";
        for (char c : text)
            out += c == '"' ? std::string("\"\"") : std::string(1, c);
        return out + "\"";
    };
    std::string csv = "kind,name,op,device,from,bytes,median_ms\n";
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        const Instruction& instr = program.code[k];
        const double ms = median(input.result.instrMicros[k]) / 1000.0;
        if (instr.op == Opcode::Invoke) {
            const Node& node = graph.node(instr.node);
            csv += "node," + quote(node.name) + "," + quote(node.op->name) + "," +
                   quote(devices[instr.device].name) + ",,," + std::to_string(ms) + "\n";
        } else if (instr.op == Opcode::DeviceCopy) {
            csv += "copy," + quote(program.registers[static_cast<std::size_t>(instr.dst)].name) +
                   ",device_copy," + quote(devices[instr.device].name) + "," +
                   quote(devices[instr.srcDevice].name) + "," + std::to_string(instr.bytes) + "," +
                   std::to_string(ms) + "\n";
        }
    }
    return csv;
}

Json chromeTrace(const RunOutcome& input) {
    const Executor& executor = *input.executor;
    const Views v{input.graph(), input.devices, executor.program(), input.result};
    const double origin = v.result.traceOrigin;
    Json events = Json::array();
    auto meta = [&](const char* name, int pid, int tid, Json args) {
        Json e = Json::object();
        e.set("name", name);
        e.set("ph", "M");
        e.set("pid", pid);
        e.set("tid", tid);
        e.set("args", std::move(args));
        events.push(std::move(e));
    };
    // Threads: 1 compute, 2 input uploads, 3+ one per copy source.
    std::map<std::pair<int, std::string>, int> copyThreads;
    auto threadFor = [&](std::size_t k) {
        const Instruction& instr = v.at(k);
        const int pid = executor.streamOf(k) + 1;
        if (instr.op == Opcode::Invoke)
            return 1;
        if (instr.op == Opcode::LoadInput)
            return 2;
        const std::string from = v.devices[instr.srcDevice].name;
        auto [it, inserted] = copyThreads.emplace(std::pair{pid, from}, 0);
        if (inserted) {
            int next = 3;
            for (const auto& [key, tid] : copyThreads) {
                if (key.first == pid && tid >= next)
                    next = tid + 1;
            }
            it->second = next;
        }
        return it->second;
    };
    for (std::size_t s = 0; s < v.result.streams.size(); ++s) {
        const StreamInfo& stream = v.result.streams[s];
        std::string label = stream.physical + " (";
        for (std::size_t i = 0; i < stream.virtuals.size(); ++i)
            label += (i ? ", " : "") + v.devices[stream.virtuals[i]].name;
        label += ")";
        Json name = Json::object();
        name.set("name", label);
        meta("process_name", static_cast<int>(s) + 1, 0, std::move(name));
        Json sort = Json::object();
        sort.set("sort_index", static_cast<int>(s));
        meta("process_sort_index", static_cast<int>(s) + 1, 0, std::move(sort));
        Json compute = Json::object();
        compute.set("name", "compute");
        meta("thread_name", static_cast<int>(s) + 1, 1, std::move(compute));
        Json upload = Json::object();
        upload.set("name", "input upload (host -> " + stream.physical + ")");
        meta("thread_name", static_cast<int>(s) + 1, 2, std::move(upload));
    }
    // Which event produced / consumed each register, for flows.
    std::map<std::int32_t, const TimedEvent*> producer;
    std::map<std::int32_t, std::vector<const TimedEvent*>> consumers;
    for (const TimedEvent& event : v.result.trace) {
        const Instruction& instr = v.at(event.instruction);
        if (instr.op == Opcode::Invoke) {
            for (std::int32_t r : instr.results)
                producer[r] = &event;
            for (std::int32_t r : instr.args)
                consumers[r].push_back(&event);
        } else if (instr.op == Opcode::DeviceCopy) {
            producer[instr.dst] = &event;
            consumers[instr.src].push_back(&event);
        } else if (instr.op == Opcode::LoadInput) {
            producer[instr.dst] = &event;
        }
    }
    std::map<const TimedEvent*, int> tidOf;
    for (const TimedEvent& event : v.result.trace) {
        const std::size_t k = event.instruction;
        const Instruction& instr = v.at(k);
        const int pid = event.stream + 1;
        const int tid = threadFor(k);
        tidOf[&event] = tid;
        Json e = Json::object();
        Json args = Json::object();
        if (instr.op == Opcode::Invoke) {
            const Node& node = v.graph.node(instr.node);
            e.set("name", node.op->name);
            e.set("cat", "kernel");
            args.set("node", node.name);
            args.set("op", node.op->name);
            args.set("device", v.devices[instr.device].name);
            args.set("physical", v.result.streams[static_cast<std::size_t>(event.stream)].physical);
            args.set("kernel", executor.implementation(k));
            Json inputs = Json::array();
            for (std::int32_t r : instr.args)
                inputs.push(shapeJson(v.typeRan(r)));
            Json outputs = Json::array();
            for (std::int32_t r : instr.results)
                outputs.push(shapeJson(v.typeRan(r)));
            args.set("input_shapes", std::move(inputs));
            args.set("output_shapes", std::move(outputs));
        } else if (instr.op == Opcode::DeviceCopy) {
            const std::string from = v.devices[instr.srcDevice].name;
            const std::string to = v.devices[instr.device].name;
            e.set("name", "copy " + from + " -> " + to);
            e.set("cat", "copy");
            args.set("node", v.reg(instr.dst).name);
            args.set("value", v.graph.valueName(v.reg(instr.src).value));
            args.set("bytes", instr.bytes);
            args.set("from", from);
            args.set("to", to);
        } else {
            const Node& node = v.graph.node(instr.node);
            e.set("name", "input " + node.name);
            e.set("cat", "copy");
            args.set("node", node.name);
            args.set("bytes", instr.bytes);
            args.set("from", "host");
            args.set("to", v.devices[instr.device].name);
        }
        e.set("ph", "X");
        e.set("pid", pid);
        e.set("tid", tid);
        e.set("ts", event.start - origin);
        e.set("dur", std::max(0.0, event.end - event.start));
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    // Flows: producer -> copy, and copy -> each consumer.
    int flowId = 1;
    auto flow = [&](const TimedEvent* from, const TimedEvent* to) {
        // A flow starts at the producer ("s") and binds to the enclosing slice of its end ("f").
        for (const auto& [event, phase] : {std::pair{from, "s"}, std::pair{to, "f"}}) {
            Json mark = Json::object();
            mark.set("name", "dataflow");
            mark.set("cat", "dataflow");
            mark.set("ph", phase);
            if (event == to)
                mark.set("bp", "e");
            mark.set("id", flowId);
            mark.set("pid", event->stream + 1);
            mark.set("tid", tidOf[event]);
            mark.set("ts", event->start - origin);
            events.push(std::move(mark));
        }
        ++flowId;
    };
    for (const TimedEvent& event : v.result.trace) {
        const Instruction& instr = v.at(event.instruction);
        if (instr.op != Opcode::DeviceCopy)
            continue;
        if (auto it = producer.find(instr.src); it != producer.end())
            flow(it->second, &event);
        if (auto it = consumers.find(instr.dst); it != consumers.end()) {
            for (const TimedEvent* consumer : it->second)
                flow(&event, consumer);
        }
    }
    for (const IdleStretch& stretch : v.result.idle) {
        Json e = Json::object();
        e.set("name", "idle");
        e.set("cat", "idle");
        e.set("ph", "X");
        e.set("pid", stretch.stream + 1);
        e.set("tid", 1);
        e.set("ts", stretch.start - origin);
        e.set("dur", std::max(0.0, stretch.end - stretch.start));
        Json args = Json::object();
        args.set("waited_for", idleReasonIn(v, executor, stretch));
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    for (const MemorySample& sample : v.result.memory) {
        Json e = Json::object();
        e.set("name", "memory in use");
        e.set("ph", "C");
        e.set("pid", sample.stream + 1);
        e.set("ts", std::max(0.0, sample.time - origin));
        Json args = Json::object();
        args.set("bytes", sample.bytes);
        e.set("args", std::move(args));
        events.push(std::move(e));
    }
    Json trace = Json::object();
    trace.set("traceEvents", std::move(events));
    trace.set("displayTimeUnit", "ms");
    Json meta2 = Json::object();
    meta2.set("tool", "placer run");
    meta2.set("model", v.graph.name);
    trace.set("otherData", std::move(meta2));
    return trace;
}

Json PredictionCheck::toJson() const {
    Json json = Json::object();
    json.set("predicted_ms", predictedMs);
    json.set("measured_ms", measuredMs);
    json.set("median_node_error", medianNodeError);
    Json list = Json::array();
    for (const NodeTimes& node : nodes) {
        Json entry = Json::object();
        entry.set("name", node.name);
        entry.set("predicted_ms", node.predictedMs);
        entry.set("measured_ms", node.measuredMs);
        list.push(std::move(entry));
    }
    json.set("nodes", std::move(list));
    Json devices = Json::array();
    for (const DeviceTimes& device : this->devices) {
        Json entry = Json::object();
        entry.set("name", device.name);
        entry.set("predicted_busy_ms", device.predictedBusyMs);
        entry.set("measured_busy_ms", device.measuredBusyMs);
        entry.set("predicted_idle_ms", device.predictedIdleMs);
        entry.set("measured_idle_ms", device.measuredIdleMs);
        devices.push(std::move(entry));
    }
    json.set("devices", std::move(devices));
    return json;
}

std::string PredictionCheck::summary() const {
    char line[256];
    std::snprintf(line, sizeof line,
                  "predicted against measured: latency %.3f ms predicted, %.3f ms measured "
                  "(%+.0f %%); per node, median error %.0f %% over %zu ops\n",
                  predictedMs, measuredMs,
                  measuredMs > 0 ? (predictedMs / measuredMs - 1) * 100 : 0.0,
                  medianNodeError * 100, nodes.size());
    std::string out = line;
    for (const DeviceTimes& device : devices) {
        std::snprintf(line, sizeof line,
                      "  %-10s busy %.3f ms predicted, %.3f measured; idle %.3f ms predicted, "
                      "%.3f measured\n",
                      device.name.c_str(), device.predictedBusyMs, device.measuredBusyMs,
                      device.predictedIdleMs, device.measuredIdleMs);
        out += line;
    }
    std::vector<NodeTimes> worst = nodes;
    std::stable_sort(worst.begin(), worst.end(), [](const NodeTimes& a, const NodeTimes& b) {
        return std::abs(a.predictedMs - a.measuredMs) > std::abs(b.predictedMs - b.measuredMs);
    });
    for (std::size_t k = 0; k < worst.size() && k < 5; ++k) {
        std::snprintf(line, sizeof line, "  %s: %.3f ms predicted, %.3f ms measured\n",
                      worst[k].name.c_str(), worst[k].predictedMs, worst[k].measuredMs);
        out += line;
    }
    return out;
}

PredictionCheck checkPrediction(const Graph& graph, const Plan& plan, const DeviceSet& devices,
                                const Program& program, const RunResult& result,
                                const MedianTimes& times) {
    PredictionCheck check;
    const Prediction& p = *plan.prediction;
    check.predictedMs = p.makespanMicros / 1000;
    check.measuredMs = median(result.latencyMicros) / 1000;
    std::vector<double> errors;
    for (std::uint32_t i = 0; i < graph.size() && i < times.nodeMillis.size(); ++i) {
        if (graph.nodes()[i].role() != OpRole::Compute || times.nodeMillis[i] <= 0 ||
            p.micros[i] <= 0)
            continue;
        check.nodes.push_back({graph.nodes()[i].name, p.micros[i] / 1000, times.nodeMillis[i]});
        errors.push_back(std::abs(p.micros[i] / 1000 - times.nodeMillis[i]) / times.nodeMillis[i]);
    }
    check.medianNodeError = median(std::move(errors));
    for (int d = 0; d < devices.size() && d < static_cast<int>(p.deviceBusyMicros.size()); ++d) {
        const DeviceId id(d);
        const std::vector<double> busy = sumsPerIteration(
            program, result, [&](std::size_t k) { return program.code[k].device == id; });
        const double predicted = p.deviceBusyMicros[static_cast<std::size_t>(d)] / 1000;
        check.devices.push_back({devices[id].name, predicted, median(busy) / 1000,
                                 std::max(0.0, check.predictedMs - predicted),
                                 medianIdle(result.latencyMicros, busy) / 1000});
    }
    return check;
}

MedianTimes userMedianTimes(const RunOutcome& outcome) {
    const MedianTimes ran = medianTimes(outcome.executor->program(), outcome.result,
                                        outcome.graph().size(), outcome.plan().copies.size());
    return userMedianTimes(ran, outcome.graph(), outcome.plan(), outcome.ran.origin,
                           outcome.userGraph->size(), outcome.userPlan);
}

std::optional<PredictionCheck> checkPrediction(const RunOutcome& outcome) {
    if (!outcome.userPlan.prediction || !outcome.executor)
        return std::nullopt;
    return checkPrediction(*outcome.userGraph, outcome.userPlan, outcome.devices,
                           outcome.executor->program(), outcome.result, userMedianTimes(outcome));
}

} // namespace placer
