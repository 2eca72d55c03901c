// A position in source text that knows its line and column, shared by the text scanners.
#pragma once

#include "ir/Result.h"

#include <string>
#include <string_view>

namespace placer {

class SourceCursor {
protected:
    SourceCursor(std::string_view text, const std::string& file) : m_text(text), m_file(file) {}

    char peek(std::size_t ahead = 0) const {
        return m_pos + ahead < m_text.size() ? m_text[m_pos + ahead] : '\0';
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    /// Moves past the current character, counting lines and columns (1-based).
    void advance() {
        if (m_text[m_pos] == '\n') {
            ++m_line;
            m_column = 1;
        } else {
            ++m_column;
        }
        ++m_pos;
    }
    SourceError errorHere(std::string message) const {
        return SourceError{m_file, m_line, m_column, std::move(message)};
    }

    std::string_view m_text;
    const std::string& m_file;
    std::size_t m_pos = 0;
    int m_line = 1;
    int m_column = 1;
};

} // namespace placer
