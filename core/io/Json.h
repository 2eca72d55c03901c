// A small JSON document model: parsing with line/column positions and deterministic writing.
#pragma once

#include "ir/Result.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace placer {

class Json {
public:
    enum class Type { Null, Bool, Number, String, Array, Object };
    using Members = std::vector<std::pair<std::string, Json>>;

    Json() = default;
    Json(std::nullptr_t) {}
    Json(bool b) : m_type(Type::Bool), m_bool(b) {}
    Json(int i) : Json(static_cast<std::int64_t>(i)) {}
    Json(std::int64_t i)
        : m_type(Type::Number), m_int(i), m_double(static_cast<double>(i)), m_isInt(true) {}
    Json(std::uint64_t i) : Json(static_cast<std::int64_t>(i)) {}
    Json(double d) : m_type(Type::Number), m_double(d) {}
    Json(const char* s) : m_type(Type::String), m_string(s) {}
    Json(std::string s) : m_type(Type::String), m_string(std::move(s)) {}
    Json(std::string_view s) : m_type(Type::String), m_string(s) {}

    static Json array() {
        Json j;
        j.m_type = Type::Array;
        return j;
    }
    static Json object() {
        Json j;
        j.m_type = Type::Object;
        return j;
    }
    /// An object of these members in this order: `Json::object({{"name", n}, {"bytes", b}})`
    /// (a key given twice keeps its last value, as set() does).
    static Json object(std::initializer_list<std::pair<std::string, Json>> members) {
        Json j = object();
        for (const auto& [key, value] : members)
            j.set(key, value);
        return j;
    }

    Type type() const { return m_type; }
    bool isNull() const { return m_type == Type::Null; }
    bool isBool() const { return m_type == Type::Bool; }
    bool isNumber() const { return m_type == Type::Number; }
    bool isInteger() const { return m_type == Type::Number && m_isInt; }
    bool isString() const { return m_type == Type::String; }
    bool isArray() const { return m_type == Type::Array; }
    bool isObject() const { return m_type == Type::Object; }
    std::string_view typeName() const;

    bool asBool() const { return m_bool; }
    std::int64_t asInt() const { return m_isInt ? m_int : static_cast<std::int64_t>(m_double); }
    double asDouble() const { return m_double; }
    const std::string& asString() const { return m_string; }

    // Arrays
    std::vector<Json>& items() { return m_items; }
    const std::vector<Json>& items() const { return m_items; }
    Json& push(Json value) {
        m_items.push_back(std::move(value));
        return m_items.back();
    }
    std::size_t size() const { return m_type == Type::Object ? m_members.size() : m_items.size(); }

    // Objects keep insertion order, so written documents are stable.
    const Members& members() const { return m_members; }
    const Json* find(std::string_view key) const;
    /// Sets (or replaces) a member and returns it.
    Json& set(std::string key, Json value);
    Json& operator[](std::string_view key);

    int line() const { return m_line; }
    int column() const { return m_column; }

    /// Writes JSON; indent < 0 writes one line, otherwise pretty-prints with that many spaces.
    std::string dump(int indent = 2) const;

    /// Parses a JSON document; errors carry file:line:col.
    static Result<Json> parse(std::string_view text, const std::string& fileName);

private:
    friend class JsonParser;
    void dumpTo(std::string& out, int indent, int level) const;

    Type m_type = Type::Null;
    bool m_bool = false;
    std::int64_t m_int = 0;
    double m_double = 0;
    bool m_isInt = false;
    std::string m_string;
    std::vector<Json> m_items;
    Members m_members;
    int m_line = 0;
    int m_column = 0;
};

} // namespace placer
