// What the runtime benchmarks share: a planned, loaded graph with random inputs, runs that exit
// on failure (a benchmark has nothing to recover), and building graphs node by node.
#pragma once

#include "device/DeviceMapping.h"
#include "kernels/RandomTensor.h"
#include "passes/PassManager.h"
#include "plan/Planner.h"
#include "vm/Bytecode.h"
#include "vm/Executor.h"
#include "vm/ReferenceRun.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace placer::bench {

struct Loaded {
    Graph graph;
    DeviceSet devices;
    Plan plan;
    DeviceRegistry registry;
    std::unique_ptr<Executor> executor;
    std::vector<HostTensor> inputs;
    /// Planned memory over every device: of the user's graph as planned, and of what runs (the
    /// optimised graph, when load() optimises).
    std::int64_t userPlannedBytes = 0, plannedBytes = 0;
};

inline std::int64_t plannedBytes(const Plan& plan) {
    std::int64_t bytes = 0;
    for (const DeviceMemory& device : plan.memory.devices)
        bytes += device.peakBytes;
    return bytes;
}

/// Plans, lowers and loads onto `mapping` (by default, what mapDevices picks for `maps`), with
/// seeded random inputs. With `optimize`, the graph is optimised for its devices after placement
/// first (passes/PassManager.h), as `placer run` does; `l.graph` and `l.plan` are then the
/// optimised ones.
inline void load(Loaded& l, const std::vector<DeviceMapRequest>& maps = {},
                 std::vector<Device*> mapping = {}, const PlanOptions& options = {},
                 const std::optional<OptimizeOptions>& optimize = std::nullopt) {
    l.plan = planDevices(l.graph, l.devices, options);
    l.userPlannedBytes = plannedBytes(l.plan);
    if (mapping.empty()) {
        std::vector<std::string> warnings;
        auto mapped = mapDevices(l.devices, maps, l.registry, &warnings);
        if (!mapped) {
            std::fprintf(stderr, "mapping: %s\n", mapped.error().message.c_str());
            std::exit(1);
        }
        mapping = mapped.take();
    }
    if (optimize) {
        auto optimized =
            optimizeForDevices(l.graph, l.devices, l.plan, options, mapping, *optimize);
        if (!optimized) {
            std::fprintf(stderr, "optimising: %s\n", optimized.error().message.c_str());
            std::exit(1);
        }
        l.graph = std::move(optimized.value().graph);
        l.plan = std::move(optimized.value().plan);
    } else if (l.plan.sharded) {
        OptimizedGraph sharded = unoptimized(l.graph, l.plan); // what a split plan runs
        l.graph = std::move(sharded.graph);
        l.plan = std::move(sharded.plan);
    }
    l.plannedBytes = plannedBytes(l.plan);
    auto program = lowerToBytecode(l.graph, l.devices, l.plan);
    if (!program) {
        std::fprintf(stderr, "lowering: %s\n", program.error().message.c_str());
        std::exit(1);
    }
    auto executor =
        Executor::load(l.graph, l.devices, program.take(), mapping, l.graph.onnxOpset());
    if (!executor) {
        std::fprintf(stderr, "load: %s\n", executor.error().message.c_str());
        std::exit(1);
    }
    l.executor = executor.take();
    for (std::size_t i = 0; i < l.executor->program().inputs.size(); ++i)
        l.inputs.push_back(
            randomTensor(l.graph.node(l.executor->program().inputs[i]).outputs[0], i + 1));
}

inline RunResult run(Loaded& l, int warmup, int iterations) {
    auto result = l.executor->run(l.inputs, RunOptions{warmup, iterations});
    if (!result) {
        std::fprintf(stderr, "run: %s\n", result.error().message.c_str());
        std::exit(1);
    }
    return result.take();
}

/// A float32 constant with small random values.
inline NodeId constant(Graph& graph, const std::string& name, TensorType type, std::mt19937& rng,
                       float scale = 0.05f) {
    Node node;
    node.name = name;
    node.op = &OpRegistry::global().constant();
    auto data = std::make_shared<TensorData>(static_cast<std::size_t>(type.bytes()), '\0');
    std::uniform_real_distribution<float> dist(-scale, scale);
    for (std::size_t i = 0; i + 4 <= data->size(); i += 4) {
        const float v = dist(rng);
        std::memcpy(data->data() + i, &v, 4);
    }
    node.data = data;
    node.outputs = {std::move(type)};
    return graph.addNode(std::move(node));
}

/// A graph input, pinned to `device` when it is valid.
inline NodeId parameter(Graph& graph, const std::string& name, TensorType type,
                        DeviceId device = {}) {
    Node node;
    node.name = name;
    node.op = &OpRegistry::global().parameter();
    node.outputs = {std::move(type)};
    if (device.valid())
        node.pin = Pin{PinKind::Plain, device, "bench"};
    return graph.addNode(std::move(node));
}

/// A node of op `opName` with one output, pinned to `device` when it is valid.
inline NodeId op(Graph& graph, const std::string& name, const char* opName,
                 std::vector<ValueRef> inputs, TensorType type, DeviceId device = {}) {
    Node node;
    node.name = name;
    node.op = OpRegistry::global().find(opName);
    node.inputs = std::move(inputs);
    node.outputs = {std::move(type)};
    if (device.valid())
        node.pin = Pin{PinKind::Plain, device, "bench"};
    return graph.addNode(std::move(node));
}

} // namespace placer::bench
