// `placer calibrate`: measures this machine's devices for the cost model and keeps the result in
// the workspace.
#include "cli/PlacerCli.h"
#include "cli/PlanSetup.h"

#include "device/DeviceRegistry.h"
#include "store/PlanStore.h"
#include "vm/Calibrate.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <ostream>

namespace placer::cli {

namespace {

constexpr const char* kCalibrateHelp = R"(usage: placer calibrate [--db FILE] [--quick] [--json]

Measures what the automatic placement's cost model otherwise assumes, on every physical device
of this machine (the host cpu, two vcpus, and each CUDA GPU): peak float32 FLOP/s (a matrix
product), memory bandwidth (an add over large tensors), the launch cost of a kernel, and for
every ordered pair of devices the latency and bandwidth of a copy. Each figure is the median of
five timed runs. The result is kept per machine in the workspace, shown by `placer devices`,
and used by `placer plan|run --mode auto` from then on.

  --db FILE   the workspace (default $XDG_DATA_HOME/placement-explorer/workspace.db)
  --quick     small sizes, for a smoke test: the figures are then mostly overhead
  --json      print the calibration as JSON
)";

std::string rate(double perMicro, const char* unit) {
    char text[48];
    std::snprintf(text, sizeof text, "%.1f %s", perMicro / 1e3, unit);
    return text;
}

} // namespace

std::string describeProfile(const DeviceProfile& profile) {
    char text[240];
    std::snprintf(text, sizeof text,
                  "%.1f GFLOP/s, %.1f GB/s, %.1f us a kernel, %.2f us of the executor's per op, "
                  "%.1f us per run",
                  profile.flopsPerMicro / 1e3, profile.bytesPerMicro / 1e3, profile.launchMicros,
                  profile.dispatchMicros, profile.runMicros);
    return text;
}

std::string describeLink(const LinkProfile& link) {
    char text[96];
    std::snprintf(text, sizeof text, "%.1f us + %s", link.latencyMicros,
                  rate(link.bytesPerMicro, "GB/s").c_str());
    return text;
}

int runCalibrateCommand(const std::vector<std::string>& args, std::istream&, std::ostream& out,
                        std::ostream& err) {
    WordArguments parsed;
    parsed.db = store::PlanStore::defaultPath();
    bool quick = false;
    parsed.switches = {{"--quick", &quick}};
    if (const int exit =
            parseWordArguments(args, "calibrate", kCalibrateHelp, true, &parsed, out, err);
        exit >= 0)
        return exit;
    if (!parsed.words.empty() || !parsed.output.empty()) {
        err << "placer calibrate: unknown argument '"
            << (parsed.words.empty() ? std::string("--output") : parsed.words.front())
            << "'\nrun 'placer calibrate --help' for the options\n";
        return UsageError;
    }
    const std::string& db = parsed.db;
    const bool json = parsed.json;
    CalibrationOptions options;
    options.quick = quick;
    Session session(SessionOptions{db});
    auto calibration =
        session.calibrate(options, [&](int done, int total, const std::string& step) {
            // A bar redrawn in place on a terminal; a line per step elsewhere (a log).
            constexpr int kWidth = 30;
            const int filled = total > 0 ? done * kWidth / total : kWidth;
            const bool terminal = &err == &std::cerr && isatty(STDERR_FILENO);
            err << (terminal ? "\r" : "") << "placer calibrate: ["
                << std::string(static_cast<std::size_t>(filled), '#')
                << std::string(static_cast<std::size_t>(kWidth - filled), ' ') << "] " << done
                << "/" << total << " " << step << (terminal ? "\x1b[K" : "\n") << std::flush;
            if (terminal && done == total)
                err << "\n";
        });
    if (!calibration) {
        err << "\nplacer calibrate: error: " << calibration.error().toString() << "\n";
        return UserError;
    }
    if (json) {
        out << calibration.value().toJson().dump() << "\n";
        return Ok;
    }
    out << "calibration of " << calibration.value().machine << ", kept in " << db << "\n";
    for (const DeviceProfile& profile : calibration.value().devices)
        out << "  " << profile.name << ": " << describeProfile(profile) << "\n";
    out << "copies:\n";
    for (const auto& [pair, link] : calibration.value().links)
        out << "  " << pair.first << " -> " << pair.second << ": " << describeLink(link) << "\n";
    return Ok;
}

} // namespace placer::cli
