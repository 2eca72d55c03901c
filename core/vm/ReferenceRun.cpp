// The single-device reference run and the comparison of a run's outputs with it.
#include "vm/ReferenceRun.h"

#include "device/DeviceRegistry.h"
#include "ir/StringPool.h"
#include "kernels/KernelSupport.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace placer {

SingleDevicePlan singleDevicePlan(const Graph& graph) {
    SingleDevicePlan result;
    result.graph = graph;
    const DeviceId only(0);
    for (std::uint32_t i = 0; i < result.graph.size(); ++i) {
        Node& node = result.graph.node(NodeId(i));
        node.pin = Pin{};
        node.rejectedPins.clear();
        node.device = DeviceId();
        if (node.isDeviceCopy()) {
            node.copySource = only;
            node.copyDestination = only;
        }
    }
    for (GraphOutput& output : result.graph.outputs())
        output.device = DeviceId();
    result.devices.add(VirtualDevice{"reference", DeviceKind::VCpu});
    result.devices.chooseDefaults();
    result.plan = planDevices(result.graph, result.devices, PlanOptions{});
    return result;
}

Result<std::vector<HostTensor>> runReference(const Graph& graph,
                                             const std::vector<HostTensor>& inputs, int opset) {
    SingleDevicePlan single = singleDevicePlan(graph);
    auto program = lowerToBytecode(single.graph, single.devices, single.plan);
    if (!program)
        return program.error();
    // A host CPU of its own with one thread, shared with no run.
    auto device = makeStandaloneDevice(DeviceKind::Cpu, "cpu:threads=1");
    if (!device)
        return device.error();
    auto executor =
        Executor::load(single.graph, single.devices, program.take(), {device.value().get()}, opset);
    if (!executor)
        return executor.error();
    auto result = executor.value()->run(inputs, RunOptions{0, 1});
    if (!result)
        return result.error();
    return std::move(result.value().outputs);
}

ReferenceCheck compareOutputs(const std::vector<HostTensor>& actual,
                              const std::vector<HostTensor>& expected, double atol, double rtol) {
    ReferenceCheck check;
    check.atol = atol;
    check.rtol = rtol;
    if (actual.size() != expected.size()) {
        check.ok = false;
        check.mismatch = std::to_string(actual.size()) + " outputs, the reference has " +
                         std::to_string(expected.size());
        return check;
    }
    for (std::size_t o = 0; o < actual.size(); ++o) {
        const HostTensor& a = actual[o];
        const HostTensor& b = expected[o];
        if (a.type != b.type) {
            check.ok = false;
            check.mismatch = "output " + std::to_string(o) + " is " + a.type.toShortString() +
                             ", the reference's is " + b.type.toShortString();
            return check;
        }
        const std::int64_t n = a.type.elementCount();
        if (a.type.dtype == DType::String) { // interned: equal strings have equal handles
            for (std::int64_t i = 0; i < n && check.ok; ++i) {
                StringHandle x = 0, y = 0;
                std::memcpy(&x, a.data.data() + i * 8, 8);
                std::memcpy(&y, b.data.data() + i * 8, 8);
                if (x != y) {
                    check.ok = false;
                    check.mismatch = "output " + std::to_string(o) + " element " +
                                     std::to_string(i) + ": \"" + std::string(stringOf(x)) +
                                     "\" vs the reference's \"" + std::string(stringOf(y)) + "\"";
                }
            }
            continue;
        }
        for (std::int64_t i = 0; i < n; ++i) {
            const double x = loadAsDouble(a.data.raw(), a.type.dtype, i);
            const double y = loadAsDouble(b.data.raw(), b.type.dtype, i);
            if ((std::isnan(x) && std::isnan(y)) || x == y) // equal infinities match too
                continue;
            const double diff = std::fabs(x - y);
            check.maxAbsDiff = std::max(check.maxAbsDiff, diff);
            check.maxRelDiff = std::max(check.maxRelDiff, diff / std::max(std::fabs(y), 1e-6));
            if (!(diff <= atol + rtol * std::fabs(y)) && check.ok) {
                check.ok = false;
                check.mismatch = "output " + std::to_string(o) + " element " + std::to_string(i) +
                                 ": " + std::to_string(x) + " vs the reference's " +
                                 std::to_string(y);
            }
        }
    }
    return check;
}

void precisionTolerance(DType narrowest, const std::vector<HostTensor>& expected, double* atol,
                        double* rtol) {
    // The spacing of the type's numbers just above 1: 2^-7 with bfloat16's 8 significant bits,
    // 2^-10 with float16's 11.
    const double spacing = narrowest == DType::BFloat16  ? 0x1p-7
                           : narrowest == DType::Float16 ? 0x1p-10
                                                         : 0;
    if (spacing == 0)
        return;
    double scale = 0;
    for (const HostTensor& tensor : expected) {
        if (!isFloatingPoint(tensor.type.dtype))
            continue;
        for (std::int64_t i = 0; i < tensor.type.elementCount(); ++i) {
            const double y = std::fabs(loadAsDouble(tensor.data.raw(), tensor.type.dtype, i));
            if (std::isfinite(y))
                scale = std::max(scale, y);
        }
    }
    constexpr double kRoundings = 4;
    *rtol = std::max(*rtol, kRoundings * spacing);
    *atol = std::max(*atol, kRoundings * spacing * std::max(scale, 1.0));
}

double median(std::vector<double> values) {
    if (values.empty())
        return 0;
    const std::size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid),
                     values.end());
    double m = values[mid];
    if (values.size() % 2 == 0) {
        m = (m +
             *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid))) /
            2;
    }
    return m;
}

} // namespace placer
