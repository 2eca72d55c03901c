// The plan options as people write them ("conv1=gpu", "nn.conv*=gpu", "*=gpu:3,cpu:1",
// "auto"): one parser for the command lines of `placer` and `placement-explorer` and the Python
// module's keyword arguments, so that every front end takes the same spellings and says the same
// sentences about a malformed one.
#pragma once

#include "session/Session.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

/// The option names takePlanOption() knows, without dashes: format, input-shape, devices,
/// default, host, pin, pin-fixed, rule, fallback, split, mode, constants.
const std::vector<std::string>& planOptionNames();

/// Takes plan option `name` (a name from planOptionNames()) with its text `value` into `source`
/// and `request`: "--pin conv1=gpu" is takePlanOption("pin", "conv1=gpu", ...). Returns the
/// sentence saying what is wrong when the value is malformed or the name is no plan option.
std::optional<std::string> takePlanOption(std::string_view name, const std::string& value,
                                          ModelSource* source, PlanRequest* request);

/// The plan options that say `devices`, the pins of `graph` and `options` (and the input shapes
/// a model was opened with) on a command line, each option's name ("--pin") then its value:
/// takePlanOption() reads them back to the same devices, pins and options, so that
/// `placer plan|run MODEL ARGS` plans what a window or a script planned. A node name with a
/// wildcard character is written as a pattern that matches it alone ("a[*]b" for "a*b"). What no
/// command line says is left out: a cost model given as an object (auto mode reads the
/// workspace's), the planner's own micro-batch splits (--micro-batches says them), the exact
/// programme ("--exact", a flag of placer plan and run, is appended when set).
std::vector<std::string> planArguments(const Graph& graph, const DeviceSet& devices,
                                       const PlanOptions& options,
                                       const InputShapes& inputShapes = {});

/// `words` as one line a POSIX shell reads back as those words: each quoted where needed.
std::string shellCommandLine(const std::vector<std::string>& words);

} // namespace placer
