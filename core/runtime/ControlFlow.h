// Control flow on a device: an If, Loop or Scan node runs as one kernel, whose bodies run node by
// node with kernels the same device prepared (Device::prepare), in memory of that device. The
// planner sees the node as one op; its bodies never cross devices.
#pragma once

#include "runtime/Device.h"
#include "runtime/Kernel.h"

#include <memory>

namespace placer {

/// A kernel for `spec` on `device`: the device's own for an ordinary op, or a control-flow
/// kernel for a node with bodies (whose body nodes get theirs the same way). Called from any
/// thread, the device's worker included, as Device::prepare is.
Result<std::unique_ptr<Kernel>> prepareKernelOn(Device& device, const KernelSpec& spec);

} // namespace placer
