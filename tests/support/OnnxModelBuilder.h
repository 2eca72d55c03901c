// Small ONNX models built op by op in tests (deterministic weights), loaded as graphs.
#pragma once

#include "OnnxModels.h"
#include "OutputCompare.h"

#include "io/ModelLoader.h"

#include <QtGlobal>

#include <string>
#include <vector>

namespace placer::test {

/// A model reading x (float32, `input`), built node by node with small deterministic weights.
struct ModelBuilder {
    onnx::ModelProto model;
    int seed = 1;

    ModelBuilder(const std::string& name, const std::vector<std::int64_t>& input)
        : model(emptyModel(name)) {
        addValue(model.mutable_graph()->mutable_input(), "x", input);
    }

    void weight(const std::string& name, const std::vector<std::int64_t>& dims) {
        onnx::TensorProto* t = addInitializer(model, name, dims);
        std::int64_t count = 1;
        for (std::int64_t d : dims)
            count *= d;
        for (std::int64_t i = 0; i < count; ++i)
            t->add_float_data(static_cast<float>(((i * 37 + seed * 11) % 17) - 8) / 32.0f);
        ++seed;
    }

    /// An int64 initializer (a shape, axes).
    void ints(const std::string& name, const std::vector<std::int64_t>& values) {
        onnx::TensorProto* t =
            addInitializer(model, name, {static_cast<std::int64_t>(values.size())});
        t->set_data_type(onnx::TensorProto_DataType_INT64);
        for (std::int64_t v : values)
            t->add_int64_data(v);
    }

    onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                          const std::string& output) {
        return addOp(model.mutable_graph(), op, inputs, output);
    }

    /// A 3x3 convolution (padding 1) from `in` channels to `out`, with a bias.
    void conv(const std::string& input, const std::string& output, std::int64_t in,
              std::int64_t out) {
        weight(output + "_w", {out, in, 3, 3});
        weight(output + "_b", {out});
        onnx::NodeProto* n = node("Conv", {input, output + "_w", output + "_b"}, output);
        setInts(n, "kernel_shape", {3, 3});
        setInts(n, "pads", {1, 1, 1, 1});
    }

    /// The graph with `output` (of shape `dims`) as its result, read for `devices`.
    Graph load(const std::string& output, const std::vector<std::int64_t>& dims,
               const DeviceSet& devices) {
        addValue(model.mutable_graph()->mutable_output(), output, dims);
        auto loaded = loadModelText(bytesOf(model), model.graph().name() + ".onnx",
                                    GraphFormat::Onnx, devices);
        if (!loaded)
            qFatal("%s", loaded.error().toString().c_str());
        return std::move(loaded.value().graph);
    }
};

} // namespace placer::test
