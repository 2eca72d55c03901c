// Relay text tokenizer.
#include "io/RelayLexer.h"

#include "io/SourceCursor.h"

#include <cctype>
#include <optional>

namespace placer {

namespace {

bool isIdentStart(char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

class Lexer : private SourceCursor {
public:
    Lexer(std::string_view text, const std::string& file) : SourceCursor(text, file) {}

    Result<std::vector<RelayToken>> run() {
        std::vector<RelayToken> tokens;
        std::string comment;
        while (true) {
            if (auto error = skipSpaceAndComments(&comment))
                return *error;
            RelayToken token;
            token.line = m_line;
            token.column = m_column;
            token.comment = std::move(comment);
            comment.clear();
            if (m_pos >= m_text.size()) {
                tokens.push_back(std::move(token));
                return tokens;
            }
            if (m_text.substr(m_pos).starts_with("#[metadata]")) {
                token.kind = RelayTokenKind::End;
                tokens.push_back(std::move(token));
                return tokens;
            }
            if (auto error = lexToken(&token))
                return *error;
            tokens.push_back(std::move(token));
        }
    }

private:
    std::optional<SourceError> skipSpaceAndComments(std::string* comment) {
        while (m_pos < m_text.size()) {
            const char c = peek();
            if (std::isspace(static_cast<unsigned char>(c))) {
                advance();
            } else if (c == '/' && peek(1) == '/') {
                while (m_pos < m_text.size() && peek() != '\n')
                    advance();
            } else if (c == '/' && peek(1) == '*') {
                const int line = m_line, column = m_column;
                advance();
                advance();
                const std::size_t start = m_pos;
                int depth = 1;
                std::size_t end = start;
                while (depth > 0) {
                    if (m_pos >= m_text.size())
                        return SourceError{m_file, line, column, "unterminated /* comment"};
                    if (peek() == '/' && peek(1) == '*') {
                        ++depth;
                        advance();
                    } else if (peek() == '*' && peek(1) == '/') {
                        if (--depth == 0)
                            end = m_pos;
                        advance();
                    }
                    advance();
                }
                *comment = std::string(m_text.substr(start, end - start));
            } else {
                break;
            }
        }
        return std::nullopt;
    }

    std::optional<SourceError> lexToken(RelayToken* token) {
        const char c = peek();
        if (c == '%' || c == '@') {
            const std::size_t start = m_pos;
            advance();
            if (!isIdentChar(peek()))
                return errorHere(std::string("expected a name after '") + c + "'");
            while (isIdentChar(peek()))
                advance();
            token->kind = c == '%' ? RelayTokenKind::Local : RelayTokenKind::Global;
            token->text = std::string(m_text.substr(start, m_pos - start));
            return std::nullopt;
        }
        if (isIdentStart(c)) {
            const std::size_t start = m_pos;
            while (isIdentChar(peek()) || (peek() == '.' && isIdentStart(peek(1))))
                advance();
            token->kind = RelayTokenKind::Ident;
            token->text = std::string(m_text.substr(start, m_pos - start));
            return std::nullopt;
        }
        if (isDigit(c) || (c == '-' && (isDigit(peek(1)) || peek(1) == '.'))) {
            return lexNumber(token);
        }
        if (c == '"')
            return lexString(token);
        if (c == '-' && peek(1) == '>') {
            advance();
            advance();
            token->kind = RelayTokenKind::Punct;
            token->text = "->";
            return std::nullopt;
        }
        if (c == '#') {
            advance();
            token->kind = RelayTokenKind::Hash;
            token->text = "#";
            return std::nullopt;
        }
        static constexpr std::string_view kPunct = "()[]{},;:=.?";
        if (kPunct.find(c) != std::string_view::npos) {
            advance();
            token->kind = RelayTokenKind::Punct;
            token->text = std::string(1, c);
            return std::nullopt;
        }
        return errorHere(std::string("unexpected character '") + c + "'");
    }

    std::optional<SourceError> lexNumber(RelayToken* token) {
        const std::size_t start = m_pos;
        bool isFloat = false;
        if (peek() == '-')
            advance();
        while (isDigit(peek()))
            advance();
        if (peek() == '.' && isDigit(peek(1))) {
            isFloat = true;
            advance();
            while (isDigit(peek()))
                advance();
        }
        if ((peek() == 'e' || peek() == 'E') &&
            (isDigit(peek(1)) || ((peek(1) == '-' || peek(1) == '+') && isDigit(peek(2))))) {
            isFloat = true;
            advance();
            advance();
            while (isDigit(peek()))
                advance();
        }
        // Type suffix: f, f16, f32, f64, i8 ... i64, u8.
        if (peek() == 'f' || peek() == 'i' || peek() == 'u') {
            isFloat = isFloat || peek() == 'f';
            advance();
            while (isDigit(peek()))
                advance();
        }
        if (isIdentChar(peek()))
            return errorHere("malformed number '" +
                             std::string(m_text.substr(start, m_pos - start + 1)) + "'");
        token->kind = isFloat ? RelayTokenKind::Float : RelayTokenKind::Integer;
        token->text = std::string(m_text.substr(start, m_pos - start));
        return std::nullopt;
    }

    std::optional<SourceError> lexString(RelayToken* token) {
        const int line = m_line, column = m_column;
        advance();
        std::string value;
        while (true) {
            if (m_pos >= m_text.size() || peek() == '\n')
                return SourceError{m_file, line, column, "unterminated string"};
            const char c = peek();
            advance();
            if (c == '"')
                break;
            if (c == '\\' && m_pos < m_text.size()) {
                const char escaped = peek();
                advance();
                value += escaped == 'n' ? '\n' : escaped == 't' ? '\t' : escaped;
                continue;
            }
            value += c;
        }
        token->kind = RelayTokenKind::String;
        token->text = std::move(value);
        return std::nullopt;
    }
};

} // namespace

Result<std::vector<RelayToken>> lexRelay(std::string_view text, const std::string& fileName) {
    return Lexer(text, fileName).run();
}

} // namespace placer
