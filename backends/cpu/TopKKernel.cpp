// TopK on the CPU: each line's k best by a partial selection (nth_element, then a sort of the
// k), O(n + k log k) where the shared functor (kernels/IndexingFunctors.h TopK) selects k times
// over the whole line, O(n k), which a detector's TopK over a hundred thousand anchors with k a
// thousand turns into seconds. The order is the functor's: best first, ties by the lower index;
// NaN ranks after every number.
#include "backends/cpu/CpuKernels.h"
#include "backends/cpu/KernelUtil.h"
#include "kernels/IndexingPlan.h"

#include <algorithm>
#include <cmath>
#include <variant>

namespace placer::cpu {

namespace {

using i64 = std::int64_t;

template <typename T> class TopKKernel final : public Kernel {
public:
    explicit TopKKernel(const functors::TopK& op, i64 lines)
        : m_dim(op.dim), m_inner(op.inner), m_k(op.k), m_lines(lines), m_largest(op.largest) {
        m_entries.resize(static_cast<std::size_t>(m_dim));
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const T* in = reinterpret_cast<const T*>(inputs[0]);
        T* values = reinterpret_cast<T*>(outputs[0]);
        i64* indices = reinterpret_cast<i64*>(outputs[1]);
        const auto better = [largest = m_largest](const Entry& a, const Entry& b) {
            const bool aNan = isNan(a.value), bNan = isNan(b.value);
            if (aNan != bNan)
                return bNan;
            if (!aNan && a.value != b.value)
                return largest ? a.value > b.value : a.value < b.value;
            return a.index < b.index;
        };
        for (i64 line = 0; line < m_lines; ++line) {
            const i64 outer = line / m_inner, within = line % m_inner;
            const i64 base = outer * m_dim * m_inner + within;
            const i64 outBase = outer * m_k * m_inner + within;
            for (i64 j = 0; j < m_dim; ++j)
                m_entries[static_cast<std::size_t>(j)] = Entry{in[base + j * m_inner], j};
            const auto kth = m_entries.begin() + static_cast<std::ptrdiff_t>(m_k);
            if (m_k < m_dim)
                std::nth_element(m_entries.begin(), kth, m_entries.end(), better);
            std::sort(m_entries.begin(), kth, better);
            for (i64 r = 0; r < m_k; ++r) {
                values[outBase + r * m_inner] = m_entries[static_cast<std::size_t>(r)].value;
                indices[outBase + r * m_inner] = m_entries[static_cast<std::size_t>(r)].index;
            }
        }
    }

    std::string implementation() const override { return "plain:topk-select"; }

private:
    struct Entry {
        T value;
        i64 index;
    };
    static bool isNan(T v) {
        if constexpr (std::is_floating_point_v<T>)
            return std::isnan(v);
        return false;
    }

    i64 m_dim, m_inner, m_k, m_lines;
    bool m_largest;
    std::vector<Entry> m_entries; ///< one line's, reused
};

} // namespace

std::unique_ptr<Kernel> makeTopK(const KernelSpec& spec) {
    if (spec.inputs.empty() || spec.outputs.size() != 2)
        return nullptr;
    auto plan = planIndexing(spec);
    if (!plan || plan.value().size() != 1)
        return nullptr;
    const auto* op = std::get_if<functors::TopK>(&plan.value()[0].op);
    if (!op || op->k > op->dim || op->k < 0)
        return nullptr;
    const i64 lines = plan.value()[0].count;
    switch (spec.inputs[0].dtype) {
    case DType::Float32:
        return std::make_unique<TopKKernel<float>>(*op, lines);
    case DType::Float64:
        return std::make_unique<TopKKernel<double>>(*op, lines);
    case DType::Int64:
        return std::make_unique<TopKKernel<std::int64_t>>(*op, lines);
    case DType::Int32:
        return std::make_unique<TopKKernel<std::int32_t>>(*op, lines);
    default:
        return nullptr;
    }
}

} // namespace placer::cpu
