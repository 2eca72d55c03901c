// The single-device reference a multi-device run is checked against: the graph planned onto one
// device, the elementwise comparison of outputs, and the median that timings are reported by.
#pragma once

#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "plan/Plan.h"
#include "vm/Executor.h"

#include <string>
#include <vector>

namespace placer {

/// The graph on one device: pins dropped, every device_copy made a same-device copy, results
/// anywhere, planned onto the single device "reference".
struct SingleDevicePlan {
    Graph graph;
    DeviceSet devices;
    Plan plan;
};
SingleDevicePlan singleDevicePlan(const Graph& graph);

/// The outputs of the user's graph run unoptimised on `inputs`, on a single-threaded CPU device
/// of its own that reads constants where they lie in host memory (a mapped model file's pages):
/// the reference copies no weights, and what it allocates is freed when it returns, so a caller
/// that runs it before loading its own run never holds both.
Result<std::vector<HostTensor>> runReference(const Graph& graph,
                                             const std::vector<HostTensor>& inputs, int opset);

struct ReferenceCheck {
    double maxAbsDiff = 0;
    double maxRelDiff = 0; ///< |a - b| / max(|b|, 1e-6), over elements
    bool ok = true;
    std::string mismatch;      ///< where the first element beyond tolerance is, when !ok
    double atol = 0, rtol = 0; ///< the tolerance the outputs were held to
    /// Why it is not the run's own: "bfloat16's" when a precision policy widened it.
    std::string toleranceOf;
};

/// The tolerance outputs computed partly in `narrowest` (a 16-bit type) are held to against a
/// float32 reference `expected`: a relative one of a few of the type's roundings, and an absolute
/// one of the same at the scale of the largest reference element (a sum of many such terms rounds
/// at their scale, not its own). Unchanged for float32.
void precisionTolerance(DType narrowest, const std::vector<HostTensor>& expected, double* atol,
                        double* rtol);

/// Compares outputs elementwise: an element mismatches when |a - b| > atol + rtol * |b|
/// (NaN matches NaN, an infinity the same infinity). Shapes and types must agree.
ReferenceCheck compareOutputs(const std::vector<HostTensor>& actual,
                              const std::vector<HostTensor>& expected, double atol = 1e-4,
                              double rtol = 1e-3);

/// The median of `values` (0 when empty).
double median(std::vector<double> values);

} // namespace placer
