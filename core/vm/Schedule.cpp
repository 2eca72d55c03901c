// The dependence graph, waits and priorities a run follows, and the schedule they predict.
#include "vm/Schedule.h"

#include "plan/ExecutionOrder.h"

#include <algorithm>
#include <cstddef>
#include <map>

namespace placer {

namespace {

void addUnique(std::vector<std::uint32_t>& list, std::uint32_t value) {
    if (std::find(list.begin(), list.end(), value) == list.end())
        list.push_back(value);
}

} // namespace

Schedule buildSchedule(const ScheduleInput& input) {
    const Program& program = *input.program;
    const std::size_t n = program.code.size();
    const std::size_t registers = program.registers.size();
    Schedule schedule;
    schedule.deps.assign(n, {});
    schedule.succs.assign(n, {});
    schedule.waits.assign(n, {});
    schedule.records.assign(n, false);
    schedule.priority.assign(n, 0);
    int streams = 0;
    for (int s : input.stream)
        streams = std::max(streams, s + 1);
    schedule.streamInstructions.assign(static_cast<std::size_t>(streams), {});

    std::size_t storageCount = 0;
    for (const Instruction& instr : program.code) {
        if (instr.storage >= 0)
            storageCount = std::max(storageCount, static_cast<std::size_t>(instr.storage) + 1);
    }
    std::vector<std::int64_t> lastWriter(registers, -1);
    std::vector<std::int64_t> allocOf(registers, -1);
    std::vector<std::int64_t> freeOf(registers, -1);
    std::vector<std::vector<std::uint32_t>> users(registers);
    std::vector<std::int32_t> tenant(storageCount, -1);
    for (std::size_t k = 0; k < program.runStart && k < n; ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::AllocTensor && instr.storage >= 0)
            tenant[static_cast<std::size_t>(instr.storage)] = instr.dst;
    }
    const auto scheduled = [&](std::size_t k) {
        return k >= program.runStart && k < n && input.stream[k] >= 0;
    };
    for (std::size_t k = program.runStart; k < n; ++k) {
        if (!scheduled(k))
            continue;
        const auto self = static_cast<std::uint32_t>(k);
        auto& deps = schedule.deps[k];
        auto need = [&](std::int64_t d) {
            if (d >= 0 && scheduled(static_cast<std::size_t>(d)) &&
                d != static_cast<std::int64_t>(k))
                addUnique(deps, static_cast<std::uint32_t>(d));
        };
        auto read = [&](std::int32_t r) {
            need(lastWriter[static_cast<std::size_t>(r)]);
            users[static_cast<std::size_t>(r)].push_back(self);
        };
        auto write = [&](std::int32_t r) {
            need(allocOf[static_cast<std::size_t>(r)]);
            lastWriter[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(k);
            users[static_cast<std::size_t>(r)].push_back(self);
        };
        const Instruction& instr = program.code[k];
        switch (instr.op) {
        case Opcode::AllocTensor:
            if (instr.storage >= 0) {
                std::int32_t& previous = tenant[static_cast<std::size_t>(instr.storage)];
                if (previous >= 0 && previous != instr.dst) {
                    const auto p = static_cast<std::size_t>(previous);
                    if (freeOf[p] >= 0) {
                        need(freeOf[p]);
                    } else {
                        for (std::uint32_t user : users[p])
                            need(user);
                    }
                }
                previous = instr.dst;
            }
            allocOf[static_cast<std::size_t>(instr.dst)] = static_cast<std::int64_t>(k);
            break;
        case Opcode::Invoke:
            for (std::int32_t r : instr.args)
                read(r);
            for (std::int32_t r : instr.results)
                write(r);
            break;
        case Opcode::DeviceCopy:
            read(instr.src);
            write(instr.dst);
            break;
        case Opcode::LoadInput:
            write(instr.dst);
            break;
        case Opcode::Free: {
            const auto r = static_cast<std::size_t>(instr.dst);
            for (std::uint32_t user : users[r])
                need(user);
            need(lastWriter[r]);
            freeOf[r] = static_cast<std::int64_t>(k);
            break;
        }
        default:
            break;
        }
        for (std::uint32_t d : deps)
            schedule.succs[d].push_back(self);
        schedule.streamInstructions[static_cast<std::size_t>(input.stream[k])].push_back(self);
    }

    // Waits. Work that has a lane, or runs on a host worker, meets its own dependencies; the
    // bookkeeping of an asynchronous device happens at issue, so what it depends on is passed on
    // to the work that depends on it (its frontier).
    const auto isAsync = [&](std::size_t k) {
        const int s = input.stream[k];
        return s >= 0 && static_cast<std::size_t>(s) < input.asynchronous.size() &&
               input.asynchronous[static_cast<std::size_t>(s)];
    };
    std::vector<std::vector<std::uint32_t>> frontier(n);
    for (std::size_t k = program.runStart; k < n; ++k) {
        if (!scheduled(k))
            continue;
        const bool passesOn = isAsync(k) && input.lane[k] < 0;
        std::vector<std::uint32_t> producers;
        for (std::uint32_t d : schedule.deps[k]) {
            for (std::uint32_t p : frontier[d])
                addUnique(producers, p);
        }
        if (passesOn) {
            frontier[k] = std::move(producers);
            continue;
        }
        frontier[k] = {static_cast<std::uint32_t>(k)};
        for (std::uint32_t p : producers) {
            if (!isAsync(p))
                continue; // a host worker's work is done when its successors are issued
            if (input.stream[p] == input.stream[k] && input.lane[p] == input.lane[k])
                continue; // one lane runs in issue order
            addUnique(schedule.waits[k], p);
            schedule.records[p] = true;
        }
    }

    // Priorities: the longest estimated path to the end (deps point backwards, so program order
    // is a topological numbering).
    ListScheduling problem;
    problem.cost.assign(n, 0);
    problem.successorOffset.push_back(0);
    for (std::size_t k = 0; k < n; ++k) {
        if (scheduled(k)) {
            problem.cost[k] = k < input.cost.size() ? input.cost[k] : 0.0;
            for (std::uint32_t next : schedule.succs[k])
                problem.addEdge(next, 0.0);
        }
        problem.closeItem();
    }
    schedule.priority = longestPathToEnd(problem);
    if (input.wave.size() == n) {
        // Micro-batches: the wave dominates the path. Waves follow dependencies, which point to
        // earlier instructions.
        std::vector<std::int32_t> wave(n, 0);
        std::int32_t last = 0;
        double total = 1;
        for (std::size_t k = 0; k < n; ++k) {
            std::int32_t w = input.wave[k];
            if (w < 0) {
                w = 0;
                for (std::uint32_t dep : schedule.deps[k])
                    w = std::max(w, wave[dep]);
            }
            wave[k] = w;
            last = std::max(last, w);
            total += k < input.cost.size() ? input.cost[k] : 0.0;
        }
        for (std::size_t k = 0; k < n; ++k)
            schedule.priority[k] += static_cast<double>(last - wave[k]) * total;
    }
    return schedule;
}

std::vector<double> estimateCosts(const Program& program, const Graph& graph) {
    std::vector<double> cost(program.code.size(), 0.0);
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::Invoke) {
            const std::size_t node = instr.node.index;
            cost[k] = node < program.nodeMicros.size() && program.nodeMicros[node] >= 0
                          ? program.nodeMicros[node]
                          : estimateNodeMicros(graph, instr.node);
        } else if (instr.op == Opcode::DeviceCopy || instr.op == Opcode::LoadInput)
            cost[k] = estimateCopyMicros(instr.bytes);
    }
    return cost;
}

std::vector<double> predictedNodeMicros(const Plan& userPlan, const std::vector<NodeId>& origin,
                                        std::size_t nodes) {
    std::vector<double> micros(nodes, -1.0);
    if (!userPlan.prediction)
        return {};
    const Prediction& p = *userPlan.prediction;
    for (std::size_t j = 0; j < nodes && j < origin.size(); ++j) {
        if (origin[j].valid() && origin[j].index < p.micros.size() && p.micros[origin[j].index] > 0)
            micros[j] = p.micros[origin[j].index];
    }
    return micros;
}

PredictedSchedule listSchedule(const ScheduleInput& input, const Schedule& schedule) {
    const std::size_t n = input.program->code.size();
    // A resource per lane of each stream; bookkeeping (no lane) takes no time on lane 0.
    std::map<std::pair<int, int>, int> resourceOf;
    ListScheduling problem;
    problem.resource.assign(n, -1);
    problem.cost.assign(n, 0);
    problem.successorOffset.push_back(0);
    for (std::size_t k = 0; k < n; ++k) {
        if (input.stream[k] >= 0 && k >= input.program->runStart) {
            const auto key = std::make_pair(input.stream[k], std::max(0, input.lane[k]));
            const auto it = resourceOf.emplace(key, static_cast<int>(resourceOf.size())).first;
            problem.resource[k] = it->second;
            problem.cost[k] = k < input.cost.size() ? input.cost[k] : 0.0;
            for (std::uint32_t next : schedule.succs[k])
                problem.addEdge(next, 0.0);
        }
        problem.closeItem();
    }
    problem.priority = schedule.priority;
    const ListSchedule predicted = placer::listSchedule(problem);
    PredictedSchedule result;
    result.start = predicted.start;
    result.end = predicted.end;
    result.makespan = predicted.makespan;
    result.order.assign(schedule.streamInstructions.size(), {});
    for (std::uint32_t k : predicted.order)
        result.order[static_cast<std::size_t>(input.stream[k])].push_back(k);
    return result;
}

} // namespace placer
