// placer._placer: the Python module's native part, a thin layer over the session
// (core/session/Session.h) and nothing else. The Python package (python/placer/__init__.py)
// shapes it into load / plan / run / Workspace; this file converts values, releases the GIL
// while the session works, and turns every failure into placer.PlacerError with the sentence the
// CLI prints.

#include "device/DeviceRegistry.h"
#include "io/Npy.h"
#include "io/OnnxWriter.h"
#include "report/PlanExport.h"
#include "report/RunReport.h"
#include "session/PlanOptionText.h"
#include "session/Session.h"
#include "store/PlanStore.h"
#include "store/RunRecords.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace placer::python {

namespace {

/// The one exception type of the module (placer.PlacerError); set when the module is made.
PyObject* g_error = nullptr;

[[noreturn]] void fail(const std::string& message) {
    PyErr_SetString(g_error, message.c_str());
    throw py::error_already_set();
}

template <typename T> T take(Result<T> result) {
    if (!result)
        fail(result.error().toString());
    return result.take();
}

void check(const Status& status) {
    if (!status.ok())
        fail(status.error().toString());
}

/// The plan options as (name, text) pairs in the CLI's spelling ("pin", "conv1=gpu").
using OptionList = std::vector<std::pair<std::string, std::string>>;

void takeOptions(const OptionList& options, ModelSource* source, PlanRequest* request) {
    for (const auto& [name, value] : options) {
        if (auto problem = takePlanOption(name, value, source, request))
            fail(*problem);
    }
}

std::vector<DeviceMapRequest>
takeMaps(const std::vector<std::pair<std::string, std::string>>& maps) {
    std::vector<DeviceMapRequest> out;
    for (const auto& [device, physical] : maps)
        out.push_back({device, physical});
    return out;
}

py::object parseJson(const std::string& text) {
    return py::module_::import("json").attr("loads")(text);
}

py::object parseJson(const Json& json) {
    return parseJson(json.dump());
}

// --- arrays -------------------------------------------------------------------------------------

std::optional<DType> dtypeOf(const py::dtype& dtype) {
    const char kind = dtype.kind();
    const auto size = dtype.itemsize();
    if (kind == 'f')
        return size == 4   ? std::optional(DType::Float32)
               : size == 2 ? std::optional(DType::Float16)
               : size == 8 ? std::optional(DType::Float64)
                           : std::nullopt;
    if (kind == 'i')
        return size == 1   ? std::optional(DType::Int8)
               : size == 2 ? std::optional(DType::Int16)
               : size == 4 ? std::optional(DType::Int32)
               : size == 8 ? std::optional(DType::Int64)
                           : std::nullopt;
    if (kind == 'u')
        return size == 1   ? std::optional(DType::UInt8)
               : size == 2 ? std::optional(DType::UInt16)
               : size == 4 ? std::optional(DType::UInt32)
               : size == 8 ? std::optional(DType::UInt64)
                           : std::nullopt;
    if (kind == 'b')
        return DType::Bool;
    return std::nullopt;
}

py::dtype numpyDType(DType dtype) {
    switch (dtype) {
    case DType::Float32:
        return py::dtype("float32");
    case DType::Float16:
        return py::dtype("float16");
    case DType::BFloat16:
        return py::dtype("uint16"); // bit patterns, as placer run reads them
    case DType::Float64:
        return py::dtype("float64");
    case DType::Int8:
        return py::dtype("int8");
    case DType::Int16:
        return py::dtype("int16");
    case DType::Int32:
        return py::dtype("int32");
    case DType::Int64:
        return py::dtype("int64");
    case DType::UInt8:
        return py::dtype("uint8");
    case DType::Bool:
        return py::dtype("bool");
    case DType::UInt16:
        return py::dtype("uint16");
    case DType::UInt32:
        return py::dtype("uint32");
    case DType::UInt64:
        return py::dtype("uint64");
    case DType::String:
        break;
    }
    return py::dtype("object");
}

/// A host tensor over `value`'s memory, without a copy: a C-contiguous array of a numeric type
/// (the Python side makes one where the user's is not), or the bytes of a .npy file (strings).
/// The array is kept alive by the tensor, and let go with the GIL held, on whichever thread
/// drops the last reference.
HostTensor hostTensor(const std::string& name, const py::object& value) {
    if (py::isinstance<py::bytes>(value)) {
        const std::string bytes = value.cast<std::string>();
        return take(parseNpy(bytes, "input '" + name + "'"));
    }
    auto array = py::reinterpret_borrow<py::array>(value);
    if (!(array.flags() & py::array::c_style))
        fail("input '" + name + "' is not a C-contiguous array");
    const auto dtype = dtypeOf(array.dtype());
    if (!dtype)
        fail("input '" + name + "' has numpy type " + py::str(array.dtype()).cast<std::string>() +
             ", which placer does not run");
    HostTensor tensor;
    tensor.type.dtype = *dtype;
    for (py::ssize_t d = 0; d < array.ndim(); ++d)
        tensor.type.shape.push_back(static_cast<std::int64_t>(array.shape(d)));
    auto* held = new py::array(array);
    std::shared_ptr<const void> keeper(held, [](py::array* a) {
        py::gil_scoped_acquire gil;
        delete a;
    });
    tensor.data = TensorData::view(std::move(keeper), static_cast<const char*>(held->data()),
                                   static_cast<std::size_t>(held->nbytes()));
    return tensor;
}

// --- handles ------------------------------------------------------------------------------------

struct ModelHandle {
    std::shared_ptr<const LoadedModel> model;
};

struct PlanHandle {
    std::shared_ptr<const PlannedModel> planned;
};

/// The plan in one of its text forms (report/PlanExport.h, as placer plan --emit writes them).
std::string exportPlan(const PlanHandle& handle, PlanExportKind kind) {
    const PlannedModel& p = *handle.planned;
    PlanExportSources sources;
    sources.graph = &p.model.graph;
    sources.devices = &p.model.devices;
    sources.options = &p.options;
    sources.plan = &p.plan;
    return take(renderPlanExport(kind, sources));
}

struct RunHandle {
    std::shared_ptr<RunOutcome> outcome;
};

py::dict modelInfo(const LoadedModel& model) {
    const Graph& graph = model.graph;
    py::list inputs, outputs;
    std::map<std::string, int> ops;
    std::size_t compute = 0;
    for (const Node& node : graph.nodes()) {
        if (node.isParameter()) {
            py::dict entry;
            entry["name"] = node.name;
            entry["shape"] =
                node.outputs.empty() ? std::vector<std::int64_t>{} : node.outputs[0].shape;
            entry["dtype"] = node.outputs.empty() ? std::string("float32")
                                                  : std::string(dtypeName(node.outputs[0].dtype));
            for (const OpenInput& open : graph.openInputs) {
                if (open.name == node.name && !open.declaredDims.empty())
                    entry["declared"] = open.declaredDims;
            }
            inputs.append(entry);
        } else if (node.role() == OpRole::Compute) {
            ++compute;
            ++ops[node.op->name];
        }
    }
    for (std::size_t o = 0; o < graph.outputs().size(); ++o) {
        const GraphOutput& output = graph.outputs()[o];
        const TensorType& type = graph.type(output.value);
        py::dict entry;
        entry["name"] = output.name.empty() ? graph.valueName(output.value) : output.name;
        entry["shape"] = type.shape;
        entry["dtype"] = std::string(dtypeName(type.dtype));
        entry["known_at_load"] = !shapeFoundAtRun(graph, output.value);
        outputs.append(entry);
    }
    py::list devices;
    for (const VirtualDevice& device : model.devices.devices())
        devices.append(device.name + ":" + std::string(deviceKindName(device.kind)));
    py::dict info;
    info["name"] = graph.name;
    info["format"] = graph.sourceFormat;
    info["inputs"] = inputs;
    info["outputs"] = outputs;
    info["nodes"] = graph.size();
    info["ops"] = compute;
    info["op_counts"] = ops;
    info["devices"] = devices;
    info["warnings"] = model.warnings;
    return info;
}

/// Graphviz's SVG of a DOT text, or the reason it could not be made.
std::string renderSvg(const std::string& dot) {
    static std::mutex graphviz; // libgvc keeps global state
    std::lock_guard lock(graphviz);
    Agraph_t* graph = agmemread(dot.c_str());
    if (!graph)
        fail("Graphviz could not read the plan's DOT text");
    GVC_t* context = gvContext();
    std::string svg;
    if (gvLayout(context, graph, "dot") == 0) {
        char* data = nullptr;
        unsigned int length = 0;
        if (gvRenderData(context, graph, "svg", &data, &length) == 0 && data)
            svg.assign(data, length);
        gvFreeRenderData(data);
        gvFreeLayout(context, graph);
    }
    agclose(graph);
    gvFreeContext(context);
    if (svg.empty())
        fail("Graphviz could not lay the plan out");
    return svg;
}

// --- the session's calls --------------------------------------------------------------------

ModelHandle load(Session& session, const std::string& path, const OptionList& options) {
    ModelSource source;
    source.path = path;
    PlanRequest request;
    takeOptions(options, &source, &request);
    Result<LoadedModel> loaded = [&] {
        py::gil_scoped_release release;
        return session.load(source, request);
    }();
    return {std::make_shared<const LoadedModel>(take(std::move(loaded)))};
}

/// Loads and plans as Session::open does, with the session's cost model in the options, so that
/// every plan predicts its schedule (auto mode places by it).
PlanHandle plan(Session& session, const std::string& path, const OptionList& options,
                const std::vector<std::pair<std::string, std::string>>& maps, bool optimize,
                const std::vector<std::pair<std::string, py::object>>& inputs) {
    ModelSource source;
    source.path = path;
    PlanRequest request;
    takeOptions(options, &source, &request);
    request.maps = takeMaps(maps);
    request.optimize = optimize;
    // Data a run will give: the model is planned for its shapes, as placer run --input does.
    for (const auto& [name, value] : inputs)
        source.runInputs[name] = hostTensor(name, value);
    Result<PlannedModel> planned = [&]() -> Result<PlannedModel> {
        py::gil_scoped_release release;
        auto loaded = session.load(source, request);
        if (!loaded)
            return loaded.error();
        if (!request.options.costs)
            request.options.costs = std::make_shared<const CostModel>(
                session.costs(loaded.value().devices, request.maps, request.optimize));
        auto result = session.plan(loaded.take(), request);
        if (result) {
            result.value().source = source;
            result.value().source->runInputs.clear();
        }
        return result;
    }();
    return {std::make_shared<const PlannedModel>(take(std::move(planned)))};
}

struct RunArguments {
    std::vector<std::pair<std::string, py::object>> inputs;
    std::vector<std::pair<std::string, std::string>> maps;
    int iterations = 10;
    int warmup = 1;
    std::uint64_t seed = 1;
    bool reference = true;
    bool optimize = true;
    double atol = 1e-4, rtol = 1e-3;
    py::object progress;
    bool mapByLoad = false, adapt = false, failover = true;
};

/// Runs with the GIL released: Ctrl+C cancels the run between steps, and KeyboardInterrupt is
/// raised once it has stopped.
RunHandle run(Session& session, const PlanHandle& planned, const RunArguments& arguments) {
    RunRequest request;
    request.maps = takeMaps(arguments.maps);
    for (const auto& [name, value] : arguments.inputs)
        request.inputs.emplace_back(name, hostTensor(name, value));
    request.iterations = arguments.iterations;
    request.warmup = arguments.warmup;
    request.seed = arguments.seed;
    request.reference = arguments.reference;
    request.optimize = arguments.optimize;
    request.atol = arguments.atol;
    request.rtol = arguments.rtol;
    request.mapByLoad = arguments.mapByLoad;
    request.adapt = arguments.adapt;
    request.failover = arguments.failover;
    if (request.iterations < 1)
        fail("iterations must be at least 1, not " + std::to_string(request.iterations));
    if (request.warmup < 0)
        fail("warmup must be at least 0, not " + std::to_string(request.warmup));

    // The run goes on this thread with the GIL released; between its steps and iterations it
    // asks the interpreter for signals (Ctrl+C cancels, as KeyboardInterrupt), which a thread of
    // its own would have to poll for and cost every call a thread's start.
    std::optional<py::error_already_set> raised; // a signal handler's or the progress callback's
    RunCallbacks callbacks;
    callbacks.cancelled = [&] {
        if (raised)
            return true;
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0)
            raised.emplace();
        return raised.has_value();
    };
    if (!arguments.progress.is_none()) {
        callbacks.progress = [&](int doneIterations, int total) {
            py::gil_scoped_acquire gil;
            try {
                arguments.progress(doneIterations, total);
            } catch (py::error_already_set& error) {
                if (!raised)
                    raised = std::move(error);
            }
        };
    }
    std::optional<Result<std::shared_ptr<RunOutcome>>> result;
    {
        py::gil_scoped_release release;
        result.emplace(session.run(planned.planned, request, callbacks));
    }
    if (raised)
        throw std::move(*raised);
    return {take(std::move(*result))};
}

struct GenerateArguments {
    std::vector<std::int64_t> prompt;
    int maxNewTokens = 32, maxLength = 0;
    Sampling sampling;
    std::vector<std::int64_t> stop;
    std::string idsInput, logits;
    std::vector<std::pair<std::string, std::string>> bind, maps;
    bool optimize = true;
    bool check = true;
    py::object onToken;
    bool adapt = false, failover = true;
};

/// A finished generation, kept so that it can be recorded in a workspace.
struct GenerationHandle {
    std::shared_ptr<const PlannedModel> planned;
    GenerationReport report;
};

/// Session::generate with the GIL released; `on_token(token, index)` is called with it held as
/// each token is made (False stops), and Ctrl+C stops between tokens.
GenerationHandle generate(Session& session, const PlanHandle& planned,
                          GenerateArguments arguments) {
    GenerateRequest request;
    request.prompt = std::move(arguments.prompt);
    request.maxNewTokens = arguments.maxNewTokens;
    request.maxLength = arguments.maxLength;
    request.sampling = arguments.sampling;
    request.stopTokens = std::move(arguments.stop);
    request.idsInput = std::move(arguments.idsInput);
    request.logitsOutput = std::move(arguments.logits);
    request.cache = std::move(arguments.bind);
    request.maps = takeMaps(arguments.maps);
    request.optimize = arguments.optimize;
    request.checkFirstStep = arguments.check;
    request.adapt = arguments.adapt;
    request.failover = arguments.failover;
    if (request.maxNewTokens < 1)
        fail("max_new_tokens must be at least 1, not " + std::to_string(request.maxNewTokens));
    std::optional<py::error_already_set> raised;
    const TokenCallback onToken = [&](std::int64_t token, int index) {
        py::gil_scoped_acquire gil;
        try {
            if (PyErr_CheckSignals() != 0)
                throw py::error_already_set();
            if (!arguments.onToken.is_none()) {
                py::object answer = arguments.onToken(token, index);
                if (!answer.is_none() && !answer.cast<bool>())
                    return false;
            }
        } catch (py::error_already_set& error) {
            raised = std::move(error);
            return false;
        }
        return true;
    };
    std::optional<Result<GenerationReport>> result;
    {
        py::gil_scoped_release release;
        result.emplace(session.generate(planned.planned, request, onToken));
    }
    if (raised)
        throw std::move(*raised);
    return {planned.planned, take(std::move(*result))};
}

py::list runOutputs(const RunHandle& handle) {
    const std::shared_ptr<RunOutcome>& outcome = handle.outcome;
    const Graph& graph = outcome->graph();
    py::list out;
    for (std::size_t o = 0; o < outcome->result.outputs.size(); ++o) {
        HostTensor& tensor = outcome->result.outputs[o];
        const GraphOutput& output = graph.outputs()[o];
        const std::string name = output.name.empty() ? graph.valueName(output.value) : output.name;
        py::object array;
        if (tensor.type.dtype == DType::String) {
            // As a .npy file: the Python side reads it into an array of str.
            array = py::bytes(take(formatNpy(tensor)));
        } else {
            std::vector<py::ssize_t> shape(tensor.type.shape.begin(), tensor.type.shape.end());
            // The array reads the run's memory, and keeps the run alive.
            auto* keep = new std::shared_ptr<RunOutcome>(outcome);
            py::capsule base(keep,
                             [](void* p) { delete static_cast<std::shared_ptr<RunOutcome>*>(p); });
            array = py::array(numpyDType(tensor.type.dtype), shape, {}, tensor.data.data(), base);
        }
        out.append(py::make_tuple(name, array));
    }
    return out;
}

py::dict runReport(const RunHandle& handle) {
    Json document = runReportJson(*handle.outcome);
    if (const std::optional<PredictionCheck> predicted = checkPrediction(*handle.outcome))
        document.set("prediction", predicted->toJson());
    return parseJson(document);
}

void writeText(const std::string& path, const std::string& text) {
    std::ofstream stream(path, std::ios::binary | std::ios::trunc);
    stream << text;
    stream.close();
    if (!stream)
        fail("cannot write '" + path + "'");
}

std::unique_ptr<store::PlanStore> openWorkspace(const std::string& path) {
    return take(store::PlanStore::open(path));
}

py::dict summaryDict(const store::PlanSummary& s) {
    py::dict d;
    d["name"] = s.name;
    d["graph"] = s.graph;
    d["devices"] = s.devices;
    d["copies"] = s.copies;
    d["copied_bytes"] = s.copiedBytes;
    d["conflicts"] = s.conflicts;
    d["note"] = s.note;
    d["created"] = s.created;
    d["updated"] = s.updated;
    d["last_run_ms"] = s.lastRunMs < 0 ? py::object(py::none()) : py::float_(s.lastRunMs);
    return d;
}

py::dict calibrationDict(const Calibration& calibration) {
    py::list devices;
    for (const DeviceProfile& profile : calibration.devices) {
        py::dict d;
        d["name"] = profile.name;
        d["gpu"] = profile.gpu;
        d["gflops"] = profile.flopsPerMicro / 1e3;
        d["gbytes_per_s"] = profile.bytesPerMicro / 1e3;
        d["launch_us"] = profile.launchMicros;
        d["dispatch_us"] = profile.dispatchMicros;
        devices.append(d);
    }
    py::list links;
    for (const auto& [pair, link] : calibration.links) {
        py::dict d;
        d["from"] = pair.first;
        d["to"] = pair.second;
        d["latency_us"] = link.latencyMicros;
        d["gbytes_per_s"] = link.bytesPerMicro / 1e3;
        links.append(d);
    }
    py::dict out;
    out["machine"] = calibration.machine;
    out["devices"] = devices;
    out["links"] = links;
    return out;
}

} // namespace

} // namespace placer::python

PYBIND11_MODULE(_placer, m) {
    using namespace placer;
    using namespace placer::python;
    m.doc() = "The native part of placer: the session of core/session, for python/placer.";

    // Made once and never let go: a static pybind11 object would be released after the
    // interpreter has gone.
    g_error = PyErr_NewExceptionWithDoc(
        "placer.PlacerError",
        "What placer says is wrong: a model it cannot read, a bad option, a run that fails. The "
        "message is the sentence the placer command prints, with the file and place where there "
        "is one.",
        PyExc_RuntimeError, nullptr);
    if (!g_error)
        throw py::error_already_set();
    m.attr("PlacerError") = py::handle(g_error);
    m.attr("__version__") = PLACER_VERSION_TEXT;

    py::class_<Session>(m, "Session")
        .def(py::init([](const std::string& workspace) {
                 return std::make_unique<Session>(SessionOptions{workspace});
             }),
             py::arg("workspace") = "")
        .def_property_readonly("workspace", &Session::workspacePath)
        .def("import_profile",
             [](Session& session, const ModelHandle& h, const std::string& path) {
                 // ONNX Runtime's profile on the model's nodes (io/ProfileImport.h).
                 std::string report;
                 {
                     py::gil_scoped_release release;
                     auto imported = session.importProfile(h.model->graph, path);
                     report = imported
                                  ? profileImportJson(h.model->graph, imported.value()).dump(-1)
                                  : "!" + imported.error().toString();
                 }
                 if (!report.empty() && report[0] == '!')
                     fail(report.substr(1));
                 return parseJson(report);
             })
        .def("load", &load)
        .def("plan", &plan)
        .def("run",
             [](Session& session, const PlanHandle& planned,
                std::vector<std::pair<std::string, py::object>> inputs,
                std::vector<std::pair<std::string, std::string>> maps, int iterations, int warmup,
                std::uint64_t seed, bool reference, bool optimize, double atol, double rtol,
                py::object progress, bool mapByLoad, bool adapt, bool failover) {
                 RunArguments arguments{
                     std::move(inputs), std::move(maps), iterations, warmup, seed,
                     reference,         optimize,        atol,       rtol,   std::move(progress),
                     mapByLoad,         adapt,           failover};
                 return run(session, planned, arguments);
             })
        .def("generate",
             [](Session& session, const PlanHandle& planned, std::vector<std::int64_t> prompt,
                int maxNewTokens, int maxLength, double temperature, int topK, double topP,
                std::uint64_t seed, std::vector<std::int64_t> stop, std::string idsInput,
                std::string logits, std::vector<std::pair<std::string, std::string>> bind,
                std::vector<std::pair<std::string, std::string>> maps, bool optimize, bool check,
                py::object onToken, bool adapt, bool failover) {
                 GenerateArguments arguments{std::move(prompt),
                                             maxNewTokens,
                                             maxLength,
                                             Sampling{temperature, topK, topP, seed},
                                             std::move(stop),
                                             std::move(idsInput),
                                             std::move(logits),
                                             std::move(bind),
                                             std::move(maps),
                                             optimize,
                                             check,
                                             std::move(onToken),
                                             adapt,
                                             failover};
                 return generate(session, planned, std::move(arguments));
             })
        .def("counters",
             [](const Session& session) {
                 py::dict out;
                 out["models_read"] = session.counters().modelsRead;
                 out["plans_made"] = session.counters().plansMade;
                 out["instantiated"] = session.counters().instantiated;
                 return out;
             })
        .def("calibrate",
             [](Session& session, bool quick, int iterations) {
                 CalibrationOptions options;
                 options.quick = quick;
                 options.iterations = iterations;
                 Result<Calibration> calibration = [&] {
                     py::gil_scoped_release release;
                     return session.calibrate(options);
                 }();
                 return calibrationDict(take(std::move(calibration)));
             })
        .def("record_costs",
             [](Session& session, const RunHandle& run) {
                 return take(session.recordCosts(*run.outcome));
             })
        .def("record_run",
             [](Session& session, const RunHandle& run, const std::string& name) {
                 bool saved = false;
                 check(session.recordRun(*run.outcome, name, &saved));
                 return saved;
             })
        .def("record_generation",
             [](Session& session, const GenerationHandle& made, const std::string& name) {
                 bool saved = false;
                 check(session.recordGeneration(*made.planned, made.report, name, &saved));
                 return saved;
             });

    py::class_<GenerationHandle>(m, "Generation").def("report", [](const GenerationHandle& h) {
        return parseJson(generationJson(h.report));
    });

    py::class_<ModelHandle>(m, "Model").def("info", [](const ModelHandle& h) {
        return modelInfo(*h.model);
    });

    py::class_<PlanHandle>(m, "Plan")
        .def("info", [](const PlanHandle& h) { return modelInfo(h.planned->model); })
        .def("warnings", [](const PlanHandle& h) { return h.planned->warnings; })
        .def("report",
             [](const PlanHandle& h) { return parseJson(exportPlan(h, PlanExportKind::Report)); })
        .def("summary", [](const PlanHandle& h) { return exportPlan(h, PlanExportKind::Summary); })
        .def("relay", [](const PlanHandle& h) { return exportPlan(h, PlanExportKind::Relay); })
        .def("onnx",
             [](const PlanHandle& h, const std::string& path) {
                 writeText(path, exportPlan(h, PlanExportKind::Onnx));
             })
        .def("graph_json",
             [](const PlanHandle& h) {
                 std::string text = exportPlan(h, PlanExportKind::Graph);
                 if (!text.empty() && text.back() == '\n')
                     text.pop_back();
                 return text;
             })
        .def("dot", [](const PlanHandle& h) { return exportPlan(h, PlanExportKind::Dot); })
        .def("bytecode",
             [](const PlanHandle& h, Session& session,
                const std::vector<std::pair<std::string, std::string>>& maps, bool optimize) {
                 CompileRequest request;
                 request.maps = takeMaps(maps);
                 request.optimize = optimize;
                 Result<CompiledPlan> compiled = [&] {
                     py::gil_scoped_release release;
                     return session.compile(*h.planned, request);
                 }();
                 const CompiledPlan plan = take(std::move(compiled));
                 return printBytecode(plan.program, plan.ran.graph, h.planned->model.devices);
             })
        .def("svg", [](const PlanHandle& h) {
            const std::string dot = exportPlan(h, PlanExportKind::Dot);
            py::gil_scoped_release release;
            return renderSvg(dot);
        });

    py::class_<RunHandle>(m, "Run")
        .def("outputs", &runOutputs)
        .def("report", &runReport)
        .def("summary", [](const RunHandle& h) { return runSummary(*h.outcome); })
        .def("cancelled", [](const RunHandle& h) { return h.outcome->cancelled(); })
        .def("warnings", [](const RunHandle& h) { return h.outcome->warnings; })
        .def("latency_ms",
             [](const RunHandle& h) {
                 // The report's median, rounded as it rounds, without making the report.
                 return std::round(median(h.outcome->result.latencyMicros) * 10.0) / 10000.0;
             })
        .def("latencies_ms",
             [](const RunHandle& h) {
                 std::vector<double> out;
                 for (double micros : h.outcome->result.latencyMicros)
                     out.push_back(micros / 1000);
                 return out;
             })
        .def("trace", [](const RunHandle& h) { return chromeTrace(*h.outcome).dump(-1); })
        .def("csv", [](const RunHandle& h) { return runTimingsCsv(*h.outcome); });

    m.def("devices", [](Session& session) {
        py::list out;
        for (const PhysicalDeviceInfo& info : session.registry().list()) {
            py::dict entry;
            entry["name"] = info.name;
            entry["kind"] = std::string(deviceKindName(info.kind));
            entry["available"] = info.available;
            entry["description"] = info.description;
            out.append(entry);
        }
        return out;
    });
    m.def("write_text", &writeText);
    m.def("default_workspace", &store::PlanStore::defaultPath);
    m.def("plan_option_names", &planOptionNames);

    m.def("workspace_plans", [](const std::string& path) {
        auto store = openWorkspace(path);
        py::list out;
        for (const store::PlanSummary& summary : take(store->listPlans()))
            out.append(summaryDict(summary));
        return out;
    });
    m.def("workspace_save", [](const std::string& path, const PlanHandle& h,
                               const std::string& name, const std::string& note) {
        if (name.empty())
            fail("a plan needs a name to be saved");
        auto store = openWorkspace(path);
        const PlannedModel& p = *h.planned;
        check(store->savePlan(name, note, p.model.graph, p.model.devices, p.options, p.plan));
    });
    m.def("workspace_show", [](const std::string& path, const std::string& name) {
        auto store = openWorkspace(path);
        store::StoredPlan stored = take(store->loadPlan(name));
        py::dict out;
        out["name"] = stored.name;
        out["note"] = stored.note;
        out["graph"] = stored.model.graph.name;
        py::list devices;
        for (const VirtualDevice& device : stored.model.devices.devices())
            devices.append(device.name + ":" + std::string(deviceKindName(device.kind)));
        out["devices"] = devices;
        py::list nodes;
        for (std::size_t i = 0; i < stored.model.graph.size() && i < stored.savedDevices.size();
             ++i) {
            py::dict node;
            node["name"] = stored.model.graph.nodes()[i].name;
            node["device"] = stored.savedDevices[i];
            nodes.append(node);
        }
        out["nodes"] = nodes;
        out["copies"] = stored.savedCopies;
        const store::PlanCheck checked = store::PlanStore::check(stored);
        out["differences"] = checked.differences;
        std::optional<store::RunRecord> last = take(store->lastRun(name));
        if (last) {
            py::dict run;
            run["mapping"] = last->mapping;
            run["machine"] = last->machine;
            run["iterations"] = last->iterations;
            run["latency_ms"] = last->latencyMs;
            run["report"] = py::module_::import("json").attr("loads")(last->report);
            out["last_run"] = run;
        } else {
            out["last_run"] = py::none();
        }
        py::list generations;
        for (const store::GenerationRecord& g : take(store->generations(name)))
            generations.append(parseJson(store::generationRecordJson(g, true)));
        out["generations"] = generations;
        return out;
    });
    m.def("workspace_load", [](Session& session, const std::string& path, const std::string& name,
                               const std::optional<std::string>& modelPath) {
        auto store = openWorkspace(path);
        store::StoredPlan stored = take(store->loadPlan(name));
        LoadedModel model;
        std::optional<ModelSource> source;
        if (modelPath) {
            // The model's weights come from its file: read it against the saved devices, and
            // give its nodes the saved pins.
            source.emplace();
            source->path = *modelPath;
            PlanRequest request;
            request.devices = deviceSetSpec(stored.model.devices);
            Result<LoadedModel> loaded = [&] {
                py::gil_scoped_release release;
                return session.load(*source, request);
            }();
            model = take(std::move(loaded));
            // The saved roles: the device spelling does not carry them.
            model.devices.setDefaultDevice(stored.model.devices.defaultDevice());
            model.devices.setHostDevice(stored.model.devices.hostDevice());
            const auto notSaved = [&](const std::string& why) {
                fail("'" + *modelPath + "' is not the model plan '" + name +
                     "' was saved from: " + why);
            };
            if (model.graph.size() != stored.model.graph.size())
                notSaved("it has " + std::to_string(model.graph.size()) + " nodes, the plan " +
                         std::to_string(stored.model.graph.size()));
            for (const Node& node : stored.model.graph.nodes()) {
                const std::optional<NodeId> id = model.graph.find(node.name);
                if (!id)
                    notSaved("it has no node called '" + node.name + "'");
                if (node.pin.active())
                    model.graph.setPin(*id, node.pin);
            }
        } else {
            model = std::move(stored.model);
        }
        PlanRequest request;
        request.options = stored.options;
        if (!request.options.costs)
            request.options.costs = std::make_shared<const CostModel>(session.costs(model.devices));
        PlannedModel planned = take(session.plan(std::move(model), request));
        planned.source = source;
        return PlanHandle{std::make_shared<const PlannedModel>(std::move(planned))};
    });
    m.def("workspace_diff",
          [](const std::string& path, const std::string& a, const std::string& b) {
              auto store = openWorkspace(path);
              const store::PlanDiff diff = take(store->diffPlans(a, b));
              py::dict out;
              out["moved_nodes"] = diff.movedNodes;
              out["copies_added"] = diff.copiesAdded;
              out["copies_removed"] = diff.copiesRemoved;
              out["bytes_a"] = diff.bytesA;
              out["bytes_b"] = diff.bytesB;
              return out;
          });
    m.def("workspace_delete", [](const std::string& path, const std::string& name) {
        check(openWorkspace(path)->deletePlan(name));
    });
    m.def("workspace_rename",
          [](const std::string& path, const std::string& from, const std::string& to) {
              check(openWorkspace(path)->renamePlan(from, to));
          });
}
