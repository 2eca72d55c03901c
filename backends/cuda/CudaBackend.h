// The CUDA backend of the device registry: which GPUs this machine has (or why it has none,
// found once per process) and their devices. Core does not know it: a program that links
// placer_cuda has it registered as it starts (CudaRegistration.cpp).
#pragma once

#include "device/DeviceRegistry.h"

#include <memory>

namespace placer::cuda {

std::unique_ptr<DeviceBackend> makeCudaBackend();
/// Adds the CUDA backend to every registry made from now on; once, however often it is called.
void registerCudaBackend();

} // namespace placer::cuda
