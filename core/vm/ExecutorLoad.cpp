// Loading a program (vm/ExecutorImpl.h): storages on their devices, constants uploaded or
// borrowed in place, copied host storages pinned, a kernel for every Invoke, and the schedule.
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

Executor::Impl::~Impl() {
    for (Stream& stream : streams)
        stream.device->synchronize();
    for (const auto& [device, data] : pinned)
        device->unpinHost(data);
    for (const RunBuffer& buffer : runBuffers) {
        if (buffer.data)
            buffer.device->free(buffer.data);
    }
    for (std::size_t s = 0; s < storages.size(); ++s) {
        if (storages[s] && !borrowed[s])
            storageOwner[s]->free(storages[s]);
    }
}

std::optional<SourceError> Executor::Impl::loadAll() {
    const std::size_t n = program.code.size();
    streamOf.assign(n, -1);
    laneOf.assign(n, -1);
    eventOf.assign(n, -1);
    kernels.resize(n);
    argPointers.resize(n);
    resultPointers.resize(n);
    regData.assign(program.registers.size(), nullptr);
    regOwner.assign(program.registers.size(), nullptr);
    // Every virtual device of the set gets a stream, in order, so reports list all of them.
    for (int d = 0; d < devices->size(); ++d)
        streamFor(mapping[static_cast<std::size_t>(d)], DeviceId(d));
    std::size_t storageCount = 0;
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::AllocStorage)
            storageCount = std::max(storageCount, static_cast<std::size_t>(instr.storage) + 1);
    }
    storages.assign(storageCount, nullptr);
    storageOwner.assign(storageCount, nullptr);
    findBorrowedConstants();
    assignRankRoles();
    if (auto error = findCachedConstants())
        return error;
    for (std::size_t k = 0; k < program.runStart; ++k) {
        if (program.code[k].op == Opcode::LoadConst && rankRole[k] == RankRole::Local)
            constantBytes += program.code[k].bytes;
    }
    for (std::size_t k = 0; k < n; ++k) {
        const Instruction& instr = program.code[k];
        Device* device = instr.device.valid() ? mapping[instr.device.index] : nullptr;
        if (instr.op != Opcode::Ret && device)
            streamOf[k] = streamFor(device, instr.device);
        if (device && k >= program.runStart) {
            if (instr.op == Opcode::Invoke)
                laneOf[k] = device->laneFor(WorkKind::Compute);
            else if (instr.op == Opcode::DeviceCopy || instr.op == Opcode::LoadInput)
                laneOf[k] = device->laneFor(WorkKind::CopyIn);
        }
        if (k >= program.runStart || rankRole[k] == RankRole::Remote)
            continue;
        if (auto error = loadInstruction(k, device))
            return error;
        if (instr.op == Opcode::LoadConst && *progress) {
            constantsLoaded += instr.bytes;
            (*progress)(constantsLoaded, constantBytes);
        }
    }
    // Registers of the run section are bound to their storages once: a binding is the same
    // every run, and a device whose waits do not block its worker (a GPU waits in its
    // stream) issues work reading registers another device binds.
    for (std::size_t k = program.runStart; k < n; ++k) {
        if (program.code[k].op == Opcode::AllocTensor && rankRole[k] == RankRole::Local)
            bind(program.code[k]);
    }
    plannedData = regData;
    if (auto error = prepareKernels())
        return error;
    for (std::size_t k = program.runStart; k < n; ++k) {
        if (streamOf[k] >= 0)
            streams[static_cast<std::size_t>(streamOf[k])].instructions.push_back(k);
    }
    // Asynchronous devices make their timing marks now, not inside the first timed run: two
    // per timed instruction, one per allocation or free when tracing (runStream).
    for (Stream& stream : streams) {
        if (!stream.device->timesAsynchronously())
            continue;
        int marks = 0;
        for (std::size_t k : stream.instructions)
            marks += program.code[k].op == Opcode::AllocTensor || program.code[k].op == Opcode::Free
                         ? 1
                         : 2;
        stream.device->reserveMarks(marks);
    }
    buildRunSchedule();
    pinCopiedStorages();
    return checkCopiesBetweenRanks();
}

void Executor::Impl::storageUsers(std::vector<int>* users,
                                  std::vector<std::int32_t>* storageOf) const {
    users->assign(storages.size(), 0);
    storageOf->assign(program.registers.size(), -1);
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::AllocTensor && instr.storage >= 0) {
            ++(*users)[static_cast<std::size_t>(instr.storage)];
            (*storageOf)[static_cast<std::size_t>(instr.dst)] = instr.storage;
        }
    }
}

void Executor::Impl::findBorrowedConstants() {
    borrowed.assign(storages.size(), nullptr);
    std::vector<int> users;
    std::vector<std::int32_t> storageOf;
    storageUsers(&users, &storageOf);
    for (std::size_t k = 0; k < program.runStart; ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op != Opcode::LoadConst || !mapping[instr.device.index]->bindsHostConstants())
            continue;
        const std::int32_t s = storageOf[static_cast<std::size_t>(instr.dst)];
        const Node& node = graph->node(instr.node);
        if (s < 0 || users[static_cast<std::size_t>(s)] != 1 || !node.data ||
            static_cast<std::int64_t>(node.data->size()) < instr.bytes ||
            !node.hints.packedLayout.empty())
            continue; // a packed constant is written in its layout, not used where it lies
        const auto address = reinterpret_cast<std::uintptr_t>(node.data->data());
        const auto align = static_cast<std::uintptr_t>(dtypeSize(reg(instr.dst).type.dtype));
        if (align > 0 && address % align == 0) {
            borrowed[static_cast<std::size_t>(s)] = node.data->data();
            const MappedPages* file = node.data->mappedFile();
            if (file &&
                std::find(readInPlace.begin(), readInPlace.end(), file) == readInPlace.end())
                readInPlace.push_back(file);
        }
    }
}

std::optional<SourceError> Executor::Impl::findCachedConstants() {
    cachedAt.assign(program.code.size(), nullptr);
    cachedWritten.assign(program.code.size(), 0);
    if (!constantCache)
        return std::nullopt;
    std::vector<int> users;
    std::vector<std::int32_t> storageOf;
    storageUsers(&users, &storageOf);
    std::vector<std::shared_ptr<CachedConstant>> used;
    for (std::size_t k = 0; k < program.runStart; ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op != Opcode::LoadConst || rankRole[k] != RankRole::Local || instr.bytes <= 0)
            continue;
        const std::int32_t s = storageOf[static_cast<std::size_t>(instr.dst)];
        const Node& node = graph->node(instr.node);
        Device* device = mapping[instr.device.index];
        const std::string& layout = node.hints.packedLayout;
        if (s < 0 || users[static_cast<std::size_t>(s)] != 1 ||
            borrowed[static_cast<std::size_t>(s)] || !node.data ||
            static_cast<std::int64_t>(node.data->size()) < instr.bytes ||
            (layout.empty() && device->bindsHostConstants()))
            continue;
        const ConstantCache::Key key{node.data->data(), instr.bytes, layout, device};
        std::shared_ptr<CachedConstant> constant = constantCache->find(key);
        if (constant) {
            cachedWritten[k] = 1;
        } else {
            auto made = constantCache->allocate(key, node.data);
            if (!made)
                return made.error();
            constant = made.take();
        }
        borrowed[static_cast<std::size_t>(s)] = reinterpret_cast<const char*>(constant->data());
        cachedAt[k] = constant;
        used.push_back(std::move(constant));
    }
    constantCache->keepOnly(used);
    return std::nullopt;
}

void Executor::Impl::pinCopiedStorages() {
    std::vector<std::int32_t> storageOf(program.registers.size(), -1);
    std::vector<std::int64_t> storageBytes(storages.size(), 0);
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::AllocTensor && instr.storage >= 0)
            storageOf[static_cast<std::size_t>(instr.dst)] = instr.storage;
        else if (instr.op == Opcode::AllocStorage)
            storageBytes[static_cast<std::size_t>(instr.storage)] = instr.bytes;
    }
    auto offer = [&](Device* device, std::int32_t r) {
        const std::int32_t s = storageOf[static_cast<std::size_t>(r)];
        if (s < 0)
            return;
        std::byte* data = storages[static_cast<std::size_t>(s)];
        const std::pair<Device*, std::byte*> entry{device, data};
        if (!data || borrowed[static_cast<std::size_t>(s)] ||
            std::find(pinned.begin(), pinned.end(), entry) != pinned.end())
            return;
        if (device->pinHost(data, storageBytes[static_cast<std::size_t>(s)]))
            pinned.push_back(entry);
    };
    for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op != Opcode::DeviceCopy || tagOf[k] >= 0 || rankRole[k] != RankRole::Local)
            continue;
        Device* to = mapping[instr.device.index];
        Device* from = mapping[instr.srcDevice.index];
        if (from->hostAccessible() && !to->hostAccessible())
            offer(to, instr.src);
        else if (to->hostAccessible() && !from->hostAccessible())
            offer(from, instr.dst);
    }
}

std::optional<SourceError> Executor::Impl::loadInstruction(std::size_t k, Device* device) {
    const Instruction& instr = program.code[k];
    auto fail = [&](std::string message) { return SourceError{"", 0, 0, std::move(message)}; };
    switch (instr.op) {
    case Opcode::AllocStorage: {
        if (const char* constant = borrowed[static_cast<std::size_t>(instr.storage)]) {
            // Never written: kernels only read constants. Not owned: never freed.
            storages[static_cast<std::size_t>(instr.storage)] =
                reinterpret_cast<std::byte*>(const_cast<char*>(constant));
            storageOwner[static_cast<std::size_t>(instr.storage)] = device;
            return std::nullopt;
        }
        Result<std::byte*> data = device->allocate(instr.bytes);
        if (!data)
            return data.error();
        storages[static_cast<std::size_t>(instr.storage)] = data.value();
        storageOwner[static_cast<std::size_t>(instr.storage)] = device;
        return std::nullopt;
    }
    case Opcode::AllocTensor:
        bind(instr);
        return std::nullopt;
    case Opcode::LoadConst: {
        const Node& node = graph->node(instr.node);
        std::byte* dst = regData[static_cast<std::size_t>(instr.dst)];
        if (instr.bytes > 0) {
            if (!node.data || static_cast<std::int64_t>(node.data->size()) < instr.bytes)
                return fail("constant '" + node.name + "' has fewer bytes than its type");
            // A mapped model file rewritten since it was read would fail on a page, not here.
            if (const std::string why = node.data->changedOnDisk(); !why.empty())
                return fail("constant '" + node.name + "': " + why);
            if (cachedWritten[k]) {
                // Written by an earlier load into the cache's memory this storage is.
            } else if (reinterpret_cast<const char*>(dst) != node.data->data()) {
                const std::string& layout = node.hints.packedLayout;
                const std::string error =
                    layout.empty()
                        ? copyInAndWait(*device, dst, node.data->data(), instr.bytes)
                        : device->loadPacked(dst, node.data->data(), instr.bytes, layout);
                if (!error.empty())
                    return fail("uploading constant '" + node.name + "': " + error);
                // Cut short while it was copied: the copy holds zeros past the new end.
                if (const std::string why = node.data->changedOnDisk(); !why.empty())
                    return fail("constant '" + node.name + "': " + why);
                // The device has its copy: the file's pages can go (read again if needed).
                node.data->releasePages();
                if (cachedAt[k])
                    cachedAt[k]->written = true;
            }
        }
        ++streams[static_cast<std::size_t>(streamOf[k])].constantUploads;
        return std::nullopt;
    }
    default:
        return fail(std::string("unexpected ") + std::string(opcodeName(instr.op)) +
                    " in the load section");
    }
}

void Executor::Impl::bind(const Instruction& instr) {
    const auto r = static_cast<std::size_t>(instr.dst);
    if (instr.storage >= 0) {
        regData[r] = storages[static_cast<std::size_t>(instr.storage)];
        regOwner[r] = storageOwner[static_cast<std::size_t>(instr.storage)];
    } else {
        regData[r] = nullptr; // an empty tensor
        regOwner[r] = mapping[instr.device.index];
    }
}

std::optional<SourceError> Executor::Impl::prepareKernels() {
    const std::size_t n = program.code.size();
    shapeAtRun.assign(program.registers.size(), false);
    ranShape.assign(program.registers.size(), std::nullopt);
    runBuffers.assign(program.registers.size(), RunBuffer{});
    plannedBytes.assign(static_cast<std::size_t>(devices->size()), 0);
    runBytes = std::make_unique<std::atomic<std::int64_t>[]>(plannedBytes.size());
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::AllocStorage)
            plannedBytes[instr.device.index] += instr.bytes;
    }
    runTimeKernels.resize(n);
    lastSignature.resize(n);
    runTimeBodies.resize(n);
    valuesAtRun.assign(program.registers.size(), false);
    sizedConstants.assign(program.registers.size(), nullptr);
    inputSized.assign(program.inputs.size(), false);
    if (sizesAtRun) {
        if (auto error = markSizedRegisters())
            return error;
    }
    for (std::size_t k = program.runStart; k < n; ++k) {
        const Instruction& instr = program.code[k];
        if (instr.op == Opcode::DeviceCopy) {
            // What another rank sends at a size found then is as found here.
            if (shapeAtRun[static_cast<std::size_t>(instr.src)] ||
                (rankRole[k] == RankRole::Receive && mayVary[static_cast<std::size_t>(instr.src)]))
                shapeAtRun[static_cast<std::size_t>(instr.dst)] = true;
            continue;
        }
        if (instr.op != Opcode::Invoke)
            continue;
        const Node& node = graph->node(instr.node);
        bool atRun = node.anyRunTimeShape();
        for (std::int32_t r : instr.args)
            atRun = atRun || shapeAtRun[static_cast<std::size_t>(r)] ||
                    valuesAtRun[static_cast<std::size_t>(r)];
        for (const Subgraph& body : node.subgraphs)
            atRun = atRun || findsShapesAtRun(*body.graph);
        if (rankRole[k] == RankRole::Remote)
            continue; // another rank's kernel: prepared there
        if (!atRun) {
            if (auto error = prepareKernel(k))
                return error;
            for (std::size_t i = 0; i < instr.results.size(); ++i) {
                if (kernels[k]->boundsOutput(i))
                    shapeAtRun[static_cast<std::size_t>(instr.results[i])] = true;
            }
            continue;
        }
        argPointers[k].resize(instr.args.size());
        resultPointers[k].resize(instr.results.size());
        if (node.op->hasBodies) {
            // Its bodies run node by node at run time: every result's shape is theirs.
            for (std::int32_t r : instr.results)
                shapeAtRun[static_cast<std::size_t>(r)] = true;
            runTimeBodies[k] =
                std::make_unique<RunTimeControlFlow>(*mapping[instr.device.index], onnxOpset);
            continue;
        }
        const bool selects = node.op->kernel.family == KernelFamily::Selection;
        for (std::size_t i = 0; i < instr.results.size(); ++i) {
            // At other sizes, what follows a sized input or constant has the run's shape.
            if (selects || node.runTimeShape(i) || sizesAtRun)
                shapeAtRun[static_cast<std::size_t>(instr.results[i])] = true;
        }
        runTimeKernels[k] = std::make_unique<RunTimeKernelCache>();
    }
    return std::nullopt;
}

std::optional<SourceError> Executor::Impl::markSizedRegisters() {
    const auto fail = [](std::string why) {
        return SourceError{"", 0, 0, "the program cannot run at other sizes: " + std::move(why)};
    };
    for (Device* device : mapping) {
        if (!device->hostAccessible())
            return fail(device->name() + " is not host memory (its folded sizes would be "
                                         "written there at every run)");
    }
    for (const Instruction& instr : program.code) {
        if (instr.op == Opcode::LoadInput) {
            const Node& node = graph->node(program.inputs[static_cast<std::size_t>(instr.index)]);
            for (const OpenInput& open : graph->openInputs) {
                if (open.name != node.name || open.setsShapes)
                    continue;
                for (std::size_t a = 0; a < open.declaredDims.size(); ++a) {
                    if (dimensionName(open, a)) {
                        shapeAtRun[static_cast<std::size_t>(instr.dst)] = true;
                        inputSized[static_cast<std::size_t>(instr.index)] = true;
                    }
                }
            }
        } else if (instr.op == Opcode::LoadConst) {
            const Node& node = graph->node(instr.node);
            if (node.tiledData)
                return fail("constant " + node.name + " is a broadcast whose shape follows them");
            if (!node.symbolicData.empty())
                valuesAtRun[static_cast<std::size_t>(instr.dst)] = true;
        }
    }
    return std::nullopt;
}

std::optional<SourceError> Executor::Impl::evaluateSizedConstants(const SymbolValues& sizes) {
    SymbolValues& at = runSizes;
    at = graph->symbolValues;
    for (const auto& [name, value] : sizes)
        at[name] = value;
    for (std::size_t r = 0; r < valuesAtRun.size(); ++r) {
        if (!valuesAtRun[r])
            continue;
        const Node& node = graph->node(program.registers[r].value.node);
        auto bytes = symbolicDataAt(node, at);
        if (!bytes)
            return SourceError{"", 0, 0, bytes.error().message};
        if (sizedConstants[r] && sizedConstants[r]->bytes() == bytes.value())
            continue;
        sizedConstants[r] = std::make_shared<const TensorData>(bytes.take());
        regData[r] = reinterpret_cast<std::byte*>(const_cast<char*>(sizedConstants[r]->data()));
    }
    return std::nullopt;
}

const TensorData* Executor::Impl::constantData(std::int32_t r) const {
    if (const auto& sized = sizedConstants[static_cast<std::size_t>(r)])
        return sized.get();
    return graph->node(reg(r).value.node).data.get();
}

std::optional<SourceError> Executor::Impl::prepareKernel(std::size_t k) {
    const Instruction& instr = program.code[k];
    const Node& node = graph->node(instr.node);
    KernelSpec spec;
    spec.node = &node;
    spec.onnxOpset = onnxOpset;
    for (std::int32_t r : instr.args) {
        const Register& input = reg(r);
        spec.inputs.push_back(input.type);
        spec.constantInputs.push_back(input.constant);
        const Node& producer = graph->node(input.value.node);
        spec.constantData.push_back(input.constant ? producer.data.get() : nullptr);
    }
    spec.outputs = node.outputs;
    Device* device = mapping[instr.device.index];
    auto kernel = prepareKernelOn(*device, spec);
    if (!kernel)
        return SourceError{"", 0, 0,
                           kernel.error().message + " (on " + (*devices)[instr.device].name +
                               ", running on " + device->name() + ")"};
    kernels[k] = kernel.take();
    argPointers[k].resize(instr.args.size());
    resultPointers[k].resize(instr.results.size());
    return std::nullopt;
}

ScheduleInput Executor::Impl::scheduleInput() const {
    ScheduleInput input;
    input.program = &program;
    input.stream = streamOf;
    input.lane = laneOf;
    for (const Stream& stream : streams)
        input.asynchronous.push_back(stream.device->timesAsynchronously());
    input.cost = estimateCosts(program, *graph);
    // A pipelined program (--micro-batches): each instruction's micro-batch.
    if (runsInMicroBatches(*graph)) {
        input.wave.assign(program.code.size(), -1);
        for (std::size_t k = 0; k < program.code.size(); ++k) {
            const NodeId node = program.code[k].node;
            if (node.valid() && node.index < graph->size())
                input.wave[k] = graph->node(node).microBatch;
        }
    }
    return input;
}

void Executor::Impl::buildRunSchedule() {
    schedule = buildSchedule(scheduleInput());
    const std::size_t n = program.code.size();
    for (std::size_t k = 0; k < n; ++k) {
        if (!schedule.records[k])
            continue;
        eventOf[k] = static_cast<int>(events.size());
        events.push_back(streams[static_cast<std::size_t>(streamOf[k])].device->createEvent());
    }
    remaining = std::make_unique<std::atomic<int>[]>(n);
    readySets.clear();
    for (std::size_t s = 0; s < streams.size(); ++s)
        readySets.push_back(std::make_unique<ReadySet>());
}

} // namespace placer
