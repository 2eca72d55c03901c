// Resize in float32 on the CPU where only the last two dimensions change (images, feature maps):
// separable, each output column's taps and weights and each output row's computed once, a
// horizontal pass over the input rows the output reads, then each output row as a weighted sum
// of those rows (a vector loop). The coordinates and weights are the shared functor's
// (kernels/IndexingFunctors.h Resize), which runs every other case.
#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "backends/cpu/VectorMath.h"
#include "kernels/IndexingPlan.h"

#include <array>

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

/// One resized dimension: per output coordinate, how many taps (0: extrapolated), where and
/// with what weight.
struct Axis {
    std::vector<int> count;
    std::vector<std::array<i64, 4>> taps;
    std::vector<std::array<float, 4>> weights;
};

Axis axisOf(const functors::Resize& op, int d) {
    Axis axis;
    const i64 n = op.out.dims[d];
    axis.count.resize(static_cast<std::size_t>(n));
    axis.taps.resize(static_cast<std::size_t>(n));
    axis.weights.resize(static_cast<std::size_t>(n));
    for (i64 x = 0; x < n; ++x) {
        const auto k = static_cast<std::size_t>(x);
        double weights[4] = {};
        axis.count[k] = op.tapsOf(d, x, axis.taps[k].data(), weights);
        for (int t = 0; t < 4; ++t)
            axis.weights[k][static_cast<std::size_t>(t)] = static_cast<float>(weights[t]);
    }
    return axis;
}

class ResizeKernel final : public Kernel {
public:
    ResizeKernel(const functors::Resize& op, i64 planes)
        : m_planes(planes), m_rowsIn(op.in.dims[op.in.rank - 2]),
          m_colsIn(op.in.dims[op.in.rank - 1]), m_rowsOut(op.out.dims[op.out.rank - 2]),
          m_colsOut(op.out.dims[op.out.rank - 1]),
          m_extrapolation(static_cast<float>(op.extrapolation)),
          m_rows(axisOf(op, op.out.rank - 2)), m_cols(axisOf(op, op.out.rank - 1)) {
        // The input rows some output row reads: only those go through the first pass.
        std::vector<bool> used(static_cast<std::size_t>(m_rowsIn), false);
        for (std::size_t y = 0; y < m_rows.count.size(); ++y)
            for (int t = 0; t < m_rows.count[y]; ++t)
                used[static_cast<std::size_t>(m_rows.taps[y][static_cast<std::size_t>(t)])] = true;
        for (i64 r = 0; r < m_rowsIn; ++r)
            if (used[static_cast<std::size_t>(r)])
                m_usedRows.push_back(r);
        m_horizontal.resize(static_cast<std::size_t>(m_rowsIn * m_colsOut));
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const auto* in = reinterpret_cast<const float*>(inputs[0]);
        auto* out = reinterpret_cast<float*>(outputs[0]);
        float* h = m_horizontal.data();
        for (i64 p = 0; p < m_planes; ++p) {
            const float* x = in + p * m_rowsIn * m_colsIn;
            float* y = out + p * m_rowsOut * m_colsOut;
            for (i64 r : m_usedRows) {
                const float* row = x + r * m_colsIn;
                float* to = h + r * m_colsOut;
                for (i64 c = 0; c < m_colsOut; ++c) {
                    const auto k = static_cast<std::size_t>(c);
                    float acc = 0;
                    for (int t = 0; t < m_cols.count[k]; ++t)
                        acc += m_cols.weights[k][static_cast<std::size_t>(t)] *
                               row[m_cols.taps[k][static_cast<std::size_t>(t)]];
                    to[c] = acc;
                }
            }
            for (i64 r = 0; r < m_rowsOut; ++r) {
                const auto k = static_cast<std::size_t>(r);
                float* to = y + r * m_colsOut;
                const int count = m_rows.count[k];
                if (count == 0) {
                    std::fill_n(to, m_colsOut, m_extrapolation);
                    continue;
                }
                const float* rows[4];
                for (int t = 0; t < count; ++t)
                    rows[t] = h + m_rows.taps[k][static_cast<std::size_t>(t)] * m_colsOut;
                vec::weightedRows(rows, m_rows.weights[k].data(), count, m_colsOut, to);
                for (i64 c = 0; c < m_colsOut; ++c)
                    if (m_cols.count[static_cast<std::size_t>(c)] == 0)
                        to[c] = m_extrapolation;
            }
        }
    }

    std::string implementation() const override { return "vector:resize"; }

private:
    i64 m_planes, m_rowsIn, m_colsIn, m_rowsOut, m_colsOut;
    float m_extrapolation;
    Axis m_rows, m_cols;
    std::vector<i64> m_usedRows;
    std::vector<float> m_horizontal;
};

} // namespace

std::unique_ptr<Kernel> makeResize(const KernelSpec& spec) {
    if (spec.inputs.empty() || spec.inputs[0].dtype != DType::Float32 || spec.outputs.size() != 1 ||
        spec.outputs[0].dtype != DType::Float32)
        return nullptr;
    auto read = readResize(spec);
    if (!read)
        return nullptr;
    const functors::Resize& op = read.value();
    const int rank = op.out.rank;
    if (rank < 2 || spec.outputs[0].elementCount() == 0 || spec.inputs[0].elementCount() == 0)
        return nullptr;
    // Every dimension before the last two must map each coordinate onto itself.
    i64 planes = 1;
    for (int d = 0; d + 2 < rank; ++d) {
        if (op.in.dims[d] != op.out.dims[d])
            return nullptr;
        for (i64 x = 0; x < op.out.dims[d]; ++x) {
            i64 taps[4];
            double weights[4];
            if (op.tapsOf(d, x, taps, weights) != 1 || taps[0] != x || weights[0] != 1)
                return nullptr;
        }
        planes *= op.out.dims[d];
    }
    return std::make_unique<ResizeKernel>(op, planes);
}

} // namespace placer::cpu
