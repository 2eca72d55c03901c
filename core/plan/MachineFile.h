// Machine files: a machine described in JSON (its hosts and devices, each device's profile of
// peak rates, memory and launch cost, and the links between them), so that a plan is made and
// costed for a machine this one is not (docs/user/machines.md). `placer machine describe` writes
// this machine's; `placer plan --machine FILE` plans against one.
#pragma once

#include "io/Json.h"
#include "ir/DeviceSet.h"
#include "ir/Result.h"
#include "plan/CostModel.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace placer {

struct MachineProfile {
    std::optional<std::int64_t> memoryBytes;
    /// Peak TFLOP/s per element type ("float32", "bfloat16", "float16"); float32's is the rate
    /// of every other type that has none.
    std::map<std::string, double> peakTflops;
    double memoryGbps = 20;
    double launchMicros = 2;
};

struct MachineDevice {
    std::string host;
    std::string name; ///< as the file names it: "cuda:0", "cpu"
    DeviceKind kind = DeviceKind::Cpu;
    std::string profile;
    /// "node0/cuda:0": how links and reports name it.
    std::string qualified() const { return host + "/" + name; }
    /// The virtual device a plan for the machine has for it: "node0.cuda0".
    std::string virtualName() const;
};

struct MachineLink {
    /// One pattern: every pair of devices it matches; two: every device of the first with every
    /// device of the second. A pattern is a glob over qualified names ("node0/cuda:*"), or a
    /// host's name for all its devices.
    std::vector<std::string> between;
    std::string kind; ///< "nvlink", "pcie", "infiniband", ...: said, not used
    double gbps = 0;
    double latencyMicros = 0;
};

struct MachineFile {
    std::string name;
    std::vector<MachineDevice> devices;
    std::map<std::string, MachineProfile> profiles;
    std::vector<MachineLink> links;

    /// The virtual devices of a plan for this machine, as --devices takes them: one per device,
    /// its kind, and mem= its profile's memory.
    std::string deviceSpec() const;
    /// Its devices as a calibration would have measured them (by qualified name), and the link
    /// between every ordered pair a link of the file covers (the first in the file's order).
    Calibration calibration() const;
    /// The link between two qualified device names, or null when none of the file's covers them.
    const MachineLink* linkBetween(const std::string& a, const std::string& b) const;
    Json toJson() const;
};

/// Reads a machine file; an error names the file, the line and what is wrong (an unknown
/// profile, a device kind placer does not know, a rate that is not positive, a link between
/// devices that do not exist).
Result<MachineFile> parseMachineFile(std::string_view text, const std::string& path);

/// This machine as a machine file: its host, its cpu and GPUs from `calibration` (their
/// measured rates, or assumed ones where there is none), and the links it measured.
MachineFile describeMachine(const std::string& host, const Calibration& calibration,
                            std::int64_t hostMemoryBytes);

/// The cost model of `devices` (made from the machine's deviceSpec()) on `machine`: each virtual
/// device on its machine device's profile, copies at its links' rates.
CostModel machineFileCosts(const MachineFile& machine, const DeviceSet& devices);

} // namespace placer
