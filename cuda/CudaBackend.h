// The CUDA backend of the device registry: which GPUs this machine has (or why it has none,
// found once per process) and their devices.
#pragma once

#include "runtime/Device.h"

#include <memory>

namespace placer::cuda {

std::unique_ptr<DeviceBackend> makeCudaBackend();

} // namespace placer::cuda
