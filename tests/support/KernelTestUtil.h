// Running one CPU kernel on host tensors: what the kernel suites compare against.
#pragma once

#include "backends/cpu/CpuKernels.h"
#include "ir/Graph.h"

#include <QtTest>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace placer::test {

using Dims = std::vector<std::int64_t>;

struct Tensor {
    TensorType type;
    std::vector<std::byte> bytes;

    float f(std::int64_t i) const {
        float v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        return v;
    }
    template <typename T> T at(std::int64_t i) const {
        T v;
        std::memcpy(&v, bytes.data() + sizeof(T) * static_cast<std::size_t>(i), sizeof(T));
        return v;
    }
};

template <typename T> Tensor make(Dims shape, DType dtype, const std::vector<T>& values) {
    Tensor t{TensorType{std::move(shape), dtype}, {}};
    t.bytes.resize(values.size() * sizeof(T));
    if (!t.bytes.empty()) // an empty tensor's vectors may hold no buffer at all
        std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
}

inline Tensor randomFloats(Dims shape, std::mt19937& rng) {
    TensorType type{std::move(shape), DType::Float32};
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> values(static_cast<std::size_t>(type.elementCount()));
    for (float& v : values)
        v = dist(rng);
    return make(type.shape, DType::Float32, values);
}

inline std::vector<float> floats(const Tensor& t) {
    std::vector<float> out(static_cast<std::size_t>(t.type.elementCount()));
    if (!out.empty())
        std::memcpy(out.data(), t.bytes.data(), out.size() * 4);
    return out;
}

/// Prepares and runs the kernel of `op` on `inputs`; outputs have the given types.
inline std::vector<Tensor> runOp(const std::string& op, Attrs attrs,
                                 const std::vector<Tensor>& inputs,
                                 const std::vector<TensorType>& outputs,
                                 std::string* error = nullptr, std::vector<bool> constant = {},
                                 int opset = 13, std::string* implementation = nullptr) {
    static CpuKernelContext context;
    Node node;
    node.name = "n";
    node.op = OpRegistry::global().find(op);
    if (!node.op)
        qFatal("unknown op %s", op.c_str());
    node.attrs = std::move(attrs);
    node.outputs = outputs;
    KernelSpec spec;
    spec.node = &node;
    spec.outputs = outputs;
    spec.onnxOpset = opset;
    std::vector<std::shared_ptr<TensorData>> data;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        spec.inputs.push_back(inputs[i].type);
        const bool isConstant = i < constant.size() && constant[i];
        spec.constantInputs.push_back(isConstant);
        data.push_back(std::make_shared<TensorData>(
            reinterpret_cast<const char*>(inputs[i].bytes.data()), inputs[i].bytes.size()));
        spec.constantData.push_back(isConstant ? data.back().get() : nullptr);
    }
    auto kernel = makeCpuKernel(spec, context);
    if (!kernel) {
        if (error)
            *error = kernel.error().message;
        else
            qWarning("%s", kernel.error().message.c_str());
        return {};
    }
    if (implementation)
        *implementation = kernel.value()->implementation();
    std::vector<Tensor> results;
    std::vector<const std::byte*> in;
    std::vector<std::byte*> out;
    for (const Tensor& t : inputs)
        in.push_back(t.bytes.data());
    for (const TensorType& type : outputs)
        results.push_back(
            Tensor{type, std::vector<std::byte>(static_cast<std::size_t>(type.bytes()))});
    for (Tensor& t : results)
        out.push_back(t.bytes.data());
    kernel.value()->run(in.data(), out.data());
    // An output whose extent the data decides holds what the kernel filled (a dense prefix).
    if (const auto* shapes = kernel.value()->ranShapes()) {
        for (std::size_t o = 0; o < results.size() && o < shapes->size(); ++o) {
            results[o].type.shape = (*shapes)[o];
            results[o].bytes.resize(static_cast<std::size_t>(results[o].type.bytes()));
        }
    }
    return results;
}

} // namespace placer::test
