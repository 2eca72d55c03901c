// Laying out open groups as frames around their contents, as Model Explorer draws an expanded
// layer: every frame's contents (its nodes, and its inner frames as boxes of their size) are laid
// out on their own, innermost first, and then its parent with the frame as one box. Each such
// level is a small flat layout, kept in a LevelCache under its exact contents, so opening one group
// lays out that group and its ancestors only: its siblings' levels come back from the cache.
// Edges between nodes in different frames are laid out where the two meet (as edges between the
// boxes that hold them there) and drawn on from each node to that route.
#pragma once

#include "views/GraphvizLayout.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <unordered_map>

namespace placer::views {

/// Flat layouts of the levels of compound layouts, kept by their exact request (node sizes,
/// edges, effort). Thread-safe; bounded by the nodes it holds (the least recently used go first).
class LevelCache {
public:
    explicit LevelCache(std::size_t maxNodes = 400000) : m_maxNodes(maxNodes) {}
    /// The kept layout of `request`, or false.
    bool find(const LayoutRequest& request, LayoutResult* result);
    void insert(const LayoutRequest& request, const LayoutResult& result);
    void clear();
    std::size_t size() const;

private:
    struct Entry {
        LayoutRequest request;
        LayoutResult result;
    };
    static std::uint64_t hashOf(const LayoutRequest& request);
    mutable std::mutex m_mutex;
    std::list<std::pair<std::uint64_t, Entry>> m_entries; ///< most recently used first
    std::unordered_multimap<std::uint64_t, std::list<std::pair<std::uint64_t, Entry>>::iterator>
        m_index;
    std::size_t m_nodes = 0;
    std::size_t m_maxNodes;
};

struct CompoundStats {
    int levels = 0;    ///< the top and every frame
    int laidOut = 0;   ///< levels laid out by this call
    int fromCache = 0; ///< levels found in the cache
};

/// Space around a frame's contents and under its title, points.
inline constexpr double kFramePadding = 18;

/// Lays out `request` with its frames (request.frameParent non-empty; without frames it is
/// `level(request)`): each level with `level`, through `cache` when given. Centres, edge paths and
/// frame rectangles are in one coordinate system; a frame's rectangle holds everything drawn in
/// it, and frames in the same parent do not overlap. A level's error is the result's error.
LayoutResult compoundLayout(const LayoutRequest& request,
                            const std::function<LayoutResult(const LayoutRequest&)>& level,
                            LevelCache* cache = nullptr, CompoundStats* stats = nullptr);

} // namespace placer::views
