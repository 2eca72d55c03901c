// Shell-style wildcard matching for op-name rules and node pins: *, ? and [abc] / [a-z] / [!a].
#pragma once

#include <string_view>

namespace placer {

/// True if `text` matches `pattern` as a whole. Linear in practice; never recursive.
bool globMatch(std::string_view pattern, std::string_view text);
/// True if the pattern has a wildcard character.
bool isGlob(std::string_view pattern);

} // namespace placer
