// Whether a backend's kernel table agrees with the capability the op registry declares for its
// device kind: the families it registers a kernel for are exactly those with element types there.
#pragma once

#include "ir/OpRegistry.h"

#include <QString>

#include <algorithm>
#include <vector>

namespace placer::test {

/// "family conv: declared, not registered; ..." for every disagreement; empty when they agree.
inline QString capabilityDisagreements(const std::vector<KernelFamily>& registered,
                                       DeviceKind kind) {
    QString problems;
    for (int i = 0; i < kKernelFamilyCount; ++i) {
        const auto family = static_cast<KernelFamily>(i);
        const bool declared = kernelCapability(family).of(kind) != 0;
        const bool has =
            std::find(registered.begin(), registered.end(), family) != registered.end();
        if (declared != has)
            problems += QString("family %1: %2; ")
                            .arg(kernelFamilyName(family), declared ? "declared, not registered"
                                                                    : "registered, not declared");
    }
    return problems;
}

} // namespace placer::test
