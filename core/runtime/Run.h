// What a run needs around the executor: mapping virtual devices to physical ones, the
// single-device reference, and comparing outputs.
#pragma once

#include "io/SourceError.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"
#include "runtime/DeviceRegistry.h"
#include "runtime/Executor.h"

#include <string>
#include <vector>

namespace placer {

/// `--map gpu=vcpu1`: run virtual device `device` on physical device `physical`.
struct DeviceMapRequest {
    std::string device;
    std::string physical;
};

/// The physical device of every virtual device: the requests first; then cpu-kind devices run
/// on the host `cpu`, vcpu-kind devices on a fresh vcpuN each, and cuda-kind devices on
/// cuda:<ordinal> when this machine has CUDA, otherwise on a fresh vcpuN (with a warning).
Result<std::vector<Device*>> mapDevices(const DeviceSet& devices,
                                        const std::vector<DeviceMapRequest>& requests,
                                        DeviceRegistry& registry,
                                        std::vector<std::string>* warnings);

/// The graph on one device: pins dropped, every device_copy made a same-device copy, results
/// anywhere, planned onto the single device "reference".
struct SingleDevicePlan {
    Graph graph;
    DeviceSet devices;
    Plan plan;
};
SingleDevicePlan singleDevicePlan(const Graph& graph);

struct ReferenceCheck {
    double maxAbsDiff = 0;
    double maxRelDiff = 0; ///< |a - b| / max(|b|, 1e-6), over elements
    bool ok = true;
    std::string mismatch; ///< where the first element beyond tolerance is, when !ok
};

/// Compares outputs elementwise: an element mismatches when |a - b| > atol + rtol * |b|
/// (NaN matches NaN). Shapes and types must agree.
ReferenceCheck compareOutputs(const std::vector<HostTensor>& actual,
                              const std::vector<HostTensor>& expected, double atol = 1e-4,
                              double rtol = 1e-3);

/// The median of `values` (0 when empty).
double median(std::vector<double> values);

} // namespace placer
