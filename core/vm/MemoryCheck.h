// The check made before a run allocates anything: every storage a program needs, and the host
// memory its inputs and outputs take, must fit where they go. A plan too large for a device is
// refused with a sentence that names the storage, its size and the device, instead of ending in
// an allocation failure half-way through loading (or, on the host, in std::bad_alloc).
#pragma once

#include "device/Device.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "vm/Bytecode.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace placer {

/// Checks that `program`'s storages fit their physical devices (`mapping`, one per virtual
/// device), each against Device::allocatableBytes(), and that everything held in host memory
/// (the storages of host-accessible devices, plus `hostBytesBesides`: the inputs and outputs a
/// caller keeps on the host) fits the host's available memory. The first thing that does not fit
/// is returned as an error; nothing is allocated either way. With `graph` (the one `program`
/// was lowered from), what each device's kernels take besides the storages counts too
/// (Device::kernelMemoryBytes: a GPU's convolution workspace, the shared functors' scratch).
Status checkMemoryFits(const Program& program, const DeviceSet& devices,
                       const std::vector<Device*>& mapping, std::int64_t hostBytesBesides,
                       const Graph* graph = nullptr, int onnxOpset = 0);

/// The host memory a caller needs besides the program's storages: one host copy of every input
/// and of every result.
std::int64_t hostInputOutputBytes(const Program& program);

} // namespace placer
