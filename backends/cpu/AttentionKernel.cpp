// ONNX Runtime's GroupQueryAttention on the CPU in float32: the shared functor's semantics
// (kernels/LayerFunctors.h GroupQueryAttention, its geometry read by the same plan), with each
// query row rotated once, its scores over the cache as dot products of contiguous rows, and the
// values summed as a weighted product (backends/cpu/VectorMath.h), where the functor recomputes
// the rotation for every key and reads element by element.
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "kernels/IndexingPlan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <variant>
#include <vector>

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

class GroupQueryAttentionKernel final : public Kernel {
public:
    explicit GroupQueryAttentionKernel(const functors::GroupQueryAttention& op) : m_op(op) {}

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const functors::GroupQueryAttention& op = m_op;
        const auto in = [&](int k) { return reinterpret_cast<const float*>(inputs[k]); };
        const auto* seqlens = reinterpret_cast<const std::int32_t*>(inputs[op.seqlens]);
        const std::int32_t total = *reinterpret_cast<const std::int32_t*>(inputs[op.total]);
        auto* out = reinterpret_cast<float*>(outputs[0]);
        auto* presentKey = reinterpret_cast<float*>(outputs[1]);
        auto* presentValue = reinterpret_cast<float*>(outputs[2]);
        const i64 h = op.head, length = op.presentLength;
        const auto bytes = static_cast<std::size_t>(h) * sizeof(float);
        m_past.resize(static_cast<std::size_t>(op.batch));
        for (i64 b = 0; b < op.batch; ++b) {
            i64 past = 0;
            if (op.hasPast && op.seq != total)
                past = std::max<i64>(0, i64{seqlens[b]} + 1 - op.seq);
            m_past[static_cast<std::size_t>(b)] = past;
        }
        // The present cache: the past's rows, the new keys rotated at their positions and the
        // new values, zeros after.
        for (i64 b = 0; b < op.batch; ++b) {
            const i64 past = m_past[static_cast<std::size_t>(b)];
            for (i64 k = 0; k < op.kvHeads; ++k) {
                for (i64 t = 0; t < length; ++t) {
                    float* key = presentKey + ((b * op.kvHeads + k) * length + t) * h;
                    float* value = presentValue + ((b * op.kvHeads + k) * length + t) * h;
                    if (t < past && t < op.pastLength) {
                        const i64 from = ((b * op.kvHeads + k) * op.pastLength + t) * h;
                        std::memcpy(key, in(op.pastKey) + from, bytes);
                        std::memcpy(value, in(op.pastValue) + from, bytes);
                    } else if (t >= past && t < past + op.seq) {
                        const i64 s = t - past;
                        const float* keys = op.packed ? in(0) + op.queryAt(b, s, op.heads + k)
                                                      : in(op.key) + op.kvAt(b, s, k);
                        const float* values =
                            op.packed ? in(0) + op.queryAt(b, s, op.heads + op.kvHeads + k)
                                      : in(op.value) + op.kvAt(b, s, k);
                        rotate(inputs, keys, t, key);
                        std::memcpy(value, values, bytes);
                    } else {
                        std::memset(key, 0, bytes);
                        std::memset(value, 0, bytes);
                    }
                }
            }
        }
        // Each query row: rotated and scaled once, its scores against the keys it sees, their
        // softmax, and the values weighted by it.
        m_query.resize(static_cast<std::size_t>(h));
        m_scores.resize(static_cast<std::size_t>(std::max<i64>(length, 1)));
        const i64 group = op.heads / op.kvHeads;
        for (i64 b = 0; b < op.batch; ++b) {
            const i64 past = m_past[static_cast<std::size_t>(b)];
            for (i64 n = 0; n < op.heads; ++n) {
                const i64 k = n / group;
                const float* keys = presentKey + (b * op.kvHeads + k) * length * h;
                const float* values = presentValue + (b * op.kvHeads + k) * length * h;
                for (i64 s = 0; s < op.seq; ++s) {
                    float* row = out + ((b * op.seq + s) * op.heads + n) * h;
                    const i64 causal = past + s + 1;
                    const i64 first = op.window > 0 && causal > op.window ? causal - op.window : 0;
                    const i64 last = std::min(causal, length);
                    std::fill(row, row + h, 0.0f);
                    if (last <= first)
                        continue;
                    rotate(inputs, in(0) + op.queryAt(b, s, n), past + s, m_query.data());
                    const auto scale = static_cast<float>(op.scale);
                    for (float& v : m_query)
                        v *= scale;
                    const i64 count = last - first;
                    float* scores = m_scores.data();
                    vec::rowTimesTransposed(m_query.data(), h, keys + first * h, h, count, scores);
                    if (op.softcap > 0) {
                        const auto cap = static_cast<float>(op.softcap);
                        for (i64 t = 0; t < count; ++t)
                            scores[t] = cap * std::tanh(scores[t] / cap);
                    }
                    float top = *std::max_element(scores, scores + count);
                    if (op.smooth) // an extra logit of 0 in the denominator
                        top = std::max(top, 0.0f);
                    float sum = op.smooth ? std::exp(-top) : 0.0f;
                    for (i64 t = 0; t < count; ++t) {
                        scores[t] = std::exp(scores[t] - top);
                        sum += scores[t];
                    }
                    const float inverse = 1.0f / sum;
                    for (i64 t = 0; t < count; ++t)
                        scores[t] *= inverse;
                    vec::accumulateProduct(scores, count, values + first * h, h, h, row);
                }
            }
        }
    }

    std::string implementation() const override { return "plain:group query attention"; }

private:
    /// `from` (a head of `head` floats) rotated at position `pos` into `to`, or copied.
    void rotate(const std::byte* const* inputs, const float* from, i64 pos, float* to) const {
        const functors::GroupQueryAttention& op = m_op;
        const functors::Rotation& r = op.rotation;
        if (!op.rotary || pos < 0 || pos >= r.positions) {
            std::memcpy(to, from, static_cast<std::size_t>(op.head) * sizeof(float));
            return;
        }
        const i64 half = r.rotaryDim / 2;
        const float* cos = reinterpret_cast<const float*>(inputs[r.cos]) + pos * half;
        const float* sin = reinterpret_cast<const float*>(inputs[r.sin]) + pos * half;
        for (i64 i = 0; i < half; ++i) {
            const i64 a = r.interleaved ? 2 * i : i, b = r.interleaved ? 2 * i + 1 : i + half;
            to[a] = from[a] * cos[i] - from[b] * sin[i];
            to[b] = from[b] * cos[i] + from[a] * sin[i];
        }
        std::copy(from + r.rotaryDim, from + op.head, to + r.rotaryDim);
    }

    functors::GroupQueryAttention m_op;
    std::vector<i64> m_past;
    std::vector<float> m_query, m_scores;
};

} // namespace

std::unique_ptr<Kernel> makeGroupQueryAttention(const KernelSpec& spec) {
    for (const TensorType& type : spec.inputs) {
        if (type.dtype != DType::Float32 && type.dtype != DType::Int32)
            return nullptr;
    }
    auto plan = planIndexing(spec);
    if (!plan || plan.value().empty())
        return nullptr;
    const auto* op = std::get_if<functors::GroupQueryAttention>(&plan.value()[0].op);
    if (!op || op->elem != functors::Elem::F32 ||
        (op->rotary && op->rotation.trig != functors::Elem::F32))
        return nullptr;
    return std::make_unique<GroupQueryAttentionKernel>(*op);
}

} // namespace placer::cpu
