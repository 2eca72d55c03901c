// RNN, GRU and LSTM in float32 on the CPU: the input projection of every step at once as one
// oneDNN matrix product, then per step the recurrent product and the gates as vectorised loops.
// The semantics (gate order, activations, clip, peepholes, sequence lengths, layouts) are the
// shared functor's (kernels/LayerFunctors.h Recurrent), which runs every other element type.
#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "kernels/IndexingPlan.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace placer::cpu {

namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using i64 = std::int64_t;

void clipInPlace(float* v, i64 n, float clip) {
    for (i64 j = 0; j < n; ++j)
        v[j] = std::min(std::max(v[j], -clip), clip);
}

/// Applies a recurrent activation to n values: the vector loops for Sigmoid and Tanh, the
/// shared functor's definition for the rest.
void activate(const functors::Activation& a, float* v, i64 n) {
    if (a.fn == 0)
        vec::sigmoid(v, v, n);
    else if (a.fn == 1)
        vec::tanh(v, v, n);
    else
        for (i64 j = 0; j < n; ++j)
            v[j] = static_cast<float>(a(v[j]));
}

class RecurrentKernel final : public Kernel {
public:
    RecurrentKernel(CpuKernelContext& ctx, const functors::Recurrent& op, bool constantR)
        : m_ctx(ctx), m_op(op), m_constantR(constantR), m_gates(op.kind == 2   ? 4
                                                                : op.kind == 1 ? 3
                                                                               : 1),
          m_width(m_gates * op.hidden), m_rows(op.steps * op.batch) {
        // X [rows, input] (rows in X's order) times W[d]^T: W[d] is [width, input] row-major.
        const memory::desc src({m_rows, op.inputSize}, dt::f32, {op.inputSize, 1});
        const memory::desc weights({op.inputSize, m_width}, dt::f32, {1, op.inputSize});
        const memory::desc dst({m_rows, m_width}, dt::f32, {m_width, 1});
        dnnl::primitive_attr attr;
        attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), attr, ctx.engine);
        m_projection = dnnl::matmul(pd);
        m_implementation = std::string("onednn:matmul:") + pd.impl_info_str() + "+vector:recurrent";
        m_src = memory(src, ctx.engine, nullptr);
        m_weights = memory(weights, ctx.engine, nullptr);
        m_dst = memory(dst, ctx.engine, nullptr);
        m_args = {{DNNL_ARG_SRC, m_src}, {DNNL_ARG_WEIGHTS, m_weights}, {DNNL_ARG_DST, m_dst}};
        if (pd.scratchpad_desc().get_size() > 0)
            m_args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), ctx.engine);
        m_projected.resize(static_cast<std::size_t>(m_rows * m_width));
        m_recurrentT.resize(static_cast<std::size_t>(op.directions * op.hidden * m_width));
        m_transposedFrom.assign(static_cast<std::size_t>(op.directions), nullptr);
        m_bias.resize(static_cast<std::size_t>(m_width));
        m_recurrentBias.resize(static_cast<std::size_t>(op.hidden));
        m_h.resize(static_cast<std::size_t>(op.batch * op.hidden));
        m_c.resize(m_h.size());
        m_a.resize(static_cast<std::size_t>(m_width));
        m_t.resize(static_cast<std::size_t>(m_width));
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        for (int d = 0; d < m_op.directions; ++d)
            runDirection(d, inputs, outputs);
    }

    std::string implementation() const override { return m_implementation; }

private:
    void runDirection(int d, const std::byte* const* inputs, std::byte* const* outputs) {
        const functors::Recurrent& op = m_op;
        const i64 hidden = op.hidden, width = m_width, batch = op.batch;
        const auto* x = reinterpret_cast<const float*>(inputs[0]);
        const auto* w = reinterpret_cast<const float*>(inputs[1]) + d * width * op.inputSize;
        const auto* r = reinterpret_cast<const float*>(inputs[2]) + d * width * hidden;
        const float* b = op.bias >= 0 ? reinterpret_cast<const float*>(inputs[op.bias]) +
                                            static_cast<i64>(d) * 2 * width
                                      : nullptr;
        const functors::Activation* act = op.act + d * (op.kind == 2 ? 3 : (op.kind == 1 ? 2 : 1));
        const bool backwards = op.directions == 2 ? d == 1 : op.reverse;
        const bool lbr = op.kind == 1 && op.linearBeforeReset;

        // Every step's input projection at once.
        m_src.set_data_handle(const_cast<float*>(x));
        m_weights.set_data_handle(const_cast<float*>(w));
        m_dst.set_data_handle(m_projected.data());
        m_projection.execute(m_ctx.stream, m_args);
        m_ctx.stream.wait();

        // R[d]^T, [hidden, width], so a step's product runs along contiguous rows; made once
        // when R is a constant.
        float* rt = m_recurrentT.data() + d * hidden * width;
        if (!m_constantR || m_transposedFrom[static_cast<std::size_t>(d)] != r) {
            for (i64 row = 0; row < width; ++row)
                for (i64 k = 0; k < hidden; ++k)
                    rt[k * width + row] = r[row * hidden + k];
            m_transposedFrom[static_cast<std::size_t>(d)] = r;
        }
        // Wb + Rb, except the candidate's Rb under linear_before_reset: it goes inside r * (...).
        for (i64 j = 0; j < width; ++j) {
            const bool inside = lbr && j >= 2 * hidden;
            m_bias[static_cast<std::size_t>(j)] = b ? b[j] + (inside ? 0.0f : b[width + j]) : 0.0f;
            if (inside)
                m_recurrentBias[static_cast<std::size_t>(j - 2 * hidden)] = b ? b[width + j] : 0.0f;
        }

        std::vector<i64> lengths(static_cast<std::size_t>(batch), op.steps);
        i64 longest = 0;
        for (i64 e = 0; e < batch; ++e) {
            i64& length = lengths[static_cast<std::size_t>(e)];
            if (op.lengths >= 0)
                length = std::clamp<i64>(functors::loadIndex(inputs[op.lengths], op.lengthElem, e),
                                         0, op.steps);
            longest = std::max(longest, length);
            float* h = m_h.data() + e * hidden;
            float* c = m_c.data() + e * hidden;
            for (i64 j = 0; j < hidden; ++j) {
                const i64 at = op.stateOffset(d, e) + j;
                h[j] = op.initialH >= 0 ? reinterpret_cast<const float*>(inputs[op.initialH])[at]
                                        : 0.0f;
                c[j] = op.initialC >= 0 ? reinterpret_cast<const float*>(inputs[op.initialC])[at]
                                        : 0.0f;
            }
        }
        const float* peep =
            op.peepholes >= 0
                ? reinterpret_cast<const float*>(inputs[op.peepholes]) + d * 3 * hidden
                : nullptr;
        auto* y = op.outY ? reinterpret_cast<float*>(outputs[0]) : nullptr;
        const float clip = static_cast<float>(op.clip);
        float* a = m_a.data();
        float* t = m_t.data();

        for (i64 s = 0; s < longest; ++s) {
            for (i64 e = 0; e < batch; ++e) {
                const i64 length = lengths[static_cast<std::size_t>(e)];
                if (s >= length)
                    continue;
                const i64 step = backwards ? length - 1 - s : s;
                const i64 row = op.batchFirst ? e * op.steps + step : step * batch + e;
                const float* projected = m_projected.data() + row * width;
                float* h = m_h.data() + e * hidden;
                float* c = m_c.data() + e * hidden;
                for (i64 j = 0; j < width; ++j)
                    a[j] = projected[j] + m_bias[static_cast<std::size_t>(j)];
                if (op.kind == 0) {
                    vec::accumulateProduct(h, hidden, rt, width, width, a);
                    if (clip > 0)
                        clipInPlace(a, hidden, clip);
                    activate(act[0], a, hidden);
                    std::copy(a, a + hidden, h);
                } else if (op.kind == 1) {
                    gruStep(h, a, t, rt, act, clip, lbr);
                } else {
                    lstmStep(h, c, a, rt, act, clip, peep);
                }
                if (y)
                    std::copy(h, h + hidden, y + op.yOffset(step, d, e));
            }
        }
        if (y) {
            for (i64 e = 0; e < batch; ++e)
                for (i64 step = lengths[static_cast<std::size_t>(e)]; step < op.steps; ++step)
                    std::fill_n(y + op.yOffset(step, d, e), hidden, 0.0f);
        }
        for (i64 e = 0; e < batch; ++e) {
            const i64 at = op.stateOffset(d, e);
            if (op.outH)
                std::copy_n(m_h.data() + e * hidden, hidden,
                            reinterpret_cast<float*>(outputs[1]) + at);
            if (op.outC)
                std::copy_n(m_c.data() + e * hidden, hidden,
                            reinterpret_cast<float*>(outputs[2]) + at);
        }
    }

    /// Gates i, o, f, c (ONNX's order); activations f, g, h.
    void lstmStep(float* h, float* c, float* a, const float* rt, const functors::Activation* act,
                  float clip, const float* peep) {
        const i64 hidden = m_op.hidden;
        vec::accumulateProduct(h, hidden, rt, m_width, m_width, a);
        float* gi = a;
        float* go = a + hidden;
        float* gf = a + 2 * hidden;
        float* gc = a + 3 * hidden;
        if (peep) {
            for (i64 j = 0; j < hidden; ++j) {
                gi[j] += peep[j] * c[j];
                gf[j] += peep[2 * hidden + j] * c[j];
            }
        }
        if (clip > 0) {
            clipInPlace(gi, hidden, clip);
            clipInPlace(gf, hidden, clip);
            clipInPlace(gc, hidden, clip);
        }
        activate(act[0], gi, hidden);
        if (m_op.inputForget)
            for (i64 j = 0; j < hidden; ++j)
                gf[j] = 1.0f - gi[j];
        else
            activate(act[0], gf, hidden);
        activate(act[1], gc, hidden);
        for (i64 j = 0; j < hidden; ++j)
            c[j] = gf[j] * c[j] + gi[j] * gc[j];
        if (peep)
            for (i64 j = 0; j < hidden; ++j)
                go[j] += peep[hidden + j] * c[j];
        if (clip > 0)
            clipInPlace(go, hidden, clip);
        activate(act[0], go, hidden);
        float* cell = m_t.data();
        std::copy(c, c + hidden, cell);
        activate(act[2], cell, hidden);
        for (i64 j = 0; j < hidden; ++j)
            h[j] = go[j] * cell[j];
    }

    /// Gates z, r, h (ONNX's order); activations f, g.
    void gruStep(float* h, float* a, float* t, const float* rt, const functors::Activation* act,
                 float clip, bool lbr) {
        const i64 hidden = m_op.hidden, width = m_width;
        float* gz = a;
        float* gr = a + hidden;
        float* gh = a + 2 * hidden;
        if (lbr) {
            std::fill_n(t, width, 0.0f);
            vec::accumulateProduct(h, hidden, rt, width, width, t);
            for (i64 j = 0; j < 2 * hidden; ++j)
                a[j] += t[j];
        } else {
            vec::accumulateProduct(h, hidden, rt, width, 2 * hidden, a);
        }
        if (clip > 0)
            clipInPlace(a, 2 * hidden, clip);
        activate(act[0], a, 2 * hidden);
        if (lbr) {
            for (i64 j = 0; j < hidden; ++j)
                gh[j] += gr[j] * (t[2 * hidden + j] + m_recurrentBias[static_cast<std::size_t>(j)]);
        } else {
            for (i64 j = 0; j < hidden; ++j)
                t[j] = gr[j] * h[j];
            vec::accumulateProduct(t, hidden, rt + 2 * hidden, width, hidden, gh);
        }
        if (clip > 0)
            clipInPlace(gh, hidden, clip);
        activate(act[1], gh, hidden);
        for (i64 j = 0; j < hidden; ++j)
            h[j] = (1.0f - gz[j]) * gh[j] + gz[j] * h[j];
    }

    CpuKernelContext& m_ctx;
    functors::Recurrent m_op;
    bool m_constantR;
    std::vector<const float*> m_transposedFrom; ///< per direction: the R that rt holds
    i64 m_gates, m_width, m_rows;
    dnnl::matmul m_projection;
    std::string m_implementation;
    memory m_src, m_weights, m_dst;
    std::unordered_map<int, memory> m_args;
    std::vector<float> m_projected, m_recurrentT, m_bias, m_recurrentBias, m_h, m_c, m_a, m_t;
};

} // namespace

std::unique_ptr<Kernel> makeRecurrent(const KernelSpec& spec, CpuKernelContext& ctx) {
    auto read = readRecurrent(spec);
    if (!read)
        return nullptr; // the shared functor's plan says why
    const functors::Recurrent& op = read.value();
    for (std::size_t k = 0; k < spec.inputs.size(); ++k) {
        if (static_cast<int>(k) != op.lengths && spec.inputs[k].dtype != DType::Float32)
            return nullptr;
    }
    for (const TensorType& out : spec.outputs) {
        if (out.dtype != DType::Float32)
            return nullptr;
    }
    if (op.steps * op.batch <= 0 || op.inputSize <= 0)
        return nullptr;
    const bool constantR = spec.constantInputs.size() > 2 && spec.constantInputs[2];
    return std::make_unique<RecurrentKernel>(ctx, op, constantR);
}

} // namespace placer::cpu
