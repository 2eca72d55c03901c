// Control flow on a device: an If, Loop or Scan node runs as one kernel, whose bodies run node by
// node with kernels the same device prepared (Device::prepare), in memory of that device. The
// planner sees the node as one op; its bodies never cross devices.
#pragma once

#include "device/Device.h"
#include "kernels/Kernel.h"

#include <cstdint>
#include <memory>
#include <string>

namespace placer {

/// A kernel for `spec` on `device`: the device's own for an ordinary op, or a control-flow
/// kernel for a node with bodies (whose body nodes get theirs the same way). Called from any
/// thread, the device's worker included, as Device::prepare is.
Result<std::unique_ptr<Kernel>> prepareKernelOn(Device& device, const KernelSpec& spec);

/// Element 0 of a tensor in `device`'s memory, read on the host from its worker, as an integer
/// (bools: 0 or 1): an If's condition, a Loop's trip count. Throws KernelError naming `what`
/// for an element type that is no condition or count.
std::int64_t readDeviceScalar(Device& device, const std::byte* data, DType dtype,
                              const std::string& what);

} // namespace placer
