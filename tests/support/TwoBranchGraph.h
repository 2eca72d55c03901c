// The scheduling benchmark's graph, for the tests and bench_runtime alike: an input, two
// branches of `depth` 3x3 convolutions with ReLUs, and an add joining them. Branch A's last
// convolution is pinned to device 0, branch B's and the add to device 1 (when `split`);
// everything else follows its consumers. The nodes are written in one of three orders.
#pragma once

#include "ir/Graph.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>

namespace placer::test {

enum class BranchOrder { AThenB, BThenA, Interleaved };

inline const char* branchOrderName(BranchOrder order) {
    switch (order) {
    case BranchOrder::AThenB:
        return "A then B";
    case BranchOrder::BThenA:
        return "B then A";
    case BranchOrder::Interleaved:
        return "interleaved";
    }
    return "";
}

inline Graph twoBranchGraph(std::int64_t channels, std::int64_t size, int depth, BranchOrder order,
                            bool split) {
    Graph graph;
    std::mt19937 rng(1);
    const TensorType act{{1, channels, size, size}, DType::Float32};
    Node input;
    input.name = "%x";
    input.op = &OpRegistry::global().parameter();
    input.outputs = {act};
    const NodeId x = graph.addNode(std::move(input));
    NodeId prev[2] = {x, x};
    auto step = [&](int b, int i) {
        const std::string name = std::string(b == 0 ? "%a" : "%b") + std::to_string(i);
        Node weights;
        weights.name = name + "_w";
        weights.op = &OpRegistry::global().constant();
        const TensorType wType{{channels, channels, 3, 3}, DType::Float32};
        auto data = std::make_shared<TensorData>(static_cast<std::size_t>(wType.bytes()), '\0');
        std::uniform_real_distribution<float> dist(-0.05f, 0.05f);
        for (std::size_t k = 0; k + 4 <= data->size(); k += 4) {
            const float v = dist(rng);
            std::memcpy(data->data() + k, &v, 4);
        }
        weights.data = data;
        weights.outputs = {wType};
        const NodeId w = graph.addNode(std::move(weights));
        Node conv;
        conv.name = name;
        conv.op = OpRegistry::global().find("nn.conv2d");
        conv.attrs.set("padding", std::vector<std::int64_t>{1, 1});
        conv.inputs = {{prev[b], 0}, {w, 0}};
        conv.outputs = {act};
        if (split && i == depth - 1)
            conv.pin = Pin{PinKind::Plain, DeviceId(static_cast<std::uint32_t>(b)), "test"};
        const NodeId c = graph.addNode(std::move(conv));
        Node relu;
        relu.name = name + "_relu";
        relu.op = OpRegistry::global().find("nn.relu");
        relu.inputs = {{c, 0}};
        relu.outputs = {act};
        prev[b] = graph.addNode(std::move(relu));
    };
    if (order == BranchOrder::Interleaved) {
        for (int i = 0; i < depth; ++i) {
            step(0, i);
            step(1, i);
        }
    } else {
        const int first = order == BranchOrder::AThenB ? 0 : 1;
        for (int i = 0; i < depth; ++i)
            step(first, i);
        for (int i = 0; i < depth; ++i)
            step(1 - first, i);
    }
    Node add;
    add.name = "%sum";
    add.op = OpRegistry::global().find("add");
    add.inputs = {{prev[0], 0}, {prev[1], 0}};
    add.outputs = {act};
    if (split)
        add.pin = Pin{PinKind::Plain, DeviceId(1), "test"};
    const NodeId sum = graph.addNode(std::move(add));
    graph.addOutput(GraphOutput{{sum, 0}, {}, {}});
    return graph;
}

} // namespace placer::test
