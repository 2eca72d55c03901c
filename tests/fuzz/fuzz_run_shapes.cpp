// libFuzzer target: shapes and control flow set by data, run. The input's first byte picks a
// model of tests/models; the rest gives its data:
// - shape_inputs.onnx: the values of its shape-setting inputs (a Reshape's shape, an Expand's, a
//   Tile's repeats, a Range's bounds, a ConstantOfShape's shape, a TopK's k), hostile ones
//   included (negative, zero, huge, contradicting);
// - nonzero_select.onnx: the elements of x, whose count over a threshold sizes everything after
//   its NonZero;
// - dyn_encoder.onnx: the batch and sequence of x (its plan instantiated at those sizes, 0 and
//   sizes that do not fit the device included);
// - if_on_data.onnx: x, whose sum picks the If's branch (and the branch its output's length);
// - loop_grows.onnx: the Loop's trip count (negative and zero included) and the x it grows;
// - nms_topk.onnx: boxes and scores for its NonMaxSuppression, whose picks size a TopK.
// Floats include NaN, both infinities and -0. The session plans the model for that data and runs
// it on a virtual device with mem=64MiB: the result is an outcome or a clean error, never a
// crash, a sanitizer report or an allocation the device cannot hold.
#include "FuzzBytes.h"

#include "session/Session.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

placer::HostTensor int64s(const std::vector<std::int64_t>& shape, placer::fuzz::FuzzBytes& bytes) {
    placer::HostTensor tensor = placer::HostTensor::zeros({shape, placer::DType::Int64});
    auto* values = reinterpret_cast<std::int64_t*>(tensor.data.data());
    for (std::size_t i = 0; i < tensor.data.size() / sizeof(std::int64_t); ++i)
        values[i] = bytes.smallOrHuge();
    return tensor;
}

/// A float from a byte: k/16 for the signed byte k, or one of the values that break
/// comparisons, sums and sorts: NaN, an infinity, -0.
float hostileFloat(std::uint8_t byte) {
    switch (byte) {
    case 0x7f:
        return std::numeric_limits<float>::quiet_NaN();
    case 0x7e:
        return std::numeric_limits<float>::infinity();
    case 0x80:
        return -std::numeric_limits<float>::infinity();
    case 0x81:
        return -0.0f;
    default:
        return static_cast<float>(static_cast<std::int8_t>(byte)) / 16.0f;
    }
}

placer::HostTensor floats(const std::vector<std::int64_t>& shape, placer::fuzz::FuzzBytes& bytes) {
    placer::HostTensor tensor = placer::HostTensor::zeros({shape, placer::DType::Float32});
    auto* values = reinterpret_cast<float*>(tensor.data.data());
    for (std::size_t i = 0; i < tensor.data.size() / sizeof(float); ++i)
        values[i] = hostileFloat(bytes.next());
    return tensor;
}

struct Model {
    std::string name;
    std::shared_ptr<const placer::PlannedModel> planned;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace placer;
    static Session* session = [] {
        const std::string workspace =
            (std::filesystem::temp_directory_path() / "fuzz_run_shapes.db").string();
        return new Session(SessionOptions{workspace});
    }();
    // Planned once without data, as a user opens them; every run plans them again for its data.
    static Model models[] = {{"shape_inputs", nullptr}, {"nonzero_select", nullptr},
                             {"dyn_encoder", nullptr},  {"if_on_data", nullptr},
                             {"loop_grows", nullptr},   {"nms_topk", nullptr}};
    fuzz::FuzzBytes bytes{data, size};
    Model& model = models[bytes.next() % std::size(models)];
    if (!model.planned) {
        PlanRequest request;
        request.devices = "a:vcpu:mem=64MiB";
        auto opened = session->open(
            ModelSource{std::string(PLACER_SOURCE_DIR) + "/tests/models/" + model.name + ".onnx"},
            request);
        if (!opened)
            __builtin_trap(); // the committed model must open
        model.planned = std::make_shared<const PlannedModel>(opened.take());
    }
    RunRequest run;
    run.warmup = 0;
    run.iterations = 1;
    if (model.name == "shape_inputs") {
        for (const auto& [name, shape] :
             std::vector<std::pair<std::string, std::vector<std::int64_t>>>{{"shape", {2}},
                                                                            {"expand_to", {3}},
                                                                            {"repeats", {2}},
                                                                            {"start", {}},
                                                                            {"limit", {}},
                                                                            {"delta", {}},
                                                                            {"fill_shape", {2}},
                                                                            {"k", {1}}})
            run.inputs.emplace_back(name, int64s(shape, bytes));
    } else if (model.name == "dyn_encoder") {
        // Batch and sequence up to 255 x 1023 (the device holds 64 MiB: the scores of the
        // largest do not fit, and the run must say so).
        const std::int64_t batch = bytes.next(), seq = (bytes.next() << 2) | (bytes.next() & 3);
        HostTensor x = HostTensor::zeros({{batch, seq, 16}, DType::Float32});
        // Repeats of 0/8 .. 6/8 (the count taken once: up to 4 million elements per input).
        auto* values = reinterpret_cast<float*>(x.data.data());
        const std::size_t count = x.data.size() / sizeof(float);
        for (std::size_t i = 0; i < count && i < 7; ++i)
            values[i] = static_cast<float>(i) / 8.0f;
        for (std::size_t done = 7; done < count; done *= 2)
            std::memcpy(values + done, values, std::min(done, count - done) * sizeof(float));
        run.inputs.emplace_back("x", std::move(x));
    } else if (model.name == "if_on_data") {
        run.inputs.emplace_back("x", floats({8}, bytes));
    } else if (model.name == "loop_grows") {
        // A trip count up to 127 (each trip grows the carried value), zero and negative ones.
        HostTensor n = HostTensor::zeros({{}, DType::Int64});
        *reinterpret_cast<std::int64_t*>(n.data.data()) = static_cast<std::int8_t>(bytes.next());
        run.inputs.emplace_back("n", std::move(n));
        run.inputs.emplace_back("x", floats({2}, bytes));
    } else if (model.name == "nms_topk") {
        run.inputs.emplace_back("boxes", floats({1, 24, 4}, bytes));
        run.inputs.emplace_back("scores", floats({1, 1, 24}, bytes));
    } else {
        HostTensor x = HostTensor::zeros({{6, 8}, DType::Float32});
        auto* values = reinterpret_cast<float*>(x.data.data());
        for (int i = 0; i < 48; ++i)
            values[i] = static_cast<float>(static_cast<std::int8_t>(bytes.next())) / 64.0f;
        run.inputs.emplace_back("x", std::move(x));
    }
    (void)session->run(model.planned, run);
    return 0;
}
