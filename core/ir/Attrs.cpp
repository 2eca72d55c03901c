// Typed operator attributes.
#include "ir/Attrs.h"

#include <cmath>
#include <cstdio>

namespace placer {

void Attrs::set(std::string name, AttrValue value) {
    for (auto& [key, existing] : m_entries) {
        if (key == name) {
            existing = std::move(value);
            return;
        }
    }
    m_entries.emplace_back(std::move(name), std::move(value));
}

const AttrValue* Attrs::find(std::string_view name) const {
    for (const auto& [key, value] : m_entries) {
        if (key == name)
            return &value;
    }
    return nullptr;
}

std::optional<std::int64_t> Attrs::getInt(std::string_view name, std::int64_t fallback) const {
    const AttrValue* value = find(name);
    if (!value || std::holds_alternative<std::monostate>(*value))
        return fallback;
    if (const auto* i = std::get_if<std::int64_t>(value))
        return *i;
    if (const auto* b = std::get_if<bool>(value))
        return *b ? 1 : 0;
    if (const auto* d = std::get_if<double>(value)) {
        if (std::floor(*d) == *d && std::fabs(*d) < 9e15)
            return static_cast<std::int64_t>(*d);
    }
    if (const auto* list = std::get_if<std::vector<std::int64_t>>(value)) {
        if (list->size() == 1)
            return list->front();
    }
    return std::nullopt;
}

std::optional<double> Attrs::getFloat(std::string_view name, double fallback) const {
    const AttrValue* value = find(name);
    if (!value || std::holds_alternative<std::monostate>(*value))
        return fallback;
    if (const auto* d = std::get_if<double>(value))
        return *d;
    if (const auto* i = std::get_if<std::int64_t>(value))
        return static_cast<double>(*i);
    return std::nullopt;
}

std::optional<bool> Attrs::getBool(std::string_view name, bool fallback) const {
    const AttrValue* value = find(name);
    if (!value || std::holds_alternative<std::monostate>(*value))
        return fallback;
    if (const auto* b = std::get_if<bool>(value))
        return *b;
    if (const auto* i = std::get_if<std::int64_t>(value)) {
        if (*i == 0 || *i == 1)
            return *i == 1;
    }
    return std::nullopt;
}

std::optional<std::string> Attrs::getString(std::string_view name, std::string fallback) const {
    const AttrValue* value = find(name);
    if (!value || std::holds_alternative<std::monostate>(*value))
        return fallback;
    if (const auto* s = std::get_if<std::string>(value))
        return *s;
    return std::nullopt;
}

std::optional<std::vector<std::int64_t>> Attrs::getInts(std::string_view name,
                                                        std::vector<std::int64_t> fallback) const {
    const AttrValue* value = find(name);
    if (!value || std::holds_alternative<std::monostate>(*value))
        return fallback;
    if (const auto* list = std::get_if<std::vector<std::int64_t>>(value))
        return *list;
    if (const auto* i = std::get_if<std::int64_t>(value))
        return std::vector<std::int64_t>{*i};
    if (const auto* floats = std::get_if<std::vector<double>>(value)) {
        if (floats->empty())
            return std::vector<std::int64_t>{};
    }
    return std::nullopt;
}

namespace {
std::string formatFloat(double d) {
    char buffer[40];
    std::snprintf(buffer, sizeof buffer, "%.9g", d);
    std::string text = buffer;
    if (text.find_first_of(".eni") == std::string::npos)
        text += ".0";
    return text + "f";
}
} // namespace

std::string formatAttrRelay(const AttrValue& value) {
    struct Visitor {
        std::string operator()(std::monostate) const { return "None"; }
        std::string operator()(bool b) const { return b ? "True" : "False"; }
        std::string operator()(std::int64_t i) const { return std::to_string(i); }
        std::string operator()(double d) const { return formatFloat(d); }
        std::string operator()(const std::string& s) const {
            std::string out = "\"";
            for (char c : s) {
                if (c == '"' || c == '\\')
                    out += '\\';
                out += c;
            }
            return out + "\"";
        }
        std::string operator()(const std::vector<std::int64_t>& list) const {
            std::string out = "[";
            for (std::size_t i = 0; i < list.size(); ++i)
                out += (i ? ", " : "") + std::to_string(list[i]);
            return out + "]";
        }
        std::string operator()(const std::vector<double>& list) const {
            std::string out = "[";
            for (std::size_t i = 0; i < list.size(); ++i)
                out += (i ? ", " : "") + formatFloat(list[i]);
            return out + "]";
        }
    };
    return std::visit(Visitor{}, value);
}

std::string joinStringList(const std::vector<std::string>& items) {
    std::string joined;
    for (std::size_t k = 0; k < items.size(); ++k) {
        if (k > 0)
            joined += ',';
        for (char c : items[k]) {
            if (c == ',' || c == '\\')
                joined += '\\';
            joined += c;
        }
    }
    return joined;
}

std::vector<std::string> splitStringList(std::string_view joined) {
    std::vector<std::string> items;
    if (joined.empty())
        return items;
    items.emplace_back();
    for (std::size_t i = 0; i < joined.size(); ++i) {
        if (joined[i] == '\\' && i + 1 < joined.size())
            items.back() += joined[++i];
        else if (joined[i] == ',')
            items.emplace_back();
        else
            items.back() += joined[i];
    }
    return items;
}

} // namespace placer
