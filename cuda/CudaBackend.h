// The CUDA backend of the device registry: which GPUs this machine has (or why it has none,
// found once per process) and their devices. Core does not know it: a program that wants GPUs
// calls registerCudaBackend() before it makes a DeviceRegistry.
#pragma once

#include "runtime/DeviceRegistry.h"

#include <memory>

namespace placer::cuda {

std::unique_ptr<DeviceBackend> makeCudaBackend();
/// Adds the CUDA backend to every registry made from now on; once, however often it is called.
void registerCudaBackend();

} // namespace placer::cuda
