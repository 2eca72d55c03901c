// Typed operator attributes, kept in the order the input file gave them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace placer {

/// An ONNX node that leaves out an optional input before a given one (Clip with a max but no
/// min) keeps, under this attribute, the position of each input it has.
inline constexpr const char* kInputPositionsAttr = "onnx.input_positions";

/// None, a bool, an integer, a float, a string, or a list of integers or floats.
using AttrValue = std::variant<std::monostate, bool, std::int64_t, double, std::string,
                               std::vector<std::int64_t>, std::vector<double>>;

class Attrs {
public:
    void set(std::string name, AttrValue value);
    const AttrValue* find(std::string_view name) const;
    bool has(std::string_view name) const { return find(name) != nullptr; }

    /// The integer attribute, or fallback when absent or None. A float with an integral value is
    /// accepted; anything else yields std::nullopt.
    std::optional<std::int64_t> getInt(std::string_view name, std::int64_t fallback) const;
    std::optional<double> getFloat(std::string_view name, double fallback) const;
    std::optional<bool> getBool(std::string_view name, bool fallback) const;
    std::optional<std::string> getString(std::string_view name, std::string fallback) const;
    /// A list attribute; a single integer counts as a list of one.
    std::optional<std::vector<std::int64_t>> getInts(std::string_view name,
                                                     std::vector<std::int64_t> fallback) const;

    const std::vector<std::pair<std::string, AttrValue>>& entries() const { return m_entries; }
    bool empty() const { return m_entries.empty(); }
    bool operator==(const Attrs&) const = default;

private:
    std::vector<std::pair<std::string, AttrValue>> m_entries;
};

/// A list of strings as one string attribute (an LSTM's activations, StringNormalizer's stop
/// words): joined by commas, with "," and "\\" inside an item escaped by a backslash.
std::string joinStringList(const std::vector<std::string>& items);
/// The list joinStringList made (an empty string: no item).
std::vector<std::string> splitStringList(std::string_view joined);

/// Formats an attribute value the way Relay text spells it: 1, 1.5f, "NCHW", [1, 1], True, None.
std::string formatAttrRelay(const AttrValue& value);

} // namespace placer
