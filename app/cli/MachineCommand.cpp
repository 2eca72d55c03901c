// `placer machine describe`: this machine as a machine file (plan/MachineFile.h), from the
// calibration in the workspace, for `placer plan --machine` here or anywhere.
#include "cli/PlacerCli.h"

#include "plan/MachineFile.h"
#include "store/PlanStore.h"
#include "vm/Calibrate.h"

#include <unistd.h>

#include <ostream>

namespace placer::cli {

namespace {

constexpr const char* kMachineHelp = R"(usage: placer machine describe [-o FILE] [--db FILE]

Writes this machine as a machine file (JSON, docs/user/machines.md): its host, its cpu and each
CUDA GPU with the rates `placer calibrate` measured (peak float32 TFLOP/s, memory GB/s, the
launch cost of a kernel) and the links between them it measured. Without a calibration in the
workspace the rates are assumed ones, and it says so. `placer plan --machine FILE` plans
against such a file, here or on a machine without these devices.

options:
  -o FILE     write to FILE instead of standard output
  --db FILE   the workspace (default $XDG_DATA_HOME/placement-explorer/workspace.db)
  -h, --help  show this help
)";

} // namespace

int runMachineCommand(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                      std::ostream& err) {
    WordArguments parsed;
    parsed.db = store::PlanStore::defaultPath();
    if (const int code =
            parseWordArguments(args, "machine", kMachineHelp, false, &parsed, out, err);
        code >= 0)
        return code;
    if (parsed.words.size() != 1 || parsed.words[0] != "describe") {
        err << "placer machine: expected 'describe'\n\n" << kMachineHelp;
        return UsageError;
    }
    auto workspace = store::PlanStore::open(parsed.db);
    if (!workspace) {
        err << "placer machine: " << workspace.error().toString() << "\n";
        return UserError;
    }
    const std::string machine = machineName();
    Calibration calibration;
    calibration.machine = machine;
    auto stored = workspace.value()->loadCalibration(machine);
    if (stored && stored.value()) {
        calibration = *stored.value();
    } else {
        err << "placer machine: warning: the workspace has no calibration of " << machine
            << ": the rates are assumed ones ('placer calibrate' measures them)\n";
    }
    std::string host;
    for (const char c : machine)
        host += c == '/' || c == ' ' ? '-' : c;
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    const std::int64_t memory =
        pages > 0 && pageSize > 0 ? static_cast<std::int64_t>(pages) * pageSize : 0;
    const std::string text = describeMachine(host, calibration, memory).toJson().dump(2) + "\n";
    return writeOutput(text, parsed.output, "machine", out, err);
}

} // namespace placer::cli
