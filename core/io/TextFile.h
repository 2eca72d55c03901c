// Reading a whole text file, with an error that names the file when it cannot be read.
#pragma once

#include "ir/Result.h"

#include <string>

namespace placer {

/// Reads a whole file; on failure returns a SourceError naming the file and the reason.
Result<std::string> readTextFile(const std::string& path);

} // namespace placer
