// Steps of a run that the session's files share (RunPipeline.cpp, SizedRunner.cpp): lowering a
// plan for physical devices, and the sizes data gives the dimensions a model names. Private to
// core/session.
#pragma once

#include "session/Session.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace placer {

/// The graph that runs and its program, for physical devices `mapping` (optimised unless
/// `optimize` is off).
Result<CompiledPlan> lowerPlanned(const PlannedModel& planned, const std::vector<Device*>& mapping,
                                  bool optimize);
/// The same with the passes chosen one by one.
Result<CompiledPlan> lowerPlanned(const PlannedModel& planned, const std::vector<Device*>& mapping,
                                  const OptimizeOptions& passes);

/// The conflict saying that `plan` does not fit a device's capacity (mem=), or null.
const Conflict* capacityConflict(const Plan& plan);

/// The open input of `graph` called `name`, or null.
const OpenInput* openInput(const Graph& graph, const std::string& name);

/// The values `data` gives the dimensions `graph`'s inputs name, or nullopt when it gives one
/// dimension two sizes.
std::optional<SymbolValues> dataSizes(const Graph& graph,
                                      const std::vector<std::pair<std::string, HostTensor>>& data);

} // namespace placer
