// The CPU backends: the host CPU ("cpu", "cpu:threads=N") and virtual CPU
// contexts ("vcpuN", "vcpuN:threads=M:mem=SIZE"), each a CpuDevice.
#pragma once

#include "device/DeviceRegistry.h"

#include <memory>

namespace placer {

std::unique_ptr<DeviceBackend> makeHostCpuBackend();
std::unique_ptr<DeviceBackend> makeVirtualCpuBackend();

/// Registers both with every registry made from now on, and offers the CPU kernels as the
/// readers' constant evaluator (ir/ConstantFolding.h). Once per process, however often called:
/// CpuRegistration.cpp calls it as the program starts.
void registerCpuBackend();

} // namespace placer
