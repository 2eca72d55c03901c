#include "backends/cuda/ConvEngines.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace placer::cuda {
namespace {

/// A backend descriptor, destroyed with this object.
struct Desc {
    cudnnBackendDescriptor_t handle = nullptr;
    explicit Desc(cudnnBackendDescriptorType_t type) {
        if (cudnnBackendCreateDescriptor(type, &handle) != CUDNN_STATUS_SUCCESS)
            handle = nullptr;
    }
    Desc(const Desc&) = delete;
    Desc& operator=(const Desc&) = delete;
    ~Desc() {
        if (handle)
            cudnnBackendDestroyDescriptor(handle);
    }
};

/// A sequence of backend calls that keeps its first failure, naming the call: each later call
/// does nothing.
struct Calls {
    std::string error;
    bool ok() const { return error.empty(); }
    void check(cudnnStatus_t status, const char* what) {
        if (ok() && status != CUDNN_STATUS_SUCCESS)
            error = std::string(what) + ": " + cudnnGetErrorString(status);
    }
    void set(const Desc& desc, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
             std::int64_t count, const void* values, const char* what) {
        if (!ok())
            return;
        if (!desc.handle) {
            error = std::string(what) + ": cudnnBackendCreateDescriptor failed";
            return;
        }
        check(cudnnBackendSetAttribute(desc.handle, name, type, count, values), what);
    }
    void setDesc(const Desc& desc, cudnnBackendAttributeName_t name, const Desc& value,
                 const char* what) {
        set(desc, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value.handle, what);
    }
    void setInts(const Desc& desc, cudnnBackendAttributeName_t name,
                 const std::vector<std::int64_t>& values, const char* what) {
        set(desc, name, CUDNN_TYPE_INT64, static_cast<std::int64_t>(values.size()), values.data(),
            what);
    }
    void finalize(const Desc& desc, const char* what) {
        if (ok())
            check(cudnnBackendFinalize(desc.handle), what);
    }
};

constexpr std::int64_t kX = 1, kW = 2, kY = 3; ///< the tensors' unique ids
constexpr std::int64_t kAlignment = 16;

std::vector<std::int64_t> denseStrides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> strides(dims.size(), 1);
    for (std::size_t i = dims.size() - 1; i-- > 0;)
        strides[i] = strides[i + 1] * dims[i + 1];
    return strides;
}

/// An engine configuration read back as text; empty when a call fails.
struct ConfigText {
    std::string text;
    bool fullFloat32 = true; ///< none of the notes this backend leaves out
    std::string why;         ///< the first note that left it out
};

/// An engine's notes of one kind (numerical or behaviour), as many as cuDNN gives of the `N`
/// kinds this build knows; none when they cannot be read.
template <typename Note, int N>
std::vector<Note> engineNotes(cudnnBackendDescriptor_t engine, cudnnBackendAttributeName_t name,
                              cudnnBackendAttributeType_t type) {
    Note notes[N];
    std::int64_t count = 0;
    if (cudnnBackendGetAttribute(engine, name, type, N, &count, notes) != CUDNN_STATUS_SUCCESS)
        count = 0;
    return std::vector<Note>(notes, notes + std::clamp<std::int64_t>(count, 0, N));
}

ConfigText describeConfig(cudnnBackendDescriptor_t config) {
    ConfigText out;
    Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    std::int64_t count = 0;
    if (!engine.handle ||
        cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 1, &count, &engine.handle) != CUDNN_STATUS_SUCCESS)
        return out;
    std::int64_t index = -1;
    if (cudnnBackendGetAttribute(engine.handle, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1,
                                 &count, &index) != CUDNN_STATUS_SUCCESS)
        return out;
    for (const auto note :
         engineNotes<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT>(
             engine.handle, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE)) {
        const char* why = note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ? "tensor cores"
                          : note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS
                              ? "down-converted inputs"
                          : note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION
                              ? "reduced-precision reduction"
                          : note == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC ? "nondeterministic"
                                                                          : nullptr;
        if (why && out.fullFloat32) {
            out.fullFloat32 = false;
            out.why = why;
        }
    }
    for (const auto note : engineNotes<cudnnBackendBehaviorNote_t, CUDNN_BEHAVIOR_NOTE_TYPE_COUNT>(
             engine.handle, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE))
        if (note == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION && out.fullFloat32) {
            out.fullFloat32 = false;
            out.why = "compiled at run time";
        }
    // The knobs: as many choice descriptors as there are knob types, filled by cuDNN.
    std::vector<std::unique_ptr<Desc>> knobs;
    std::vector<cudnnBackendDescriptor_t> handles;
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
        knobs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
        if (!knobs.back()->handle)
            return out;
        handles.push_back(knobs.back()->handle);
    }
    count = 0;
    if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                 static_cast<std::int64_t>(handles.size()), &count,
                                 handles.data()) != CUDNN_STATUS_SUCCESS)
        return out;
    std::string text = "e" + std::to_string(index);
    for (std::int64_t i = 0; i < count; ++i) {
        cudnnBackendKnobType_t type{};
        std::int64_t value = 0, n = 0;
        if (cudnnBackendGetAttribute(handles[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                     CUDNN_TYPE_KNOB_TYPE, 1, &n, &type) != CUDNN_STATUS_SUCCESS ||
            cudnnBackendGetAttribute(handles[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                     CUDNN_TYPE_INT64, 1, &n, &value) != CUDNN_STATUS_SUCCESS)
            return out;
        text += "." + std::to_string(static_cast<int>(type)) + "=" + std::to_string(value);
    }
    out.text = text;
    return out;
}

/// "e12.3=1.5=0" as its engine index and knobs; false when it does not read so.
bool parseConfig(const std::string& text, std::int64_t* index,
                 std::vector<std::pair<std::int64_t, std::int64_t>>* knobs) {
    if (text.size() < 2 || text[0] != 'e')
        return false;
    std::istringstream in(text.substr(1));
    char dot = 0, equals = 0;
    if (!(in >> *index) || *index < 0)
        return false;
    while (in >> dot) {
        std::int64_t type = 0, value = 0;
        if (dot != '.' || !(in >> type >> equals >> value) || equals != '=' || type < 0 ||
            type >= CUDNN_KNOB_TYPE_COUNTS)
            return false;
        knobs->emplace_back(type, value);
    }
    return in.eof();
}

} // namespace

/// The operation graph of one convolution, and what it refers to.
struct ConvPlan::Graph {
    Desc x{CUDNN_BACKEND_TENSOR_DESCRIPTOR}, w{CUDNN_BACKEND_TENSOR_DESCRIPTOR},
        y{CUDNN_BACKEND_TENSOR_DESCRIPTOR};
    Desc conv{CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR};
    Desc op{CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR};
    Desc graph{CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR};

    /// Builds it; the error names the call that failed.
    std::string build(cudnnHandle_t handle, const ConvShape& shape) {
        Calls calls;
        const cudnnDataType_t type = CUDNN_DATA_FLOAT;
        const std::pair<Desc*, const std::vector<std::int64_t>*> tensors[] = {
            {&x, &shape.x}, {&w, &shape.w}, {&y, &shape.y}};
        std::int64_t id = kX;
        for (const auto& [desc, dims] : tensors) {
            const std::vector<std::int64_t> strides = denseStrides(*dims);
            calls.set(*desc, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type,
                      "a tensor's data type");
            calls.setInts(*desc, CUDNN_ATTR_TENSOR_DIMENSIONS, *dims, "a tensor's dimensions");
            calls.setInts(*desc, CUDNN_ATTR_TENSOR_STRIDES, strides, "a tensor's strides");
            calls.set(*desc, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id,
                      "a tensor's id");
            calls.set(*desc, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &kAlignment,
                      "a tensor's alignment");
            calls.finalize(*desc, "a tensor");
            ++id;
        }
        const std::int64_t spatial = static_cast<std::int64_t>(shape.strides.size());
        const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
        calls.set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type,
                  "the convolution's compute type");
        calls.set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode,
                  "the convolution's mode");
        calls.set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial,
                  "the convolution's spatial axes");
        calls.setInts(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, shape.dilations,
                      "the convolution's dilations");
        calls.setInts(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, shape.strides,
                      "the convolution's strides");
        calls.setInts(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, shape.padBefore,
                      "the convolution's leading pads");
        calls.setInts(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, shape.padAfter,
                      "the convolution's trailing pads");
        calls.finalize(conv, "the convolution");
        const float one = 1, zero = 0;
        calls.setDesc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, x, "the operation's x");
        calls.setDesc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, w, "the operation's w");
        calls.setDesc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, y, "the operation's y");
        calls.setDesc(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv,
                      "the operation's convolution");
        calls.set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &one,
                  "the operation's alpha");
        calls.set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &zero,
                  "the operation's beta");
        calls.finalize(op, "the convolution operation");
        calls.set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                  &op.handle, "the graph's operation");
        calls.set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle,
                  "the graph's handle");
        calls.finalize(graph, "the operation graph");
        return calls.error;
    }
};

ConvPlan::~ConvPlan() {
    if (m_pack)
        cudnnBackendDestroyDescriptor(m_pack);
    if (m_plan)
        cudnnBackendDestroyDescriptor(m_plan);
}

bool ConvPlan::aligned(const void* pointer) {
    return reinterpret_cast<std::uintptr_t>(pointer) % kAlignment == 0;
}

Result<std::shared_ptr<ConvPlan>> ConvPlan::create(cudnnHandle_t handle, const ConvShape& shape,
                                                   const std::string& config) {
    std::int64_t index = -1;
    std::vector<std::pair<std::int64_t, std::int64_t>> knobValues;
    if (!parseConfig(config, &index, &knobValues))
        return SourceError::sentence("\"" + config + "\" is not a cuDNN engine configuration");
    auto graph = std::make_shared<Graph>();
    if (std::string error = graph->build(handle, shape); !error.empty())
        return SourceError::sentence("cuDNN's graph refuses the convolution: " + error);
    Calls calls;
    Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    calls.setDesc(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph->graph, "the engine's graph");
    calls.set(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index,
              "the engine's index");
    calls.finalize(engine, "the engine");
    std::vector<std::unique_ptr<Desc>> knobs;
    std::vector<cudnnBackendDescriptor_t> knobHandles;
    for (const auto& [type, value] : knobValues) {
        knobs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR));
        const auto knobType = static_cast<cudnnBackendKnobType_t>(type);
        calls.set(*knobs.back(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1,
                  &knobType, "a knob's type");
        calls.set(*knobs.back(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value,
                  "a knob's value");
        calls.finalize(*knobs.back(), "a knob");
        knobHandles.push_back(knobs.back()->handle);
    }
    Desc engineConfig(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    calls.setDesc(engineConfig, CUDNN_ATTR_ENGINECFG_ENGINE, engine, "the configuration's engine");
    if (!knobHandles.empty())
        calls.set(engineConfig, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                  static_cast<std::int64_t>(knobHandles.size()), knobHandles.data(),
                  "the configuration's knobs");
    calls.finalize(engineConfig, "the engine configuration");
    std::shared_ptr<ConvPlan> plan(new ConvPlan);
    plan->m_graph = std::move(graph);
    plan->m_config = config;
    if (calls.ok() && cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
                                                   &plan->m_plan) != CUDNN_STATUS_SUCCESS) {
        plan->m_plan = nullptr;
        calls.error = "cudnnBackendCreateDescriptor(execution plan) failed";
    }
    if (calls.ok()) {
        calls.check(cudnnBackendSetAttribute(plan->m_plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                             CUDNN_TYPE_HANDLE, 1, &handle),
                    "the plan's handle");
        calls.check(cudnnBackendSetAttribute(plan->m_plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                             &engineConfig.handle),
                    "the plan's configuration");
        calls.check(cudnnBackendFinalize(plan->m_plan), "the execution plan");
        std::int64_t count = 0;
        calls.check(cudnnBackendGetAttribute(plan->m_plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                             CUDNN_TYPE_INT64, 1, &count, &plan->m_workspace),
                    "the plan's workspace");
    }
    if (!calls.ok())
        return SourceError::sentence("cuDNN engine configuration " + config + ": " + calls.error);
    return plan;
}

cudnnStatus_t ConvPlan::run(cudnnHandle_t handle, const void* x, const void* w, void* y,
                            void* workspace) const {
    std::lock_guard lock(m_mutex);
    const void* pointers[4] = {x, w, y, workspace};
    if (!m_pack || !std::equal(pointers, pointers + 4, m_packPointers)) {
        if (m_pack)
            cudnnBackendDestroyDescriptor(m_pack);
        m_pack = nullptr;
        std::fill(m_packPointers, m_packPointers + 4, nullptr);
        cudnnBackendDescriptor_t pack = nullptr;
        cudnnStatus_t status =
            cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
        if (status != CUDNN_STATUS_SUCCESS)
            return status;
        const std::int64_t ids[3] = {kX, kW, kY};
        void* data[3] = {const_cast<void*>(x), const_cast<void*>(w), y};
        status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                          CUDNN_TYPE_INT64, 3, ids);
        if (status == CUDNN_STATUS_SUCCESS)
            status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                              CUDNN_TYPE_VOID_PTR, 3, data);
        if (status == CUDNN_STATUS_SUCCESS)
            status = cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                              CUDNN_TYPE_VOID_PTR, 1, &workspace);
        if (status == CUDNN_STATUS_SUCCESS)
            status = cudnnBackendFinalize(pack);
        if (status != CUDNN_STATUS_SUCCESS) {
            cudnnBackendDestroyDescriptor(pack);
            return status;
        }
        m_pack = pack;
        std::copy(pointers, pointers + 4, m_packPointers);
    }
    return cudnnBackendExecute(handle, m_plan, m_pack);
}

std::vector<std::shared_ptr<ConvPlan>> convPlanCandidates(cudnnHandle_t handle,
                                                          const ConvShape& shape,
                                                          std::int64_t workspaceBudget,
                                                          std::size_t limit, std::string* notes) {
    std::vector<std::shared_ptr<ConvPlan>> plans;
    std::map<std::string, int> leftOut; // why -> how many
    int offered = 0;
    ConvPlan::Graph graph;
    if (std::string error = graph.build(handle, shape); !error.empty()) {
        if (notes)
            *notes = "cuDNN's graph refuses the convolution: " + error;
        return plans;
    }
    std::set<std::string> seen;
    for (const cudnnBackendHeurMode_t mode :
         {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_B, CUDNN_HEUR_MODE_FALLBACK}) {
        Calls calls;
        Desc heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        calls.setDesc(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph.graph,
                      "the heuristics' graph");
        calls.set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
                  "the heuristics' mode");
        calls.finalize(heuristics, "the heuristics");
        std::int64_t count = 0;
        if (calls.ok())
            calls.check(cudnnBackendGetAttribute(heuristics.handle, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                        "the heuristics' count");
        if (!calls.ok()) {
            ++leftOut[std::string(mode == CUDNN_HEUR_MODE_A   ? "heuristics A: "
                                  : mode == CUDNN_HEUR_MODE_B ? "heuristics B: "
                                                              : "fallback: ") +
                      calls.error];
            continue;
        }
        std::vector<std::unique_ptr<Desc>> configs;
        std::vector<cudnnBackendDescriptor_t> handles;
        for (std::int64_t i = 0; i < count; ++i) {
            configs.push_back(std::make_unique<Desc>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
            if (configs.back()->handle)
                handles.push_back(configs.back()->handle);
        }
        std::int64_t returned = 0;
        if (cudnnBackendGetAttribute(heuristics.handle, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                     static_cast<std::int64_t>(handles.size()), &returned,
                                     handles.data()) != CUDNN_STATUS_SUCCESS)
            returned = 0;
        for (std::int64_t i = 0; i < returned && i < static_cast<std::int64_t>(handles.size());
             ++i) {
            const ConfigText config = describeConfig(handles[i]);
            if (config.text.empty()) {
                ++leftOut["unreadable"];
                continue;
            }
            if (!seen.insert(config.text).second)
                continue;
            ++offered;
            if (!config.fullFloat32) {
                ++leftOut[config.why];
                continue;
            }
            if (plans.size() >= limit) {
                ++leftOut["past the limit"];
                continue;
            }
            auto plan = ConvPlan::create(handle, shape, config.text);
            if (!plan) {
                ++leftOut["not finalized"];
                continue;
            }
            if (plan.value()->workspace() > workspaceBudget) {
                ++leftOut["workspace over budget"];
                continue;
            }
            plans.push_back(plan.take());
        }
    }
    if (notes) {
        std::string text = std::to_string(offered) + " engine configurations offered, " +
                           std::to_string(plans.size()) + " taken";
        for (const auto& [why, n] : leftOut)
            text += "; " + std::to_string(n) + " " + why;
        *notes = text;
    }
    return plans;
}

} // namespace placer::cuda
