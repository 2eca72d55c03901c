// Strong identifier types that cross layers instead of raw pointers or bare integers.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

namespace placer {

/// Index of a node in Graph::nodes(); nodes are stored in topological order.
struct NodeId {
    std::uint32_t index = UINT32_MAX;

    constexpr NodeId() = default;
    constexpr explicit NodeId(std::uint32_t i) : index(i) {}
    constexpr bool valid() const { return index != UINT32_MAX; }
    constexpr auto operator<=>(const NodeId&) const = default;
};

/// Index of a virtual device in a DeviceSet; invalid means "no device yet".
struct DeviceId {
    std::int32_t index = -1;

    constexpr DeviceId() = default;
    constexpr explicit DeviceId(std::int32_t i) : index(i) {}
    constexpr bool valid() const { return index >= 0; }
    constexpr auto operator<=>(const DeviceId&) const = default;
};

/// One output of one node: the unit of data that flows along edges.
struct ValueRef {
    NodeId node;
    std::uint32_t output = 0;

    constexpr auto operator<=>(const ValueRef&) const = default;
};

} // namespace placer
