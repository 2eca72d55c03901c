// The registry's built-in backends: the host CPU ("cpu", "cpu:threads=N") and virtual CPU
// contexts ("vcpuN", "vcpuN:threads=M:mem=SIZE"), each a CpuDevice.
#pragma once

#include "runtime/DeviceRegistry.h"

#include <memory>

namespace placer {

std::unique_ptr<DeviceBackend> makeHostCpuBackend();
std::unique_ptr<DeviceBackend> makeVirtualCpuBackend();

} // namespace placer
