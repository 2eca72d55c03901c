// One program of a plan, lowered once and loaded to run at any sizes of the dimensions its inputs
// name (vm/Executor.h's sizesAtRun), as the Relay VM runs one: what generation's steps run, each
// with a longer cache, without planning, lowering or loading again. Private to core/session.
#pragma once

#include "session/Session.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace placer {

class SizedRunner {
public:
    /// Lowers `planned` at the sizes of `sample` (its plan instantiated there, its memory
    /// planned for them) for the physical devices `maps` names, and loads it to run at any
    /// sizes; an error says why it cannot (a device outside host memory, a broadcast constant
    /// that follows the sizes), and `overCapacity` is set where it is that the plan does not
    /// fit its devices' capacities (mem=) at those sizes.
    static Result<std::unique_ptr<SizedRunner>>
    make(Session& session, std::shared_ptr<const PlannedModel> planned,
         const std::vector<DeviceMapRequest>& maps, bool optimize,
         const std::vector<std::pair<std::string, HostTensor>>& sample,
         bool* overCapacity = nullptr);
    ~SizedRunner();

    /// Runs once at the sizes of `inputs` (every input, by name; read, and given back as they
    /// were): the outputs in the graph's order, the latency and each device's busy time. The
    /// run is generation step `step` for `faults` (vm/FaultInjection.h); with `faultsEndRun`, a
    /// device that fails ends it with RunResult::fault set rather than an error.
    Result<RunResult> run(std::vector<std::pair<std::string, HostTensor>>& inputs,
                          const std::vector<InjectedFault>& faults = {}, int step = 1,
                          bool faultsEndRun = false);
    /// The names of RunResult::outputs, in order.
    std::vector<std::string> outputNames() const;
    /// Each virtual device with the physical device it runs on: a run mapped so shares its
    /// devices, and the constants they hold (vm/ConstantCache.h).
    std::vector<DeviceMapRequest> mapping() const;

private:
    SizedRunner() = default;
    Session* m_session = nullptr;
    std::shared_ptr<const PlannedModel> m_planned; ///< at the sample's sizes
    std::shared_ptr<const PlannedModel> m_opened;  ///< as opened (its open inputs name sizes)
    OptimizedGraph m_ran;
    std::vector<std::shared_ptr<const void>> m_leases;
    std::unique_ptr<Executor> m_executor;
    std::vector<DeviceMapRequest> m_mapping;
    std::vector<std::string> m_inputs; ///< the program's inputs' names, in its order
};

} // namespace placer
