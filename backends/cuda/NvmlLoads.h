// How busy each GPU is now, and how much of its memory is free, from NVIDIA's management
// library (NVML), opened with dlopen on first use as cuBLAS and cuDNN are (LazyLibraries.h): a
// machine whose driver has no libnvidia-ml, or no GPU, has no loads to tell, and nothing fails.
// `--map auto` reads them (device/LoadMapping.h) through the CUDA backend's loads().
#pragma once

#include "device/DeviceRegistry.h"

#include <vector>

namespace placer::cuda {

/// One entry per CUDA ordinal in [0, count) that NVML knows (matched by PCI bus id, since
/// CUDA's order need not be NVML's); none when NVML cannot be opened or started.
std::vector<DeviceLoad> nvmlLoads(int count);

} // namespace placer::cuda
