// What `plan`, `compile` and `run` share: the plan options, loading a model and planning it.
#pragma once

#include "io/ModelLoader.h"
#include "plan/Annotations.h"
#include "plan/CostModel.h"
#include "plan/Plan.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace placer::store {
class PlanStore;
}

namespace placer::cli {

/// The plan options, in `placer plan --help` wording (for the other commands' help).
extern const char* const kPlanOptionsHelp;

/// A command's help text with "%s" replaced by kPlanOptionsHelp.
std::string formatHelp(const char* text);

struct PlanArguments {
    std::string model;
    GraphFormat format = GraphFormat::Auto;
    std::optional<std::string> devices;
    std::optional<std::string> defaultDevice;
    std::optional<std::string> hostDevice;
    std::vector<PinRequest> pins;
    PlanOptions options;
    InputShapes inputShapes; ///< --input-shape NAME=D1,D2,...
    /// The workspace whose calibration and measured costs auto mode uses (--db; empty: the
    /// default one).
    std::string db;
    /// `placer run --map` requests, so that auto mode costs the devices a run will use.
    std::vector<std::pair<std::string, std::string>> maps;
    /// Whether the run fuses ops as the optimisations do (`placer run --no-optimize`: not), so
    /// that auto mode predicts what will run.
    bool fusion = true;
};

/// A command's own options beyond the plan options.
struct CommandOptions {
    std::vector<std::string> withValue; ///< options that take a value
    std::vector<std::string> flags;     ///< options that take none
    /// Takes one of them; returns a usage error sentence, or std::nullopt when accepted.
    std::function<std::optional<std::string>(const std::string& name, const std::string& value)>
        handle;
};

/// Takes one plan option (a name from kPlanOptionsHelp, such as "--pin", with its value) into
/// *parsed; a usage error sentence when the value is malformed or the name is no plan option.
/// The CLI and the GUI parse plan options with it alike.
std::optional<std::string> takePlanOption(const std::string& name, const std::string& value,
                                          PlanArguments* parsed);

/// Parses `placer COMMAND ARGS`: plan options, the command's own options, one model. Returns an
/// exit code when parsing ends the command (help shown, or a usage error reported).
std::optional<int> parseCommandLine(const std::string& command, const char* help,
                                    const std::vector<std::string>& args, PlanArguments* parsed,
                                    const CommandOptions& own, std::ostream& out,
                                    std::ostream& err);

struct PlannedModel {
    LoadedModel model;
    Plan plan;
    /// The options the plan was made with: the arguments', with auto mode's cost model.
    PlanOptions options;
};

/// The cost model of this machine for `devices`: the calibration and the measured node times
/// kept in the workspace `db` (when it exists; nothing is created), assumed profiles otherwise,
/// and the host's core count.
/// `maps`: `placer run --map` requests (virtual device, physical device).
CostModel machineCosts(const DeviceSet& devices, const std::string& db,
                       const std::vector<std::pair<std::string, std::string>>& maps = {});
/// The same from an open workspace (none: assumed rates).
CostModel machineCosts(const DeviceSet& devices, store::PlanStore* workspace,
                       const std::vector<std::pair<std::string, std::string>>& maps = {});

/// "12.3 GFLOP/s, 9.8 GB/s, 1.2 us a kernel" and "5.0 us + 12.0 GB/s" (CalibrateCommand.cpp).
std::string describeProfile(const DeviceProfile& profile);
std::string describeLink(const LinkProfile& link);

/// Loads args.model (or `text`, read as if it were that file, when given), applies devices,
/// roles, pins and rules, and plans. Warnings are appended to *warnings; returns the error
/// sentence when the model or an option is wrong. The CLI and the GUI open models with it alike.
std::optional<std::string> loadPlanned(const PlanArguments& args,
                                       const std::optional<std::string>& text,
                                       std::vector<std::string>* warnings, PlannedModel* planned);

/// loadPlanned() for a command: the model from `in` when it is "-", messages on `err` prefixed
/// with "placer COMMAND".
/// Warnings go to `err`; on failure the message goes there too and an exit code is returned.
std::optional<int> loadAndPlan(const std::string& command, const PlanArguments& args,
                               std::istream& in, std::ostream& err, PlannedModel* planned);

/// Writes `text` to `path` (standard output for "" or "-"); returns an exit code.
int writeOutput(const std::string& command, const std::string& text, const std::string& path,
                std::ostream& out, std::ostream& err);

} // namespace placer::cli
