// What the run report's writers share (private to core/report): a run seen through its
// program (Views), milliseconds as reports round them, sums over iterations and idle time.
#pragma once

#include "device/Ranks.h"
#include "report/RunReport.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace placer::runview {

/// Milliseconds, rounded to 0.1 µs so reports stay readable.
inline double ms(double micros) {
    return std::round(micros * 10.0) / 10000.0;
}

inline Json shapeJson(const TensorType& type) {
    Json shape = Json::array();
    for (std::int64_t d : type.shape)
        shape.push(d);
    return shape;
}

/// Per measured iteration, the summed times of the run's instructions that `take` accepts (by
/// index into Program::code).
template <typename Take>
inline std::vector<double> sumsPerIteration(const Program& program, const RunResult& result,
                                            Take take) {
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
inline double medianOfSums(const Program& program, const RunResult& result, Take take) {
    return median(sumsPerIteration(program, result, take));
}

/// A device's idle time: in each iteration its latency less the device's busy time, then the
/// median, so that a slow iteration's latency is not set against another's busy time.
inline double medianIdle(const std::vector<double>& latency, const std::vector<double>& busy) {
    // A run that changed its plan (RunOutcome::events) has every iteration's latency and the
    // last program's busy times: they pair from the end.
    std::vector<double> idle;
    const std::size_t offset = latency.size() > busy.size() ? latency.size() - busy.size() : 0;
    for (std::size_t i = 0; i < busy.size() && offset + i < latency.size(); ++i)
        idle.push_back(std::max(0.0, latency[offset + i] - busy[i]));
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
    /// The rank whose physical device runs virtual device `device` (device/Ranks.h).
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

inline std::string describeInstruction(const Views& v, const Executor& executor, std::size_t k) {
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

inline std::string idleReasonIn(const Views& v, const Executor& executor,
                                const IdleStretch& stretch) {
    if (stretch.waitedFor >= 0)
        return describeInstruction(v, executor, static_cast<std::size_t>(stretch.waitedFor));
    return stretch.end >= v.result.traceEnd ? "nothing: done" : "the run's start";
}

inline std::int64_t plannedBytes(const Program& program, DeviceId device) {
    std::int64_t bytes = 0;
    for (std::size_t k = 0; k < program.runStart; ++k) {
        if (program.code[k].op == Opcode::AllocStorage && program.code[k].device == device)
            bytes += program.code[k].bytes;
    }
    return bytes;
}

} // namespace placer::runview
