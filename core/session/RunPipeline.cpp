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
#include "session/RunSteps.h"
#include "session/Session.h"

#include "device/DeviceRegistry.h"
#include "device/LoadMapping.h"
#include "device/Ranks.h"
#include "kernels/RandomTensor.h"
#include "plan/Planner.h"
#include "plan/Split.h"
#include "report/RunReport.h"
#include "vm/MemoryCheck.h"
#include "vm/RankResults.h"
#include "vm/RunTimeShapes.h"
#include "vm/Schedule.h"

#include <algorithm>

namespace placer {

namespace {

bool stopped(const RunCallbacks& callbacks) {
    return callbacks.cancelled && callbacks.cancelled();
}

} // namespace

Result<CompiledPlan> lowerPlanned(const PlannedModel& planned, const std::vector<Device*>& mapping,
                                  bool optimize) {
    return lowerPlanned(planned, mapping, optimize ? OptimizeOptions{} : OptimizeOptions::none());
}

Result<CompiledPlan> lowerPlanned(const PlannedModel& planned, const std::vector<Device*>& mapping,
                                  const OptimizeOptions& passes) {
    const Graph& graph = planned.model.graph;
    const DeviceSet& devices = planned.model.devices;
    CompiledPlan compiled;
    auto optimized =
        optimizeForDevices(graph, devices, planned.plan, planned.options, mapping, passes);
    if (!optimized) {
        compiled.warnings.push_back("running the graph unoptimised: " + optimized.error().message);
        // The precision policies still hold: they say what is computed.
        optimized = optimizeForDevices(graph, devices, planned.plan, planned.options, mapping,
                                       OptimizeOptions::none());
        if (!optimized)
            return optimized.error();
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

const Conflict* capacityConflict(const Plan& plan) {
    for (const Conflict& conflict : plan.conflicts) {
        if (conflict.kind == ConflictKind::MemoryCapacity)
            return &conflict;
    }
    return nullptr;
}

const OpenInput* openInput(const Graph& graph, const std::string& name) {
    for (const OpenInput& input : graph.openInputs) {
        if (input.name == name)
            return &input;
    }
    return nullptr;
}

std::optional<SymbolValues> dataSizes(const Graph& graph,
                                      const std::vector<std::pair<std::string, HostTensor>>& data) {
    SymbolValues values;
    for (const auto& [name, tensor] : data) {
        const OpenInput* open = openInput(graph, name);
        if (!open || open->setsShapes || open->declaredDims.size() != tensor.type.shape.size())
            continue;
        for (std::size_t a = 0; a < open->declaredDims.size(); ++a) {
            const std::optional<std::string> symbol = dimensionName(*open, a);
            if (!symbol)
                continue;
            const auto [it, fresh] = values.emplace(*symbol, tensor.type.shape[a]);
            if (!fresh && it->second != tensor.type.shape[a])
                return std::nullopt;
        }
    }
    return values;
}

namespace {

bool plannedFor(const Graph& graph, const std::string& name) {
    const OpenInput* input = openInput(graph, name);
    return input && input->plannedValue;
}

bool sameTensor(const HostTensor& a, const HostTensor& b) {
    const std::string_view x = a.data.bytes(), y = b.data.bytes();
    return a.type.shape == b.type.shape && x == y &&
           (a.type.dtype == b.type.dtype ||
            (a.type.dtype == DType::BFloat16 && b.type.dtype == DType::UInt16));
}

/// Why `graph`, as planned, cannot run on `data` but the model planned again for it could: an
/// input the model leaves open given at another shape (`sizesOnly` stays true), or a
/// shape-setting input given another value (it turns false). std::nullopt when it can run as
/// planned.
std::optional<std::string>
plannedOtherwise(const Graph& graph, const std::vector<std::pair<std::string, HostTensor>>& data,
                 bool* sizesOnly) {
    std::optional<std::string> why;
    *sizesOnly = true;
    for (const auto& [name, tensor] : data) {
        const OpenInput* open = openInput(graph, name);
        if (!open)
            continue;
        if (open->plannedValue) {
            if (!sameTensor(*open->plannedValue, tensor)) {
                *sizesOnly = false;
                return "input " + name + " sets shapes, and the plan was made for another value";
            }
            continue;
        }
        if (open->setsShapes) {
            *sizesOnly = false;
            return "input " + name + " sets shapes, and the plan was made without its value";
        }
        const auto node = graph.find(name);
        if (!node || why)
            continue;
        const TensorType& planned = graph.node(*node).outputs[0];
        if (!open->declaredDims.empty() && planned.shape != tensor.type.shape &&
            shapeFitsDeclared(open->declaredDims, tensor.type.shape))
            why = "input " + name + " is " + tensor.type.toShortString() +
                  ", and the plan was made for " + planned.toShortString();
    }
    return why;
}

/// The values of the dimensions `graph`'s inputs name that `data` gives (an unnamed one is
/// called after its input and axis, as io/SymbolicShapes.h names it); std::nullopt where two
/// inputs give one name two values.

/// `tensor` `times` over, stacked on axis 0.
HostTensor repeatedRows(const HostTensor& tensor, std::int32_t times) {
    HostTensor out;
    out.type = tensor.type;
    out.type.shape[0] *= times;
    std::string bytes;
    bytes.reserve(tensor.data.size() * static_cast<std::size_t>(times));
    for (std::int32_t k = 0; k < times; ++k)
        bytes.append(tensor.data.bytes());
    out.data = TensorData(std::move(bytes));
    return out;
}

/// Part `k` of `parts` equal parts of `tensor` on axis 0.
HostTensor partOfRows(const HostTensor& tensor, std::int64_t k, std::int64_t parts) {
    HostTensor out;
    out.type = tensor.type;
    out.type.shape[0] /= parts;
    const auto bytes = static_cast<std::size_t>(out.type.bytes());
    out.data = TensorData(tensor.data.data() + static_cast<std::size_t>(k) * bytes, bytes);
    return out;
}

/// What identifies data for the model planned again: every input's shape and type, and the
/// value of those that set shapes.
std::string signatureOf(const Graph& graph,
                        const std::vector<std::pair<std::string, HostTensor>>& data) {
    std::string signature;
    for (const auto& [name, tensor] : data) {
        signature += name + ":" + tensor.type.toShortString();
        const OpenInput* open = openInput(graph, name);
        if (open && open->setsShapes)
            signature += "=" + std::string(tensor.data.bytes());
        signature += '\n';
    }
    return signature;
}

} // namespace

Result<std::shared_ptr<const PlannedModel>>
Session::forData(std::shared_ptr<const PlannedModel> planned,
                 const std::vector<std::pair<std::string, HostTensor>>& data, std::string* note) {
    const Graph& graph = planned->model.graph;
    bool sizesOnly = true;
    const std::optional<std::string> why = plannedOtherwise(graph, data, &sizesOnly);
    if (!why)
        return planned;
    const std::string signature = signatureOf(graph, data);
    for (std::size_t k = 0; k < m_specialised.size(); ++k) {
        const Specialised& kept = m_specialised[k];
        if (kept.base.lock() == planned && kept.signature == signature) {
            *note = kept.note + "; made earlier in this session";
            std::rotate(m_specialised.begin(), m_specialised.begin() + static_cast<long>(k),
                        m_specialised.begin() + static_cast<long>(k) + 1);
            return m_specialised.front().planned;
        }
    }
    const auto keep = [&](std::shared_ptr<const PlannedModel> made, std::string said) {
        m_specialised.insert(m_specialised.begin(), Specialised{planned, signature, made, said});
        if (m_specialised.size() > 8)
            m_specialised.pop_back();
        *note = std::move(said);
        return made;
    };
    // Where only the sizes of named dimensions differ, the plan made once serves them: the
    // graph instantiated at the data's sizes (its shapes and folded sizes evaluated), its memory
    // planned there, as ONNX Runtime's memory patterns are per shape.
    std::string readAgain;
    if (sizesOnly && !graph.symbolValues.empty()) {
        const std::optional<SymbolValues> sizes = dataSizes(graph, data);
        Result<Graph> sized =
            sizes ? instantiateAtSizes(graph, *sizes)
                  : Result<Graph>(SourceError::sentence("the inputs give one dimension two sizes"));
        if (sized) {
            if (Status checked = checkTypesAtSizes(sized.value(), graph.onnxOpset()); !checked.ok())
                sized = checked.error();
        }
        if (sized) {
            auto plan =
                planAtSizes(sized.value(), planned->model.devices, planned->options, planned->plan);
            if (plan) {
                auto made = std::make_shared<PlannedModel>(*planned);
                made->model.graph = sized.take();
                made->plan = plan.take();
                ++m_counters.instantiated;
                return keep(made, "the plan made at " + symbolValuesText(graph.symbolValues) +
                                      " runs at " +
                                      symbolValuesText(made->model.graph.symbolValues) +
                                      ", its memory planned for them (" + *why + ")");
            }
            readAgain = plan.error().message;
        } else {
            readAgain = sized.error().message;
        }
    }
    if (!planned->source)
        return SourceError::sentence(*why + "; this plan was not opened from a file, so it "
                                            "cannot be planned again for the data");
    ModelSource source = *planned->source;
    for (const auto& [name, tensor] : data)
        source.runInputs[name] = tensor;
    const PlanRequest& request = planned->request;
    auto loaded = loadSource(source, planned->model.devices);
    if (!loaded)
        return SourceError::sentence("planning again for the data (" + *why +
                                     "): " + loaded.error().toString());
    ++m_counters.modelsRead;
    // Where the user moved nodes by hand, the plan for the data moves them too.
    LoadedModel model = loaded.take();
    for (const Node& node : graph.nodes()) {
        if (node.pin.kind == PinKind::None)
            continue;
        if (const auto id = model.graph.find(node.name))
            model.graph.setPin(*id, node.pin);
    }
    auto replanned = plan(std::move(model), request);
    if (!replanned)
        return replanned.error();
    replanned.value().source = planned->source;
    return keep(std::make_shared<const PlannedModel>(replanned.take()),
                "planned for the data's shapes (" + *why +
                    (readAgain.empty() ? std::string() : "; read again: " + readAgain) + ")");
}

namespace {

/// `parts` (alike but on `axis`) joined on `axis`.
HostTensor joinedOn(const std::vector<HostTensor>& parts, std::size_t axis) {
    HostTensor out;
    out.type = parts.front().type;
    out.type.shape[axis] = 0;
    std::int64_t outer = 1;
    for (std::size_t a = 0; a < axis; ++a)
        outer *= out.type.shape[a];
    for (const HostTensor& part : parts)
        out.type.shape[axis] += part.type.shape[axis];
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(out.type.bytes()));
    for (std::int64_t o = 0; o < outer; ++o) {
        for (const HostTensor& part : parts) {
            const std::size_t block = part.data.size() / static_cast<std::size_t>(outer);
            bytes.append(part.data.data() + static_cast<std::size_t>(o) * block, block);
        }
    }
    out.data = TensorData(std::move(bytes));
    return out;
}

/// What a stream of `batches` (PlanOptions::streamBatches) should give: `user` run on each
/// batch of `inputs` apart (an input the stream stacks has `batches` times the user's rows;
/// others are read whole by every batch), each output's batches joined on the axis where the
/// stream's output is `batches` times as long.
Result<std::vector<HostTensor>> streamReference(const Graph& user, const Graph& graph,
                                                const Program& program,
                                                const std::vector<HostTensor>& inputs,
                                                std::int32_t batches, int opset) {
    std::vector<bool> stacked(inputs.size(), false);
    for (std::size_t i = 0; i < inputs.size() && i < program.inputs.size(); ++i) {
        const auto own = user.find(graph.node(program.inputs[i]).name);
        stacked[i] = own && user.node(*own).outputs[0].rank() > 0 &&
                     user.node(*own).outputs[0].shape[0] * batches == inputs[i].type.shape[0];
    }
    std::vector<std::vector<HostTensor>> perBatch;
    for (std::int32_t b = 0; b < batches; ++b) {
        std::vector<HostTensor> batch = inputs;
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (stacked[i])
                batch[i] = partOfRows(inputs[i], b, batches);
        }
        auto outputs = runReference(user, batch, opset);
        if (!outputs)
            return SourceError::sentence("batch " + std::to_string(b) +
                                         " of the stream: " + outputs.error().message);
        perBatch.push_back(outputs.take());
    }
    std::vector<HostTensor> expected;
    for (std::size_t o = 0; o < perBatch.front().size(); ++o) {
        const HostTensor& first = perBatch.front()[o];
        const std::vector<GraphOutput>& outputs = graph.outputs();
        const TensorType* ran = o < outputs.size() ? &graph.type(outputs[o].value) : nullptr;
        std::optional<std::size_t> axis;
        const auto rank =
            static_cast<std::size_t>(std::min(first.type.rank(), ran ? ran->rank() : 0));
        for (std::size_t a = 0; a < rank && !axis; ++a) {
            if (ran->shape[a] == first.type.shape[a] * batches && ran->shape[a] != 0)
                axis = a;
        }
        if (!axis) { // the batch does not reach it: every batch's is the same
            expected.push_back(first);
            continue;
        }
        std::vector<HostTensor> parts;
        for (const auto& outputs : perBatch)
            parts.push_back(outputs[o]);
        expected.push_back(joinedOn(parts, *axis));
    }
    return expected;
}

/// The run's inputs in program order: the data given by name, seeded random data for the rest
/// (step 5). Given data must exist as an input and match its type exactly. `graph` is the graph
/// that runs; `user` the model as read, whose open inputs say what the plan was made for (the
/// passes and splits build the graph that runs anew).
Result<std::vector<HostTensor>> makeInputs(const Graph& graph, const Graph& user,
                                           const Program& program, const RunRequest& request,
                                           std::int32_t streamBatches) {
    const std::vector<NodeId>& inputNodes = program.inputs;
    std::vector<HostTensor> inputs(inputNodes.size());
    std::vector<bool> given(inputNodes.size(), false);
    for (const auto& [name, tensor] : request.inputs) {
        // An input the plan was made for the value of is a constant of the graph now
        // (Session::forData planned it for this value).
        if (plannedFor(user, name))
            continue;
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
            return SourceError::sentence(
                "input " + name + ": the model has no input of that name (inputs: " + names + ")");
        }
        const TensorType& want = graph.node(inputNodes[index]).outputs[0];
        HostTensor data = tensor;
        // numpy has no bfloat16: such data comes as uint16 bit patterns.
        if (want.dtype == DType::BFloat16 && data.type.dtype == DType::UInt16)
            data.type.dtype = DType::BFloat16;
        // A stream reads its batches stacked on axis 0: one batch's data serves every batch.
        if (streamBatches > 1 && data.type != want && want.rank() > 0 &&
            data.type.rank() == want.rank() && data.type.dtype == want.dtype &&
            data.type.shape[0] * streamBatches == want.shape[0] &&
            std::equal(want.shape.begin() + 1, want.shape.end(), data.type.shape.begin() + 1))
            data = repeatedRows(data, streamBatches);
        if (data.type != want) {
            const OpenInput* open = openInput(user, name);
            if (open && !open->declaredDims.empty()) {
                std::string declared;
                for (const std::string& dim : open->declaredDims)
                    declared += (declared.empty() ? "" : "x") + dim;
                return SourceError::sentence("input " + name + ": the data is " +
                                             tensor.type.toShortString() +
                                             ", which does not fit the input as the model "
                                             "declares it, " +
                                             declared + " " + std::string(dtypeName(want.dtype)));
            }
            return SourceError::sentence("input " + name + ": the data is " +
                                         tensor.type.toShortString() + " but the input is " +
                                         want.toShortString());
        }
        inputs[index] = std::move(data);
        given[index] = true;
    }
    for (std::size_t i = 0; i < inputNodes.size(); ++i) {
        if (!given[i])
            inputs[i] =
                randomTensor(graph.node(inputNodes[i]).outputs[0], request.seed * 1000003u + i);
    }
    return inputs;
}

} // namespace

Result<CompiledPlan> Session::compile(const PlannedModel& planned, const CompileRequest& request) {
    std::vector<std::string> warnings;
    // The vcpus are given back when the plan is compiled: it only names them.
    std::vector<std::shared_ptr<const void>> leases;
    auto mapping = mapDevices(planned.model.devices, request.maps, *m_registry, &warnings, &leases);
    if (!mapping)
        return mapping.error();
    auto compiled = lowerPlanned(planned, mapping.value(), request.optimize);
    if (!compiled)
        return compiled.error();
    compiled.value().warnings.insert(compiled.value().warnings.begin(), warnings.begin(),
                                     warnings.end());
    return compiled;
}

namespace {

/// Each fault names a virtual device of the plan or a physical device of the run, and a slowdown
/// a device whose worker runs its kernels (a CPU's).
Status checkFaultDevices(const std::vector<InjectedFault>& faults, const DeviceSet& devices,
                         const std::vector<Device*>& mapping) {
    for (const InjectedFault& fault : faults) {
        const Device* found = nullptr;
        std::string physical;
        for (int d = 0; d < devices.size(); ++d) {
            const Device* device = mapping[static_cast<std::size_t>(d)];
            if (devices[DeviceId(d)].name == fault.device || device->name() == fault.device)
                found = device;
            physical += (physical.empty() ? "" : ", ") + device->name();
        }
        if (!found)
            return SourceError::sentence(injectedFaultText(fault) + ": no device '" + fault.device +
                                         "' in this run (virtual devices: " + devices.namesList() +
                                         "; physical: " + physical + ")");
        if (fault.kind == InjectedFault::Kind::Slow && found->timesAsynchronously())
            return SourceError::sentence(injectedFaultText(fault) + ": " + found->name() +
                                         " runs its kernels asynchronously; PLACER_SLOW slows "
                                         "CPU devices, whose worker runs them");
    }
    return Status();
}

} // namespace

/// A program the session lowered and loaded for one plan on one mapping (Session::m_loaded):
/// what a run of that plan again reuses. Its vcpus' leases are declared before the graph, and
/// the graph before the executor that reads it, so that each goes after what uses it.
struct Session::LoadedRun {
    std::weak_ptr<const PlannedModel> planned;
    std::vector<DeviceMapRequest> maps;
    bool optimize = true, packWeights = true, mapByLoad = false;
    std::vector<std::shared_ptr<const void>> leases;
    std::vector<Device*> mapping;
    std::vector<std::string> mappingReasons; ///< by load: why each went where it did
    std::vector<std::string> warnings;       ///< the mapping's and the passes', told at every run
    std::vector<std::string> physical;
    std::shared_ptr<const OptimizedGraph> ran;
    std::optional<Program> program; ///< lowered, until the executor takes it
    std::shared_ptr<Executor> executor;

    /// Whether a run of `plan` with `request` runs this program: the same plan object, the same
    /// device requests and passes.
    bool serves(const std::shared_ptr<const PlannedModel>& plan, const RunRequest& request) const {
        if (!executor || planned.lock() != plan || optimize != request.optimize ||
            packWeights != request.packWeights || mapByLoad != request.mapByLoad ||
            maps.size() != request.maps.size())
            return false;
        for (std::size_t k = 0; k < maps.size(); ++k) {
            if (maps[k].device != request.maps[k].device ||
                maps[k].physical != request.maps[k].physical)
                return false;
        }
        return true;
    }
};

Result<std::shared_ptr<const PlannedModel>>
Session::simulate(std::shared_ptr<const PlannedModel> planned) {
    if (planned->plan.simulation)
        return planned;
    auto simulated = std::make_shared<PlannedModel>(*planned);
    PlanOptions& options = simulated->options;
    if (!options.costs)
        options.costs = std::make_shared<const CostModel>(costs(simulated->model.devices));
    options.simulate = true;
    ++m_counters.plansMade;
    // The same options make the same plan (the planner is deterministic): its simulation.
    simulated->plan = planDevices(simulated->model.graph, simulated->model.devices, options);
    if (!simulated->plan.simulation)
        return SourceError::sentence("the plan has nothing to simulate: it places no op");
    return std::shared_ptr<const PlannedModel>(std::move(simulated));
}

Result<std::shared_ptr<RunOutcome>> Session::run(std::shared_ptr<const PlannedModel> planned,
                                                 const RunRequest& request,
                                                 const RunCallbacks& callbacks) {
    std::lock_guard lock(m_running);
    if (planned->request.machine)
        return SourceError::sentence(
            "the plan is for the machine '" + planned->request.machine->name +
            "' (--machine), which this one is not: it can only be simulated (placer run "
            "--machine, Session::simulate)");
    auto faults = injectedFaultsFromEnvironment();
    if (!faults)
        return faults.error();
    faults.value().insert(faults.value().begin(), request.faults.begin(), request.faults.end());
    std::string replannedNote;
    const std::shared_ptr<const PlannedModel> opened = planned;
    // A stream's data is one batch (repeated for each) or every batch stacked on axis 0 (N
    // times the rows the model was planned at): the plan is made for one batch.
    std::vector<std::pair<std::string, HostTensor>> oneBatch = request.inputs;
    if (const std::int32_t n = opened->options.streamBatches; n > 1) {
        for (auto& [name, tensor] : oneBatch) {
            const auto node = opened->model.graph.find(name);
            if (!node || opened->model.graph.node(*node).outputs.empty())
                continue;
            const TensorType& planned = opened->model.graph.node(*node).outputs[0];
            if (planned.rank() > 0 && tensor.type.rank() == planned.rank() &&
                planned.shape[0] > 0 && tensor.type.shape[0] == planned.shape[0] * n)
                tensor = partOfRows(tensor, 0, n);
        }
    }
    auto forRun = forData(std::move(planned), oneBatch, &replannedNote);
    if (!forRun)
        return forRun.error();
    planned = forRun.take();
    // Capacities are checked at run start, at the data's sizes: a plan that fitted its devices
    // as opened but not at these sizes does not run (as a data-dependent tensor that does not
    // fit fails when it is made). A plan opened over capacity runs with the conflict said.
    if (planned != opened && !capacityConflict(opened->plan)) {
        if (const Conflict* conflict = capacityConflict(planned->plan))
            return SourceError::sentence("at the data's sizes (" + replannedNote +
                                         "), the plan does not fit: " + conflict->message);
    }
    // A stream runs only as a stream: a plan whose batches cannot be stacked says why.
    const std::int32_t streamBatches = std::max(planned->options.streamBatches, 1);
    if (streamBatches > 1 && !streamRegion(planned->plan)) {
        std::string why = "the plan has nothing to pipeline";
        for (const Conflict& conflict : planned->plan.conflicts) {
            if (conflict.kind == ConflictKind::Split) {
                why = conflict.message;
                break;
            }
        }
        return SourceError::sentence("--stream " + std::to_string(streamBatches) +
                                     ": the batches cannot run as a stream: " + why);
    }
    const DeviceSet& devices = planned->model.devices;
    auto outcome = std::make_shared<RunOutcome>();
    outcome->userGraph = std::shared_ptr<const Graph>(planned, &planned->model.graph);
    outcome->userPlan = planned->plan;
    outcome->planOptions = planned->options;
    outcome->devices = devices;
    outcome->physicalDevices = m_registry;
    outcome->warmup = std::max(0, request.warmup);
    outcome->iterations = std::max(1, request.iterations);
    if (!replannedNote.empty())
        outcome->warnings.push_back(replannedNote);
    for (const Conflict& conflict : planned->plan.conflicts) {
        if (conflict.kind == ConflictKind::Unsupported)
            return SourceError::sentence("the plan cannot run: " + conflict.message);
        outcome->warnings.push_back("conflict: " + conflict.message);
    }

    // The program the latest run loaded serves this one when it ran this plan on the same
    // devices with the same passes; a reference run, which must not hold memory beside it, and a
    // run over ranks, whose ranks load together, load afresh. Another plan's is dropped before
    // this one maps its devices, so that its vcpus and memory are free for it.
    std::shared_ptr<LoadedRun> loaded = m_loaded;
    if (!loaded || !loaded->serves(planned, request) || request.reference || rankCount() > 1) {
        m_loaded.reset();
        loaded.reset();
    }
    const bool reused = loaded != nullptr;
    if (!reused) {
        loaded = std::make_shared<LoadedRun>();
        loaded->planned = planned;
        loaded->maps = request.maps;
        loaded->optimize = request.optimize;
        loaded->packWeights = request.packWeights;
        loaded->mapByLoad = request.mapByLoad;
        if (request.mapByLoad) {
            std::vector<std::int64_t> peaks(static_cast<std::size_t>(devices.size()), 0);
            for (const DeviceMemory& memory : planned->plan.memory.devices) {
                if (memory.device.valid() &&
                    static_cast<std::size_t>(memory.device.index) < peaks.size())
                    peaks[memory.device.index] = memory.peakBytes;
            }
            auto mapping = mapDevicesByLoad(devices, request.maps, *m_registry, measureHostLoad(),
                                            peaks, &loaded->warnings, &loaded->leases);
            if (!mapping)
                return mapping.error();
            loaded->mapping = std::move(mapping.value().mapping);
            loaded->mappingReasons = std::move(mapping.value().reasons);
        } else {
            auto mapping =
                mapDevices(devices, request.maps, *m_registry, &loaded->warnings, &loaded->leases);
            if (!mapping)
                return mapping.error();
            loaded->mapping = mapping.take();
        }
        OptimizeOptions passes = request.optimize ? OptimizeOptions{} : OptimizeOptions::none();
        passes.packWeights = passes.packWeights && request.packWeights;
        auto compiled = lowerPlanned(*planned, loaded->mapping, passes);
        if (!compiled)
            return compiled.error();
        CompiledPlan& lowered = compiled.value();
        loaded->warnings.insert(loaded->warnings.end(), lowered.warnings.begin(),
                                lowered.warnings.end());
        loaded->ran = std::make_shared<const OptimizedGraph>(std::move(lowered.ran));
        loaded->physical = std::move(lowered.physical);
        loaded->program = std::move(lowered.program);
        const Graph& graph = loaded->ran->graph;
        // A plan too large for its devices is refused before any input is made.
        if (Status fits =
                checkMemoryFits(*loaded->program, devices, loaded->mapping,
                                hostInputOutputBytes(*loaded->program), &graph, graph.onnxOpset());
            !fits.ok())
            return fits.error();
        // A run over several ranks: every rank made this same program from the same model, or
        // none runs it.
        if (rankCount() > 1) {
            if (Status agree =
                    checkRanksAgree(graphFingerprint(planned->model.graph),
                                    fnv1a(printBytecode(*loaded->program, graph, devices)));
                !agree.ok())
                return agree.error();
        }
    }
    if (Status named = checkFaultDevices(faults.value(), devices, loaded->mapping); !named.ok())
        return named.error();
    outcome->warnings.insert(outcome->warnings.end(), loaded->warnings.begin(),
                             loaded->warnings.end());
    outcome->ran = loaded->ran;
    outcome->physical = loaded->physical;
    outcome->mappingReasons = loaded->mappingReasons;
    // The outcome holds what the run needs (its vcpus, graph and executor) as long as it lives.
    outcome->deviceLeases.push_back(loaded);
    const Graph& graph = outcome->ran->graph;
    const int opset = graph.onnxOpset();
    const Program& program = reused ? loaded->executor->program() : *loaded->program;

    auto inputs = makeInputs(graph, planned->model.graph, program, request, streamBatches);
    if (!inputs)
        return inputs.error();
    if (stopped(callbacks)) {
        outcome->result.cancelled = true;
        return outcome;
    }
    std::optional<std::vector<HostTensor>> expected;
    // Rank 0 alone checks the outputs (it gathers them).
    if (request.reference && localRank() == 0) {
        auto outputs = streamBatches > 1 ? streamReference(*outcome->userGraph, graph, program,
                                                           inputs.value(), streamBatches, opset)
                                         : runReference(*outcome->userGraph, inputs.value(), opset);
        if (!outputs)
            return SourceError::sentence("reference run: " + outputs.error().message);
        expected = outputs.take();
    }
    if (stopped(callbacks)) {
        outcome->result.cancelled = true;
        return outcome;
    }
    if (reused) {
        ++m_counters.programsReused;
        if (callbacks.loading)
            callbacks.loading(0, 0);
    } else {
        auto executor = Executor::load(graph, devices, std::move(*loaded->program), loaded->mapping,
                                       opset, callbacks.loading, m_constants);
        loaded->program.reset();
        if (!executor)
            return executor.error();
        loaded->executor = executor.take();
        ++m_counters.programsLoaded;
        if (rankCount() <= 1)
            m_loaded = loaded;
    }
    outcome->executor = loaded->executor;
    RunOptions options{outcome->warmup, outcome->iterations, callbacks.progress,
                       callbacks.cancelled, rankCount() > 1};
    options.faults = faults.take();
    auto result = runSegments(planned, request, loaded->mapping, inputs.take(), std::move(options),
                              callbacks, *outcome);
    // A program whose device failed is not run again; one that was re-placed still could be,
    // but the next run starts from its plan, not from what this one learnt.
    if (!outcome->events.empty())
        m_loaded.reset();
    if (!result)
        return result.error();
    outcome->result = result.take();
    if (Status gathered = gatherRankResults(outcome->result); !gathered.ok())
        return gathered.error();
    if (expected && !outcome->result.outputs.empty()) {
        // Work a precision policy puts in 16 bits is held to that type's tolerance, unless the
        // run asked for one of its own.
        double atol = request.atol, rtol = request.rtol;
        DType narrowest = DType::Float32;
        for (const CastPlan& cast : planned->plan.casts) {
            if (cast.to == DType::BFloat16 ||
                (cast.to == DType::Float16 && narrowest != DType::BFloat16))
                narrowest = cast.to;
        }
        const RunRequest defaults;
        const bool own = atol != defaults.atol || rtol != defaults.rtol;
        if (narrowest != DType::Float32 && !own)
            precisionTolerance(narrowest, *expected, &atol, &rtol);
        outcome->reference = compareOutputs(outcome->result.outputs, *expected, atol, rtol);
        if (narrowest != DType::Float32 && !own)
            outcome->reference->toleranceOf = std::string(dtypeName(narrowest)) + "'s";
    }
    outcome->hostPeakBytes = processPeakResidentBytes();
    return outcome;
}

} // namespace placer
