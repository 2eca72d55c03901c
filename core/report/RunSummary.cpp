// A run for people (report/RunReport.h): the summary and the CSV of every node's and copy's time.
#include "report/RunReport.h"

#include "report/RunViews.h"

#include <cstdio>
#include <sstream>

namespace placer {

using namespace runview;

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
    for (const RunEvent& event : input.events) {
        const bool failed = event.kind == RunEvent::Kind::DeviceFailed;
        std::snprintf(line, sizeof line,
                      "%s at iteration %d: ", failed ? "device failed" : "re-placed",
                      event.iteration);
        out << line << event.text();
        std::snprintf(line, sizeof line,
                      "; planned again and swapped in %.1f ms%s; latency %.3f ms before, %.3f ms "
                      "after\n",
                      event.replanMs, failed ? ", the iteration run again" : "", event.beforeMs,
                      event.afterMs);
        out << line;
    }
    for (const std::string& note : input.ran->notes)
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
        if (static_cast<std::size_t>(d) < input.mappingReasons.size() &&
            !input.mappingReasons[static_cast<std::size_t>(d)].empty())
            out << "             mapped by load: "
                << input.mappingReasons[static_cast<std::size_t>(d)] << "\n";
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
        if (region.tensor)
            std::snprintf(line, sizeof line,
                          "  %-8s %9.3f ms from its first op to its last (traced run), %zu "
                          "collectives\n",
                          splits[r].name.c_str(), splits[r].spanMicros / 1000.0,
                          region.collectives.size());
        else
            std::snprintf(line, sizeof line,
                          "  %-8s %9.3f ms from its first split to its last concat (traced "
                          "run)\n",
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
            if (region.tensor)
                std::snprintf(
                    line, sizeof line,
                    "    shard %zu on %-8s share %lld/%lld  %9.3f ms of kernels\n", s,
                    v.devices[shard.device].name.c_str(), static_cast<long long>(shard.rows()),
                    static_cast<long long>(region.batch), splits[r].shardMicros[s] / 1000.0);
            else if (region.microBatched)
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
        const ReferenceCheck& check = *input.reference;
        std::snprintf(line, sizeof line,
                      "reference check: %s (max abs diff %.3g, max rel diff %.3g; within atol "
                      "%.3g, rtol %.3g%s%s)%s%s\n",
                      check.ok ? "ok" : "MISMATCH", check.maxAbsDiff, check.maxRelDiff, check.atol,
                      check.rtol, check.toleranceOf.empty() ? "" : ", ",
                      check.toleranceOf.empty() ? "" : (check.toleranceOf + " tolerance").c_str(),
                      check.ok ? "" : ": ", check.mismatch.c_str());
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

} // namespace placer
