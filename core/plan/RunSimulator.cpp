// The executor simulated event by event (plan/RunSimulator.h).
#include "plan/RunSimulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <queue>
#include <tuple>

namespace placer {

namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

/// A task or a transfer, as the simulation runs it.
struct Item {
    double cost = 0;     ///< a task's time; a transfer's latency
    double bytes = 0;    ///< a transfer's
    double rate = 0;     ///< a transfer's link bandwidth alone, bytes per µs
    double priority = 0; ///< higher first
    double release = 0;
    int queue = -1;             ///< the worker or lane that runs it; -1: instant
    std::vector<int> ports;     ///< a transfer's
    std::vector<int> successor; ///< items
    int waiting = 0;            ///< predecessors not ended
    bool transfer = false;
};

/// The ready items of one worker or lane: highest priority first, then the lower index.
struct ReadyOrder {
    const std::vector<Item>* items;
    bool operator()(int a, int b) const {
        const Item& x = (*items)[static_cast<std::size_t>(a)];
        const Item& y = (*items)[static_cast<std::size_t>(b)];
        return x.priority != y.priority ? x.priority < y.priority : a > b;
    }
};

} // namespace

SimulatedRun simulateRun(const PlacementProblem& problem, const std::vector<int>& a,
                         const SimulatedMachine& machine) {
    const std::size_t n = problem.tasks();
    const int devices = problem.devices;
    int resources = 0;
    for (int r : problem.resourceOf)
        resources = std::max(resources, r + 1);
    int hosts = 1;
    for (int h : machine.host)
        hosts = std::max(hosts, h + 1);
    const auto asynchronous = [&](int d) {
        return static_cast<std::size_t>(d) < machine.asynchronous.size() &&
               machine.asynchronous[static_cast<std::size_t>(d)] != 0;
    };
    const auto hostOf = [&](int d) {
        return static_cast<std::size_t>(d) < machine.host.size()
                   ? machine.host[static_cast<std::size_t>(d)]
                   : 0;
    };
    const auto resourceOf = [&](int d) { return problem.resourceOf[static_cast<std::size_t>(d)]; };

    SimulatedRun run;
    run.deviceBusyMicros.assign(static_cast<std::size_t>(devices), 0);
    std::vector<Item> items(n);
    // Tasks: their cost as the prediction has it, a crossing's conversion half on each side.
    std::vector<double> taskMicros(n, 0);
    for (std::size_t t = 0; t < n; ++t) {
        if (!problem.instant[t]) {
            const double c = problem.taskCost(t, a[t]);
            taskMicros[t] = c == kCannotRun ? 1e12 : c;
        }
    }
    if (!problem.edgeCrossMicros.empty()) {
        for (std::size_t t = 0; t < n; ++t) {
            for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
                const std::uint32_t s = problem.edgeTarget[e];
                if (a[t] == a[s])
                    continue;
                const double half = problem.edgeCrossMicros[e] / 2;
                taskMicros[t] += problem.instant[t] ? 0 : half;
                taskMicros[s] += problem.instant[s] ? 0 : half;
            }
        }
    }
    const std::vector<double> priority = executorPriorities(problem, a, taskMicros);
    for (std::size_t t = 0; t < n; ++t) {
        Item& item = items[t];
        item.cost = taskMicros[t];
        item.priority = priority[t];
        item.release = problem.release.size() == n ? problem.release[t] : 0;
        item.queue = problem.instant[t] ? -1 : resourceOf(a[t]);
    }
    // Transfers: one per value (source task and its bytes) and destination device.
    std::map<std::tuple<std::uint32_t, int, std::int64_t>, int> transferOf;
    for (std::uint32_t t = 0; t < n; ++t) {
        for (std::uint32_t e = problem.edgeOffset[t]; e < problem.edgeOffset[t + 1]; ++e) {
            const std::uint32_t s = problem.edgeTarget[e];
            const int from = a[t], to = a[s];
            if (from == to) {
                items[t].successor.push_back(static_cast<int>(s));
                ++items[s].waiting;
                continue;
            }
            const std::int64_t bytes = problem.edgeBytes[e];
            const auto key = std::make_tuple(t, to, bytes);
            auto found = transferOf.find(key);
            if (found == transferOf.end()) {
                const auto k = static_cast<std::size_t>(from * devices + to);
                Item transfer;
                transfer.transfer = true;
                transfer.cost = problem.linkLatency[k];
                transfer.bytes = static_cast<double>(bytes);
                transfer.rate = problem.linkBytesPerMicro[k];
                // Into a GPU its copy lane, into a CPU device its worker.
                transfer.queue = asynchronous(to) ? resources + resourceOf(to) : resourceOf(to);
                transfer.ports = {resourceOf(from), resources + resourceOf(to)};
                const bool betweenHosts = hostOf(from) != hostOf(to);
                if (betweenHosts) {
                    transfer.ports.push_back(2 * resources + hostOf(from));
                    transfer.ports.push_back(2 * resources + hosts + hostOf(to));
                }
                transfer.waiting = 1;
                items[t].successor.push_back(static_cast<int>(items.size()));
                found = transferOf.emplace(key, static_cast<int>(items.size())).first;
                SimulatedTransfer record;
                record.source = t;
                record.from = from;
                record.to = to;
                record.bytes = bytes;
                record.alone = problem.copyMicros(from, to, bytes);
                record.betweenHosts = betweenHosts;
                run.transfers.push_back(record);
                items.push_back(std::move(transfer));
            }
            items[static_cast<std::size_t>(found->second)].successor.push_back(static_cast<int>(s));
            ++items[s].waiting;
        }
    }
    // A transfer's priority: its consumers' highest, and its own time before them.
    for (std::size_t k = 0; k < run.transfers.size(); ++k) {
        Item& transfer = items[n + k];
        for (int s : transfer.successor)
            transfer.priority = std::max(transfer.priority, priority[static_cast<std::size_t>(s)] +
                                                                run.transfers[k].alone);
    }

    const std::size_t total = items.size();
    std::vector<double> start(total, 0), end(total, 0);
    const int queues = 2 * resources;
    using Ready = std::priority_queue<int, std::vector<int>, ReadyOrder>;
    std::vector<Ready> ready(static_cast<std::size_t>(queues), Ready(ReadyOrder{&items}));
    std::vector<int> running(static_cast<std::size_t>(queues), -1);
    // Items whose predecessors have ended but whose release is later: (time, item).
    std::priority_queue<std::pair<double, int>, std::vector<std::pair<double, int>>, std::greater<>>
        released;
    // What runs: a task's end, a transfer's latency's end; then a transfer's bytes left.
    std::vector<double> phaseEnd(total, kNever), left(total, 0);
    std::vector<int> inData; // transfers moving bytes
    std::vector<double> rate(total, 0);
    double now = 0;
    std::size_t ended = 0;

    std::vector<int> becameReady;
    const auto finish = [&](int i) {
        end[static_cast<std::size_t>(i)] = now;
        ++ended;
        for (int s : items[static_cast<std::size_t>(i)].successor) {
            if (--items[static_cast<std::size_t>(s)].waiting == 0)
                becameReady.push_back(s);
        }
    };
    const auto makeReady = [&](int i) {
        // Instant items end as soon as they are ready (and released), cascading.
        std::vector<int> work{i};
        while (!work.empty()) {
            const int k = work.back();
            work.pop_back();
            const Item& item = items[static_cast<std::size_t>(k)];
            if (item.release > now) {
                released.emplace(item.release, k);
                continue;
            }
            if (item.queue >= 0) {
                ready[static_cast<std::size_t>(item.queue)].push(k);
                continue;
            }
            start[static_cast<std::size_t>(k)] = now;
            finish(k);
            work.insert(work.end(), becameReady.begin(), becameReady.end());
            becameReady.clear();
        }
    };
    for (std::size_t i = 0; i < total; ++i) {
        if (items[i].waiting == 0)
            makeReady(static_cast<int>(i));
    }
    std::vector<int> portLoad(static_cast<std::size_t>(2 * resources + 2 * hosts), 0);
    while (ended < total) {
        while (!released.empty() && released.top().first <= now) {
            const int k = released.top().second;
            released.pop();
            items[static_cast<std::size_t>(k)].release = 0;
            makeReady(k);
        }
        // Every idle worker and lane takes its best ready item.
        for (int q = 0; q < queues; ++q) {
            auto& queue = ready[static_cast<std::size_t>(q)];
            if (running[static_cast<std::size_t>(q)] >= 0 || queue.empty())
                continue;
            const int k = queue.top();
            queue.pop();
            running[static_cast<std::size_t>(q)] = k;
            start[static_cast<std::size_t>(k)] = now;
            const Item& item = items[static_cast<std::size_t>(k)];
            if (item.transfer) {
                phaseEnd[static_cast<std::size_t>(k)] = now + item.cost;
                left[static_cast<std::size_t>(k)] = item.bytes;
            } else {
                phaseEnd[static_cast<std::size_t>(k)] = now + item.cost;
            }
        }
        // The rates of the transfers moving bytes: their link's, shared on the busiest port.
        std::fill(portLoad.begin(), portLoad.end(), 0);
        for (int k : inData)
            for (int p : items[static_cast<std::size_t>(k)].ports)
                ++portLoad[static_cast<std::size_t>(p)];
        double next = released.empty() ? kNever : released.top().first;
        for (int k : inData) {
            int busiest = 1;
            for (int p : items[static_cast<std::size_t>(k)].ports)
                busiest = std::max(busiest, portLoad[static_cast<std::size_t>(p)]);
            rate[static_cast<std::size_t>(k)] = items[static_cast<std::size_t>(k)].rate / busiest;
            next = std::min(next, now + left[static_cast<std::size_t>(k)] /
                                            rate[static_cast<std::size_t>(k)]);
        }
        for (int q = 0; q < queues; ++q) {
            const int k = running[static_cast<std::size_t>(q)];
            if (k >= 0)
                next = std::min(next, phaseEnd[static_cast<std::size_t>(k)]);
        }
        if (next == kNever)
            break; // nothing runs and nothing can: a cycle, which a problem never has
        for (int k : inData)
            left[static_cast<std::size_t>(k)] -= rate[static_cast<std::size_t>(k)] * (next - now);
        now = next;
        // What ends now: kernels, latencies (their bytes start moving), transfers' last bytes.
        const double eps = 1e-9 * std::max(1.0, now);
        for (int q = 0; q < queues; ++q) {
            const int k = running[static_cast<std::size_t>(q)];
            if (k < 0 || phaseEnd[static_cast<std::size_t>(k)] > now + eps)
                continue;
            phaseEnd[static_cast<std::size_t>(k)] = kNever;
            const Item& item = items[static_cast<std::size_t>(k)];
            if (item.transfer && item.bytes > 0 && item.rate > 0) {
                inData.push_back(k);
                continue;
            }
            running[static_cast<std::size_t>(q)] = -1;
            finish(k);
        }
        for (std::size_t j = 0; j < inData.size();) {
            const int k = inData[j];
            if (left[static_cast<std::size_t>(k)] >
                1e-6 * std::max(1.0, items[static_cast<std::size_t>(k)].bytes)) {
                ++j;
                continue;
            }
            inData.erase(inData.begin() + static_cast<long>(j));
            running[static_cast<std::size_t>(items[static_cast<std::size_t>(k)].queue)] = -1;
            finish(k);
        }
        std::vector<int> woken;
        woken.swap(becameReady);
        for (int k : woken)
            makeReady(k);
    }

    run.start.assign(start.begin(), start.begin() + static_cast<long>(n));
    run.end.assign(end.begin(), end.begin() + static_cast<long>(n));
    double last = 0;
    for (std::size_t i = 0; i < total; ++i)
        last = std::max(last, end[i]);
    run.runOverheadMicros = problem.runOverhead(a);
    run.makespan = last + run.runOverheadMicros;
    for (std::size_t t = 0; t < n; ++t) {
        if (problem.instant[t])
            continue;
        const auto d = static_cast<std::size_t>(a[t]);
        const double overhead =
            problem.taskOverheadMicros.size() == static_cast<std::size_t>(devices)
                ? std::min(taskMicros[t], problem.taskOverheadMicros[d])
                : 0;
        run.launchMicros += overhead;
        run.computeMicros += taskMicros[t] - overhead;
        run.deviceBusyMicros[d] += taskMicros[t];
    }
    for (std::size_t k = 0; k < run.transfers.size(); ++k) {
        SimulatedTransfer& transfer = run.transfers[k];
        transfer.start = start[n + k];
        transfer.end = end[n + k];
        run.copyMicros += transfer.alone;
        const double added = transfer.end - transfer.start - transfer.alone;
        run.contentionMicros += added > 1e-9 * std::max(1.0, transfer.alone) ? added : 0;
        if (!asynchronous(transfer.to))
            run.deviceBusyMicros[static_cast<std::size_t>(transfer.to)] +=
                transfer.end - transfer.start;
    }
    return run;
}

} // namespace placer
