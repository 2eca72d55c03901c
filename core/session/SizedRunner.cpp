// A plan's program run at any sizes of its named dimensions (session/SizedRunner.h).
#include "session/SizedRunner.h"

#include "device/DeviceRegistry.h"
#include "session/RunSteps.h"
#include "vm/ConstantCache.h"

#include <algorithm>

namespace placer {

SizedRunner::~SizedRunner() = default;

Result<std::unique_ptr<SizedRunner>>
SizedRunner::make(Session& session, std::shared_ptr<const PlannedModel> planned,
                  const std::vector<DeviceMapRequest>& maps, bool optimize,
                  const std::vector<std::pair<std::string, HostTensor>>& sample,
                  bool* overCapacity) {
    std::lock_guard lock(session.m_running);
    if (overCapacity)
        *overCapacity = false;
    std::unique_ptr<SizedRunner> runner(new SizedRunner());
    runner->m_session = &session;
    runner->m_opened = planned;
    std::string note;
    auto sized = session.forData(planned, sample, &note);
    if (!sized)
        return sized.error();
    const Graph& opened = planned->model.graph;
    if (opened.symbolValues.empty())
        return SourceError::sentence("the plan's shapes follow no named dimension");
    if (!opened.sizeBound.empty())
        return SourceError::sentence("the model is bound to its sizes: " + opened.sizeBound);
    runner->m_planned = sized.take();
    // Every step's storages come from this memory plan: at these sizes it must fit (a plan
    // opened over capacity runs with the conflict said, as a run does).
    if (!capacityConflict(planned->plan)) {
        if (const Conflict* conflict = capacityConflict(runner->m_planned->plan)) {
            if (overCapacity)
                *overCapacity = true;
            return SourceError::sentence("at those sizes (" + note +
                                         "), the plan does not fit: " + conflict->message);
        }
    }
    const DeviceSet& devices = runner->m_planned->model.devices;
    std::vector<std::string> warnings;
    auto mapping = mapDevices(devices, maps, *session.m_registry, &warnings, &runner->m_leases);
    if (!mapping)
        return mapping.error();
    for (std::size_t d = 0;
         d < static_cast<std::size_t>(devices.size()) && d < mapping.value().size(); ++d) {
        if (mapping.value()[d])
            runner->m_mapping.push_back(DeviceMapRequest{
                devices[DeviceId{static_cast<std::int32_t>(d)}].name, mapping.value()[d]->name()});
    }
    // Transposes stay ops: a matrix product reading one as a strided view is a kernel made for
    // the view's sizes, which the shape functions of a run at other sizes do not know.
    OptimizeOptions passes = optimize ? OptimizeOptions{} : OptimizeOptions::none();
    passes.transposes = false;
    auto compiled = lowerPlanned(*runner->m_planned, mapping.value(), passes);
    if (!compiled)
        return compiled.error();
    runner->m_ran = std::move(compiled.value().ran);
    // The inputs whose dimensions the run brings, and the sizes the program was lowered at.
    runner->m_ran.graph.openInputs = runner->m_planned->model.graph.openInputs;
    runner->m_ran.graph.symbolValues = runner->m_planned->model.graph.symbolValues;
    Program program = std::move(compiled.value().program);
    for (const NodeId input : program.inputs)
        runner->m_inputs.push_back(runner->m_ran.graph.node(input).name);
    auto executor =
        Executor::load(runner->m_ran.graph, devices, std::move(program), mapping.value(),
                       runner->m_ran.graph.onnxOpset(), {}, session.m_constants, true);
    if (!executor)
        return executor.error();
    runner->m_executor = executor.take();
    return runner;
}

Result<RunResult> SizedRunner::run(std::vector<std::pair<std::string, HostTensor>>& inputs,
                                   const std::vector<InjectedFault>& faults, int step,
                                   bool faultsEndRun) {
    std::lock_guard lock(m_session->m_running);
    const std::optional<SymbolValues> sizes = dataSizes(m_opened->model.graph, inputs);
    if (!sizes)
        return SourceError::sentence("the inputs give one dimension two sizes");
    std::vector<HostTensor> ordered(m_inputs.size());
    std::vector<std::pair<std::string, HostTensor>*> from(m_inputs.size(), nullptr);
    for (auto& entry : inputs) {
        const auto it = std::find(m_inputs.begin(), m_inputs.end(), entry.first);
        if (it == m_inputs.end())
            continue; // an input the plan was made for the value of
        const auto index = static_cast<std::size_t>(it - m_inputs.begin());
        from[index] = &entry;
    }
    for (std::size_t i = 0; i < from.size(); ++i) {
        if (!from[i])
            return SourceError::sentence("input " + m_inputs[i] + " is not given");
    }
    // Moved in for the run and back after it, so that a step a device failed in runs again on
    // the same data without a copy of the cache.
    for (std::size_t i = 0; i < from.size(); ++i)
        ordered[i] = std::move(from[i]->second);
    RunOptions options;
    options.warmup = 0;
    options.iterations = 1;
    options.sizes = *sizes;
    options.faults = faults;
    options.firstIteration = step;
    options.faultsEndRun = faultsEndRun;
    auto result = m_executor->run(ordered, options);
    for (std::size_t i = 0; i < from.size(); ++i)
        from[i]->second = std::move(ordered[i]);
    return result;
}

std::vector<DeviceMapRequest> SizedRunner::mapping() const {
    return m_mapping;
}

std::vector<std::string> SizedRunner::outputNames() const {
    std::vector<std::string> out;
    for (const GraphOutput& output : m_ran.graph.outputs())
        out.push_back(output.name);
    return out;
}

} // namespace placer
