// Compiling and running a plan (session/Session.h): the one pipeline from a plan to a
// RunOutcome, written once for every front end.
//
//  1. map: every virtual device onto a physical one (the requests, then by kind);
//  2. optimise: the passes after placement for those physical devices (passes/PassManager.h),
//     or the plan's own graph when they are off or fail (a warning then);
//  3. lower to bytecode, each device ordering its ready work by the plan's predicted times;
//  4. check that the plan fits its devices' memory, before any input is made;
//  5. inputs: the data given, seeded random data for the rest;
//  6. the reference: the user's graph unoptimised on one CPU device of its own, run first and
//     gone before the run loads, so the two never hold memory at once;
//  7. load (constants uploaded, kernels prepared) and run the iterations, with progress and
//     cancel;
//  8. compare the outputs with the reference.
#include "session/Session.h"

#include "report/RunReport.h"
#include "runtime/DeviceRegistry.h"
#include "runtime/MemoryCheck.h"
#include "runtime/RandomTensor.h"
#include "runtime/Schedule.h"

namespace placer {

namespace {

bool stopped(const RunCallbacks& callbacks) {
    return callbacks.cancelled && callbacks.cancelled();
}

/// The graph that runs and its program, for physical devices `mapping` (steps 2 and 3).
Result<CompiledPlan> lowerPlanned(const PlannedModel& planned,
                                  const std::vector<Device*>& mapping, bool optimize) {
    const Graph& graph = planned.model.graph;
    const DeviceSet& devices = planned.model.devices;
    CompiledPlan compiled;
    auto optimized = optimizeForDevices(graph, devices, planned.plan, planned.options, mapping,
                                        optimize ? OptimizeOptions{} : OptimizeOptions::none());
    if (!optimized) {
        compiled.warnings.push_back("running the graph unoptimised: " +
                                    optimized.error().message);
        optimized = unoptimized(graph, planned.plan);
    }
    compiled.ran = optimized.take();
    auto program = lowerToBytecode(compiled.ran.graph, devices, compiled.ran.plan);
    if (!program)
        return program.error();
    // The executor orders each device's ready work by the plan's predicted times, where the
    // plan has them, so that the schedule it runs is the one the plan predicted.
    program.value().nodeMicros =
        predictedNodeMicros(planned.plan, compiled.ran.origin, compiled.ran.graph.size());
    compiled.program = program.take();
    for (const Device* device : mapping)
        compiled.physical.push_back(device ? device->name() : std::string());
    return compiled;
}

/// The run's inputs in program order: the data given by name, seeded random data for the rest
/// (step 5). Given data must exist as an input and match its type exactly.
Result<std::vector<HostTensor>> makeInputs(const Graph& graph, const Program& program,
                                           const RunRequest& request) {
    const std::vector<NodeId>& inputNodes = program.inputs;
    std::vector<HostTensor> inputs(inputNodes.size());
    std::vector<bool> given(inputNodes.size(), false);
    for (const auto& [name, tensor] : request.inputs) {
        const auto node = graph.find(name);
        std::size_t index = inputNodes.size();
        for (std::size_t i = 0; node && i < inputNodes.size(); ++i) {
            if (inputNodes[i] == *node)
                index = i;
        }
        if (index == inputNodes.size()) {
            std::string names;
            for (NodeId id : inputNodes)
                names += (names.empty() ? "" : ", ") + graph.node(id).name;
            return SourceError::sentence("input " + name +
                                         ": the model has no input of that name (inputs: " +
                                         names + ")");
        }
        const TensorType& want = graph.node(inputNodes[index]).outputs[0];
        if (tensor.type != want)
            return SourceError::sentence("input " + name + ": the data is " +
                                         tensor.type.toShortString() + " but the input is " +
                                         want.toShortString());
        inputs[index] = tensor;
        given[index] = true;
    }
    for (std::size_t i = 0; i < inputNodes.size(); ++i) {
        if (!given[i])
            inputs[i] = randomTensor(graph.node(inputNodes[i]).outputs[0],
                                     request.seed * 1000003u + i);
    }
    return inputs;
}

} // namespace

Result<CompiledPlan> Session::compile(const PlannedModel& planned, const CompileRequest& request) {
    std::vector<std::string> warnings;
    auto mapping = mapDevices(planned.model.devices, request.maps, *m_registry, &warnings);
    if (!mapping)
        return mapping.error();
    auto compiled = lowerPlanned(planned, mapping.value(), request.optimize);
    if (!compiled)
        return compiled.error();
    compiled.value().warnings.insert(compiled.value().warnings.begin(), warnings.begin(),
                                     warnings.end());
    return compiled;
}

Result<std::shared_ptr<RunOutcome>> Session::run(std::shared_ptr<const PlannedModel> planned,
                                                 const RunRequest& request,
                                                 const RunCallbacks& callbacks) {
    std::lock_guard lock(m_running);
    const DeviceSet& devices = planned->model.devices;
    auto outcome = std::make_shared<RunOutcome>();
    outcome->userGraph = std::shared_ptr<const Graph>(planned, &planned->model.graph);
    outcome->userPlan = planned->plan;
    outcome->planOptions = planned->options;
    outcome->devices = devices;
    outcome->physicalDevices = m_registry;
    outcome->warmup = std::max(0, request.warmup);
    outcome->iterations = std::max(1, request.iterations);
    for (const Conflict& conflict : planned->plan.conflicts) {
        if (conflict.kind == ConflictKind::Unsupported)
            return SourceError::sentence("the plan cannot run: " + conflict.message);
        outcome->warnings.push_back("conflict: " + conflict.message);
    }

    auto mapping = mapDevices(devices, request.maps, *m_registry, &outcome->warnings);
    if (!mapping)
        return mapping.error();
    auto compiled = lowerPlanned(*planned, mapping.value(), request.optimize);
    if (!compiled)
        return compiled.error();
    CompiledPlan& lowered = compiled.value();
    outcome->warnings.insert(outcome->warnings.end(), lowered.warnings.begin(),
                             lowered.warnings.end());
    outcome->ran = std::move(lowered.ran);
    outcome->physical = std::move(lowered.physical);
    const Graph& graph = outcome->ran.graph;
    const int opset = graph.onnxOpset();

    // A plan too large for its devices is refused before any input is made.
    if (Status fits = checkMemoryFits(lowered.program, devices, mapping.value(),
                                      hostInputOutputBytes(lowered.program));
        !fits.ok())
        return fits.error();
    auto inputs = makeInputs(graph, lowered.program, request);
    if (!inputs)
        return inputs.error();
    if (stopped(callbacks)) {
        outcome->result.cancelled = true;
        return outcome;
    }
    std::optional<std::vector<HostTensor>> expected;
    if (request.reference) {
        auto outputs = runReference(*outcome->userGraph, inputs.value(), opset);
        if (!outputs)
            return SourceError::sentence("reference run: " + outputs.error().message);
        expected = outputs.take();
    }
    if (stopped(callbacks)) {
        outcome->result.cancelled = true;
        return outcome;
    }
    auto executor = Executor::load(graph, devices, std::move(lowered.program), mapping.value(),
                                   opset, callbacks.loading);
    if (!executor)
        return executor.error();
    outcome->executor = executor.take();
    RunOptions options{outcome->warmup, outcome->iterations, callbacks.progress,
                       callbacks.cancelled};
    auto result = outcome->executor->run(inputs.value(), options);
    if (!result)
        return result.error();
    outcome->result = result.take();
    if (expected && !outcome->result.outputs.empty())
        outcome->reference =
            compareOutputs(outcome->result.outputs, *expected, request.atol, request.rtol);
    outcome->hostPeakBytes = processPeakResidentBytes();
    return outcome;
}

} // namespace placer
