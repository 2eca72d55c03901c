// Errors a user can cause with an input file: a location and a plain sentence, returned as values.
#pragma once

#include "ir/Result.h"

#include <string>

namespace placer {

/// Reads a whole file; on failure returns a SourceError naming the file and the reason.
Result<std::string> readTextFile(const std::string& path);

} // namespace placer
