// Splitting inside an op: a region's weights and values sharded across devices (--shard).
//
// A `--shard 'NODES=DEV[:SHARE],...'` request names a region as `--split` does, and the devices
// that share it. Where `--split` gives each device rows of the batch, `--shard` cuts the ops
// themselves, as Megatron-LM cuts a transformer: a matrix product whose input every device holds
// (Replicate) takes its weight's columns on each device, so its output is cut on its last axis
// (Shard); the next product reads that cut as its reduced axis and takes its weight's rows, so
// each device holds a partial sum (Partial) that one AllReduce adds up. Each device holds only
// its slice of every weight it cuts.
//
// Propagation goes once through the region in graph order, each op taking its inputs' shardings
// to its outputs' by its rule:
// - element-wise ops and broadcasting (a constant cut alike, a bias added to a partial sum once);
// - MatMul, Gemm and Conv (by output columns or channels, or by the reduced axis to a partial);
// - Transpose and Reshape (the cut axis followed through a split or merge of axes, attention's
//   [B, S, E] to [B, S, H, D] by heads), Unsqueeze and Squeeze;
// - Softmax, LayerNormalization and reductions over axes that are not cut (ReduceSum over the
//   cut to a partial), and Concat, Split, Slice and Gather on other axes.
// An op with no rule for what it reads, or whose inputs disagree, reads them whole: the planner
// inserts the collective (AllGather for a cut, AllReduce for a partial sum) and the op runs on
// every device, replicated. Where a value leaves the region it is gathered or summed on one
// device. Each collective is a node of the graph that runs (Plan::sharded), on every device in
// the same order, and listed with its bytes and the reader that needed it (SplitRegion).
#pragma once

#include "ir/Graph.h"
#include "plan/Plan.h"

#include <cstdint>
#include <vector>

namespace placer {

/// Decides how `region`'s shards (devices and shares given) compute `candidates`, the compute
/// nodes its request names, in graph order: fills its nodes, ops and collectives. Deterministic,
/// linear in the region.
void shardTensors(const Graph& graph, const std::vector<std::uint32_t>& candidates,
                  SplitRegion& region);

/// Auto mode (PlanOptions::autoShard): `placed`, the plan of whole ops, or the same graph with
/// every op sharded across the largest group of devices of one kind when that is predicted at
/// least a sixth faster on devices placer calibrate measured; a note says which and why.
Plan weighSharding(const Graph& graph, const DeviceSet& devices, const PlanOptions& options,
                   Plan placed);

/// Offsets along an axis of `extent` for shares (shardRows' rows summed), or empty when a shard
/// would get nothing.
std::vector<std::int64_t> shardBounds(std::int64_t extent, const std::vector<Shard>& shards);

} // namespace placer
