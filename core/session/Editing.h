// What an editor of a plan calls between its edits, below every front end: the GUI's document
// re-plans through Session::replan, previews a split, turns what the user typed for an input
// into data and hands the session the plan it edited. Nothing here is the GUI's own: the CLI and
// the Python module take the same texts the same way.
#pragma once

#include "plan/PlanWorkspace.h"
#include "plan/Split.h"
#include "session/Session.h"

#include <cstdint>
#include <optional>
#include <string>

namespace placer {

/// A plan made and edited outside Session::open (the GUI's document), as the session's runs
/// take it: its request says its devices and options, so that a run for data of other shapes
/// plans it again the same way; `source` is where the model was read from, when a file.
PlannedModel adoptPlan(LoadedModel model, Plan plan, PlanOptions options,
                       std::optional<ModelSource> source);

/// What splitting as `request` asks would make of `graph` (the Split dialog's preview): the
/// analysis the plan itself runs, its one region and the conflicts in the way.
SplitAnalysis previewSplit(const Graph& graph, const DeviceSet& devices,
                           const SplitRequest& request);

/// The data for input `name` of `graph` from what a user typed: the path of a .npy file, or a
/// shape ("2,16,64", "2x16x64") for seeded random data of the input's element type (`seed`
/// picks the data). An error says which input and why: no such input, an unreadable file, a
/// text that is neither.
Result<HostTensor> inputFromText(const Graph& graph, const std::string& name,
                                 const std::string& text, std::uint64_t seed);

} // namespace placer
