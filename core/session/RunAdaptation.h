// Runs that change where their work runs while they go (seed 000's "dynamic" device selection):
//
//  - re-placement (RunRequest::adapt): after each measured iteration, every device's busy time
//    is compared with what the plan predicted for it. The first iterations of each plan give
//    each device's usual ratio of the two (the cost model's error for the ops it was given,
//    which is no drift); a device whose ratio then stays a margin above (or below) that for a
//    few iterations in a row is slower (or faster) than the plan assumed: auto mode plans again
//    with the measured slowdown in the cost model (CostModel::setSlowdown), pins and rules
//    holding, and the new program is loaded and swapped in between two iterations, none lost
//    or repeated. A device the new plan gives no work is not measured until a plan does;
//  - failover (RunRequest::failover, on by default): a device that fails (kernels/Kernel.h
//    DeviceFailure) ends the iteration cleanly; the plan is made again without it
//    (PlanOptions::outOfService) and the iteration runs again on the devices left.
//
// Each change is a RunEvent in the outcome: its reason, what moved, how long the swap took.
// Runs over several ranks keep their plan: a lost rank ends the job, as before.
#pragma once

#include "plan/Plan.h"
#include "vm/Executor.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace placer {

/// A device whose measured speed drifted from its plan's assumption.
struct SpeedDrift {
    std::string physical;
    std::vector<DeviceId> virtuals;
    double factor = 1;  ///< the slowdown to plan with now (CostModel::setSlowdown)
    double ratio = 1;   ///< measured against assumed, the usual error taken out
    int iterations = 0; ///< in a row
};

/// Compares each device's busy time per iteration with its plan's prediction (see above); the
/// first iteration of each plan is not read (it runs cold: memory touched for the first time,
/// caches filled).
class SpeedWatch {
public:
    /// A drift is a ratio `margin` away from a device's usual one (1.5: half as slow again, or
    /// two thirds of the time) for `iterations` measured iterations in a row; the usual ratio is
    /// the median of the first `baseline` iterations of each plan, then of the latest within
    /// the margin (so that work growing by the iteration, a generation's longer cache, is none).
    explicit SpeedWatch(double margin = 1.5, int iterations = 3, int baseline = 3);

    /// The plan that runs now (its prediction is what each device is compared with), and the
    /// slowdown it was planned with per physical device.
    void follow(const Plan& plan, const std::map<std::string, double>& slowdowns);
    /// After a measured iteration (the last of `soFar`): once a device has drifted, every device
    /// whose recent speed is off by the margin (the drifted one and any other a load slowed at
    /// the same time), to re-plan for; none before.
    std::vector<SpeedDrift> observe(const RunResult& soFar);

private:
    struct Watched {
        std::string physical;
        std::vector<DeviceId> virtuals;
        double predicted = 0; ///< µs per iteration on the plan that runs
        double slowdown = 1;  ///< what that plan assumed
        std::vector<double> firstRatios;
        std::vector<double> streak; ///< deviations in a row, all slow or all fast
        std::vector<double> recent; ///< the last deviations, whichever way
    };
    double m_margin;
    int m_iterations, m_baseline;
    std::vector<double> m_predicted; ///< per virtual device, µs per iteration
    int m_skip = 0;                  ///< iterations of this plan not to read
    std::map<std::string, double> m_slowdowns;
    std::vector<Watched> m_watched;        ///< per stream of the program that runs, once seen
    std::map<std::string, double> m_usual; ///< per physical device, once known
    /// Per physical device: its ratios before the usual one is known, then its latest within
    /// the margin, which the usual one follows.
    std::map<std::string, std::vector<double>> m_first;
    int m_plans = 0; ///< plans followed
};

struct PlannedModel;
class CostModel;
struct RunEvent;

/// Into `event`: the drifted devices (RunEvent::device) and why ("b (vcpu2) 2.8x slower than
/// assumed for 3 iterations", each drifted device named); each one's factor into `slowdowns`,
/// per physical device. Returns the longest streak of iterations (`unit`: "steps" for a
/// generation's) among them.
int describeDrifts(const std::vector<SpeedDrift>& drifts, const DeviceSet& devices, RunEvent* event,
                   std::map<std::string, double>* slowdowns,
                   const std::string& unit = "iterations");
/// Slows, in `model`, every virtual device that `streams` runs on a physical device of
/// `slowdowns` by its factor (CostModel::setSlowdown).
void applySlowdowns(const std::map<std::string, double>& slowdowns,
                    const std::vector<StreamInfo>& streams, CostModel* model);
/// `model`'s plan with a prediction to watch its speed against: its own, or the same placement
/// predicted with `costs` where it was made without any.
Plan withPrediction(const PlannedModel& model, const std::function<CostModel()>& costs);

/// Takes the devices `fault` names out of service in `planned`'s options
/// (PlanOptions::outOfService), with the host and default roles moved to a device in service
/// where theirs is out, for planning again; says what failed ("b (vcpu2) failed at iteration 5
/// (error): ...").
std::string leaveOut(const DeviceFault& fault, PlannedModel* planned);
/// The same for devices already named, with why (a run's PlanOptions::outOfService).
void leaveOut(std::vector<std::pair<std::string, std::string>> outOfService, PlannedModel* planned);

/// A plan made again without failed devices (`reason` says why): an error where no device left
/// can run an op; otherwise what the user should hear of pins that now run elsewhere (from the
/// step or iteration `from` on), or nothing.
Result<std::string> checkReplanned(const PlannedModel& replanned, const std::string& reason,
                                   const std::string& from);

/// "37 ops moved to a", "12 ops moved from b to a, 3 from b to c", or "nothing moved": the
/// compute nodes of `graph` whose device differs between `before` and `after`.
std::string movedText(const Graph& graph, const DeviceSet& devices, const Plan& before,
                      const Plan& after, int* moved);

} // namespace placer
