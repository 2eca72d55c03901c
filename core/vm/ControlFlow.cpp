// If, Loop and Scan as kernels. A body is prepared once: a kernel per node and a buffer of the
// device's per value, constants uploaded. A run binds the body's parameters to device memory
// (the node's inputs, or the loop's own state buffers), runs the body's kernels in order on the
// device's worker, and moves results with same-device copies. Only the values the host must
// decide on (an If's condition, a Loop's trip count and condition) are read back, after
// Device::finishLane.
#include "vm/ControlFlow.h"

#include "ir/ControlFlow.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace placer {

namespace {

SourceError failure(std::string message) {
    return SourceError{"", 0, 0, std::move(message)};
}

/// One body on one device.
class PreparedBody {
public:
    PreparedBody(Device& device, const Graph& graph) : m_device(device), m_graph(graph) {}
    PreparedBody(const PreparedBody&) = delete;
    PreparedBody& operator=(const PreparedBody&) = delete;
    ~PreparedBody() {
        for (std::byte* data : m_owned)
            m_device.free(data);
    }

    std::optional<SourceError> prepare(int onnxOpset, const std::string& where) {
        const std::size_t n = m_graph.size();
        m_values.resize(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            const Node& node = m_graph.node(NodeId(i));
            m_values[i].assign(node.outputs.size(), nullptr);
            if (node.isParameter()) {
                m_parameters.push_back(i);
                continue;
            }
            if (node.isDeviceCopy())
                return failure(where + ": a body holds a device copy ('" + node.name + "')");
            for (std::size_t k = 0; k < node.outputs.size(); ++k) {
                auto data = allocate(node.outputs[k].bytes());
                if (!data)
                    return data.error();
                m_values[i][k] = data.value();
            }
            if (node.isConstant()) {
                if (auto error = upload(i, where))
                    return error;
                continue;
            }
            KernelSpec spec;
            spec.node = &node;
            spec.onnxOpset = onnxOpset;
            Step step;
            step.node = i;
            for (const ValueRef& input : node.inputs) {
                const Node& producer = m_graph.node(input.node);
                spec.inputs.push_back(m_graph.type(input));
                spec.constantInputs.push_back(producer.isConstant());
                spec.constantData.push_back(producer.isConstant() ? producer.data.get() : nullptr);
                step.args.push_back(input);
            }
            spec.outputs = node.outputs;
            auto kernel = prepareKernelOn(m_device, spec);
            if (!kernel)
                return failure(where + ", node '" + node.name + "': " + kernel.error().message);
            for (std::size_t k = 0; k < node.outputs.size(); ++k) {
                if (kernel.value()->boundsOutput(k))
                    return failure(where + ", node '" + node.name + "': " + node.op->name +
                                   " finds its output's length only at run time, which a "
                                   "body cannot hold");
            }
            step.kernel = kernel.take();
            step.argPointers.resize(node.inputs.size());
            step.resultPointers.resize(node.outputs.size());
            m_steps.push_back(std::move(step));
        }
        return std::nullopt;
    }

    std::size_t parameterCount() const { return m_parameters.size(); }
    const TensorType& parameterType(std::size_t k) const {
        return m_graph.node(NodeId(m_parameters[k])).outputs[0];
    }
    std::size_t outputCount() const { return m_graph.outputs().size(); }
    const TensorType& outputType(std::size_t k) const {
        return m_graph.type(m_graph.outputs()[k].value);
    }

    /// Binds parameter k to device memory for the next runs.
    void bind(std::size_t k, const std::byte* data) {
        m_values[m_parameters[k]][0] = const_cast<std::byte*>(data);
    }
    /// Runs every node once, on the device's worker.
    void run() {
        for (Step& step : m_steps) {
            for (std::size_t a = 0; a < step.args.size(); ++a)
                step.argPointers[a] = value(step.args[a]);
            for (std::size_t r = 0; r < step.resultPointers.size(); ++r)
                step.resultPointers[r] = m_values[step.node][r];
            step.kernel->run(step.argPointers.data(), step.resultPointers.data());
        }
    }
    /// Output k's memory after a run (a parameter's, when the body hands one back).
    const std::byte* output(std::size_t k) const { return value(m_graph.outputs()[k].value); }

    std::string implementation() const {
        std::string text;
        for (const Step& step : m_steps) {
            const Node& node = m_graph.node(NodeId(step.node));
            text += (text.empty() ? "" : ", ") + node.name + ": " + step.kernel->implementation();
        }
        return text;
    }

    /// Device memory the owner keeps for itself (state buffers), freed with the body.
    Result<std::byte*> allocate(std::int64_t bytes) {
        if (bytes <= 0)
            return static_cast<std::byte*>(nullptr);
        auto data = m_device.allocate(bytes);
        if (data)
            m_owned.push_back(data.value());
        return data;
    }

private:
    struct Step {
        std::uint32_t node = 0;
        std::vector<ValueRef> args;
        std::unique_ptr<Kernel> kernel;
        std::vector<const std::byte*> argPointers;
        std::vector<std::byte*> resultPointers;
    };

    const std::byte* value(const ValueRef& ref) const {
        return m_values[ref.node.index][ref.output];
    }

    std::optional<SourceError> upload(std::uint32_t i, const std::string& where) {
        const Node& node = m_graph.node(NodeId(i));
        const std::int64_t bytes = node.outputs[0].bytes();
        if (bytes == 0)
            return std::nullopt;
        if (!node.data || static_cast<std::int64_t>(node.data->size()) < bytes)
            return failure(where + ": constant '" + node.name + "' has fewer bytes than its type");
        const std::string error = copyInAndWait(m_device, m_values[i][0], node.data->data(), bytes);
        if (!error.empty())
            return failure(where + ": uploading constant '" + node.name + "': " + error);
        return std::nullopt;
    }

    Device& m_device;
    const Graph& m_graph;
    std::vector<std::vector<std::byte*>> m_values; ///< per node, per output
    std::vector<std::uint32_t> m_parameters;
    std::vector<Step> m_steps;
    std::vector<std::byte*> m_owned;
};

/// What the control-flow kernels share: the device, the bodies, and host reads of scalars.
class ControlFlowKernel : public Kernel {
public:
    ControlFlowKernel(Device& device, const KernelSpec& spec)
        : m_device(device), m_node(*spec.node), m_inputs(spec.inputs), m_outputs(spec.outputs) {}

    std::optional<SourceError> prepareBodies(int onnxOpset) {
        if (m_node.captures > m_inputs.size())
            return failure(m_node.op->name + " '" + m_node.name +
                           "' captures more values than it has inputs");
        for (const Subgraph& subgraph : m_node.subgraphs) {
            auto body = std::make_unique<PreparedBody>(m_device, *subgraph.graph);
            const std::string where =
                m_node.op->name + " '" + m_node.name + "', " + subgraph.attribute;
            if (auto error = body->prepare(onnxOpset, where))
                return error;
            m_bodies.push_back(std::move(body));
        }
        return std::nullopt;
    }

    std::string implementation() const override {
        std::string text = "control:" + m_node.op->name + "(";
        for (std::size_t b = 0; b < m_bodies.size(); ++b)
            text += (b ? "; " : "") + m_node.subgraphs[b].attribute + ": " +
                    m_bodies[b]->implementation();
        return text + ")";
    }

protected:
    /// Element 0 of a device tensor, read on the host, as an integer (bools: 0 or 1).
    std::int64_t readScalar(const std::byte* data, DType dtype) {
        return readDeviceScalar(m_device, data, dtype, m_node.op->name + " '" + m_node.name + "'");
    }
    void copy(std::byte* dst, const std::byte* src, std::int64_t bytes) {
        if (bytes > 0 && dst != src)
            m_device.copyPeer(dst, m_device, src, bytes);
    }
    /// Binds a body's outer-value parameters (after `formal` of its own) to the node's
    /// captured inputs.
    void bindCaptures(PreparedBody& body, std::size_t formal, const std::byte* const* inputs) {
        const std::size_t own = m_inputs.size() - m_node.captures;
        for (std::size_t c = 0; c < m_node.captures; ++c)
            body.bind(formal + c, inputs[own + c]);
    }

    /// Whether body `b` takes inputs of the `formal` types (then the captured values) and gives
    /// outputs of these types. The ONNX reader makes sure of it; a hand-written JSON graph may
    /// not, and a body that did not fit would read or write past its buffers.
    std::optional<SourceError> checkBody(std::size_t b, std::vector<TensorType> formal,
                                         const std::vector<TensorType>& outputs) const {
        const PreparedBody& body = *m_bodies[b];
        const std::string where =
            m_node.op->name + " '" + m_node.name + "', " + m_node.subgraphs[b].attribute;
        const std::size_t own = formal.size();
        formal.insert(formal.end(), m_inputs.end() - m_node.captures, m_inputs.end());
        if (body.parameterCount() != formal.size())
            return failure(where + " has " + std::to_string(body.parameterCount()) +
                           " inputs; it needs " + std::to_string(own) + " and one per " +
                           "captured value (" + std::to_string(m_node.captures) + ")");
        for (std::size_t k = 0; k < formal.size(); ++k) {
            if (body.parameterType(k) != formal[k])
                return failure(where + ": input " + std::to_string(k) + " is " +
                               body.parameterType(k).toShortString() + "; it must be " +
                               formal[k].toShortString());
        }
        if (body.outputCount() != outputs.size())
            return failure(where + " has " + std::to_string(body.outputCount()) +
                           " outputs; it needs " + std::to_string(outputs.size()));
        for (std::size_t k = 0; k < outputs.size(); ++k) {
            if (body.outputType(k) != outputs[k])
                return failure(where + ": output " + std::to_string(k) + " is " +
                               body.outputType(k).toShortString() + "; it must be " +
                               outputs[k].toShortString());
        }
        return std::nullopt;
    }
    /// `type` without axis `axis` (a slice of a stacked or scanned tensor).
    static TensorType without(TensorType type, std::int64_t axis) {
        if (axis >= 0 && axis < type.rank())
            type.shape.erase(type.shape.begin() + axis);
        return type;
    }

    // The values a body hands from one iteration to the next (a Loop's carried values, a
    // Scan's states): the node's first outputs, in two buffers each, read from one and written
    // to the other.
    std::optional<SourceError> allocateCarried(std::size_t count) {
        for (auto& buffers : m_carried) {
            for (std::size_t k = 0; k < count; ++k) {
                auto data = m_bodies[0]->allocate(m_outputs[k].bytes());
                if (!data)
                    return data.error();
                buffers.push_back(data.value());
            }
        }
        return std::nullopt;
    }
    /// Starts from the node's inputs `first`, `first + 1`, ...
    void beginCarried(const std::byte* const* inputs, std::size_t first) {
        m_current = 0;
        for (std::size_t k = 0; k < m_carried[0].size(); ++k)
            copy(m_carried[0][k], inputs[first + k], m_outputs[k].bytes());
    }
    /// Binds the current values to the body's parameters `firstParameter`, ...
    void bindCarried(PreparedBody& body, std::size_t firstParameter) {
        for (std::size_t k = 0; k < m_carried[m_current].size(); ++k)
            body.bind(firstParameter + k, m_carried[m_current][k]);
    }
    /// Takes the body's outputs `firstOutput`, ... as the next values.
    void advanceCarried(const PreparedBody& body, std::size_t firstOutput) {
        const int next = 1 - m_current;
        for (std::size_t k = 0; k < m_carried[next].size(); ++k)
            copy(m_carried[next][k], body.output(firstOutput + k), m_outputs[k].bytes());
        m_current = next;
    }
    /// The final values into the node's first outputs.
    void endCarried(std::byte* const* outputs) {
        for (std::size_t k = 0; k < m_carried[m_current].size(); ++k)
            copy(outputs[k], m_carried[m_current][k], m_outputs[k].bytes());
    }

    Device& m_device;
    const Node& m_node;
    std::vector<TensorType> m_inputs, m_outputs;
    std::vector<std::unique_ptr<PreparedBody>> m_bodies;

private:
    std::vector<std::byte*> m_carried[2];
    int m_current = 0;
};

class IfKernel final : public ControlFlowKernel {
public:
    using ControlFlowKernel::ControlFlowKernel;

    std::optional<SourceError> prepareState() {
        for (std::size_t b = 0; b < m_bodies.size(); ++b) {
            if (auto error = checkBody(b, {}, m_outputs))
                return error;
        }
        return std::nullopt;
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        const bool condition = readScalar(inputs[0], m_inputs[0].dtype) != 0;
        const std::string_view wanted = condition ? "then_branch" : "else_branch";
        const std::size_t b = m_node.subgraphs[0].attribute == wanted ? 0 : 1;
        PreparedBody& branch = *m_bodies[b];
        bindCaptures(branch, 0, inputs);
        branch.run();
        for (std::size_t k = 0; k < m_outputs.size(); ++k)
            copy(outputs[k], branch.output(k), m_outputs[k].bytes());
    }
};

class LoopKernel final : public ControlFlowKernel {
public:
    LoopKernel(Device& device, const KernelSpec& spec)
        : ControlFlowKernel(device, spec), m_layout(loopLayout(*spec.node, spec.inputs.size())) {
        m_exact = exactTripCount(m_node, spec.inputs.size(), [&](std::size_t k) {
                      return k < spec.constantData.size() ? spec.constantData[k] : nullptr;
                  }).has_value();
    }

    std::optional<SourceError> prepareState() {
        PreparedBody& body = *m_bodies[0];
        auto counter = body.allocate(sizeof(std::int64_t));
        auto condition = body.allocate(1);
        if (!counter)
            return counter.error();
        if (!condition)
            return condition.error();
        m_counter = counter.value();
        m_condition = condition.value();
        std::vector<TensorType> expected{TensorType{{}, DType::Bool}};
        for (std::size_t k = 0; k < m_outputs.size(); ++k)
            expected.push_back(k < m_layout.carried ? m_outputs[k] : without(m_outputs[k], 0));
        std::vector<TensorType> formal{TensorType{{}, DType::Int64}, TensorType{{}, DType::Bool}};
        formal.insert(formal.end(), m_outputs.begin(),
                      m_outputs.begin() + static_cast<std::ptrdiff_t>(m_layout.carried));
        if (auto error = checkBody(0, formal, expected))
            return error;
        if (auto error = allocateCarried(m_layout.carried))
            return error;
        m_ranShapes.resize(m_outputs.size());
        for (std::size_t k = 0; k < m_outputs.size(); ++k)
            m_ranShapes[k] = m_outputs[k].shape;
        return std::nullopt;
    }

    bool boundsOutput(std::size_t k) const override { return !m_exact && k >= m_layout.carried; }
    const std::vector<std::vector<std::int64_t>>* ranShapes() const override {
        return m_exact ? nullptr : &m_ranShapes;
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        PreparedBody& body = *m_bodies[0];
        const LoopLayout& l = m_layout;
        std::int64_t trips = std::numeric_limits<std::int64_t>::max();
        if (l.tripCount >= 0)
            trips = readScalar(inputs[l.tripCount],
                               m_inputs[static_cast<std::size_t>(l.tripCount)].dtype);
        bool condition = true;
        if (l.condition >= 0)
            condition = readScalar(inputs[l.condition],
                                   m_inputs[static_cast<std::size_t>(l.condition)].dtype) != 0;
        const bool unbounded = l.tripCount < 0;
        beginCarried(inputs, l.firstCarried);
        bindCaptures(body, 2 + l.carried, inputs);
        body.bind(0, m_counter);
        body.bind(1, m_condition);
        std::int64_t rows = 0; // the scan outputs' capacity
        if (l.scanOutputs > 0)
            rows = m_outputs[l.carried].shape.empty() ? 0 : m_outputs[l.carried].shape[0];
        std::int64_t i = 0;
        for (; i < trips && condition; ++i) {
            if (unbounded && l.scanOutputs == 0 && i == kUnboundedLimit)
                throw KernelError("Loop '" + m_node.name + "' ran " + std::to_string(i) +
                                  " iterations without a trip count and its condition never " +
                                  "turned false");
            if (l.scanOutputs > 0 && i >= rows)
                throw KernelError("Loop '" + m_node.name + "' runs more than the " +
                                  std::to_string(rows) + " iterations its scan outputs were " +
                                  "planned for");
            // A device may read the host memory after copyIn returns (until the lane's work
            // is done): the values stay put until readScalar below finishes the lane.
            m_iteration = i;
            m_device.copyIn(m_counter, &m_iteration, sizeof m_iteration);
            m_device.copyIn(m_condition, &kTrue, 1);
            bindCarried(body, 2);
            body.run();
            advanceCarried(body, 1);
            for (std::size_t j = 0; j < l.scanOutputs; ++j) {
                const std::int64_t bytes = body.outputType(1 + l.carried + j).bytes();
                copy(outputs[l.carried + j] + i * bytes, body.output(1 + l.carried + j), bytes);
            }
            condition = readScalar(body.output(0), body.outputType(0).dtype) != 0;
        }
        endCarried(outputs);
        for (std::size_t j = 0; j < l.scanOutputs; ++j)
            m_ranShapes[l.carried + j][0] = i;
    }

private:
    static constexpr std::int64_t kUnboundedLimit = std::int64_t{1} << 31;
    static constexpr std::uint8_t kTrue = 1;
    std::int64_t m_iteration = 0;
    LoopLayout m_layout;
    bool m_exact = false;
    std::byte* m_counter = nullptr;
    std::byte* m_condition = nullptr;
    std::vector<std::vector<std::int64_t>> m_ranShapes;
};

/// Copies slice `index` along `axis` of a tensor of `shape` to or from a dense slice.
template <typename CopyFn>
void forSlice(const std::vector<std::int64_t>& shape, std::int64_t axis, std::int64_t index,
              std::int64_t elementBytes, CopyFn copyChunk) {
    std::int64_t outer = 1, inner = elementBytes;
    for (std::int64_t d = 0; d < axis; ++d)
        outer *= shape[static_cast<std::size_t>(d)];
    for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d)
        inner *= shape[d];
    const std::int64_t length = shape[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
        copyChunk((o * length + index) * inner, o * inner, inner);
}

class ScanKernel final : public ControlFlowKernel {
public:
    ScanKernel(Device& device, const KernelSpec& spec)
        : ControlFlowKernel(device, spec), m_layout(scanLayout(*spec.node, spec.inputs.size())) {}

    std::optional<SourceError> prepareState() {
        PreparedBody& body = *m_bodies[0];
        const ScanLayout& l = m_layout;
        if (auto error = allocateCarried(l.states))
            return error;
        const std::string where = "Scan '" + m_node.name + "'";
        for (std::size_t j = 0; j < l.scanInputs; ++j) {
            const TensorType& input = m_inputs[l.states + j];
            std::int64_t axis = l.inputAxes[j];
            axis = axis < 0 ? axis + input.rank() : axis;
            if (axis < 0 || axis >= input.rank())
                return failure(where + ": scan input " + std::to_string(j) + " has no axis " +
                               std::to_string(l.inputAxes[j]));
            const std::int64_t length = input.shape[static_cast<std::size_t>(axis)];
            if (j > 0 && length != m_length)
                return failure(where + ": its scan inputs have different lengths");
            m_inputAxes.push_back(axis);
            m_length = length;
            auto slice = body.allocate(input.bytes() / std::max<std::int64_t>(m_length, 1));
            if (!slice)
                return slice.error();
            m_slices.push_back(slice.value());
        }
        if (l.scanInputs == 0)
            return failure(where + " has no scan input");
        std::vector<TensorType> expected(m_outputs.begin(),
                                         m_outputs.begin() + static_cast<std::ptrdiff_t>(l.states));
        for (std::size_t j = 0; j < l.scanOutputs; ++j) {
            const TensorType& output = m_outputs[l.states + j];
            std::int64_t axis = l.outputAxes[j];
            axis = axis < 0 ? axis + output.rank() : axis;
            if (axis < 0 || axis >= output.rank() ||
                output.shape[static_cast<std::size_t>(axis)] != m_length)
                return failure(where + ": scan output " + std::to_string(j) + " is " +
                               output.toShortString() + ", which has no axis " +
                               std::to_string(l.outputAxes[j]) + " of length " +
                               std::to_string(m_length));
            m_outputAxes.push_back(axis);
            expected.push_back(without(output, axis));
        }
        std::vector<TensorType> formal(m_outputs.begin(),
                                       m_outputs.begin() + static_cast<std::ptrdiff_t>(l.states));
        for (std::size_t j = 0; j < l.scanInputs; ++j)
            formal.push_back(without(m_inputs[l.states + j], m_inputAxes[j]));
        return checkBody(0, formal, expected);
    }

    void run(const std::byte* const* inputs, std::byte* const* outputs) override {
        PreparedBody& body = *m_bodies[0];
        const ScanLayout& l = m_layout;
        beginCarried(inputs, 0);
        bindCaptures(body, l.states + l.scanInputs, inputs);
        for (std::size_t j = 0; j < l.scanInputs; ++j)
            body.bind(l.states + j, m_slices[j]);
        for (std::int64_t t = 0; t < m_length; ++t) {
            for (std::size_t j = 0; j < l.scanInputs; ++j) {
                const TensorType& input = m_inputs[l.states + j];
                const std::int64_t index = l.inputDirections[j] ? m_length - 1 - t : t;
                const std::byte* src = inputs[l.states + j];
                forSlice(input.shape, m_inputAxes[j], index, dtypeSize(input.dtype),
                         [&](std::int64_t at, std::int64_t sliceAt, std::int64_t bytes) {
                             copy(m_slices[j] + sliceAt, src + at, bytes);
                         });
            }
            bindCarried(body, 0);
            body.run();
            advanceCarried(body, 0);
            for (std::size_t j = 0; j < l.scanOutputs; ++j) {
                const TensorType& output = m_outputs[l.states + j];
                const std::int64_t index = l.outputDirections[j] ? m_length - 1 - t : t;
                const std::byte* slice = body.output(l.states + j);
                std::byte* dst = outputs[l.states + j];
                forSlice(output.shape, m_outputAxes[j], index, dtypeSize(output.dtype),
                         [&](std::int64_t at, std::int64_t sliceAt, std::int64_t bytes) {
                             copy(dst + at, slice + sliceAt, bytes);
                         });
            }
        }
        endCarried(outputs);
    }

private:
    ScanLayout m_layout;
    std::int64_t m_length = 0;
    std::vector<std::byte*> m_slices;
    std::vector<std::int64_t> m_inputAxes, m_outputAxes;
};

template <typename K>
Result<std::unique_ptr<Kernel>> makeKernel(Device& device, const KernelSpec& spec) {
    auto kernel = std::make_unique<K>(device, spec);
    if (auto error = kernel->prepareBodies(spec.onnxOpset))
        return *error;
    if (auto error = kernel->prepareState())
        return *error;
    return std::unique_ptr<Kernel>(std::move(kernel));
}

} // namespace

std::int64_t readDeviceScalar(Device& device, const std::byte* data, DType dtype,
                              const std::string& what) {
    device.finishLane();
    std::int64_t value = 0;
    if (dtype == DType::Bool || dtype == DType::UInt8) {
        std::uint8_t byte = 0;
        device.copyOut(&byte, data, 1);
        value = byte;
    } else if (dtype == DType::Int64) {
        device.copyOut(&value, data, sizeof value);
    } else if (dtype == DType::Int32) {
        std::int32_t v = 0;
        device.copyOut(&v, data, sizeof v);
        value = v;
    } else {
        throw KernelError(what + " cannot read a " + std::string(dtypeName(dtype)) +
                          " as a condition or count");
    }
    device.finishLane();
    return value;
}

Result<std::unique_ptr<Kernel>> prepareKernelOn(Device& device, const KernelSpec& spec) {
    const Node& node = *spec.node;
    if (node.subgraphs.empty())
        return device.prepare(spec);
    const std::string& op = node.op->name;
    if (op == "If" && node.subgraphs.size() == 2)
        return makeKernel<IfKernel>(device, spec);
    if (op == "Loop" && node.subgraphs.size() == 1)
        return makeKernel<LoopKernel>(device, spec);
    if (op == "Scan" && node.subgraphs.size() == 1)
        return makeKernel<ScanKernel>(device, spec);
    return failure("no kernel runs the bodies of " + op + " node '" + node.name + "'");
}

} // namespace placer
