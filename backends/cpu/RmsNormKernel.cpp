// RMS normalisation on the CPU in float32 (ONNX Runtime's SimplifiedLayerNormalization and
// SkipSimplifiedLayerNormalization, as language models built by its model builder hold one
// before every attention and every MLP): the shared functor's semantics (kernels/IndexingFunctors.h
// RmsNorm, its geometry read by the same plan), with each row summed in vector lanes of floats
// and written in one pass, where the functor reads and writes element by element in double.
#include "backends/cpu/KernelUtil.h"
#include "kernels/IndexingPlan.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <variant>

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

constexpr int kLanes = 16;
constexpr i64 kParallelElements = 1 << 16; ///< elements worth more than one thread

class RmsNormKernel final : public Kernel {
public:
    RmsNormKernel(const functors::RmsNorm& op, i64 rows) : m_op(op), m_rows(rows) {}

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const functors::RmsNorm& op = m_op;
        const auto* x = reinterpret_cast<const float*>(inputs[0]);
        const float* skip =
            op.skip >= 0 ? reinterpret_cast<const float*>(inputs[op.skip]) : nullptr;
        const float* bias =
            op.bias >= 0 ? reinterpret_cast<const float*>(inputs[op.bias]) : nullptr;
        const auto* scale = reinterpret_cast<const float*>(inputs[op.scale]);
        auto* y = reinterpret_cast<float*>(outputs[0]);
        float* sum = op.sumOutput >= 0 ? reinterpret_cast<float*>(outputs[op.sumOutput]) : nullptr;
        float* inverse =
            op.invOutput >= 0 ? reinterpret_cast<float*>(outputs[op.invOutput]) : nullptr;
        float* mean =
            op.meanOutput >= 0 ? reinterpret_cast<float*>(outputs[op.meanOutput]) : nullptr;
        const i64 count = op.count;
        const int threads = std::max(1, omp_get_max_threads());
#pragma omp parallel num_threads(threads) if (threads > 1 && m_rows * count >= kParallelElements)
        {
            // The row's values (input + skip + bias) where they are not the input itself.
            std::vector<float> summed(skip || bias ? static_cast<std::size_t>(count) : 0);
#pragma omp for
            for (i64 row = 0; row < m_rows; ++row) {
                const i64 base = row * count;
                const float* in = x + base;
                if (!summed.empty()) {
                    // The skip's rows repeat where it broadcasts (its count divides the input's).
                    const float* s = skip ? skip + base % op.skipCount : nullptr;
                    float* v = sum ? sum + base : summed.data();
                    for (i64 j = 0; j < count; ++j)
                        v[j] = in[j] + (s ? s[j] : 0.0f) + (bias ? bias[j] : 0.0f);
                    in = v;
                }
                float lanes[kLanes] = {};
                const i64 whole = count - count % kLanes;
                for (i64 j = 0; j < whole; j += kLanes) {
                    for (int l = 0; l < kLanes; ++l)
                        lanes[l] += in[j + l] * in[j + l];
                }
                double squares = 0;
                for (int l = 0; l < kLanes; ++l)
                    squares += lanes[l];
                for (i64 j = whole; j < count; ++j)
                    squares += static_cast<double>(in[j]) * in[j];
                const auto inv = static_cast<float>(
                    1.0 / std::sqrt(squares / static_cast<double>(count) + op.epsilon));
                float* out = y + base;
                for (i64 j = 0; j < count; ++j)
                    out[j] = in[j] * inv * scale[j];
                if (inverse)
                    inverse[row] = inv;
                if (mean)
                    mean[row] = 0.0f;
            }
        }
    }

    std::string implementation() const override {
        return "vector:rms_norm";
    }

private:
    functors::RmsNorm m_op;
    i64 m_rows;
};

} // namespace

std::unique_ptr<Kernel> makeRmsNorm(const KernelSpec& spec) {
    for (const TensorType& type : spec.inputs) {
        if (type.dtype != DType::Float32)
            return nullptr;
    }
    if (spec.outputs.empty() || spec.outputs[0].dtype != DType::Float32)
        return nullptr;
    auto plan = planIndexing(spec);
    if (!plan || plan.value().size() != 1)
        return nullptr;
    const auto* op = std::get_if<functors::RmsNorm>(&plan.value()[0].op);
    if (!op || op->elem != functors::Elem::F32 || op->scaleElem != functors::Elem::F32 ||
        (op->sumOutput >= 0 &&
         spec.outputs[static_cast<std::size_t>(op->sumOutput)].dtype != DType::Float32))
        return nullptr;
    return std::make_unique<RmsNormKernel>(*op, plan.value()[0].count);
}

} // namespace placer::cpu
