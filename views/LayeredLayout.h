// A layered (Sugiyama) layout that scales to any graph the canvas draws, for graphs too large
// for Graphviz's dot (25 s at 5,000 nodes, out of memory at 50,000): ranks by longest path in
// linear time, sources moved down next to their first consumer, edges longer than a rank routed
// through virtual nodes, a bounded number of sweeps ordering by barycentre and by median in
// turn, each followed by dot's transposition of neighbours (ties swapped now and then to leave a
// plateau), that keep the ordering with the fewest crossings (counted in O(E log V) per pair of
// ranks; 1.06-1.15x dot's on random layered graphs of 300-2,000 nodes), and x positions that
// minimise each node's squared distance to its neighbours' mean under the ordering and separations
// (pool adjacent violators, linear per rank). Top to bottom, like dot. Deterministic: the same
// request gives the same result.
#pragma once

#include "views/GraphvizLayout.h"

#include <cstdint>

namespace placer::views {

struct LayeredOptions {
    int sweeps = 8; ///< sweeps (down and up count as one each); three times this up to 30,000 nodes
    int positionPasses = 6;  ///< passes of the x-position refinement
    double rankGap = 46;     ///< vertical space between ranks, points
    double nodeGap = 24;     ///< horizontal space between neighbours in a rank, points
    double virtualWidth = 8; ///< the width a long edge takes where it crosses a rank
};

/// Statistics of a layered layout, for tests and benchmarks.
struct LayeredStats {
    int ranks = 0;
    std::int64_t virtualNodes = 0;
    std::int64_t crossings = 0;        ///< between adjacent ranks, of the ordering kept
    std::int64_t initialCrossings = 0; ///< of the ordering before the sweeps
    std::int64_t reversedEdges = 0;    ///< edges of cycles drawn upwards
};

/// Lays the request out. Never fails (a request with no nodes gives an empty result). Each edge's
/// path runs from the bottom of its tail to the top of its head, through its virtual nodes.
LayoutResult layeredLayout(const LayoutRequest& request, const LayeredOptions& options = {},
                           LayeredStats* stats = nullptr);

/// Crossings between edge segments in a layout, counted from the node centres' ranks (y) and
/// orders (x): for graphs whose edges join adjacent ranks or run straight through virtual
/// nodes, the number dot's and this layout's drawings show. Edges are taken as straight lines
/// from tail to head within each pair of adjacent distinct y levels they span; a comparison
/// measure, O(E^2) in the worst case, meant for benchmarks.
std::int64_t countCrossings(const LayoutRequest& request, const LayoutResult& layout);

} // namespace placer::views
