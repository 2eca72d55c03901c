// Wildcard matching with the classic greedy-star backtracking (one saved position, no recursion).
#include "plan/Glob.h"

// GCC 12 warns of a member of its own <regex> automaton "maybe uninitialized" when it inlines
// it (a false positive in the library's code, not ours).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <regex>
#pragma GCC diagnostic pop

namespace placer {

namespace {

/// Matches one bracket expression at pattern[p] against c; sets *end past the closing ']'.
/// A pattern with no closing bracket treats '[' literally.
bool matchBracket(std::string_view pattern, std::size_t p, char c, std::size_t* end) {
    std::size_t i = p + 1;
    bool negate = false;
    if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
        negate = true;
        ++i;
    }
    bool matched = false;
    bool first = true;
    for (; i < pattern.size() && (first || pattern[i] != ']'); ++i, first = false) {
        if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
            if (pattern[i] <= c && c <= pattern[i + 2])
                matched = true;
            i += 2;
        } else if (pattern[i] == c) {
            matched = true;
        }
    }
    if (i >= pattern.size()) {
        *end = p + 1;
        return c == '[';
    }
    *end = i + 1;
    return matched != negate;
}

} // namespace

bool globMatch(std::string_view pattern, std::string_view text) {
    std::size_t p = 0, t = 0;
    std::size_t starP = std::string_view::npos, starT = 0;
    while (t < text.size()) {
        if (p < pattern.size()) {
            const char pc = pattern[p];
            if (pc == '*') {
                starP = p++;
                starT = t;
                continue;
            }
            if (pc == '?') {
                ++p;
                ++t;
                continue;
            }
            if (pc == '[') {
                std::size_t end = 0;
                if (matchBracket(pattern, p, text[t], &end)) {
                    p = end;
                    ++t;
                    continue;
                }
            } else if (pc == text[t]) {
                ++p;
                ++t;
                continue;
            }
        }
        if (starP == std::string_view::npos)
            return false;
        p = starP + 1;
        t = ++starT;
    }
    while (p < pattern.size() && pattern[p] == '*')
        ++p;
    return p == pattern.size();
}

bool isGlob(std::string_view pattern) {
    return pattern.find_first_of("*?[") != std::string_view::npos;
}

struct NamePattern::Compiled {
    std::regex regex;
};

Result<NamePattern> NamePattern::parse(const std::string& pattern) {
    NamePattern out;
    out.m_text = pattern;
    if (!std::string_view(pattern).starts_with(kRegexPrefix))
        return out;
    const std::string expression = pattern.substr(kRegexPrefix.size());
    if (expression.empty())
        return SourceError::sentence("'" + pattern + "' has no regular expression after re:");
    try {
        out.m_regex = std::make_shared<const Compiled>(
            Compiled{std::regex(expression, std::regex::ECMAScript | std::regex::optimize)});
    } catch (const std::regex_error& error) {
        return SourceError::sentence("'" + pattern +
                                     "' is not a regular expression: " + error.what());
    }
    return out;
}

bool NamePattern::matches(std::string_view name) const {
    if (m_regex)
        return std::regex_search(name.begin(), name.end(), m_regex->regex);
    return isGlob(m_text) ? globMatch(m_text, name) : name == m_text;
}

} // namespace placer
