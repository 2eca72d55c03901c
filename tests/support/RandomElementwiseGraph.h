// A random DAG of element-wise ops over [257] float vectors, inputs and about half the nodes pinned
// to random devices, for the tests that run random multi-device plans (tst_runtime, tst_ranks):
// values cross devices often, and far (long edges live long).
#pragma once

#include "ir/Graph.h"
#include "ir/OpRegistry.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace placer::test {

inline Graph randomElementwiseGraph(std::mt19937& rng, int devices, int nodes) {
    Graph graph;
    const TensorType type{{257}, DType::Float32};
    const auto& registry = OpRegistry::global();
    std::vector<ValueRef> values;
    auto pinned = [&] {
        return Pin{PinKind::Plain, DeviceId(static_cast<std::uint32_t>(rng() % devices)), "test"};
    };
    for (int i = 0; i < 3; ++i) {
        Node p;
        p.name = "%in" + std::to_string(i);
        p.op = &registry.parameter();
        p.outputs = {type};
        p.pin = pinned();
        values.push_back({graph.addNode(std::move(p)), 0});
    }
    const char* binary[] = {"add", "multiply", "subtract", "maximum"};
    const char* unary[] = {"tanh", "negative", "sigmoid"};
    for (int i = 0; i < nodes; ++i) {
        Node n;
        n.name = "%" + std::to_string(i);
        // Inputs mostly recent, sometimes far back (long edges cross devices and live long).
        auto pickValue = [&] {
            const std::size_t span =
                std::min<std::size_t>(values.size(), rng() % 4 == 0 ? values.size() : 6);
            return values[values.size() - 1 - rng() % span];
        };
        if (rng() % 3 == 0) {
            n.op = registry.find(unary[rng() % 3]);
            n.inputs = {pickValue()};
        } else {
            n.op = registry.find(binary[rng() % 4]);
            n.inputs = {pickValue(), pickValue()};
        }
        n.outputs = {type};
        if (rng() % 2 == 0)
            n.pin = pinned();
        values.push_back({graph.addNode(std::move(n)), 0});
    }
    for (int i = 0; i < 3; ++i)
        graph.addOutput(
            GraphOutput{values[values.size() - 1 - static_cast<std::size_t>(i) * 5], {}, {}});
    return graph;
}

} // namespace placer::test
