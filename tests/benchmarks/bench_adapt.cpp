// Runs that follow the machine's load (session/RunAdaptation.h), measured against static plans in
// the same run:
//
//  - load: two vcpus bound to the two first cores run the two-branch model (two chains of four
//    64x512 by 512x512 products), auto mode's plan giving each device a branch. From iteration 10
//    a busy process competes for core 1, as another program would. With --adapt the run moves
//    the work; without, it keeps its plan. Each is set against the best static plan for that
//    load, run while the busy process runs: every op on a, or the plan as made (goal: the
//    adapting run's iterations after its re-placement within 15 % of it).
//  - mapping: --map auto with a busy process on core 1 puts the vcpu on core 0;
//  - swap: how long a failed device's re-plan and swap takes (planning, lowering and loading the
//    plan without it), on graphs of 300 and 5,000 nodes.
//
//   bench_adapt            60 iterations, 3 rounds; graphs of 300 and 5,000 nodes
//   bench_adapt --quick    16 iterations, 1 round; 300 nodes (what CTest runs)
#include "BenchFailures.h"
#include "session/Session.h"
#include "vm/ReferenceRun.h"

#include <QTemporaryDir>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <sched.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace placer;

namespace {

/// A process that keeps core `core` busy until it is stopped (or for a minute at most).
class BusyCore {
public:
    explicit BusyCore(int core) : m_core(core) {}
    ~BusyCore() { stop(); }
    void start() {
        if (m_pid > 0)
            return;
        m_pid = fork();
        if (m_pid == 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(m_core, &set);
            sched_setaffinity(0, sizeof set, &set);
            alarm(60);
            volatile unsigned long spin = 0;
            for (;;)
                spin = spin + 1;
        }
    }
    void stop() {
        if (m_pid <= 0)
            return;
        kill(m_pid, SIGKILL);
        waitpid(m_pid, nullptr, 0);
        m_pid = -1;
    }

private:
    int m_core;
    pid_t m_pid = -1;
};

std::shared_ptr<const PlannedModel> open(Session& session, const ModelSource& source,
                                         const std::string& devices, PlanMode mode,
                                         std::vector<PinRequest> pins = {}) {
    PlanRequest request;
    request.devices = devices;
    request.options.mode = mode;
    request.pins = std::move(pins);
    request.maps = {{"a", "vcpu1:cpus=0"}, {"b", "vcpu2:cpus=1"}};
    auto opened = session.open(source, request);
    if (!opened) {
        bench::wrong("opening: " + opened.error().message);
        return nullptr;
    }
    return std::make_shared<const PlannedModel>(opened.take());
}

/// The median of the last `tail` iterations.
double tailMs(const RunOutcome& outcome, std::size_t tail) {
    const std::vector<double>& all = outcome.result.latencyMicros;
    const std::size_t from = all.size() > tail ? all.size() - tail : 0;
    return median(std::vector<double>(all.begin() + static_cast<long>(from), all.end())) / 1000;
}

void underLoad(bool quick) {
    if (std::thread::hardware_concurrency() < 2) {
        std::printf("load: needs two cores; skipped\n");
        return;
    }
    QTemporaryDir dir;
    Session session(SessionOptions{dir.filePath("workspace.db").toStdString()});
    const ModelSource source{PLACER_SOURCE_DIR "/tests/models/two_branches.json"};
    const auto split = open(session, source, "a:vcpu,b:vcpu", PlanMode::Auto);
    const auto onA = open(session, source, "a:vcpu,b:vcpu", PlanMode::Demand, {{"*", "a"}});
    if (!split || !onA)
        return;
    const int iterations = quick ? 16 : 60, from = quick ? 4 : 10;
    const std::size_t tail = quick ? 4 : 20;
    const int rounds = quick ? 1 : 3;
    RunRequest request;
    request.maps = {{"a", "vcpu1:cpus=0"}, {"b", "vcpu2:cpus=1"}};
    request.iterations = iterations;
    request.reference = false;
    std::vector<double> adapting, keeping, staticSplit, staticOnA, unloaded;
    int replaced = 0, lateIterations = 0;
    BusyCore busy(1);
    for (int round = 0; round < rounds; ++round) {
        RunRequest calm = request;
        calm.iterations = static_cast<int>(tail);
        auto quiet = session.run(split, calm);
        if (quiet)
            unloaded.push_back(median(quiet.value()->result.latencyMicros) / 1000);
        for (const bool adapt : {true, false}) {
            RunRequest run = request;
            run.adapt = adapt;
            RunCallbacks callbacks;
            callbacks.progress = [&](int done, int) {
                if (done == run.warmup + from)
                    busy.start();
            };
            auto ran = session.run(split, run, callbacks);
            busy.stop();
            if (!ran) {
                bench::wrong(std::string(adapt ? "adapting" : "keeping") +
                             " run: " + ran.error().message);
                continue;
            }
            (adapt ? adapting : keeping).push_back(tailMs(*ran.value(), tail));
            if (adapt && !ran.value()->events.empty()) {
                ++replaced;
                lateIterations += ran.value()->events.front().iteration - from;
                for (const RunEvent& event : ran.value()->events)
                    std::printf("  round %d, before iteration %d: %s\n", round, event.iteration,
                                event.text().c_str());
            }
        }
        // The static plans under the same load, the busy process running throughout.
        busy.start();
        RunRequest loaded = request;
        loaded.iterations = static_cast<int>(tail);
        for (const auto& [plan, into] :
             {std::pair{split, &staticSplit}, std::pair{onA, &staticOnA}}) {
            auto ran = session.run(plan, loaded);
            if (ran)
                into->push_back(median(ran.value()->result.latencyMicros) / 1000);
            else
                bench::wrong("static run: " + ran.error().message);
        }
        busy.stop();
    }
    if (adapting.empty() || keeping.empty() || staticSplit.empty() || staticOnA.empty())
        return;
    const double best = std::min(median(staticSplit), median(staticOnA));
    std::printf("load: two vcpus on cores 0 and 1, a busy process on core 1 from iteration %d of "
                "%d; medians of the last %zu iterations over %d round(s)\n",
                from, iterations, tail, rounds);
    std::printf("  unloaded, the plan as made:     %.3f ms\n", median(unloaded));
    std::printf("  static under load: as made %.3f ms, every op on a %.3f ms: best %.3f ms\n",
                median(staticSplit), median(staticOnA), best);
    std::printf("  --adapt:    %.3f ms = %.2fx the best static plan (goal <= 1.15x); re-placed "
                "in %d of %d round(s), %.1f iterations after the load came\n",
                median(adapting), median(adapting) / best, replaced, rounds,
                replaced ? static_cast<double>(lateIterations) / replaced : 0.0);
    std::printf("  no --adapt: %.3f ms = %.2fx the best static plan\n", median(keeping),
                median(keeping) / best);
}

/// --map auto with a real busy process on core 1: the vcpu goes to core 0, and says so.
void mappingByLoad(bool) {
    if (std::thread::hardware_concurrency() < 2) {
        std::printf("mapping: needs two cores; skipped\n");
        return;
    }
    QTemporaryDir dir;
    Session session(SessionOptions{dir.filePath("workspace.db").toStdString()});
    const ModelSource source{PLACER_SOURCE_DIR "/tests/models/two_branches.json"};
    PlanRequest plan;
    plan.devices = "a:vcpu";
    auto opened = session.open(source, plan);
    if (!opened) {
        bench::wrong("opening: " + opened.error().message);
        return;
    }
    const auto planned = std::make_shared<const PlannedModel>(opened.take());
    BusyCore busy(1);
    busy.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(100)); // the load shows in /proc/stat
    RunRequest request;
    request.mapByLoad = true;
    request.iterations = 3;
    auto ran = session.run(planned, request);
    busy.stop();
    if (!ran) {
        bench::wrong("the run mapped by load: " + ran.error().message);
        return;
    }
    const std::string& reason = ran.value()->mappingReasons.at(0);
    std::printf("mapping: a busy process on core 1, --map auto put a on %s\n", reason.c_str());
    if (reason.find("on core 0") == std::string::npos)
        bench::wrong("--map auto did not avoid the busy core: " + reason);
}

/// A JSON graph of `nodes` element-wise ops in eight chains over [16, 64] tensors, summed.
std::string chainsGraph(int nodes) {
    std::string text = "{\"format\": \"placer-graph\", \"version\": 1, \"name\": \"chains\",\n"
                       " \"nodes\": [{\"name\": \"x\", \"op\": \"parameter\", \"outputs\": "
                       "[{\"shape\": [16, 64], \"dtype\": \"float32\"}]}";
    const auto type = std::string(", \"outputs\": [{\"shape\": [16, 64], \"dtype\": \"float32\"}]");
    const int chains = 8, length = std::max(1, (nodes - chains) / chains);
    std::vector<std::string> ends;
    for (int c = 0; c < chains; ++c) {
        std::string previous = "x";
        for (int k = 0; k < length; ++k) {
            const std::string name = "c" + std::to_string(c) + "_" + std::to_string(k);
            const bool add = k % 2 == 1;
            text += ",\n  {\"name\": \"" + name + "\", \"op\": \"" + (add ? "Add" : "Relu") +
                    "\", \"inputs\": [\"" + previous + (add ? "\", \"x\"]" : "\"]") + type + "}";
            previous = name;
        }
        ends.push_back(previous);
    }
    std::string sum = ends.front();
    for (std::size_t c = 1; c < ends.size(); ++c) {
        const std::string name = "sum" + std::to_string(c);
        text += ",\n  {\"name\": \"" + name + "\", \"op\": \"Add\", \"inputs\": [\"" + sum +
                "\", \"" + ends[c] + "\"]" + type + "}";
        sum = name;
    }
    return text + "\n ],\n \"outputs\": [\"" + sum + "\"]}\n";
}

void swapTime(bool quick) {
    QTemporaryDir dir;
    Session session(SessionOptions{dir.filePath("workspace.db").toStdString()});
    for (const int nodes : quick ? std::vector<int>{300} : std::vector<int>{300, 5000}) {
        ModelSource source;
        source.path = "chains.json";
        source.text = chainsGraph(nodes);
        PlanRequest request;
        request.devices = "a:vcpu,b:vcpu";
        request.options.mode = PlanMode::Auto;
        auto opened = session.open(source, request);
        if (!opened) {
            bench::wrong("opening the chains: " + opened.error().message);
            return;
        }
        const auto planned = std::make_shared<const PlannedModel>(opened.take());
        std::vector<double> swaps;
        for (int round = 0; round < (quick ? 1 : 5); ++round) {
            RunRequest run;
            run.iterations = 4;
            run.reference = round == 0;
            auto parsed = parseInjectedFaults("b@2", "");
            run.faults = parsed.take();
            auto ran = session.run(planned, run);
            if (!ran || ran.value()->events.size() != 1) {
                bench::wrong("the failover run of " + std::to_string(nodes) +
                             " nodes: " + (ran ? "no event" : ran.error().message));
                continue;
            }
            if (round == 0 && !(ran.value()->reference && ran.value()->reference->ok))
                bench::wrong("the failover run's outputs differ from the reference");
            swaps.push_back(ran.value()->events.front().replanMs);
        }
        std::printf("swap: %5zu nodes, a device lost: planned again, lowered and loaded in "
                    "%.1f ms (median of %zu)\n",
                    planned->model.graph.size(), median(swaps), swaps.size());
    }
}

} // namespace

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
    mappingByLoad(quick);
    underLoad(quick);
    swapTime(quick);
    return bench::exitCode();
}
