// If and Loop with shapes found at run time (vm/RunTimeBodies.h): a body runs node by node,
// each node's kernel prepared for the shapes its inputs have then, its values in device memory
// given back when the body ends.
#include "vm/RunTimeBodies.h"

#include "ir/ControlFlow.h"
#include "vm/ControlFlow.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace placer {

namespace {

/// A Loop without a trip count whose condition never turns false stops here.
constexpr std::int64_t kUnboundedLimit = std::int64_t{1} << 31;

std::string describe(const Node& node) {
    return node.op->name + " node '" + node.name + "'";
}

} // namespace

DeviceBuffers::~DeviceBuffers() {
    release();
}

DeviceBuffers::DeviceBuffers(DeviceBuffers&& other) noexcept
    : m_device(other.m_device), m_owned(std::move(other.m_owned)) {
    other.m_owned.clear();
}

DeviceBuffers& DeviceBuffers::operator=(DeviceBuffers&& other) noexcept {
    if (this != &other) {
        release();
        m_device = other.m_device;
        m_owned = std::move(other.m_owned);
        other.m_owned.clear();
    }
    return *this;
}

void DeviceBuffers::release() {
    for (std::byte* data : m_owned)
        m_device->free(data);
    m_owned.clear();
}

std::byte* DeviceBuffers::allocate(const TensorType& type, const std::string& what) {
    const std::int64_t bytes = type.bytes();
    if (bytes <= 0)
        return nullptr;
    Result<std::byte*> data = m_device->allocate(bytes);
    if (!data)
        throw KernelError(what + " is " + type.toShortString() + " (" + formatBytes(bytes) +
                          ") at this run, and " + m_device->name() +
                          " cannot hold it: " + data.error().message);
    m_owned.push_back(data.value());
    return data.value();
}

bool DeviceBuffers::handOver(std::byte* data, DeviceBuffers& to) {
    const auto at = std::find(m_owned.begin(), m_owned.end(), data);
    if (!data || at == m_owned.end() || to.m_device != m_device)
        return false;
    m_owned.erase(at);
    to.m_owned.push_back(data);
    return true;
}

RunTimeControlFlow::RunTimeControlFlow(Device& device, int onnxOpset)
    : m_device(device), m_onnxOpset(onnxOpset) {}

RunTimeControlFlow::~RunTimeControlFlow() {
    for (const auto& [node, data] : m_constants) {
        if (data)
            m_device.free(data);
    }
}

std::vector<DeviceTensor> RunTimeControlFlow::run(const Node& node,
                                                  const std::vector<DeviceTensor>& inputs,
                                                  DeviceBuffers& results) {
    const std::string& op = node.op->name;
    if (node.captures > inputs.size())
        throw KernelError(describe(node) + " captures more values than it has inputs");
    if (op == "If" && node.subgraphs.size() == 2)
        return runIf(node, inputs, results);
    if (op == "Loop" && node.subgraphs.size() == 1)
        return runLoop(node, inputs, results);
    throw KernelError(describe(node) + ": its bodies' shapes are found only at run time, and " +
                      op + " runs only with shapes known at load");
}

std::vector<DeviceTensor> RunTimeControlFlow::runIf(const Node& node,
                                                    const std::vector<DeviceTensor>& inputs,
                                                    DeviceBuffers& results) {
    if (inputs.empty())
        throw KernelError(describe(node) + " has no condition");
    const bool condition = readScalar(inputs[0], describe(node) + "'s condition") != 0;
    const std::string_view wanted = condition ? "then_branch" : "else_branch";
    const std::size_t b = node.subgraphs[0].attribute == wanted ? 0 : 1;
    const std::vector<DeviceTensor> captured(
        inputs.begin() + static_cast<std::ptrdiff_t>(node.ownInputs()), inputs.end());
    return runBody(*node.subgraphs[b].graph, captured, results,
                   describe(node) + ", " + node.subgraphs[b].attribute);
}

std::vector<DeviceTensor> RunTimeControlFlow::runLoop(const Node& node,
                                                      const std::vector<DeviceTensor>& inputs,
                                                      DeviceBuffers& results) {
    const LoopLayout layout = loopLayout(node, inputs.size());
    const Graph& body = *node.subgraphs[0].graph;
    const std::string where = describe(node);
    std::int64_t trips = std::numeric_limits<std::int64_t>::max();
    if (layout.tripCount >= 0)
        trips =
            readScalar(inputs[static_cast<std::size_t>(layout.tripCount)], where + "'s trip count");
    bool condition = true;
    if (layout.condition >= 0)
        condition = readScalar(inputs[static_cast<std::size_t>(layout.condition)],
                               where + "'s condition") != 0;

    // The iteration number and the condition the body is given, in device memory.
    DeviceBuffers counters(m_device);
    const DeviceTensor iteration{TensorType{{}, DType::Int64},
                                 counters.allocate(TensorType{{}, DType::Int64}, where)};
    const DeviceTensor going{TensorType{{}, DType::Bool},
                             counters.allocate(TensorType{{}, DType::Bool}, where)};
    static const std::uint8_t kTrue = 1;

    DeviceBuffers state(m_device);
    std::vector<DeviceTensor> carried;
    for (std::size_t k = 0; k < layout.carried; ++k)
        carried.push_back(copyOf(inputs[layout.firstCarried + k], state, where));
    const std::vector<DeviceTensor> captured(
        inputs.begin() + static_cast<std::ptrdiff_t>(node.ownInputs()), inputs.end());
    DeviceBuffers scanned(m_device);
    std::vector<std::vector<DeviceTensor>> slices(layout.scanOutputs);
    for (std::int64_t i = 0; i < trips && condition; ++i) {
        if (layout.tripCount < 0 && i == kUnboundedLimit)
            throw KernelError(where + " ran " + std::to_string(i) +
                              " iterations without a trip count and its condition never turned "
                              "false");
        // The device may read these host values until its lane's work is done: they are
        // members, and readScalar below finishes the lane.
        m_iteration = i;
        m_device.copyIn(iteration.data, &m_iteration, sizeof m_iteration);
        m_device.copyIn(going.data, &kTrue, 1);
        std::vector<DeviceTensor> parameters{iteration, going};
        parameters.insert(parameters.end(), carried.begin(), carried.end());
        parameters.insert(parameters.end(), captured.begin(), captured.end());
        DeviceBuffers next(m_device);
        std::vector<DeviceTensor> outputs = runBody(body, parameters, next, where + ", body");
        if (outputs.size() != 1 + layout.carried + layout.scanOutputs)
            throw KernelError(where + ": its body gives " + std::to_string(outputs.size()) +
                              " outputs, not " +
                              std::to_string(1 + layout.carried + layout.scanOutputs));
        for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
            const DeviceTensor& slice = outputs[1 + layout.carried + j];
            slices[j].push_back(next.handOver(slice.data, scanned) ? slice
                                                                   : copyOf(slice, scanned, where));
        }
        condition = readScalar(outputs[0], where + "'s condition") != 0;
        carried.assign(outputs.begin() + 1,
                       outputs.begin() + 1 + static_cast<std::ptrdiff_t>(layout.carried));
        state = std::move(next); // the carried values live there now; the last ones go
    }

    std::vector<DeviceTensor> finals;
    for (const DeviceTensor& value : carried)
        finals.push_back(copyOf(value, results, where));
    for (std::size_t j = 0; j < layout.scanOutputs; ++j) {
        const std::string what = where + ", scan output " + std::to_string(j);
        TensorType stacked = node.outputs[layout.carried + j];
        if (slices[j].empty()) {
            if (stacked.shape.empty())
                stacked.shape.push_back(0);
            stacked.shape[0] = 0; // no iteration ran
        } else {
            stacked = slices[j][0].type;
            for (const DeviceTensor& slice : slices[j]) {
                if (slice.type != slices[j][0].type)
                    throw KernelError(what + " is " + slices[j][0].type.toShortString() +
                                      " in one iteration and " + slice.type.toShortString() +
                                      " in another; every iteration must give one shape");
            }
            stacked.shape.insert(stacked.shape.begin(),
                                 static_cast<std::int64_t>(slices[j].size()));
        }
        DeviceTensor out{stacked, results.allocate(stacked, what)};
        std::int64_t offset = 0;
        for (const DeviceTensor& slice : slices[j]) {
            const std::int64_t bytes = slice.type.bytes();
            if (bytes > 0)
                m_device.copyPeer(out.data + offset, m_device, slice.data, bytes);
            offset += bytes;
        }
        finals.push_back(out);
    }
    return finals;
}

std::vector<DeviceTensor> RunTimeControlFlow::runBody(const Graph& body,
                                                      const std::vector<DeviceTensor>& parameters,
                                                      DeviceBuffers& results,
                                                      const std::string& where) {
    DeviceBuffers scratch(m_device);
    std::vector<std::vector<DeviceTensor>> values(body.size());
    std::size_t bound = 0;
    for (std::uint32_t i = 0; i < body.size(); ++i) {
        const Node& node = body.node(NodeId(i));
        if (node.isParameter()) {
            if (bound >= parameters.size())
                throw KernelError(where + " takes more inputs than the " +
                                  std::to_string(parameters.size()) + " it is given");
            values[i] = {parameters[bound++]};
            continue;
        }
        if (node.isConstant()) {
            values[i] = {DeviceTensor{node.outputs[0], constantOnDevice(node)}};
            continue;
        }
        if (node.isDeviceCopy())
            throw KernelError(where + " holds a device copy ('" + node.name + "')");
        std::vector<DeviceTensor> inputs;
        for (const ValueRef& input : node.inputs)
            inputs.push_back(values[input.node.index].at(input.output));
        values[i] = node.subgraphs.empty() ? runNode(body, node, inputs, scratch)
                                           : run(node, inputs, scratch);
    }
    if (bound != parameters.size())
        throw KernelError(where + " takes " + std::to_string(bound) + " inputs, not the " +
                          std::to_string(parameters.size()) + " it is given");
    // A result the body computed leaves with its memory; one it was given, or gives twice, is
    // copied (a Loop's carried values, ten megabytes a mask, must not be copied every step).
    std::vector<DeviceTensor> outputs;
    for (const GraphOutput& output : body.outputs()) {
        const DeviceTensor& value = values[output.value.node.index].at(output.value.output);
        outputs.push_back(scratch.handOver(value.data, results)
                              ? value
                              : copyOf(value, results, where + ", output"));
    }
    m_device.finishLane(); // the body's memory goes when this returns
    return outputs;
}

std::vector<DeviceTensor> RunTimeControlFlow::runNode(const Graph& body, const Node& node,
                                                      const std::vector<DeviceTensor>& inputs,
                                                      DeviceBuffers& memory) {
    std::vector<TensorType> types;
    std::vector<std::shared_ptr<const TensorData>> values(inputs.size());
    std::vector<const TensorData*> constants(inputs.size(), nullptr);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        types.push_back(inputs[i].type);
        const Node& producer = body.node(node.inputs[i].node);
        if (producer.isConstant()) {
            constants[i] = producer.data.get();
        } else if (inputSetsShapes(node, i)) {
            values[i] = readToHost(m_device, inputs[i].data, inputs[i].type.bytes());
        }
    }
    std::unique_ptr<RunTimeKernelCache>& cache = m_kernels[&node];
    if (!cache)
        cache = std::make_unique<RunTimeKernelCache>();
    auto found = cache->find(m_device, node, types, values, constants, m_onnxOpset);
    if (!found)
        throw KernelError(found.error().message);
    const RunTimeKernel& entry = *found.value();
    std::vector<DeviceTensor> outputs;
    std::vector<const std::byte*> args;
    std::vector<std::byte*> results;
    for (const DeviceTensor& input : inputs)
        args.push_back(input.data);
    for (std::size_t k = 0; k < entry.outputs.size(); ++k) {
        const TensorType& type = entry.outputs[k];
        outputs.push_back(DeviceTensor{
            type, memory.allocate(type, describe(node) + ", output " + std::to_string(k))});
        results.push_back(outputs.back().data);
    }
    entry.kernel->run(args.data(), results.data());
    if (const auto* shapes = entry.kernel->ranShapes()) {
        m_device.finishLane(); // on a device with lanes, the kernel has run only then
        for (std::size_t k = 0; k < outputs.size() && k < shapes->size(); ++k)
            outputs[k].type.shape = (*shapes)[k];
    }
    return outputs;
}

std::byte* RunTimeControlFlow::constantOnDevice(const Node& node) {
    const auto known = m_constants.find(&node);
    if (known != m_constants.end())
        return known->second;
    const std::int64_t bytes = node.outputs[0].bytes();
    std::byte* data = nullptr;
    if (bytes > 0) {
        if (!node.data || static_cast<std::int64_t>(node.data->size()) < bytes)
            throw KernelError("constant '" + node.name + "' has fewer bytes than its type");
        Result<std::byte*> memory = m_device.allocate(bytes);
        if (!memory)
            throw KernelError("constant '" + node.name + "': " + memory.error().message);
        data = memory.value();
        m_device.copyIn(data, node.data->data(), bytes);
    }
    m_constants.emplace(&node, data);
    return data;
}

std::int64_t RunTimeControlFlow::readScalar(const DeviceTensor& tensor, const std::string& what) {
    if (tensor.type.elementCount() < 1 || !tensor.data)
        throw KernelError(what + " is empty (" + tensor.type.toShortString() + ")");
    return readDeviceScalar(m_device, tensor.data, tensor.type.dtype, what);
}

DeviceTensor RunTimeControlFlow::copyOf(const DeviceTensor& tensor, DeviceBuffers& memory,
                                        const std::string& what) {
    DeviceTensor copy{tensor.type, memory.allocate(tensor.type, what)};
    const std::int64_t bytes = tensor.type.bytes();
    if (bytes > 0)
        m_device.copyPeer(copy.data, m_device, tensor.data, bytes);
    return copy;
}

} // namespace placer
