// NumPy .npy files (format versions 1.0 to 3.0, little-endian, C order) for run inputs and
// outputs.
#pragma once

#include "ir/Result.h"
#include "ir/HostTensor.h"

#include <string>

namespace placer {

/// Parses .npy bytes; errors name `fileName` and say what is wrong (and where in the header).
Result<HostTensor> parseNpy(std::string_view bytes, const std::string& fileName);
Result<HostTensor> readNpy(const std::string& path);

/// The .npy bytes of a tensor (version 1.0). bfloat16 has no NumPy type and is refused.
Result<std::string> formatNpy(const HostTensor& tensor);
/// Writes a tensor to `path`; an error names the file.
Status writeNpy(const std::string& path, const HostTensor& tensor);

} // namespace placer
