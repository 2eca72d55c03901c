// Shell-style wildcard matching for op-name rules and node pins: *, ? and [abc] / [a-z] / [!a];
// and node patterns written as regular expressions ("re:blocks\\.(1[2-9])\\..*"), searched in
// node and tensor names as llama.cpp's --override-tensor does.
#pragma once

#include "ir/Result.h"

#include <memory>
#include <string>
#include <string_view>

namespace placer {

/// True if `text` matches `pattern` as a whole. Linear in practice; never recursive.
bool globMatch(std::string_view pattern, std::string_view text);
/// True if the pattern has a wildcard character.
bool isGlob(std::string_view pattern);

/// A pattern over node names: "re:" then an ECMAScript regular expression found anywhere in a
/// name (as llama.cpp's -ot "exps=CPU"), a glob, or a name.
class NamePattern {
public:
    /// The pattern, or why its regular expression is none.
    static Result<NamePattern> parse(const std::string& pattern);
    bool matches(std::string_view name) const;
    /// Whether it may match more than one name (a glob or a regular expression).
    bool wildcard() const { return m_regex != nullptr || isGlob(m_text); }
    static constexpr std::string_view kRegexPrefix = "re:";

private:
    struct Compiled;
    std::string m_text;
    std::shared_ptr<const Compiled> m_regex;
};

} // namespace placer
