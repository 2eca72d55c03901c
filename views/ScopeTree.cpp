// Name scopes from node names, and synthetic parts of scopes with too many children.
#include "views/ScopeTree.h"

#include <algorithm>
#include <unordered_map>

namespace placer::views {

std::string ScopeTree::partName(const std::string& scope, std::size_t index, std::size_t count) {
    return (scope.empty() ? std::string("/") : scope) + "part " + std::to_string(index + 1) +
           " of " + std::to_string(count) + "/";
}

ScopeTree::ScopeTree(const Graph& graph) : m_size(graph.size()), m_revision(graph.revision()) {
    std::unordered_map<std::string, int> ids;
    m_innermost.assign(graph.size(), -1);
    m_drawn.assign(graph.size(), false);
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        m_drawn[i] = !graph.nodes()[i].isConstant();
    // A scope's children in graph order: a node (>= 0) or a scope (-2 - id). Index 0 of
    // `children` is the graph; scope id s is at s + 1.
    std::vector<std::vector<std::int64_t>> children(1);
    std::vector<bool> placed; // a scope already among its parent's children
    auto child = [](int scope) { return static_cast<std::int64_t>(-2 - scope); };
    for (std::uint32_t i = 0; i < graph.size(); ++i) {
        const Node& node = graph.nodes()[i];
        if (node.isConstant() || node.name.empty() || node.name[0] != '/')
            continue;
        int parent = -1;
        std::size_t depth = 0;
        for (std::size_t slash = node.name.find('/', 1);
             slash != std::string::npos && depth < kMaxDepth;
             slash = node.name.find('/', slash + 1), ++depth) {
            std::string name = node.name.substr(0, slash + 1);
            auto [it, inserted] = ids.emplace(std::move(name), static_cast<int>(m_names.size()));
            if (inserted) {
                m_names.push_back(it->first);
                m_parent.push_back(parent);
                m_part.push_back(false);
                placed.push_back(false);
                children.emplace_back();
            }
            const int id = it->second;
            if (!placed[static_cast<std::size_t>(id)]) {
                placed[static_cast<std::size_t>(id)] = true;
                children[static_cast<std::size_t>(parent + 1)].push_back(child(id));
            }
            parent = id;
        }
        m_innermost[i] = parent;
        if (parent >= 0)
            children[static_cast<std::size_t>(parent + 1)].push_back(i);
    }
    // Nodes in no scope are the graph's children too.
    for (std::uint32_t i = 0; i < graph.size(); ++i)
        if (!graph.nodes()[i].isConstant() && m_innermost[i] < 0)
            children[0].push_back(i);
    if (children[0].size() > kMaxChildren) {
        // Graph order: the unscoped nodes were added after the scopes; a scope's place is its
        // first node's.
        std::vector<std::pair<std::int64_t, std::int64_t>> keyed;
        std::vector<std::int64_t> firstNode(m_names.size(), -1);
        for (std::uint32_t i = 0; i < graph.size(); ++i) {
            int s = m_innermost[i];
            while (s >= 0 && m_parent[static_cast<std::size_t>(s)] >= 0)
                s = m_parent[static_cast<std::size_t>(s)];
            if (s >= 0 && firstNode[static_cast<std::size_t>(s)] < 0)
                firstNode[static_cast<std::size_t>(s)] = i;
        }
        for (std::int64_t c : children[0])
            keyed.emplace_back(c >= 0 ? c : firstNode[static_cast<std::size_t>(-2 - c)], c);
        std::stable_sort(keyed.begin(), keyed.end());
        for (std::size_t k = 0; k < keyed.size(); ++k)
            children[0][k] = keyed[k].second;
    }
    // Too many children: cut into parts, each a scope between the scope and its children.
    const std::size_t real = m_names.size();
    for (std::size_t level = 0; level <= real; ++level) {
        const std::vector<std::int64_t> list = children[level];
        if (list.size() <= kMaxChildren)
            continue;
        const int scope = static_cast<int>(level) - 1;
        const std::size_t count = (list.size() + kMaxChildren - 1) / kMaxChildren;
        const std::size_t each = (list.size() + count - 1) / count;
        const std::string name =
            scope < 0 ? std::string() : m_names[static_cast<std::size_t>(scope)];
        for (std::size_t k = 0; k < list.size(); ++k) {
            if (k % each == 0) {
                m_names.push_back(partName(name, k / each, count));
                m_parent.push_back(scope);
                m_part.push_back(true);
            }
            const int part = static_cast<int>(m_names.size()) - 1;
            const std::int64_t c = list[k];
            if (c >= 0)
                m_innermost[static_cast<std::size_t>(c)] = part;
            else
                m_parent[static_cast<std::size_t>(-2 - c)] = part;
        }
    }
    // Members and depth.
    m_members.assign(m_names.size(), 0);
    for (std::size_t i = 0; i < m_innermost.size(); ++i) {
        std::size_t depth = 0;
        for (int s = m_innermost[i]; s >= 0; s = m_parent[static_cast<std::size_t>(s)]) {
            ++m_members[static_cast<std::size_t>(s)];
            ++depth;
        }
        m_depth = std::max(m_depth, depth);
    }
}

std::vector<std::string> ScopeTree::of(NodeId node) const {
    std::vector<std::string> scopes;
    if (node.index >= m_innermost.size())
        return scopes;
    for (int s = m_innermost[node.index]; s >= 0; s = m_parent[static_cast<std::size_t>(s)])
        scopes.push_back(m_names[static_cast<std::size_t>(s)]);
    std::reverse(scopes.begin(), scopes.end());
    return scopes;
}

std::vector<std::pair<std::string, std::size_t>> ScopeTree::inner(const std::string& scope) const {
    int id = -1;
    if (!scope.empty()) {
        const auto it = std::find(m_names.begin(), m_names.end(), scope);
        if (it == m_names.end())
            return {};
        id = static_cast<int>(it - m_names.begin());
    }
    std::vector<std::pair<std::string, std::size_t>> inside;
    for (std::size_t s = 0; s < m_names.size(); ++s)
        if (m_parent[s] == id)
            inside.emplace_back(m_names[s], m_members[s]);
    return inside;
}

std::set<std::string> ScopeTree::atDepth(std::size_t depth, std::size_t* shallower) const {
    // Each scope's depth, from its parent's.
    std::vector<std::size_t> depthOf(m_names.size(), 0);
    for (std::size_t s = 0; s < m_names.size(); ++s)
        for (int p = static_cast<int>(s); p >= 0; p = m_parent[static_cast<std::size_t>(p)])
            ++depthOf[s];
    std::set<std::string> scopes;
    std::size_t fewer = 0;
    for (std::size_t i = 0; i < m_innermost.size(); ++i) {
        int s = m_innermost[i];
        if (!m_drawn[i])
            continue;
        if (s < 0 || depthOf[static_cast<std::size_t>(s)] < depth) {
            ++fewer;
            continue;
        }
        while (depthOf[static_cast<std::size_t>(s)] > depth)
            s = m_parent[static_cast<std::size_t>(s)];
        scopes.insert(m_names[static_cast<std::size_t>(s)]);
    }
    if (shallower)
        *shallower = fewer;
    return scopes;
}

bool ScopeTree::isPart(const std::string& scope) const {
    const auto it = std::find(m_names.begin(), m_names.end(), scope);
    return it != m_names.end() && m_part[static_cast<std::size_t>(it - m_names.begin())];
}

} // namespace placer::views
