#include "runtime/Calibrate.h"

#include "io/RelayReader.h"
#include "plan/Planner.h"
#include "runtime/Bytecode.h"
#include "runtime/Executor.h"
#include "runtime/HostTensor.h"

#include <unistd.h>

#include <algorithm>

namespace placer {

namespace {

DeviceKind virtualKind(const Device& device) {
    switch (device.kind()) {
    case PhysicalKind::Cpu:
        return DeviceKind::Cpu;
    case PhysicalKind::VCpu:
        return DeviceKind::VCpu;
    case PhysicalKind::Cuda:
        return DeviceKind::Cuda;
    }
    return DeviceKind::Cpu;
}

struct Timing {
    double instruction = 0;     ///< median time of the first instruction of the opcode asked for
    double latency = 0;         ///< median latency of the whole run
    double allInstructions = 0; ///< the medians of every instruction of that opcode, summed
};

/// Runs `relay` with its ops pinned as `pins` says (op index -> device), each virtual device i
/// on `mapping[i]`, and returns the median times of its instructions of `opcode`.
Result<Timing> timeInstructions(const std::string& relay, const std::vector<Device*>& mapping,
                                const std::vector<int>& pins, Opcode opcode, int iterations) {
    DeviceSet devices;
    for (std::size_t d = 0; d < mapping.size(); ++d)
        devices.add(VirtualDevice{"d" + std::to_string(d), virtualKind(*mapping[d])});
    devices.chooseDefaults();
    auto read = readRelay(relay, devices, "calibration");
    if (!read)
        return read.error();
    Graph graph = read.take();
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

Result<double> timeInstruction(const std::string& relay, const std::vector<Device*>& mapping,
                               const std::vector<int>& pins, Opcode opcode, int iterations) {
    auto timing = timeInstructions(relay, mapping, pins, opcode, iterations);
    if (!timing)
        return timing.error();
    return timing.value().instruction;
}

std::string tensor(std::int64_t elements) {
    return "Tensor[(" + std::to_string(elements) + "), float32]";
}

/// A chain of `length` tiny ops, each reading the one before.
std::string chain(int length) {
    std::string text = "#[version = \"0.0.5\"]\ndef @main(%a: " + tensor(1) + ") {\n";
    for (int k = 0; k < length; ++k)
        text += "  %" + std::to_string(k) + " = negative(" +
                (k == 0 ? std::string("%a") : "%" + std::to_string(k - 1)) + ");\n";
    return text + "  %" + std::to_string(length - 1) + "\n}";
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
    devices.push_back(registry.freshVCpu());
    devices.push_back(registry.freshVCpu());
    for (const PhysicalDeviceInfo& info : registry.list()) {
        if (info.kind != PhysicalKind::Cuda || !info.available)
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
        const bool gpu = device->kind() == PhysicalKind::Cuda;
        DeviceProfile profile = assumedProfile(device->name(), gpu);
        // A product large enough to be bound by arithmetic: 2n^3 operations.
        const std::int64_t n = options.quick ? 64 : gpu ? 4096 : 512;
        step("matrix product on " + device->name());
        const std::string shape =
            "Tensor[(" + std::to_string(n) + ", " + std::to_string(n) + "), float32]";
        auto product = timeInstruction("#[version = \"0.0.5\"]\ndef @main(%a: " + shape +
                                           ", %b: " + shape + ") { nn.dense(%a, %b) }",
                                       {device}, {0}, Opcode::Invoke, options.iterations);
        if (!product)
            return failed(*device, "matrix product", product.error());
        step("launch cost on " + device->name());
        auto launch = timeInstruction("#[version = \"0.0.5\"]\ndef @main(%a: " + tensor(1) +
                                          ", %b: " + tensor(1) + ") { add(%a, %b) }",
                                      {device}, {0}, Opcode::Invoke, options.iterations);
        if (!launch)
            return failed(*device, "launch cost", launch.error());
        // Three streams of this many floats, far beyond the caches.
        const std::int64_t elements = options.quick ? 1 << 16 : gpu ? 1 << 26 : 1 << 22;
        step("memory bandwidth on " + device->name());
        auto stream = timeInstruction("#[version = \"0.0.5\"]\ndef @main(%a: " + tensor(elements) +
                                          ", %b: " + tensor(elements) + ") { add(%a, %b) }",
                                      {device}, {0}, Opcode::Invoke, options.iterations);
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
            const bool gpu = from->kind() == PhysicalKind::Cuda || to->kind() == PhysicalKind::Cuda;
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
            auto copy =
                timeInstruction("#[version = \"0.0.5\"]\ndef @main(%a: " + tensor(elements) +
                                    ") {\n  %0 = negative(%a);\n"
                                    "  nn.relu(%0)\n}",
                                {from, to}, {0, 1}, Opcode::DeviceCopy, options.iterations);
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

} // namespace placer
