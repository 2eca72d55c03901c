// Wildcard matching with the classic greedy-star backtracking (one saved position, no recursion).
#include "plan/Glob.h"

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

} // namespace placer
