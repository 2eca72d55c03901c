// `placer calibrate`: measures what the cost model (plan/CostModel.h) otherwise assumes, on the
// physical devices of this machine, through the executor and the kernels a run uses:
//  - peak arithmetic: a float32 matrix product large enough to be bound by it;
//  - memory bandwidth: an element-wise add over tensors far larger than the caches;
//  - launch cost: the same add on one element;
//  - the executor's own cost per op and per run: chains of 8 and 64 tiny ops;
//  - per ordered pair of devices, the latency of a crossing (what it adds to a chain of tiny ops
//    alternating between the two: the copy and the hand-over) and copy bandwidth (a large
//    tensor).
// Each figure is the median of several timed iterations after a warm-up.
#pragma once

#include "device/Device.h"
#include "device/DeviceRegistry.h"
#include "plan/CostModel.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace placer {

/// Told before each measurement: how many are done, of how many, and what comes next.
using CalibrationProgress = std::function<void(int done, int total, const std::string& step)>;

struct CalibrationOptions {
    int iterations = 5;
    /// Smaller sizes for tests: the figures are then dominated by overheads.
    bool quick = false;
};

/// What `placer calibrate` measures: the host cpu, two vcpus (for the copy between vcpus), and
/// every CUDA GPU `registry` has.
std::vector<Device*> devicesToCalibrate(DeviceRegistry& registry);

/// Under mpirun (device/Ranks.h), collectively: per ordered pair of ranks, the latency of a
/// message (a ping-pong of 8 bytes) and the bandwidth of a large one, through the transport that
/// runs carry their copies with. Keyed ("rank0", "rank1"); empty when the process runs alone.
Result<std::map<std::pair<std::string, std::string>, LinkProfile>>
measureRankLinks(const CalibrationOptions& options);

/// Measures `devices` (and every ordered pair of them) and returns the calibration of
/// `machine`. A measurement that fails stops it with the device and the reason.
Result<Calibration> calibrateDevices(const std::vector<Device*>& devices,
                                     const std::string& machine, const CalibrationOptions& options,
                                     const CalibrationProgress& progress = {});

/// This machine's name for calibrations and measured costs: its host name.
std::string machineName();

/// calibrateDevices() on devicesToCalibrate() of a registry of its own, for machineName():
/// what `placer calibrate`, the GUI and auto mode's first use measure.
Result<Calibration> calibrateThisMachine(const CalibrationOptions& options,
                                         const CalibrationProgress& progress = {});

} // namespace placer
