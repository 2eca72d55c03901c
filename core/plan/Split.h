// Homogeneous splitting: a region of the graph sharded across devices on the batch axis.
//
// A `--split 'NODES=DEV[:SHARE],...'` request names a region (the compute nodes NODES matches)
// and the devices that share it. Each device runs the whole region on its rows of the batch:
// the values entering the region are split on axis 0 (ONNX Split), every node runs once per
// device, and the values leaving it are concatenated on axis 0 (ONNX Concat). Weights and other
// values the region reads whole are read by every shard (constants are replicated at load, as
// always).
//
// A region is split only where that computes what the unsplit graph computes: every op in it
// must treat the rows of the batch independently (convolution, pooling, element-wise ops,
// matrix products whose rows or batch dimensions hold the batch, inference-mode normalisation,
// softmax or reductions over other axes). The batch is followed through the region
// (BatchAxis, ir/BatchRule.h, which holds each op's rule): a transpose moves it to another axis, a
// reshape may fold neighbouring axes around it (PyTorch's attention turns [N, S, E] into [S, N*h,
// d] and [S*N, E] and back), and the values leaving the region are concatenated where they carry
// it. An op that mixes rows (a reduction or softmax over the batch axis, a reshape that spreads it
// over several axes, BatchNorm in training mode) is a Conflict naming the op and why; the plan
// splits the region without it (the largest legal sub-region) and the op runs unsplit. So are a pin
// inside the region onto another device (the pin wins), a node in two regions (the first wins), and
// a batch smaller than the number of shards (nothing is split).
//
// Splits are annotations like pins: the user's graph is never changed. The plan keeps a device
// per user node (a split node's is its first shard's, ReasonKind::Split), the regions
// (Plan::splits), and the graph that runs (Plan::sharded), whose nodes say which user node,
// region and shard they compute.
#pragma once

#include "ir/BatchRule.h"
#include "ir/DeviceSet.h"
#include "ir/Graph.h"
#include "ir/Result.h"
#include "plan/Plan.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// Parses "NODES=DEV[:SHARE],DEV[:SHARE],..."; an error sentence, naming the option it came
/// with, when it is malformed.
Result<SplitRequest> parseSplitRequest(std::string_view text, std::string_view option = "--split");
/// The request as parseSplitRequest() reads it.
std::string formatSplitRequest(const SplitRequest& request);

/// Rows of a batch per shard, in proportion to the shares (0 counts as 1), the remainder going
/// to the largest fractions, earlier shards first on ties. Sums to `batch`.
std::vector<std::int64_t> shardRows(std::int64_t batch, const std::vector<std::int64_t>& shares);

struct SplitAnalysis {
    std::vector<SplitRegion> regions; ///< one per request, possibly empty (nothing to split)
    std::vector<Conflict> conflicts;
    std::vector<std::int32_t> regionOf; ///< per node: the region that splits it, or -1
};

/// Which nodes each request splits, and what stands in the way. Deterministic; linear in the
/// graph and the requests.
SplitAnalysis analyzeSplits(const Graph& graph, const DeviceSet& devices,
                            const std::vector<SplitRequest>& requests);

/// The graph that runs `plan`'s split regions once per shard (Plan::sharded), its nodes outside
/// the regions held where `plan` put them. Its own plan is left to the caller.
ShardedGraph shardGraph(const Graph& graph, const Plan& plan);

/// The region of a plan that streams several batches (PlanOptions::streamBatches), or null.
const SplitRegion* streamRegion(const Plan& plan);

} // namespace placer
