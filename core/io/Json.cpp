// JSON parsing and writing.
#include "io/Json.h"

#include "io/SourceCursor.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <tuple>

namespace placer {

std::string_view Json::typeName() const {
    switch (m_type) {
    case Type::Null:
        return "null";
    case Type::Bool:
        return "a boolean";
    case Type::Number:
        return "a number";
    case Type::String:
        return "a string";
    case Type::Array:
        return "an array";
    case Type::Object:
        return "an object";
    }
    return "?";
}

const Json* Json::find(std::string_view key) const {
    for (const auto& [name, value] : m_members) {
        if (name == key)
            return &value;
    }
    return nullptr;
}

Json& Json::set(std::string key, Json value) {
    m_type = Type::Object;
    for (auto& [name, existing] : m_members) {
        if (name == key) {
            existing = std::move(value);
            return existing;
        }
    }
    m_members.emplace_back(std::move(key), std::move(value));
    return m_members.back().second;
}

Json& Json::operator[](std::string_view key) {
    for (auto& [name, existing] : m_members) {
        if (name == key)
            return existing;
    }
    return set(std::string(key), Json());
}

namespace {

void escapeString(std::string& out, std::string_view s) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (c < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
                out += buffer;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    out += '"';
}

void newline(std::string& out, int indent, int level) {
    if (indent < 0)
        return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent * level), ' ');
}

} // namespace

void Json::dumpTo(std::string& out, int indent, int level) const {
    switch (m_type) {
    case Type::Null:
        out += "null";
        break;
    case Type::Bool:
        out += m_bool ? "true" : "false";
        break;
    case Type::Number:
        if (m_isInt) {
            out += std::to_string(m_int);
        } else if (!std::isfinite(m_double)) {
            out += "null";
        } else {
            char buffer[40];
            std::snprintf(buffer, sizeof buffer, "%.17g", m_double);
            out += buffer;
            if (std::string_view(buffer).find_first_of(".en") == std::string_view::npos)
                out += ".0"; // stays a float when read back
        }
        break;
    case Type::String:
        escapeString(out, m_string);
        break;
    case Type::Array: {
        if (m_items.empty()) {
            out += "[]";
            break;
        }
        // Arrays of scalars stay on one line; they are shapes and lists of names.
        bool scalars = true;
        for (const Json& item : m_items)
            scalars = scalars && !item.isArray() && !item.isObject();
        out += '[';
        for (std::size_t i = 0; i < m_items.size(); ++i) {
            if (i > 0)
                out += scalars || indent < 0 ? ", " : ",";
            if (!scalars)
                newline(out, indent, level + 1);
            m_items[i].dumpTo(out, indent, level + 1);
        }
        if (!scalars)
            newline(out, indent, level);
        out += ']';
        break;
    }
    case Type::Object: {
        if (m_members.empty()) {
            out += "{}";
            break;
        }
        out += '{';
        for (std::size_t i = 0; i < m_members.size(); ++i) {
            if (i > 0)
                out += indent < 0 ? ", " : ",";
            newline(out, indent, level + 1);
            escapeString(out, m_members[i].first);
            out += ": ";
            m_members[i].second.dumpTo(out, indent, level + 1);
        }
        newline(out, indent, level);
        out += '}';
        break;
    }
    }
}

std::string Json::dump(int indent) const {
    std::string out;
    dumpTo(out, indent, 0);
    return out;
}

class JsonParser : private SourceCursor {
public:
    JsonParser(std::string_view text, const std::string& file) : SourceCursor(text, file) {}

    Result<Json> parseDocument() {
        Json value;
        if (auto error = parseValue(&value, 0))
            return *error;
        skipSpace();
        if (m_pos < m_text.size())
            return errorHere("unexpected text after the JSON document");
        return value;
    }

private:
    static constexpr int kMaxDepth = 256;

    void skipSpace() {
        while (m_pos < m_text.size() &&
               (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
            advance();
    }

    std::optional<SourceError> parseValue(Json* out, int depth) {
        skipSpace();
        if (depth > kMaxDepth)
            return errorHere("JSON nested more than 256 levels deep");
        out->m_line = m_line;
        out->m_column = m_column;
        const char c = peek();
        if (c == '{')
            return parseObject(out, depth);
        if (c == '[')
            return parseArray(out, depth);
        if (c == '"') {
            out->m_type = Json::Type::String;
            return parseString(&out->m_string);
        }
        if (c == '-' || (c >= '0' && c <= '9'))
            return parseNumber(out);
        for (const auto& [word, type, value] : {std::tuple{"true", Json::Type::Bool, true},
                                                std::tuple{"false", Json::Type::Bool, false},
                                                std::tuple{"null", Json::Type::Null, false}}) {
            const std::string_view w(word);
            if (m_text.substr(m_pos, w.size()) == w) {
                for (std::size_t i = 0; i < w.size(); ++i)
                    advance();
                out->m_type = type;
                out->m_bool = value;
                return std::nullopt;
            }
        }
        if (m_pos >= m_text.size())
            return errorHere("unexpected end of input: expected a JSON value");
        return errorHere(std::string("unexpected character '") + c + "': expected a JSON value");
    }

    std::optional<SourceError> parseObject(Json* out, int depth) {
        out->m_type = Json::Type::Object;
        advance();
        skipSpace();
        if (peek() == '}') {
            advance();
            return std::nullopt;
        }
        while (true) {
            skipSpace();
            if (peek() != '"')
                return errorHere("expected a member name in double quotes");
            const int keyLine = m_line, keyColumn = m_column;
            std::string key;
            if (auto error = parseString(&key))
                return error;
            if (out->find(key))
                return SourceError{m_file, keyLine, keyColumn,
                                   "member \"" + key + "\" appears twice"};
            skipSpace();
            if (peek() != ':')
                return errorHere("expected ':' after member \"" + key + "\"");
            advance();
            Json value;
            if (auto error = parseValue(&value, depth + 1))
                return error;
            out->m_members.emplace_back(std::move(key), std::move(value));
            skipSpace();
            if (peek() == ',') {
                advance();
                continue;
            }
            if (peek() == '}') {
                advance();
                return std::nullopt;
            }
            return errorHere("expected ',' or '}' in object");
        }
    }

    std::optional<SourceError> parseArray(Json* out, int depth) {
        out->m_type = Json::Type::Array;
        advance();
        skipSpace();
        if (peek() == ']') {
            advance();
            return std::nullopt;
        }
        while (true) {
            Json value;
            if (auto error = parseValue(&value, depth + 1))
                return error;
            out->m_items.push_back(std::move(value));
            skipSpace();
            if (peek() == ',') {
                advance();
                continue;
            }
            if (peek() == ']') {
                advance();
                return std::nullopt;
            }
            return errorHere("expected ',' or ']' in array");
        }
    }

    std::optional<SourceError> parseString(std::string* out) {
        const int line = m_line, column = m_column;
        advance();
        while (true) {
            if (m_pos >= m_text.size())
                return SourceError{m_file, line, column, "unterminated string"};
            const char c = peek();
            if (c == '"') {
                advance();
                return std::nullopt;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return errorHere("control character in string");
            if (c != '\\') {
                *out += c;
                advance();
                continue;
            }
            advance();
            const char escaped = peek();
            if (m_pos >= m_text.size())
                return SourceError{m_file, line, column, "unterminated string"};
            advance();
            switch (escaped) {
            case '"':
            case '\\':
            case '/':
                *out += escaped;
                break;
            case 'b':
                *out += '\b';
                break;
            case 'f':
                *out += '\f';
                break;
            case 'n':
                *out += '\n';
                break;
            case 'r':
                *out += '\r';
                break;
            case 't':
                *out += '\t';
                break;
            case 'u': {
                unsigned code = 0;
                if (auto error = parseHex4(&code))
                    return error;
                if (code >= 0xD800 && code <= 0xDBFF) {
                    unsigned low = 0;
                    if (peek() != '\\')
                        return errorHere("unpaired UTF-16 surrogate in \\u escape");
                    advance();
                    if (peek() != 'u')
                        return errorHere("unpaired UTF-16 surrogate in \\u escape");
                    advance();
                    if (auto error = parseHex4(&low))
                        return error;
                    if (low < 0xDC00 || low > 0xDFFF)
                        return errorHere("invalid UTF-16 surrogate pair");
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                }
                appendUtf8(out, code);
                break;
            }
            default:
                return errorHere(std::string("invalid escape '\\") + escaped + "'");
            }
        }
    }

    std::optional<SourceError> parseHex4(unsigned* code) {
        for (int i = 0; i < 4; ++i) {
            const char h = peek();
            unsigned digit = 0;
            if (h >= '0' && h <= '9')
                digit = h - '0';
            else if (h >= 'a' && h <= 'f')
                digit = h - 'a' + 10;
            else if (h >= 'A' && h <= 'F')
                digit = h - 'A' + 10;
            else
                return errorHere("expected four hex digits after \\u");
            *code = *code * 16 + digit;
            advance();
        }
        return std::nullopt;
    }

    static void appendUtf8(std::string* out, unsigned code) {
        if (code < 0x80) {
            *out += static_cast<char>(code);
        } else if (code < 0x800) {
            *out += static_cast<char>(0xC0 | (code >> 6));
            *out += static_cast<char>(0x80 | (code & 0x3F));
        } else if (code < 0x10000) {
            *out += static_cast<char>(0xE0 | (code >> 12));
            *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            *out += static_cast<char>(0x80 | (code & 0x3F));
        } else {
            *out += static_cast<char>(0xF0 | (code >> 18));
            *out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
            *out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            *out += static_cast<char>(0x80 | (code & 0x3F));
        }
    }

    std::optional<SourceError> parseNumber(Json* out) {
        const std::size_t start = m_pos;
        bool isInt = true;
        if (peek() == '-')
            advance();
        if (!(peek() >= '0' && peek() <= '9'))
            return errorHere("malformed number");
        while (peek() >= '0' && peek() <= '9')
            advance();
        if (peek() == '.') {
            isInt = false;
            advance();
            if (!(peek() >= '0' && peek() <= '9'))
                return errorHere("malformed number: digits expected after '.'");
            while (peek() >= '0' && peek() <= '9')
                advance();
        }
        if (peek() == 'e' || peek() == 'E') {
            isInt = false;
            advance();
            if (peek() == '+' || peek() == '-')
                advance();
            if (!(peek() >= '0' && peek() <= '9'))
                return errorHere("malformed number: digits expected in the exponent");
            while (peek() >= '0' && peek() <= '9')
                advance();
        }
        const std::string_view text = m_text.substr(start, m_pos - start);
        out->m_type = Json::Type::Number;
        if (isInt) {
            std::int64_t value = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec == std::errc() && ptr == text.data() + text.size()) {
                out->m_isInt = true;
                out->m_int = value;
                out->m_double = static_cast<double>(value);
                return std::nullopt;
            }
        }
        double value = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc())
            return errorHere("number " + std::string(text) + " is out of range");
        out->m_double = value;
        return std::nullopt;
    }
};

Result<Json> Json::parse(std::string_view text, const std::string& fileName) {
    return JsonParser(text, fileName).parseDocument();
}

} // namespace placer
