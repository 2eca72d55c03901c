// The groups a graph's drawn nodes fall into: their name scopes ("/layer1/layer1.0/conv1/Conv"
// is in "/layer1/" and "/layer1/layer1.0/"), and synthetic sub-groups where a scope (or the graph
// itself) has more than kMaxChildren children, as Model Explorer splits a huge layer: its
// children, in graph order, cut into parts of at most kMaxChildren, each a scope of its own
// ("/model/part 3 of 50/"). A scope's children are the nodes directly in it and the scopes
// directly inside it. Constants are in no scope: they are not drawn.
#pragma once

#include "ir/Graph.h"

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace placer::views {

class ScopeTree {
public:
    ScopeTree() = default;
    explicit ScopeTree(const Graph& graph);

    /// More children than this and a scope is cut into synthetic parts.
    static constexpr std::size_t kMaxChildren = 1000;
    /// Scopes deeper than this are not told apart (a name of 100,000 slashes would otherwise
    /// make 100,000 scopes of up to 100,000 bytes each).
    static constexpr std::size_t kMaxDepth = 64;

    /// The scopes `node` is in, outermost first (empty for a constant or a node in none).
    std::vector<std::string> of(NodeId node) const;
    /// How deep the deepest node is.
    std::size_t depth() const { return m_depth; }
    /// The scopes directly inside `scope` ("" for the graph), with their drawn nodes.
    std::vector<std::pair<std::string, std::size_t>> inner(const std::string& scope) const;
    /// Every scope at `depth` (1: outermost), and how many drawn nodes are in fewer scopes.
    std::set<std::string> atDepth(std::size_t depth, std::size_t* shallower = nullptr) const;
    /// Whether `scope` is a synthetic part.
    bool isPart(const std::string& scope) const;
    /// The name of part `index` (0-based) of `count` of `scope`.
    static std::string partName(const std::string& scope, std::size_t index, std::size_t count);
    /// The graph it was made for (its size and revision), to know when to make it again.
    bool isFor(const Graph& graph) const {
        return graph.size() == m_size && graph.revision() == m_revision;
    }

private:
    std::vector<std::string> m_names;   ///< scope id -> name
    std::vector<int> m_parent;          ///< scope id -> parent scope id, -1: the graph
    std::vector<std::size_t> m_members; ///< scope id -> drawn nodes inside
    std::vector<bool> m_part;           ///< scope id -> synthetic
    std::vector<int> m_innermost;       ///< node -> its innermost scope id, or -1
    std::vector<bool> m_drawn;          ///< node -> not a constant
    std::size_t m_depth = 0;
    std::size_t m_size = 0;
    std::uint64_t m_revision = 0;
};

} // namespace placer::views
