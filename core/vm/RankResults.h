// A run that spans ranks, put together on rank 0 (device/Ranks.h): every rank times the work it
// ran and holds the outputs of its devices; rank 0 gathers them into one RunResult, each rank's
// times moved onto rank 0's clock by offsets measured when they are gathered.
#pragma once

#include "ir/Graph.h"
#include "ir/Result.h"
#include "vm/Executor.h"

#include <cstdint>

namespace placer {

/// Gathers `result` from every rank into rank 0's (collective: every rank calls it after its
/// run). Rank 0's result then holds every instruction's times, every stream's figures and trace
/// (on its clock), every output, and per iteration the slowest rank's latency; the other ranks'
/// results are left as they were. A no-op when the process runs alone.
Status gatherRankResults(RunResult& result);

/// What every rank compares before a run (device/Ranks.h's checkRanksAgree): the graph's
/// structure, types and constants' sizes, and samples of their bytes.
std::uint64_t graphFingerprint(const Graph& graph);

} // namespace placer
