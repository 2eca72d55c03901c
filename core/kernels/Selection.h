// The operators whose output extents depend on the data: NonZero, Compress, Unique and
// NonMaxSuppression. Their outputs are planned at the most they can hold (the ONNX reader bounds
// them); a run writes a dense prefix of that storage and reports the shapes it filled
// (Kernel::ranShapes), which the executor gives the results. The computation runs on the host:
// the CPU backend calls it on its memory, the CUDA backend on staged copies.
#pragma once

#include "kernels/Kernel.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace placer {

using SelectionShapes = std::vector<std::vector<std::int64_t>>;

/// How one node selects: which outputs it bounds, and the host computation, which reads the
/// inputs, fills the outputs and returns every output's shape.
struct Selection {
    using Compute = std::function<SelectionShapes(const std::byte* const*, std::byte* const*)>;
    std::string name; ///< "nonzero", "unique", ...
    std::vector<bool> bounded;
    Compute compute;
};

/// The selection `spec`'s op makes, or why it cannot (a sentence for the backend's prefix).
Result<Selection> planSelection(const KernelSpec& spec);

/// A kernel whose `run` calls `body` (the computation, maybe staged) and keeps the shapes.
class SelectionKernel final : public Kernel {
public:
    SelectionKernel(std::string implementation, std::vector<bool> bounded, Selection::Compute body)
        : m_implementation(std::move(implementation)), m_bounded(std::move(bounded)),
          m_body(std::move(body)) {}
    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        m_shapes = m_body(inputs, outputs);
    }
    std::string implementation() const override { return m_implementation; }
    bool boundsOutput(std::size_t k) const override { return k < m_bounded.size() && m_bounded[k]; }
    const SelectionShapes* ranShapes() const override { return &m_shapes; }

private:
    std::string m_implementation;
    std::vector<bool> m_bounded;
    Selection::Compute m_body;
    SelectionShapes m_shapes;
};

} // namespace placer
