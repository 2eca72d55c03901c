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

} // namespace placer
