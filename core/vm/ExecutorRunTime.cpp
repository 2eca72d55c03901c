// Shapes found at run time (vm/ExecutorImpl.h): memory for registers that outgrow their planned
// storage, kernels prepared for the shapes a run brings, and If/Loop run node by node.
#include "vm/ExecutorImpl.h"

#include "kernels/KernelSupport.h"
#include "plan/ExecutionOrder.h"
#include "vm/ControlFlow.h"
#include "vm/MemoryCheck.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace placer {

std::byte* Executor::Impl::memoryAtRun(std::int32_t r, const TensorType& type, Device* device) {
    const auto index = static_cast<std::size_t>(r);
    const std::int64_t bytes = type.bytes();
    regOwner[index] = device;
    if (bytes <= reg(r).type.bytes())
        return regData[index] = plannedData[index];
    RunBuffer& buffer = runBuffers[index];
    if (buffer.data && buffer.device == device && buffer.capacity >= bytes)
        return regData[index] = buffer.data;
    releaseRunBuffer(r);
    const DeviceId v = reg(r).device;
    std::atomic<std::int64_t>& used = runBytes[v.index];
    const std::string what = "tensor " + reg(r).name + " is " + type.toShortString() + " (" +
                             formatBytes(bytes) + ") at this run, a size found only then, and ";
    if (const auto capacity = (*devices)[v].memoryCapacity;
        capacity && plannedBytes[v.index] + used.load() + bytes > *capacity)
        throw DeviceFailure(
            DeviceFailure::Kind::OutOfMemory,
            what + "virtual device " + (*devices)[v].name + " (mem=" + formatBytes(*capacity) +
                ") cannot hold it beside its planned " + formatBytes(plannedBytes[v.index]) +
                " and the " + formatBytes(used.load()) + " other such tensors hold");
    // At sizes that grow run by run (a cache a token longer each step), a quarter more, so
    // that most runs find their buffer big enough.
    const std::int64_t capacity = sizesAtRun ? bytes + bytes / 4 : bytes;
    Result<std::byte*> data = device->allocate(capacity);
    if (!data)
        throw DeviceFailure(DeviceFailure::Kind::OutOfMemory,
                            what + device->name() + " cannot hold it: " + data.error().message);
    used += capacity;
    buffer = RunBuffer{data.value(), capacity, device};
    return regData[index] = buffer.data;
}

void Executor::Impl::releaseRunBuffer(std::int32_t r) {
    RunBuffer& buffer = runBuffers[static_cast<std::size_t>(r)];
    if (!buffer.data)
        return;
    buffer.device->free(buffer.data);
    runBytes[reg(r).device.index] -= buffer.capacity;
    buffer = RunBuffer{};
}

void Executor::Impl::controlFlowAtRunTime(std::size_t k, Device* device,
                                          const std::string& offender) {
    const Instruction& instr = program.code[k];
    const Node& node = graph->node(instr.node);
    if (device->timesAsynchronously()) {
        for (std::uint32_t p : schedule.waits[k])
            events[static_cast<std::size_t>(eventOf[p])]->wait(epoch);
    }
    std::vector<DeviceTensor> inputs;
    for (std::int32_t r : instr.args) {
        checkOwner(r, device, offender);
        inputs.push_back(DeviceTensor{typeAtRun(r), regData[static_cast<std::size_t>(r)]});
    }
    DeviceBuffers memory(*device);
    const std::vector<DeviceTensor> results = runTimeBodies[k]->run(node, inputs, memory);
    if (results.size() != instr.results.size())
        throw KernelError(offender + " gave " + std::to_string(results.size()) + " results, not " +
                          std::to_string(instr.results.size()));
    for (std::size_t i = 0; i < results.size(); ++i) {
        const std::int32_t r = instr.results[i];
        std::byte* data = memoryAtRun(r, results[i].type, device);
        ranShape[static_cast<std::size_t>(r)] = results[i].type.shape;
        if (results[i].type.bytes() > 0)
            device->copyPeer(data, *device, results[i].data, results[i].type.bytes());
    }
    device->finishLane(); // the body's memory goes when this returns
}

bool Executor::Impl::quickSignature(std::size_t k, const Device& device,
                                    std::vector<std::int64_t>& key) const {
    if (device.timesAsynchronously() || device.kind() == DeviceKind::Cuda)
        return false;
    const Instruction& instr = program.code[k];
    const Node& node = graph->node(instr.node);
    key.clear();
    const auto bytes = [&key](const void* data, std::size_t size) {
        const std::size_t at = key.size();
        key.resize(at + (size + 7) / 8 + 1, 0);
        key[at] = static_cast<std::int64_t>(size);
        if (size > 0)
            std::memcpy(&key[at + 1], data, size);
    };
    for (std::size_t i = 0; i < instr.args.size(); ++i) {
        const std::int32_t r = instr.args[i];
        const auto index = static_cast<std::size_t>(r);
        const TensorType& planned = reg(r).type;
        const std::vector<std::int64_t>& shape = ranShape[index] ? *ranShape[index] : planned.shape;
        key.push_back(static_cast<std::int64_t>(planned.dtype));
        key.push_back(static_cast<std::int64_t>(shape.size()));
        key.insert(key.end(), shape.begin(), shape.end());
        if (reg(r).constant) {
            if (valuesAtRun[index]) {
                const TensorData& value = *sizedConstants[index];
                bytes(value.data(), value.size());
            }
        } else if (inputSetsShapes(node, i)) {
            TensorType type = planned;
            type.shape = shape;
            bytes(regData[index], static_cast<std::size_t>(type.bytes()));
        }
    }
    return true;
}

void Executor::Impl::invokeAtRunTime(std::size_t k, Device* device, const std::string& offender) {
    const Instruction& instr = program.code[k];
    const Node& node = graph->node(instr.node);
    if (device->timesAsynchronously()) {
        // Shapes and values are read on the host: what this reads must be done, not issued.
        for (std::uint32_t p : schedule.waits[k])
            events[static_cast<std::size_t>(eventOf[p])]->wait(epoch);
        device->finishLane();
    }
    // The signature of the last run again: its kernel, without naming the signature.
    LastSignature& last = lastSignature[k];
    // Streams of several devices run at once: each thread builds its signatures apart.
    thread_local std::vector<std::int64_t> key;
    const bool quick = quickSignature(k, *device, key);
    if (quick && last.entry && key == last.key) {
        for (const std::int32_t r : instr.args)
            checkOwner(r, device, offender);
        runFound(k, *last.entry, device, offender);
        return;
    }
    std::vector<TensorType> types;
    std::vector<std::shared_ptr<const TensorData>> values(instr.args.size());
    std::vector<const TensorData*> constants(instr.args.size(), nullptr);
    for (std::size_t i = 0; i < instr.args.size(); ++i) {
        const std::int32_t r = instr.args[i];
        checkOwner(r, device, offender);
        types.push_back(typeAtRun(r));
        if (reg(r).constant) {
            constants[i] = constantData(r);
            // A constant folded from the sizes is part of the signature: its value is the run's.
            if (valuesAtRun[static_cast<std::size_t>(r)])
                values[i] = sizedConstants[static_cast<std::size_t>(r)];
        } else if (inputSetsShapes(node, i))
            values[i] =
                readToHost(*device, regData[static_cast<std::size_t>(r)], types.back().bytes());
    }
    // A node of the model whose shapes follow the named dimensions: its types at the run's
    // sizes, without asking the shape function (ONNX's builds protos).
    std::optional<std::vector<TensorType>> known;
    if (sizesAtRun && !node.symbolicShapes.empty() && !node.anyRunTimeShape() &&
        node.symbolicShapes.size() == node.outputs.size()) {
        known.emplace(node.outputs);
        for (std::size_t o = 0; o < node.outputs.size() && known; ++o) {
            if (!isSymbolic(node.symbolicShapes[o]))
                continue;
            auto shape = evaluateShape(node.symbolicShapes[o], runSizes);
            if (shape)
                (*known)[o].shape = std::move(*shape);
            else
                known.reset();
        }
    }
    auto found = runTimeKernels[k]->find(*device, node, types, values, constants, onnxOpset,
                                         known ? &*known : nullptr);
    if (!found)
        throw KernelError(found.error().message);
    const RunTimeKernel& entry = *found.value();
    if (quick) {
        last.key = key;
        last.entry = &entry;
    }
    runFound(k, entry, device, offender);
}

void Executor::Impl::runFound(std::size_t k, const RunTimeKernel& entry, Device* device,
                              const std::string& offender) {
    const Instruction& instr = program.code[k];
    // A reshape of a tensor held in a buffer of its own (a run buffer, which no other tensor
    // shares and which a program run at any sizes keeps to its end): its result is that
    // buffer, as ONNX Runtime's reshapes alias their input, not a copy of it.
    if (sizesAtRun && instr.results.size() == 1 && !instr.args.empty() &&
        graph->node(instr.node).op->kernel.family == KernelFamily::Copy) {
        const auto in = static_cast<std::size_t>(instr.args[0]);
        const auto out = static_cast<std::size_t>(instr.results[0]);
        const RunBuffer& buffer = runBuffers[in];
        if (shapeAtRun[out] && buffer.data && regData[in] == buffer.data &&
            buffer.device == device &&
            entry.outputs[0].bytes() == typeAtRun(instr.args[0]).bytes()) {
            regData[out] = buffer.data;
            regOwner[out] = device;
            ranShape[out] = entry.outputs[0].shape;
            return;
        }
    }
    auto& args = argPointers[k];
    auto& results = resultPointers[k];
    for (std::size_t i = 0; i < instr.args.size(); ++i)
        args[i] = regData[static_cast<std::size_t>(instr.args[i])];
    for (std::size_t i = 0; i < instr.results.size(); ++i) {
        const std::int32_t r = instr.results[i];
        const TensorType& type = entry.outputs[i];
        if (shapeAtRun[static_cast<std::size_t>(r)]) {
            results[i] = memoryAtRun(r, type, device);
            ranShape[static_cast<std::size_t>(r)] = type.shape;
            continue;
        }
        if (type != reg(r).type)
            throw KernelError(offender + ": output " + std::to_string(i) + " is " +
                              type.toShortString() + " at run time, but the model declares " +
                              reg(r).type.toShortString());
        checkOwner(r, device, offender);
        results[i] = regData[static_cast<std::size_t>(r)];
    }
    entry.kernel->run(args.data(), results.data());
    if (const auto* shapes = entry.kernel->ranShapes()) {
        if (device->timesAsynchronously())
            device->finishLane();
        for (std::size_t i = 0; i < instr.results.size() && i < shapes->size(); ++i)
            ranShape[static_cast<std::size_t>(instr.results[i])] = (*shapes)[i];
    }
}

TensorType Executor::Impl::typeAtRun(std::int32_t r) const {
    const auto& found = ranShape[static_cast<std::size_t>(r)];
    TensorType type = reg(r).type;
    if (found)
        type.shape = *found;
    return type;
}

} // namespace placer
