// Shared body of the reader fuzz targets: read the input in one format and, if it reads, plan it
// in both modes. Anything but a clean error or a plan (a crash, a sanitizer report, a hang) is a
// finding. Constants are folded by the real CPU kernels at load, as the CLI and the GUI fold
// them on untrusted models.
#pragma once

#include "backends/cpu/ConstantEvaluation.h"
#include "io/ModelLoader.h"
#include "plan/Planner.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace placer::fuzz {

inline int readAndPlan(const std::uint8_t* data, std::size_t size, GraphFormat format,
                       const char* fileName) {
    static const bool folding = [] {
        installConstantFolding();
        return true;
    }();
    (void)folding;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    auto model = loadModelText(bytes, fileName, format, std::nullopt);
    if (!model)
        return 0;
    for (PlanMode mode : {PlanMode::Demand, PlanMode::Unify}) {
        PlanOptions options;
        options.mode = mode;
        (void)planDevices(model.value().graph, model.value().devices, options);
    }
    return 0;
}

} // namespace placer::fuzz
