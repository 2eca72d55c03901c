// Runs whose devices span ranks, against their peers measured in the same run. Start it as two
// ranks, each bound to a core of its own as mpirun binds two ranks (each runs one vcpu; with
// `--bind-to none` the kernel may wake both ranks' threads on one core, and an iteration then
// and again takes a scheduler slice longer):
//   mpirun -np 2 [--oversubscribe] [--allow-run-as-root] bench_mpi [--quick] [NAME...]
// NAME is one or more of:
//   copy        a copy between ranks (the executor's copy instruction, and the transport's
//               ping-pong) against MPI's own ping-pong on the same transport, 1 to 64 MiB
//               (goal: at least 90 % of MPI's bandwidth from 1 MiB up), the same ping-pong on
//               buffers allocated as a vcpu allocates large tensors (on huge pages); and MPI_Send
//               of data written just before, into a buffer read just after, as the executor's copy
//               moves it and timed as it is (from the send to its return). With
//               `--mca btl_vader_single_copy_mechanism none` (shared memory where the kernel
//               forbids one process to read another's, as in many containers) or
//               `--mca btl tcp,self`, messages move in pieces, a few at each poll of the
//               communication thread
//   two-branch  the two-branch graph with one branch per rank, against both branches on one
//               vcpu (goal: at least 1.8x)
//   split       ResNet-50 at batch 8 (PLACER_ONNX_MODELS/resnet50_batch8.onnx; with --quick a
//               small CNN), --split over two ranks against one vcpu, with the reference check
//               (goal: at least 1.8x)
#include "RunBench.h"
#include "TwoBranchGraph.h"

#include "backends/cpu/ConstantEvaluation.h"
#include "backends/mpi/MpiTransport.h"
#include "device/Ranks.h"
#include "plan/Split.h"
#include "report/RunReport.h"
#include "session/Session.h"
#include "vm/RankResults.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <sys/mman.h>

using namespace placer;

namespace {

double median(std::vector<double> values) {
    if (values.empty())
        return 0;
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
}

double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/// Only rank 0 writes.
template <typename... Args> void say(const char* format, Args... args) {
    if (localRank() == 0) {
        std::printf(format, args...);
        std::fflush(stdout);
    }
}

void fail(const std::string& why) {
    std::fprintf(stderr, "bench_mpi (%s): %s\n", describeRank(localRank()).c_str(), why.c_str());
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/// A run of every rank together (RunOptions::acrossRanks).
RunResult acrossRanks(bench::Loaded& l, int warmup, int iterations) {
    auto result = l.executor->run(l.inputs, RunOptions{warmup, iterations, {}, {}, true});
    if (!result)
        fail(result.error().message);
    return result.take();
}

/// MPI's own ping-pong: rank 0 sends, rank 1 sends it back; seconds per one-way message.
double mpiPingPong(char* data, std::size_t bytes, int rounds) {
    const int count = static_cast<int>(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = seconds();
    for (int i = 0; i < rounds; ++i) {
        if (localRank() == 0) {
            MPI_Send(data, count, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
            MPI_Recv(data, count, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(data, count, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(data, count, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
    return (seconds() - start) / (2.0 * rounds);
}

/// MPI's own send of data as the executor's copy sends it: rank 0 writes the source (as the
/// kernel before the copy does: x negated), then sends it with MPI_Send; rank 1, its receive
/// posted first, takes it into a buffer of its own and reads it (as the kernel after the copy
/// does). Timed by the sender, from the send to its return, as the executor times its copy;
/// median seconds of one message.
double mpiFreshSend(std::int64_t bytes, int rounds) {
    const std::size_t n = static_cast<std::size_t>(bytes) / sizeof(float);
    std::vector<float> x(n, 1.5f), buffer(n), out(n);
    std::vector<double> times;
    for (int i = 0; i < rounds; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (localRank() == 0) {
            for (std::size_t k = 0; k < n; ++k)
                buffer[k] = -x[k];
            const double start = seconds();
            MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 9, MPI_COMM_WORLD);
            times.push_back(seconds() - start);
        } else {
            MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 9, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            for (std::size_t k = 0; k < n; ++k)
                out[k] = -buffer[k];
        }
    }
    return median(times);
}

/// The same through the transport's communication thread, waited for as the executor waits
/// (TransportWait: the thread polls without sleeping while someone waits).
double transportPingPong(std::vector<char>& buffer, int rounds) {
    RankTransport& transport = *rankTransport();
    const auto bytes = static_cast<std::int64_t>(buffer.size());
    if (!transport.allGather(""))
        fail("barrier");
    const double start = seconds();
    TransportWait waiting(&transport);
    for (int i = 0; i < rounds; ++i) {
        const int peer = 1 - localRank();
        if (localRank() == 0) {
            transport.send(peer, 8, buffer.data(), bytes)->wait(60);
            transport.receive(peer, 8, buffer.data(), bytes)->wait(60);
        } else {
            transport.receive(peer, 8, buffer.data(), bytes)->wait(60);
            transport.send(peer, 8, buffer.data(), bytes)->wait(60);
        }
    }
    return (seconds() - start) / (2.0 * rounds);
}

/// A graph that copies one [n] float vector from device a (rank 0) to device b (rank 1): the
/// executor's copy instruction, timed by its sender from the post to the transport's end.
double executorCopy(std::int64_t bytes, int iterations) {
    bench::Loaded l;
    const TensorType type{{bytes / 4}, DType::Float32};
    const NodeId x = bench::parameter(l.graph, "%x", type);
    const NodeId onA = bench::op(l.graph, "%a", "negative", {{x, 0}}, type, DeviceId(0));
    const NodeId onB = bench::op(l.graph, "%b", "negative", {{onA, 0}}, type, DeviceId(1));
    l.graph.addOutput(GraphOutput{{onB, 0}, DeviceId(1), {}});
    l.devices = DeviceSet::parse("a:vcpu,b:vcpu").take();
    bench::load(l, {{"a", "vcpu1"}, {"b", "rank1/vcpu1"}});
    RunResult result = acrossRanks(l, 2, iterations);
    if (Status gathered = gatherRankResults(result); !gathered.ok())
        fail(gathered.error().message);
    const Program& program = l.executor->program();
    for (std::size_t k = 0; k < program.code.size(); ++k) {
        if (program.code[k].op == Opcode::DeviceCopy && program.code[k].bytes == bytes)
            return median(result.instrMicros[k]) / 1e6;
    }
    fail("no copy between the ranks");
    return 0;
}

void copyBench(bool quick) {
    say("copy between two ranks (one-way time; bandwidth in GB/s)\n");
    for (std::int64_t mib :
         quick ? std::vector<std::int64_t>{1} : std::vector<std::int64_t>{1, 4, 16, 64}) {
        const std::int64_t bytes = mib << 20;
        std::vector<char> buffer(static_cast<std::size_t>(bytes), 1);
        const int rounds = quick ? 3 : std::max(5, static_cast<int>(256 / mib));
        // The same ping-pong on memory as the vcpus' arenas allocate a tensor of 4 MiB and up:
        // 2 MiB aligned, offered transparent huge pages (backends/cpu/CpuDevice.cpp).
        constexpr std::size_t kHugePage = std::size_t{2} << 20;
        const std::size_t rounded = (buffer.size() + kHugePage - 1) / kHugePage * kHugePage;
        std::unique_ptr<char, decltype(&std::free)> huge(
            static_cast<char*>(std::aligned_alloc(kHugePage, rounded)), &std::free);
        if (!huge)
            fail("out of memory");
        ::madvise(huge.get(), rounded, MADV_HUGEPAGE);
        std::memset(huge.get(), 1, buffer.size());
        std::vector<double> mpi, mpiHuge, fresh, transport, executor;
        for (int round = 0; round < 3; ++round) {
            mpi.push_back(mpiPingPong(buffer.data(), buffer.size(), rounds));
            mpiHuge.push_back(mpiPingPong(huge.get(), buffer.size(), rounds));
            fresh.push_back(mpiFreshSend(bytes, rounds));
            transport.push_back(transportPingPong(buffer, rounds));
            executor.push_back(executorCopy(bytes, rounds));
        }
        const double gb = static_cast<double>(bytes) / 1e9;
        say("  %3lld MiB: MPI ping-pong %.2f GB/s, transport %.2f GB/s (%.0f %%), executor's "
            "copy %.2f GB/s (%.0f %% of MPI; goal >= 90 %%)\n",
            static_cast<long long>(mib), gb / median(mpi), gb / median(transport),
            100 * median(mpi) / median(transport), gb / median(executor),
            100 * median(mpi) / median(executor));
        say("          MPI_Send of fresh data %.2f GB/s: executor's copy %.0f %% of it\n",
            gb / median(fresh), 100 * median(fresh) / median(executor));
        say("          MPI ping-pong on huge pages %.2f GB/s: executor's copy %.0f %% of it\n",
            gb / median(mpiHuge), 100 * median(mpiHuge) / median(executor));
    }
}

void twoBranchBench(bool quick) {
    const std::int64_t channels = quick ? 8 : 64, size = quick ? 16 : 56;
    const int iterations = quick ? 3 : 10;
    bench::Loaded one, two;
    for (bench::Loaded* l : {&one, &two}) {
        l->graph = test::twoBranchGraph(channels, size, 3, test::BranchOrder::Interleaved, true);
        l->devices = DeviceSet::parse("v1:vcpu,v2:vcpu").take();
    }
    bench::load(one, {{"v1", "vcpu1"}, {"v2", "vcpu1"}});
    bench::load(two, {{"v1", "vcpu1"}, {"v2", "rank1/vcpu1"}});
    std::vector<double> a, b;
    for (int round = 0; round < 3; ++round) {
        RunResult ra = acrossRanks(one, 1, iterations);
        RunResult rb = acrossRanks(two, 1, iterations);
        if (!gatherRankResults(ra).ok() || !gatherRankResults(rb).ok())
            fail("gathering the results");
        a.insert(a.end(), ra.latencyMicros.begin(), ra.latencyMicros.end());
        b.insert(b.end(), rb.latencyMicros.begin(), rb.latencyMicros.end());
    }
    say("two branches of 3 conv3x3+relu %lldx%lldx%lld: both on one vcpu %.2f ms, one branch "
        "per rank %.2f ms: speedup %.2fx (goal >= 1.8x)\n",
        static_cast<long long>(channels), static_cast<long long>(size),
        static_cast<long long>(size), median(a) / 1000.0, median(b) / 1000.0,
        median(a) / median(b));
}

void splitBench(bool quick) {
    const char* folder = std::getenv("PLACER_ONNX_MODELS");
    std::string model = folder ? std::string(folder) + "/resnet50_batch8.onnx" : "";
    if (quick || model.empty() || !std::filesystem::exists(model))
        model = std::string(PLACER_SOURCE_DIR) + "/resources/models/tiny_encoder_batch4.onnx";
    const std::filesystem::path workspace =
        std::filesystem::temp_directory_path() /
        ("placer-bench-mpi-" + std::to_string(localRank()) + ".db");
    Session session(SessionOptions{workspace.string()});
    auto runWith = [&](const std::string& devices, const std::string& split,
                       std::vector<DeviceMapRequest> maps, bool reference) {
        PlanRequest request;
        request.devices = devices;
        request.maps = maps;
        if (!split.empty()) {
            auto parsed = parseSplitRequest(split);
            if (!parsed)
                fail(parsed.error().message);
            request.options.splits.push_back(parsed.take());
        }
        auto opened = session.open(ModelSource{model}, request);
        if (!opened)
            fail(opened.error().message);
        RunRequest run;
        run.maps = maps;
        run.warmup = 1;
        run.iterations = quick ? 2 : 5;
        run.reference = reference;
        auto ran = session.run(std::make_shared<const PlannedModel>(opened.take()), run);
        if (!ran)
            fail(ran.error().message);
        if (reference && localRank() == 0 &&
            (!ran.value()->reference || !ran.value()->reference->ok))
            fail("the split over two ranks differs from the reference");
        return ran.take();
    };
    std::vector<double> one, two;
    for (int round = 0; round < 2; ++round) {
        auto single = runWith("a:vcpu", "", {{"a", "vcpu1"}}, false);
        auto split =
            runWith("a:vcpu,b:vcpu", "*=a,b", {{"a", "vcpu1"}, {"b", "rank1/vcpu1"}}, round == 0);
        one.push_back(median(single->result.latencyMicros));
        two.push_back(median(split->result.latencyMicros));
    }
    std::filesystem::remove(workspace);
    say("%s --split over two ranks: one vcpu %.1f ms, two ranks %.1f ms: speedup %.2fx (goal >= "
        "1.8x), reference check ok\n",
        std::filesystem::path(model).filename().c_str(), median(one) / 1000.0, median(two) / 1000.0,
        median(one) / median(two));
}

} // namespace

int main(int argc, char** argv) {
    installConstantFolding();
    auto transport = mpi::MpiTransport::start(&argc, &argv);
    if (!transport) {
        std::fprintf(stderr, "bench_mpi: %s\n", transport.error().message.c_str());
        return 1;
    }
    setRankTransport(transport.take());
    if (rankCount() != 2) {
        say("bench_mpi: start it as two ranks (mpirun -np 2 bench_mpi)\n");
        setRankTransport(nullptr);
        return 1;
    }
    bool quick = false;
    std::vector<std::string> only;
    for (int k = 1; k < argc; ++k) {
        const std::string arg = argv[k];
        if (arg == "--quick")
            quick = true;
        else
            only.push_back(arg);
    }
    const std::pair<const char*, void (*)(bool)> benches[] = {
        {"copy", copyBench}, {"two-branch", twoBranchBench}, {"split", splitBench}};
    for (const auto& [name, bench] : benches) {
        if (only.empty() || std::find(only.begin(), only.end(), name) != only.end())
            bench(quick);
    }
    setRankTransport(nullptr);
    return 0;
}
