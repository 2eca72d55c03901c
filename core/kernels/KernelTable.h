// A backend's kernels: one factory per kernel family (ir/OpSemantics.h). The op registry says
// which family each op name belongs to, so a backend never lists op names; what a device kind can
// run is declared per family (ir/OpRegistry.h kernelCapability), and each backend's table must
// cover exactly the families its kind has there (checked by tst_kernels and tst_cuda).
#pragma once

#include "ir/OpRegistry.h"
#include "kernels/Kernel.h"

#include <array>
#include <functional>
#include <initializer_list>
#include <memory>
#include <utility>
#include <vector>

namespace placer {

template <typename Context> class KernelTable {
public:
    using Factory = std::function<Result<std::unique_ptr<Kernel>>(const KernelSpec&, Context&)>;

    void add(KernelFamily family, Factory factory) {
        m_factories[static_cast<std::size_t>(family)] = std::move(factory);
    }
    /// Several at once: `add({{F::Conv, makeConv}, {F::Matmul, makeMatmul}})`.
    void add(std::initializer_list<std::pair<KernelFamily, Factory>> factories) {
        for (const auto& [family, factory] : factories)
            add(family, factory);
    }
    /// The factory for an op's family, or null.
    const Factory* find(const OpDef& op) const {
        const Factory& f = m_factories[static_cast<std::size_t>(op.kernel.family)];
        return f ? &f : nullptr;
    }
    /// The families this backend has kernels for.
    std::vector<KernelFamily> families() const {
        std::vector<KernelFamily> result;
        for (int i = 0; i < kKernelFamilyCount; ++i) {
            if (m_factories[static_cast<std::size_t>(i)])
                result.push_back(static_cast<KernelFamily>(i));
        }
        return result;
    }

private:
    std::array<Factory, kKernelFamilyCount> m_factories;
};

} // namespace placer
