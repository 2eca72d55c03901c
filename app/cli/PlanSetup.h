// What `plan`, `compile`, `run` and `plans save` share: the plan options on the command line,
// and loading and planning a model through the session (core/session) with messages on stderr.
#pragma once

#include "session/Session.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace placer::cli {

/// The plan options, in `placer plan --help` wording (for the other commands' help).
extern const char* const kPlanOptionsHelp;

/// A command's help text with "%s" replaced by kPlanOptionsHelp.
std::string formatHelp(const char* text);

struct PlanArguments {
    ModelSource source;
    PlanRequest request;
    /// The workspace (--db; empty: the default one).
    std::string db;
};

/// A command's own options beyond the plan options.
struct CommandOptions {
    std::vector<std::string> withValue; ///< options that take a value
    std::vector<std::string> flags;     ///< options that take none, given to `handle`
    /// Options that take none and set a bool: `{"--no-optimize", {&request.optimize, false}}`.
    std::vector<std::pair<std::string, std::pair<bool*, bool>>> switches;
    /// Takes one of them; returns a usage error sentence, or std::nullopt when accepted.
    std::function<std::optional<std::string>(const std::string& name, const std::string& value)>
        handle;
    /// Options several commands share, taken here when the command gives where they go:
    /// -o/--output FILE, and --map NAME=DEVICE (repeatable; takeMapOption).
    std::string* output = nullptr;
    std::vector<DeviceMapRequest>* maps = nullptr;
};

/// Parses `placer COMMAND ARGS`: plan options, the command's own options, one model. Returns an
/// exit code when parsing ends the command (help shown, or a usage error reported).
std::optional<int> parseCommandLine(const std::string& command, const char* help,
                                    const std::vector<std::string>& args, PlanArguments* parsed,
                                    const CommandOptions& own, std::ostream& out,
                                    std::ostream& err);

/// The session of a command: its workspace is --db, or the default one.
SessionOptions sessionOptions(const PlanArguments& args);

/// Loads and plans args' model with `session`, the model from `in` when it is "-". Warnings go
/// to `err` prefixed with "placer COMMAND" (those `said` keeps, when given); on failure the
/// message goes there too and an exit code is returned.
std::optional<int> loadAndPlan(const std::string& command, const PlanArguments& args,
                               Session& session, std::istream& in, std::ostream& err,
                               PlannedModel* planned,
                               const std::function<bool(const std::string&)>& said = {});

/// "12.3 GFLOP/s, 9.8 GB/s, 1.2 us a kernel" and "5.0 us + 12.0 GB/s" (CalibrateCommand.cpp).
std::string describeProfile(const DeviceProfile& profile);
std::string describeLink(const LinkProfile& link);

/// `--map VDEV=PHYS`: the mapping added to `maps`, or the usage error's sentence.
std::optional<std::string> takeMapOption(const std::string& value,
                                         std::vector<DeviceMapRequest>* maps);

/// A whole number of at least `minimum`, or a non-negative number: the whole text, or false.
bool parseInt(const std::string& text, int minimum, int* value);
bool parseDouble(const std::string& text, double* value);

/// Writes `text` to `path` (standard output for "" or "-"); returns an exit code.
int writeOutput(const std::string& command, const std::string& text, const std::string& path,
                std::ostream& out, std::ostream& err);

} // namespace placer::cli
