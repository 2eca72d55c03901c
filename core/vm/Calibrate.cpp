// Measuring this machine's devices for the cost model (vm/Calibrate.h): small programs
// built as graphs, planned, lowered and timed through the executor that runs user plans.
#include "vm/Calibrate.h"

#include "device/Ranks.h"
#include "ir/HostTensor.h"
#include "kernels/RandomTensor.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"

#include <unistd.h>

#include <algorithm>

namespace placer {

namespace {

struct Timing {
    double instruction = 0;     ///< median time of the first instruction of the opcode asked for
    double latency = 0;         ///< median latency of the whole run
    double allInstructions = 0; ///< the medians of every instruction of that opcode, summed
};

/// A calibration program: float32 parameters and Relay ops, each added with its output type.
class Probe {
public:
    ValueRef parameter(std::vector<std::int64_t> shape) {
        Node node;
        node.name = "p" + std::to_string(m_graph.size());
        node.op = &OpRegistry::global().parameter();
        node.outputs = {TensorType{std::move(shape), DType::Float32}};
        return ValueRef{m_graph.addNode(std::move(node)), 0};
    }
    /// `op` of `inputs`; its output type from the op's shape function.
    ValueRef op(const char* name, std::vector<ValueRef> inputs) {
        Node node;
        node.name = "%" + std::to_string(m_graph.size());
        node.op = OpRegistry::global().find(name);
        std::vector<TensorType> types;
        for (const ValueRef input : inputs)
            types.push_back(m_graph.type(input));
        node.outputs = node.op->inferShape(types, node.attrs).outputs;
        node.inputs = std::move(inputs);
        return ValueRef{m_graph.addNode(std::move(node)), 0};
    }
    /// The graph, returning `result`.
    Graph finish(ValueRef result) {
        m_graph.addOutput(GraphOutput{result, DeviceId(), {}});
        m_graph.name = "calibration";
        return std::move(m_graph);
    }

private:
    Graph m_graph;
};

Graph vectorOf(const char* op, std::int64_t elements) {
    Probe probe;
    const ValueRef a = probe.parameter({elements});
    const ValueRef b = probe.parameter({elements});
    return probe.finish(probe.op(op, {a, b}));
}

Graph matrixProduct(std::int64_t n) {
    Probe probe;
    const ValueRef a = probe.parameter({n, n});
    const ValueRef b = probe.parameter({n, n});
    return probe.finish(probe.op("nn.dense", {a, b}));
}

/// A chain of `length` tiny ops, each reading the one before.
Graph chain(int length) {
    Probe probe;
    ValueRef value = probe.parameter({1});
    for (int k = 0; k < length; ++k)
        value = probe.op("negative", {value});
    return probe.finish(value);
}

/// negative then relu: a copy between them when they run on two devices.
Graph copyBetween(std::int64_t elements) {
    Probe probe;
    const ValueRef a = probe.parameter({elements});
    return probe.finish(probe.op("nn.relu", {probe.op("negative", {a})}));
}

/// Runs `graph` with its ops pinned as `pins` says (op index -> device), each virtual device i
/// on `mapping[i]`, and returns the median times of its instructions of `opcode`.
Result<Timing> timeInstructions(Graph graph, const std::vector<Device*>& mapping,
                                const std::vector<int>& pins, Opcode opcode, int iterations) {
    DeviceSet devices;
    for (std::size_t d = 0; d < mapping.size(); ++d)
        devices.add(VirtualDevice{"d" + std::to_string(d), mapping[d]->kind()});
    devices.chooseDefaults();
    std::size_t op = 0;
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        Node& node = graph.node(NodeId(i));
        if (node.role() != OpRole::Compute)
            continue;
        const int device = op < pins.size() ? pins[op] : 0;
        node.pin = Pin{PinKind::Plain, DeviceId(device), "calibration"};
        ++op;
    }
    const Plan plan = planDevices(graph, devices, PlanOptions{});
    auto program = lowerToBytecode(graph, devices, plan);
    if (!program)
        return program.error();
    std::vector<HostTensor> inputs;
    for (NodeId input : program.value().inputs)
        inputs.push_back(randomTensor(graph.node(input).outputs[0], inputs.size() + 1));
    auto executor = Executor::load(graph, devices, program.take(), mapping);
    if (!executor)
        return executor.error();
    auto result = executor.value()->run(inputs, RunOptions{1, iterations});
    if (!result)
        return result.error();
    const auto median = [](std::vector<double> times) {
        std::sort(times.begin(), times.end());
        return times.empty() ? 0.0 : times[times.size() / 2];
    };
    const Program& code = executor.value()->program();
    Timing timing;
    bool found = false;
    for (std::size_t k = code.runStart; k < code.code.size(); ++k) {
        if (code.code[k].op != opcode)
            continue;
        const double t = median(result.value().instrMicros[k]);
        if (!found)
            timing.instruction = std::max(t, 1e-3);
        found = true;
        timing.allInstructions += t;
    }
    if (!found)
        return SourceError::sentence("calibration: the program has no such instruction");
    timing.latency = median(result.value().latencyMicros);
    return timing;
}

Result<double> timeInstruction(Graph graph, const std::vector<Device*>& mapping,
                               const std::vector<int>& pins, Opcode opcode, int iterations) {
    auto timing = timeInstructions(std::move(graph), mapping, pins, opcode, iterations);
    if (!timing)
        return timing.error();
    return timing.value().instruction;
}

/// Tiny runs are cheap and their overheads noisy: many iterations.
int chainIterations(const CalibrationOptions& options) {
    return std::max(options.iterations * 10, 30);
}

} // namespace

std::vector<Device*> devicesToCalibrate(DeviceRegistry& registry) {
    std::vector<Device*> devices;
    if (auto cpu = registry.get("cpu"))
        devices.push_back(cpu.value());
    for (int k = 0; k < 2; ++k) {
        if (Device* vcpu = registry.freshVCpu())
            devices.push_back(vcpu);
    }
    for (const PhysicalDeviceInfo& info : registry.list()) {
        if (info.kind != DeviceKind::Cuda || !info.available)
            continue;
        if (auto cuda = registry.get(info.name))
            devices.push_back(cuda.value());
    }
    return devices;
}

std::string machineName() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0')
        return "this machine";
    return name;
}

Result<Calibration> calibrateThisMachine(const CalibrationOptions& options,
                                         const CalibrationProgress& progress) {
    DeviceRegistry registry;
    return calibrateDevices(devicesToCalibrate(registry), machineName(), options, progress);
}

Result<Calibration> calibrateDevices(const std::vector<Device*>& devices,
                                     const std::string& machine, const CalibrationOptions& options,
                                     const CalibrationProgress& progress) {
    Calibration calibration;
    calibration.machine = machine;
    const int pairs = static_cast<int>(devices.size() * (devices.size() - 1));
    const int total = static_cast<int>(devices.size()) * 4 + pairs * 2;
    int done = 0;
    const auto step = [&](const std::string& what) {
        if (progress)
            progress(done, total, what);
        ++done;
    };
    const auto failed = [](const Device& device, const std::string& what, const SourceError& e) {
        return SourceError::sentence("calibrating " + device.name() + ": " + what + ": " +
                                     e.message);
    };
    for (Device* device : devices) {
        const bool gpu = device->kind() == DeviceKind::Cuda;
        DeviceProfile profile = assumedProfile(device->name(), gpu);
        // A product large enough to be bound by arithmetic: 2n^3 operations.
        const std::int64_t n = options.quick ? 64 : gpu ? 4096 : 512;
        step("matrix product on " + device->name());
        auto product =
            timeInstruction(matrixProduct(n), {device}, {0}, Opcode::Invoke, options.iterations);
        if (!product)
            return failed(*device, "matrix product", product.error());
        step("launch cost on " + device->name());
        auto launch =
            timeInstruction(vectorOf("add", 1), {device}, {0}, Opcode::Invoke, options.iterations);
        if (!launch)
            return failed(*device, "launch cost", launch.error());
        // Three streams of this many floats, far beyond the caches.
        const std::int64_t elements = options.quick ? 1 << 16 : gpu ? 1 << 26 : 1 << 22;
        step("memory bandwidth on " + device->name());
        auto stream = timeInstruction(vectorOf("add", elements), {device}, {0}, Opcode::Invoke,
                                      options.iterations);
        if (!stream)
            return failed(*device, "memory bandwidth", stream.error());
        // The executor's own time per op (dispatch, dependencies, bookkeeping) and per run
        // (waking the worker, starting and finishing): chains of tiny ops of two lengths, their
        // latency less their kernels' time; the slope is per op, what is left per run.
        step("dispatch cost on " + device->name());
        constexpr int kShort = 8, kLong = 64;
        auto shortChain = timeInstructions(chain(kShort), {device}, std::vector<int>(kShort, 0),
                                           Opcode::Invoke, chainIterations(options));
        if (!shortChain)
            return failed(*device, "dispatch cost", shortChain.error());
        auto longChain = timeInstructions(chain(kLong), {device}, std::vector<int>(kLong, 0),
                                          Opcode::Invoke, chainIterations(options));
        if (!longChain)
            return failed(*device, "dispatch cost", longChain.error());
        const double shortOverhead =
            std::max(0.0, shortChain.value().latency - shortChain.value().allInstructions);
        const double longOverhead =
            std::max(0.0, longChain.value().latency - longChain.value().allInstructions);
        profile.dispatchMicros = std::max(0.0, (longOverhead - shortOverhead) / (kLong - kShort));
        profile.runMicros = std::max(0.0, shortOverhead - kShort * profile.dispatchMicros);
        profile.launchMicros = launch.value();
        profile.flopsPerMicro = 2.0 * static_cast<double>(n) * static_cast<double>(n) *
                                static_cast<double>(n) / product.value();
        profile.bytesPerMicro = 12.0 * static_cast<double>(elements) /
                                std::max(stream.value() - launch.value(), stream.value() * 0.1);
        profile.calibrated = true;
        calibration.devices.push_back(profile);
    }
    for (Device* from : devices) {
        for (Device* to : devices) {
            if (from == to)
                continue;
            const bool gpu = from->kind() == DeviceKind::Cuda || to->kind() == DeviceKind::Cuda;
            const std::int64_t elements = options.quick ? 1 << 16 : gpu ? 1 << 24 : 1 << 22;
            // Latency: what a crossing adds to a chain of tiny ops, the copy and the hand-over
            // to the other device's worker together (a chain alternating between the two,
            // against the same chain on one).
            step("copy " + from->name() + " -> " + to->name() + " (latency)");
            constexpr int kHops = 16;
            std::vector<int> alternate(kHops);
            for (int k = 0; k < kHops; ++k)
                alternate[static_cast<std::size_t>(k)] = k % 2;
            auto crossing = timeInstructions(chain(kHops), {from, to}, alternate, Opcode::Invoke,
                                             chainIterations(options));
            auto staying = timeInstructions(chain(kHops), {from, to}, std::vector<int>(kHops, 0),
                                            Opcode::Invoke, chainIterations(options));
            if (!crossing || !staying)
                return failed(*from, "copy to " + to->name(),
                              (!crossing ? crossing : staying).error());
            const double small =
                std::max(0.0, (crossing.value().latency - staying.value().latency) / (kHops - 1));
            // Bandwidth: a large copy's own time, beyond that.
            step("copy " + from->name() + " -> " + to->name() + " (bandwidth)");
            auto copy = timeInstruction(copyBetween(elements), {from, to}, {0, 1},
                                        Opcode::DeviceCopy, options.iterations);
            if (!copy)
                return failed(*from, "copy to " + to->name(), copy.error());
            const double large = copy.value() + small;
            LinkProfile link;
            link.latencyMicros = small;
            link.bytesPerMicro =
                4.0 * static_cast<double>(elements) / std::max(large - small, large * 0.1);
            link.calibrated = true;
            calibration.links[{from->name(), to->name()}] = link;
        }
    }
    if (progress)
        progress(total, total, "done");
    return calibration;
}

Result<std::map<std::pair<std::string, std::string>, LinkProfile>>
measureRankLinks(const CalibrationOptions& options) {
    std::map<std::pair<std::string, std::string>, LinkProfile> links;
    RankTransport* transport = rankTransport();
    if (!transport || transport->size() < 2)
        return links;
    const int me = transport->rank();
    const std::int64_t large = options.quick ? (1 << 20) : (16 << 20);
    const int latencyRounds = options.quick ? 20 : 200, bandwidthRounds = options.quick ? 2 : 8;
    std::vector<char> buffer(static_cast<std::size_t>(large), 1);
    constexpr int kTag = 1 << 20; // clear of the run's copies, which are measured apart
    // Seconds per one-way message between `a` and `b` (a ping-pong; others wait).
    auto pingPong = [&](int a, int b, std::int64_t bytes, int rounds) -> Result<double> {
        if (auto barrier = transport->allGather(std::string()); !barrier)
            return barrier.error();
        const double start = hostClockMicros();
        for (int i = 0; i < rounds && (me == a || me == b); ++i) {
            const int peer = me == a ? b : a;
            for (bool sending : {me == a, me != a}) {
                auto transfer = sending ? transport->send(peer, kTag, buffer.data(), bytes)
                                        : transport->receive(peer, kTag, buffer.data(), bytes);
                if (!transfer->wait(rankTimeoutSeconds()) || transfer->failed())
                    return SourceError::sentence(
                        "measuring the link to " + describeRank(peer) + ": " +
                        (transfer->failed() ? transfer->error() : std::string("no answer")));
            }
        }
        const double micros = (hostClockMicros() - start) / (2.0 * rounds);
        // Every rank learns the pair's figure from `a`.
        auto all = transport->allGather(me == a ? std::to_string(micros) : std::string());
        if (!all)
            return all.error();
        return std::stod(all.value()[static_cast<std::size_t>(a)]);
    };
    for (int a = 0; a < transport->size(); ++a) {
        for (int b = 0; b < transport->size(); ++b) {
            if (a == b)
                continue;
            auto latency = pingPong(a, b, 8, latencyRounds);
            if (!latency)
                return latency.error();
            auto bulk = pingPong(a, b, large, bandwidthRounds);
            if (!bulk)
                return bulk.error();
            LinkProfile link;
            link.latencyMicros = latency.value();
            link.bytesPerMicro =
                static_cast<double>(large) / std::max(1e-3, bulk.value() - latency.value());
            link.calibrated = true;
            links[{"rank" + std::to_string(a), "rank" + std::to_string(b)}] = link;
        }
    }
    return links;
}

} // namespace placer
