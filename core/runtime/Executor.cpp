// The executor: load (storages, constants, kernels) and runs. A run is dataflow with a static
// priority (runtime/Schedule.h says why): every physical device's worker takes, of its
// instructions whose dependencies have been issued, the one with the highest priority, runs it
// (or, on an asynchronous device, issues it into the lane it belongs to), and makes ready what
// depended on it. Where work depends on an asynchronous device's work on another lane, it waits
// for that work's event: a GPU in its stream (the worker does not block), a host worker by taking
// other ready work until the event is reached. So no worker sits idle while it has an instruction
// whose inputs are ready, and a copy into a device is taken as soon as its source is written,
// never ahead of that device's unrelated compute.
// Events are reusable across runs: a run has an epoch number and an event is "reached" once it
// was recorded with this run's epoch.
#include "runtime/Executor.h"

#include "plan/ExecutionOrder.h"
#include "runtime/ControlFlow.h"
#include "runtime/KernelSupport.h"
#include "runtime/MemoryCheck.h"
#include "runtime/Ranks.h"
#include "runtime/RunTimeBodies.h"
#include "runtime/RunTimeShapes.h"
#include "runtime/Schedule.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace placer {

struct Executor::Impl {
    const Graph* graph = nullptr;
    const DeviceSet* devices = nullptr;
    Program program;
    std::vector<Device*> mapping; ///< virtual -> physical
    int onnxOpset = 0;

    struct Stream {
        Device* device = nullptr;
        std::vector<std::size_t> instructions;
        std::vector<DeviceId> virtuals;
        int constantUploads = 0;
        // Per run:
        double busy = 0;
        std::int64_t live = 0;
        std::int64_t livePeak = 0;
        std::vector<TimedEvent> timed;
        std::vector<MemorySample> memory;
    };
    /// A stream's instructions whose dependencies have been issued, first-to-run first.
    struct ReadySet {
        std::mutex mutex;
        std::condition_variable wake;
        std::vector<std::uint32_t> ready;
        std::atomic<int> count{0}; ///< ready.size(), read without the lock while spinning
        bool sleeping = false;
        /// Of this run: the instructions taken by the stream's thread or done where they became
        /// ready (another rank's work, makeReady); the thread stops once all are.
        std::atomic<std::size_t> finished{0};
    };
    std::vector<Stream> streams;
    std::vector<std::unique_ptr<ReadySet>> readySets; ///< per stream
    Schedule schedule;
    std::unique_ptr<std::atomic<int>[]> remaining; ///< per instruction: dependencies not issued
    std::vector<int> streamOf;                     ///< per instruction
    std::vector<int> laneOf;  ///< per instruction: its lane on the device, or -1
    std::vector<int> eventOf; ///< per instruction: the event it records, or -1
    std::vector<std::unique_ptr<Event>> events;
    std::vector<std::unique_ptr<Kernel>> kernels; ///< per instruction (Invoke only)
    std::vector<std::byte*> storages;
    std::vector<Device*> storageOwner;
    std::vector<const char*> borrowed; ///< per storage: the constant bytes it points at, or null
    /// The mapped files whose pages the runs read in place (borrowed constants): checked after
    /// every run, since a file cut short or rewritten under a run gives it wrong bytes.
    std::vector<const MappedPages*> readInPlace;
    const LoadProgress* progress = nullptr; ///< during load() only
    std::int64_t constantBytes = 0, constantsLoaded = 0;
    std::vector<std::byte*> regData;
    std::vector<Device*> regOwner;
    /// Per register: whether its shape is found at run time (a kernel finds its extent, or a
    /// shape function runs before its producer does, copies included); and that shape at the
    /// last run.
    std::vector<bool> shapeAtRun;
    std::vector<std::optional<std::vector<std::int64_t>>> ranShape;
    /// Per register: the memory it was bound to at load (its planned storage).
    std::vector<std::byte*> plannedData;
    /// Per register whose shape is found at run time and outgrows its planned storage: memory
    /// from its device's arena, kept across runs and grown when a run needs more.
    struct RunBuffer {
        std::byte* data = nullptr;
        std::int64_t capacity = 0;
        Device* device = nullptr;
    };
    std::vector<RunBuffer> runBuffers;
    /// Per virtual device: the bytes of its planned storages, and of its run buffers now, which
    /// together must stay within its capacity (mem=).
    std::vector<std::int64_t> plannedBytes;
    std::unique_ptr<std::atomic<std::int64_t>[]> runBytes;
    /// Per Invoke prepared at run time (its inputs' shapes or its outputs' are found then): its
    /// kernels by signature; null for those prepared at load.
    std::vector<std::unique_ptr<RunTimeKernelCache>> runTimeKernels;
    /// Per If or Loop run with shapes found at run time: its bodies' kernels and constants.
    std::vector<std::unique_ptr<RunTimeControlFlow>> runTimeBodies;
    std::vector<std::vector<const std::byte*>> argPointers; ///< per Invoke, reused
    std::vector<std::vector<std::byte*>> resultPointers;

    std::uint32_t epoch = 0;
    /// The run in progress, for the transport's thread: a receive finishing after its run was
    /// abandoned makes nothing ready in the next.
    std::atomic<std::uint32_t> runNumber{0};
    std::atomic<bool> aborted{false};
    std::mutex errorMutex;
    std::string error;
    const std::vector<HostTensor>* inputs = nullptr;
    bool tracing = false;

    /// Per instruction, what this rank does with it when the run spans ranks (runtime/Ranks.h):
    /// its own work, nothing (another rank's), or one side of a copy between ranks.
    enum class RankRole : std::uint8_t { Local, Remote, Send, Receive };
    std::vector<RankRole> rankRole;
    /// Per copy between ranks: its tag (the same on every rank), its transfer at this run, the
    /// host memory it is staged in when its device's memory is not the host's, and when the
    /// receive was posted.
    std::vector<int> tagOf;
    std::vector<std::shared_ptr<Transfer>> transfers;
    std::vector<std::vector<std::byte>> staging;
    std::vector<double> postedAt;
    /// The transport, where some copy crosses ranks: told when a worker waits (TransportWait).
    RankTransport* crossTransport = nullptr;
    /// Per send to another rank: posted at this run already (makeReady).
    std::vector<std::uint8_t> sendPosted;
    /// Per register, judged from the graph alone (alike on every rank): its size may be found
    /// only at run time. Such a copy between ranks sends its shape first (a header of
    /// kHeaderWords int64s: the rank, then the dimensions), then its bytes.
    std::vector<bool> mayVary;
    static constexpr std::size_t kHeaderWords = 1 + 32;
    std::vector<std::vector<std::int64_t>> headers;
    std::vector<std::shared_ptr<Transfer>> headerTransfers;
    int copyTags = 0; ///< copies between ranks: data tags are 0..n-1, header tags n..2n-1

    /// Host storages pinned by the device that copies to or from them: (that device, storage).
    std::vector<std::pair<Device*, std::byte*>> pinned;

    ~Impl() {
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

    int streamFor(Device* device, DeviceId virtualDevice) {
        for (std::size_t s = 0; s < streams.size(); ++s) {
            if (streams[s].device == device) {
                auto& v = streams[s].virtuals;
                if (std::find(v.begin(), v.end(), virtualDevice) == v.end())
                    v.push_back(virtualDevice);
                return static_cast<int>(s);
            }
        }
        streams.push_back(Stream{device, {}, {virtualDevice}});
        return static_cast<int>(streams.size() - 1);
    }

    const Register& reg(std::int32_t r) const {
        return program.registers[static_cast<std::size_t>(r)];
    }

    std::optional<SourceError> loadAll() {
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
                marks +=
                    program.code[k].op == Opcode::AllocTensor || program.code[k].op == Opcode::Free
                        ? 1
                        : 2;
            stream.device->reserveMarks(marks);
        }
        buildRunSchedule();
        pinCopiedStorages();
        return checkCopiesBetweenRanks();
    }

    /// The rank whose device runs instructions of virtual device `d`.
    int rankOf(DeviceId d) const {
        const int remote = mapping[d.index]->remoteRank();
        return remote >= 0 ? remote : localRank();
    }

    /// Which instructions are this rank's, and the copies between ranks, numbered alike on every
    /// rank (every rank lowers the same program).
    void assignRankRoles() {
        const std::size_t n = program.code.size();
        rankRole.assign(n, RankRole::Local);
        tagOf.assign(n, -1);
        transfers.resize(n);
        staging.resize(n);
        postedAt.assign(n, 0);
        sendPosted.assign(n, 0);
        int tags = 0;
        const int me = localRank();
        headers.resize(n);
        headerTransfers.resize(n);
        mayVary.assign(program.registers.size(), false);
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            const Instruction& instr = program.code[k];
            if (instr.op == Opcode::DeviceCopy) {
                mayVary[static_cast<std::size_t>(instr.dst)] =
                    mayVary[static_cast<std::size_t>(instr.src)];
                continue;
            }
            if (instr.op != Opcode::Invoke)
                continue;
            const Node& node = graph->node(instr.node);
            bool varies = node.anyRunTimeShape() || node.op->hasBodies ||
                          node.op->kernel.family == KernelFamily::Selection;
            for (std::int32_t r : instr.args)
                varies = varies || mayVary[static_cast<std::size_t>(r)];
            for (std::int32_t r : instr.results)
                mayVary[static_cast<std::size_t>(r)] = varies;
        }

        for (std::size_t k = 0; k < n; ++k) {
            const Instruction& instr = program.code[k];
            if (!instr.device.valid())
                continue;
            const int rank = rankOf(instr.device);
            if (instr.op == Opcode::DeviceCopy) {
                const int source = rankOf(instr.srcDevice);
                if (source != rank)
                    tagOf[k] = tags++;
                if (source == me && rank != me)
                    rankRole[k] = RankRole::Send;
                else if (source != me && rank == me)
                    rankRole[k] = RankRole::Receive;
                else if (rank != me)
                    rankRole[k] = RankRole::Remote;
                continue;
            }
            if (rank != me)
                rankRole[k] = RankRole::Remote;
        }
        copyTags = tags;
        crossTransport = tags > 0 ? rankTransport() : nullptr;
    }

    /// Copies between ranks stay within the transport's tags.
    std::optional<SourceError> checkCopiesBetweenRanks() const {
        RankTransport* transport = rankTransport();
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            if (tagOf[k] < 0)
                continue;
            const Instruction& instr = program.code[k];
            const std::string what = "the copy of " + reg(instr.src).name + " from " +
                                     mapping[instr.srcDevice.index]->name() + " to " +
                                     mapping[instr.device.index]->name();
            if (!transport)
                return SourceError{"", 0, 0, what + " crosses ranks, but this process runs alone"};
            if (2 * tagOf[k] + 1 > transport->maxTag())
                return SourceError{"", 0, 0,
                                   what + " is copy " + std::to_string(tagOf[k]) +
                                       " between ranks, more than the transport can tag"};
        }
        return std::nullopt;
    }

    /// Constants that their device uses where they lie (bindsHostConstants): the storage that
    /// holds nothing else is not allocated but points at the constant's bytes. Those must be
    /// aligned for their element type; a constant that is not is copied as elsewhere.
    void findBorrowedConstants() {
        borrowed.assign(storages.size(), nullptr);
        std::vector<int> users(storages.size(), 0);
        std::vector<std::int32_t> storageOf(program.registers.size(), -1);
        for (const Instruction& instr : program.code) {
            if (instr.op == Opcode::AllocTensor && instr.storage >= 0) {
                ++users[static_cast<std::size_t>(instr.storage)];
                storageOf[static_cast<std::size_t>(instr.dst)] = instr.storage;
            }
        }
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

    /// Every host storage that a copy moves to or from a device the host cannot address (a GPU)
    /// is offered to that device to pin, once per pair.
    void pinCopiedStorages() {
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

    std::optional<SourceError> loadInstruction(std::size_t k, Device* device) {
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
                if (reinterpret_cast<const char*>(dst) != node.data->data()) {
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

    void bind(const Instruction& instr) {
        const auto r = static_cast<std::size_t>(instr.dst);
        if (instr.storage >= 0) {
            regData[r] = storages[static_cast<std::size_t>(instr.storage)];
            regOwner[r] = storageOwner[static_cast<std::size_t>(instr.storage)];
        } else {
            regData[r] = nullptr; // an empty tensor
            regOwner[r] = mapping[instr.device.index];
        }
    }

    /// Prepares the kernel of every Invoke whose shapes are known at load, and marks the
    /// registers whose shapes are found at run time: the outputs of a kernel that finds its
    /// extent (NonZero), the outputs the model sizes from values it computes, and their copies.
    /// An Invoke reading such a register, or writing one that no kernel bounds, is prepared at
    /// run time instead (runtime/RunTimeShapes.h).
    std::optional<SourceError> prepareKernels() {
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
        runTimeBodies.resize(n);
        for (std::size_t k = program.runStart; k < n; ++k) {
            const Instruction& instr = program.code[k];
            if (instr.op == Opcode::DeviceCopy) {
                // What another rank sends at a size found then is as found here.
                if (shapeAtRun[static_cast<std::size_t>(instr.src)] ||
                    (rankRole[k] == RankRole::Receive &&
                     mayVary[static_cast<std::size_t>(instr.src)]))
                    shapeAtRun[static_cast<std::size_t>(instr.dst)] = true;
                continue;
            }
            if (instr.op != Opcode::Invoke)
                continue;
            const Node& node = graph->node(instr.node);
            bool atRun = node.anyRunTimeShape();
            for (std::int32_t r : instr.args)
                atRun = atRun || shapeAtRun[static_cast<std::size_t>(r)];
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
                if (selects || node.runTimeShape(i))
                    shapeAtRun[static_cast<std::size_t>(instr.results[i])] = true;
            }
            runTimeKernels[k] = std::make_unique<RunTimeKernelCache>();
        }
        return std::nullopt;
    }

    /// Memory for register r, whose shape at this run is `type`, on `device`: its planned
    /// storage where that holds it, else a buffer of its own. Throws when the device cannot
    /// give it, naming the tensor, its size and the device.
    std::byte* memoryAtRun(std::int32_t r, const TensorType& type, Device* device) {
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
            throw KernelError(
                what + "virtual device " + (*devices)[v].name + " (mem=" + formatBytes(*capacity) +
                ") cannot hold it beside its planned " + formatBytes(plannedBytes[v.index]) +
                " and the " + formatBytes(used.load()) + " other such tensors hold");
        Result<std::byte*> data = device->allocate(bytes);
        if (!data)
            throw KernelError(what + device->name() + " cannot hold it: " + data.error().message);
        used += bytes;
        buffer = RunBuffer{data.value(), bytes, device};
        return regData[index] = buffer.data;
    }

    /// Gives register r's run buffer back to its device once r is dead.
    void releaseRunBuffer(std::int32_t r) {
        RunBuffer& buffer = runBuffers[static_cast<std::size_t>(r)];
        if (!buffer.data)
            return;
        buffer.device->free(buffer.data);
        runBytes[reg(r).device.index] -= buffer.capacity;
        buffer = RunBuffer{};
    }

    /// An If or Loop whose bodies run node by node (runtime/RunTimeBodies.h): its results are
    /// copied into the memory their registers get for the shapes they have.
    void controlFlowAtRunTime(std::size_t k, Device* device, const std::string& offender) {
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
            throw KernelError(offender + " gave " + std::to_string(results.size()) +
                              " results, not " + std::to_string(instr.results.size()));
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::int32_t r = instr.results[i];
            std::byte* data = memoryAtRun(r, results[i].type, device);
            ranShape[static_cast<std::size_t>(r)] = results[i].type.shape;
            if (results[i].type.bytes() > 0)
                device->copyPeer(data, *device, results[i].data, results[i].type.bytes());
        }
        device->finishLane(); // the body's memory goes when this returns
    }

    /// An Invoke prepared at run time: its inputs' shapes as they are now, the values of the
    /// inputs that set shapes read on the host, the kernel for that signature, and its outputs
    /// placed where they fit.
    void invokeAtRunTime(std::size_t k, Device* device, const std::string& offender) {
        const Instruction& instr = program.code[k];
        const Node& node = graph->node(instr.node);
        if (device->timesAsynchronously()) {
            // Shapes and values are read on the host: what this reads must be done, not issued.
            for (std::uint32_t p : schedule.waits[k])
                events[static_cast<std::size_t>(eventOf[p])]->wait(epoch);
            device->finishLane();
        }
        std::vector<TensorType> types;
        std::vector<std::shared_ptr<const TensorData>> values(instr.args.size());
        std::vector<const TensorData*> constants(instr.args.size(), nullptr);
        for (std::size_t i = 0; i < instr.args.size(); ++i) {
            const std::int32_t r = instr.args[i];
            checkOwner(r, device, offender);
            types.push_back(typeAtRun(r));
            if (reg(r).constant)
                constants[i] = graph->node(reg(r).value.node).data.get();
            else if (inputSetsShapes(node, i))
                values[i] =
                    readToHost(*device, regData[static_cast<std::size_t>(r)], types.back().bytes());
        }
        auto found = runTimeKernels[k]->find(*device, node, types, values, constants, onnxOpset);
        if (!found)
            throw KernelError(found.error().message);
        const RunTimeKernel& entry = *found.value();
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

    /// Register r's shape at the last run: what its kernel found, or the planned one.
    TensorType typeAtRun(std::int32_t r) const {
        const auto& found = ranShape[static_cast<std::size_t>(r)];
        TensorType type = reg(r).type;
        if (found)
            type.shape = *found;
        return type;
    }

    std::optional<SourceError> prepareKernel(std::size_t k) {
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

    ScheduleInput scheduleInput() const {
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

    /// The dependence graph and priorities (runtime/Schedule.h), and an event for every
    /// instruction another lane waits for.
    void buildRunSchedule() {
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

    void fail(std::string message) {
        {
            std::lock_guard lock(errorMutex);
            if (error.empty())
                error = std::move(message);
            aborted.store(true);
        }
        for (auto& set : readySets) {
            std::lock_guard lock(set->mutex);
            set->wake.notify_all();
        }
    }

    /// Makes `k` ready on its stream, waking that stream's worker if it sleeps. A copy from
    /// another rank posts its receive now: its memory is free to be written.
    /// Another rank's work is nothing to do here: it is done where it becomes ready, by the
    /// thread that readied it, and not left to its stream's thread. On a rank whose cores are
    /// busy with kernels, a thread woken for it would wait for a core for as long as the
    /// scheduler's slice (milliseconds), and a send behind it (a copy into another rank's memory
    /// follows its allocation there) with it. Chains of it are walked with a work list, not
    /// recursion: this rank sees the other ranks' whole programs.
    void makeReady(std::uint32_t k) {
        thread_local std::vector<std::uint32_t>* othersWork = nullptr;
        if (rankRole[k] == RankRole::Remote) {
            if (othersWork) {
                othersWork->push_back(k);
                return;
            }
            std::vector<std::uint32_t> work{k};
            othersWork = &work;
            while (!work.empty()) {
                const std::uint32_t r = work.back();
                work.pop_back();
                if (eventOf[r] >= 0)
                    events[static_cast<std::size_t>(eventOf[r])]->record(epoch);
                finishedElsewhere(static_cast<std::size_t>(streamOf[r]));
                for (std::uint32_t next : schedule.succs[r]) {
                    if (remaining[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                        makeReady(next);
                }
            }
            othersWork = nullptr;
            return;
        }
        if (rankRole[k] == RankRole::Send && !sendPosted[k] &&
            mapping[program.code[k].srcDevice.index]->hostAccessible()) {
            // Posted now, by the thread whose work made its source ready, so that the other
            // rank can take the bytes while this one's cores are busy; the stream's thread
            // waits for the transport to be done with them (execute).
            try {
                postSend(k);
            } catch (const std::exception& e) {
                fail(e.what());
            }
            sendPosted[k] = true;
        }
        if (rankRole[k] == RankRole::Receive) {
            postReceive(k);
            // Ready once its data (or, for a size found at run time, its shape) is here: the
            // transport's thread says so, and no worker polls for it.
            const std::shared_ptr<Transfer>& awaited =
                headerTransfers[k] ? headerTransfers[k] : transfers[k];
            if (awaited && !awaited->done()) {
                const std::uint32_t run = runNumber.load();
                awaited->whenDone([this, k, run] {
                    if (runNumber.load() == run)
                        insertReady(k);
                });
                return;
            }
        }
        insertReady(k);
    }

    /// Counts an instruction of stream `s` done where it became ready, and wakes the stream's
    /// thread when that was its last.
    void finishedElsewhere(std::size_t s) {
        ReadySet& set = *readySets[s];
        if (set.finished.fetch_add(1, std::memory_order_acq_rel) + 1 ==
            streams[s].instructions.size()) {
            std::lock_guard lock(set.mutex);
            if (set.sleeping)
                set.wake.notify_one();
        }
    }

    void insertReady(std::uint32_t k) {
        ReadySet& set = *readySets[static_cast<std::size_t>(streamOf[k])];
        std::lock_guard lock(set.mutex);
        const auto at = std::upper_bound(
            set.ready.begin(), set.ready.end(), k,
            [this](std::uint32_t a, std::uint32_t b) { return schedule.before(a, b); });
        set.ready.insert(at, k);
        set.count.store(static_cast<int>(set.ready.size()), std::memory_order_release);
        if (set.sleeping)
            set.wake.notify_one();
    }

    /// Whether `k` can run on a host worker now: every asynchronous producer it waits for is
    /// done. (An asynchronous device waits in its lanes, so anything ready can be issued.)
    /// A receive from another rank is made ready only once its data is here (makeReady).
    bool runnable(std::uint32_t k, bool asynchronous) const {
        if (asynchronous)
            return true;
        for (std::uint32_t p : schedule.waits[k]) {
            if (!events[static_cast<std::size_t>(eventOf[p])]->reached(epoch))
                return false;
        }
        return true;
    }

    static constexpr std::int64_t kAllDone = -2;

    /// The next instruction for stream `s` to run, -1 when the run was aborted, or kAllDone
    /// once every instruction of the stream was taken or done elsewhere (makeReady). Blocks
    /// while nothing is ready; polls while all that is ready waits for another device's work.
    std::int64_t take(std::size_t s, bool asynchronous) {
        constexpr double kSpinMicros = 50;
        ReadySet& set = *readySets[s];
        double spinStart = 0;
        const std::size_t all = streams[s].instructions.size();
        for (int spins = 0;; ++spins) {
            if (aborted.load(std::memory_order_relaxed))
                return -1;
            if (set.finished.load(std::memory_order_acquire) >= all)
                return kAllDone;
            if (set.count.load(std::memory_order_acquire) > 0) {
                std::unique_lock lock(set.mutex);
                for (std::size_t i = 0; i < set.ready.size(); ++i) {
                    const std::uint32_t k = set.ready[i];
                    if (runnable(k, asynchronous)) {
                        set.ready.erase(set.ready.begin() + static_cast<std::ptrdiff_t>(i));
                        set.count.store(static_cast<int>(set.ready.size()),
                                        std::memory_order_release);
                        set.finished.fetch_add(1, std::memory_order_acq_rel);
                        return k;
                    }
                }
                // Everything ready waits for a GPU (or lane) result: poll for it.
                lock.unlock();
                if (spins > 64)
                    std::this_thread::sleep_for(std::chrono::microseconds(20));
                continue;
            }
            // Nothing ready: spin for a while (another device's result is often a few tens of
            // microseconds away, and waking a sleeping thread costs as much), then sleep. The
            // spin yields: with more threads than cores, the producer it waits for may need
            // this very core.
            if ((spins & 7) != 7)
                continue;
            std::this_thread::yield();
            if (spinStart == 0)
                spinStart = hostClockMicros();
            if (hostClockMicros() - spinStart < kSpinMicros)
                continue;
            TransportWait waiting(crossTransport);
            std::unique_lock lock(set.mutex);
            set.sleeping = true;
            // Woken by work made ready; a second at most, to see receives overdue.
            set.wake.wait_for(lock, std::chrono::seconds(1), [&] {
                return !set.ready.empty() || aborted.load() ||
                       set.finished.load(std::memory_order_acquire) >= all;
            });
            set.sleeping = false;
            if (set.ready.empty() && !aborted.load()) {
                lock.unlock();
                if (const std::int64_t late = overdueReceiveOf(s); late >= 0)
                    fail(receiveOverdue(static_cast<std::size_t>(late)));
            }
            spins = 0;
            spinStart = 0;
        }
    }

    /// A receive of stream `s` waited for past rankTimeoutSeconds(), or -1.
    std::int64_t overdueReceiveOf(std::size_t s) const {
        for (std::size_t k : streams[s].instructions) {
            if (rankRole[k] != RankRole::Receive)
                continue;
            const std::shared_ptr<Transfer>& awaited =
                headerTransfers[k] ? headerTransfers[k] : transfers[k];
            if (awaited && !awaited->done() &&
                hostClockMicros() - postedAt[k] > rankTimeoutSeconds() * 1e6)
                return static_cast<std::int64_t>(k);
        }
        return -1;
    }

    /// Posts the receive of copy `k` from another rank: into its register where the host can
    /// write that memory, else into staging memory that execute() copies in.
    void postReceive(std::size_t k) {
        const Instruction& instr = program.code[k];
        transfers[k].reset();
        headerTransfers[k].reset();
        postedAt[k] = hostClockMicros();
        if (mayVary[static_cast<std::size_t>(instr.src)]) {
            // Its shape first; the bytes are received once memory for that shape is had.
            headers[k].assign(kHeaderWords, 0);
            headerTransfers[k] =
                rankTransport()->receive(rankOf(instr.srcDevice), copyTags + tagOf[k],
                                         headers[k].data(), kHeaderWords * sizeof(std::int64_t));
            return;
        }
        if (instr.bytes <= 0)
            return;
        Device* device = mapping[instr.device.index];
        void* into = regData[static_cast<std::size_t>(instr.dst)];
        if (!device->hostAccessible()) {
            staging[k].resize(static_cast<std::size_t>(instr.bytes));
            into = staging[k].data();
        }
        transfers[k] =
            rankTransport()->receive(rankOf(instr.srcDevice), tagOf[k], into, instr.bytes);
    }

    std::string describeCopy(std::size_t k) const {
        const Instruction& instr = program.code[k];
        return "the copy of " + reg(instr.src).name + " (" + formatBytes(instr.bytes) + ") from " +
               mapping[instr.srcDevice.index]->name() + " to " +
               mapping[instr.device.index]->name();
    }

    std::string receiveOverdue(std::size_t k) const {
        const int source = rankOf(program.code[k].srcDevice);
        return describeCopy(k) + ": " + describeRank(source) + " sent nothing for " +
               formatSeconds(rankTimeoutSeconds()) + " (it stopped, failed or stopped answering)";
    }

    static std::string formatSeconds(double seconds) {
        char text[32];
        std::snprintf(text, sizeof text, "%.0f s", seconds);
        return text;
    }

    /// Posts the send of copy `k` to another rank, from this rank's source register (staged
    /// through host memory where the host cannot read the source's).
    void postSend(std::size_t k) {
        const Instruction& instr = program.code[k];
        postedAt[k] = hostClockMicros();
        transfers[k].reset();
        headerTransfers[k].reset();
        const int peer = rankOf(instr.device);
        std::int64_t bytes = instr.bytes;
        if (mayVary[static_cast<std::size_t>(instr.src)]) {
            // The shape it has at this run first, then that many bytes.
            const TensorType type = shapeAtRun[static_cast<std::size_t>(instr.src)]
                                        ? typeAtRun(instr.src)
                                        : reg(instr.src).type;
            if (type.shape.size() + 1 > kHeaderWords)
                throw KernelError(describeCopy(k) + ": rank " + std::to_string(type.shape.size()) +
                                  " is more than a copy between ranks carries");
            headers[k].assign(kHeaderWords, 0);
            headers[k][0] = type.rank();
            std::copy(type.shape.begin(), type.shape.end(), headers[k].begin() + 1);
            headerTransfers[k] = rankTransport()->send(peer, copyTags + tagOf[k], headers[k].data(),
                                                       kHeaderWords * sizeof(std::int64_t));
            bytes = type.bytes();
        }
        if (bytes > 0) {
            Device* source = mapping[instr.srcDevice.index];
            checkOwner(instr.src, source, describeCopy(k));
            const std::byte* from = regData[static_cast<std::size_t>(instr.src)];
            if (!source->hostAccessible()) {
                staging[k].resize(static_cast<std::size_t>(bytes));
                source->copyOut(staging[k].data(), from, bytes);
                from = staging[k].data();
            }
            transfers[k] = rankTransport()->send(peer, tagOf[k], from, bytes);
        }
    }

    /// The send of copy `k` (posted here unless makeReady did): returns once the transport is
    /// done with the source's memory. Runs on the destination's stream, a worker of its own.
    void sendToRank(std::size_t k) {
        if (!sendPosted[k])
            postSend(k);
        const int peer = rankOf(program.code[k].device);
        for (const std::shared_ptr<Transfer>& sent : {headerTransfers[k], transfers[k]}) {
            if (!sent)
                continue;
            TransportWait waiting(sent->done() ? nullptr : crossTransport);
            if (!sent->wait(rankTimeoutSeconds()))
                throw KernelError(describeCopy(k) + ": " + describeRank(peer) +
                                  " took nothing for " + formatSeconds(rankTimeoutSeconds()) +
                                  " (it stopped, failed or stopped answering)");
            if (sent->failed())
                throw KernelError(describeCopy(k) + ": " + sent->error());
        }
    }

    /// The bytes of copy `k` from another rank, whose shape came first (postReceive): memory for
    /// that shape, then the bytes, waited for here.
    void receiveFoundSize(std::size_t k, Device* device) {
        const Instruction& instr = program.code[k];
        if (headerTransfers[k]->failed())
            throw KernelError(describeCopy(k) + ": " + headerTransfers[k]->error());
        const std::vector<std::int64_t>& header = headers[k];
        const std::int64_t rank = header[0];
        TensorType type = reg(instr.dst).type;
        if (rank < 0 || static_cast<std::size_t>(rank) + 1 > kHeaderWords)
            throw KernelError(describeCopy(k) + ": the sender's shape has rank " +
                              std::to_string(rank));
        type.shape.assign(header.begin() + 1, header.begin() + 1 + rank);
        for (std::int64_t extent : type.shape) {
            if (extent < 0)
                throw KernelError(describeCopy(k) + ": the sender's shape has a negative extent");
        }
        const std::int64_t bytes = type.bytes();
        memoryAtRun(instr.dst, type, device);
        ranShape[static_cast<std::size_t>(instr.dst)] = type.shape;
        if (bytes <= 0)
            return;
        void* into = regData[static_cast<std::size_t>(instr.dst)];
        if (!device->hostAccessible()) {
            staging[k].resize(static_cast<std::size_t>(bytes));
            into = staging[k].data();
        }
        const int source = rankOf(instr.srcDevice);
        transfers[k] = rankTransport()->receive(source, tagOf[k], into, bytes);
        TransportWait waiting(crossTransport);
        if (!transfers[k]->wait(rankTimeoutSeconds()))
            throw KernelError(receiveOverdue(k));
        if (transfers[k]->failed())
            throw KernelError(describeCopy(k) + ": " + transfers[k]->error());
        if (!staging[k].empty())
            device->copyIn(regData[static_cast<std::size_t>(instr.dst)], staging[k].data(), bytes);
    }

    std::string ownerName(std::int32_t r) const {
        Device* owner = regOwner[static_cast<std::size_t>(r)];
        return owner ? owner->name() : std::string("no device (not allocated)");
    }

    /// Throws when register r is not in `device`'s memory.
    void checkOwner(std::int32_t r, const Device* device, const std::string& offender) const {
        if (regOwner[static_cast<std::size_t>(r)] == device)
            return;
        throw KernelError("tensor " + reg(r).name + " is owned by " + ownerName(r) + " but " +
                          offender + " on " + device->name() + " used it without a device copy");
    }

    void execute(std::size_t k, Stream& stream) {
        const Instruction& instr = program.code[k];
        Device* device = stream.device;
        switch (rankRole[k]) {
        case RankRole::Remote:
            return; // another rank's
        case RankRole::Send:
            sendToRank(k);
            return;
        case RankRole::Receive:
            if (headerTransfers[k]) {
                receiveFoundSize(k, device);
                return;
            }
            if (transfers[k] && transfers[k]->failed())
                throw KernelError(describeCopy(k) + ": " + transfers[k]->error());
            checkOwner(instr.dst, device, describeCopy(k));
            if (!staging[k].empty())
                device->copyIn(regData[static_cast<std::size_t>(instr.dst)], staging[k].data(),
                               instr.bytes);
            return;
        case RankRole::Local:
            break;
        }
        switch (instr.op) {
        case Opcode::AllocTensor: {
            stream.live += instr.bytes;
            stream.livePeak = std::max(stream.livePeak, stream.live);
            break;
        }
        case Opcode::Free:
            stream.live -= instr.bytes;
            // A host device has run every reader by now; a GPU's readers may still be queued,
            // so its buffers wait for the next run or the end.
            if (!device->timesAsynchronously())
                releaseRunBuffer(instr.dst);
            break;
        case Opcode::LoadInput: {
            const HostTensor& input = (*inputs)[static_cast<std::size_t>(instr.index)];
            if (instr.bytes > 0)
                device->copyIn(regData[static_cast<std::size_t>(instr.dst)], input.data.data(),
                               instr.bytes);
            break;
        }
        case Opcode::Invoke: {
            const Node& node = graph->node(instr.node);
            const std::string offender = node.op->name + " '" + node.name + "'";
            if (runTimeKernels[k]) {
                invokeAtRunTime(k, device, offender);
                break;
            }
            if (runTimeBodies[k]) {
                controlFlowAtRunTime(k, device, offender);
                break;
            }
            auto& args = argPointers[k];
            auto& results = resultPointers[k];
            for (std::size_t i = 0; i < instr.args.size(); ++i) {
                checkOwner(instr.args[i], device, offender);
                args[i] = regData[static_cast<std::size_t>(instr.args[i])];
            }
            for (std::size_t i = 0; i < instr.results.size(); ++i) {
                checkOwner(instr.results[i], device, offender);
                results[i] = regData[static_cast<std::size_t>(instr.results[i])];
            }
            kernels[k]->run(args.data(), results.data());
            if (const auto* shapes = kernels[k]->ranShapes()) {
                // What a kernel found is known once it ran: on a device with lanes, after its
                // lane's work is done.
                if (device->timesAsynchronously())
                    device->finishLane();
                for (std::size_t i = 0; i < instr.results.size() && i < shapes->size(); ++i)
                    ranShape[static_cast<std::size_t>(instr.results[i])] = (*shapes)[i];
            }
            break;
        }
        case Opcode::DeviceCopy: {
            Device* source = mapping[instr.srcDevice.index];
            const std::string offender = "the copy to " + reg(instr.dst).name;
            checkOwner(instr.src, source, offender + " (reading from " + source->name() + ")");
            std::int64_t bytes = instr.bytes;
            if (shapeAtRun[static_cast<std::size_t>(instr.src)]) {
                // As much as the source holds at this run, into memory that holds it.
                const TensorType type = typeAtRun(instr.src);
                bytes = type.bytes();
                memoryAtRun(instr.dst, type, device);
                ranShape[static_cast<std::size_t>(instr.dst)] =
                    ranShape[static_cast<std::size_t>(instr.src)];
            }
            checkOwner(instr.dst, device, offender);
            if (bytes > 0)
                device->copyPeer(regData[static_cast<std::size_t>(instr.dst)], *source,
                                 regData[static_cast<std::size_t>(instr.src)], bytes);
            break;
        }
        default:
            break;
        }
    }

    void runStream(std::size_t s) {
        Stream& stream = streams[s];
        Device* device = stream.device;
        const bool async = device->timesAsynchronously();
        const bool laned = device->laneCount() > 1;
        stream.live = 0;
        if (async)
            device->resetMarks();
        // On an asynchronous device `start` and `end` hold marker ids until finishStream.
        auto stamp = [&] { return async ? static_cast<double>(device->mark()) : device->now(); };
        for (;;) {
            const std::int64_t taken = take(s, async);
            if (taken == kAllDone)
                return;
            if (taken < 0)
                return; // aborted: what was issued records its events, nothing else is issued
            const auto k = static_cast<std::size_t>(taken);
            const int lane = laneOf[k];
            if (laned && lane >= 0)
                device->setLane(lane);
            try {
                for (std::uint32_t p : schedule.waits[k])
                    device->waitFor(*events[static_cast<std::size_t>(eventOf[p])], epoch);
            } catch (const std::exception& e) {
                fail(e.what());
            }
            if (!aborted.load(std::memory_order_relaxed)) {
                const Opcode op = program.code[k].op;
                // A copy between ranks is timed by its sender, from the post to the transport's
                // end; another rank's work by that rank.
                const bool timed =
                    (rankRole[k] == RankRole::Local || rankRole[k] == RankRole::Send) &&
                    (op == Opcode::Invoke || op == Opcode::DeviceCopy || op == Opcode::LoadInput);
                // A send posted where it became ready is timed from its post.
                const double start = !timed                                           ? 0
                                     : rankRole[k] == RankRole::Send && sendPosted[k] ? postedAt[k]
                                                                                      : stamp();
                try {
                    execute(k, stream);
                } catch (const std::exception& e) {
                    fail(e.what());
                }
                if (timed) {
                    const double end = stamp();
                    stream.timed.push_back(
                        TimedEvent{k, static_cast<int>(s), start, end, std::max(0, lane)});
                } else if (tracing && rankRole[k] == RankRole::Local &&
                           (op == Opcode::AllocTensor || op == Opcode::Free)) {
                    stream.memory.push_back(
                        MemorySample{static_cast<int>(s), stamp(), stream.live});
                }
            }
            if (eventOf[k] >= 0)
                events[static_cast<std::size_t>(eventOf[k])]->record(epoch);
            for (std::uint32_t next : schedule.succs[k]) {
                if (remaining[next].fetch_sub(1, std::memory_order_acq_rel) == 1)
                    makeReady(next);
            }
        }
    }

    /// Starts a run: every instruction's count of dependencies, and the ones with none ready.
    void startRun() {
        for (auto& set : readySets) {
            set->ready.clear();
            set->count.store(0);
            set->finished.store(0);
        }
        std::fill(sendPosted.begin(), sendPosted.end(), 0);
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            if (streamOf[k] < 0)
                continue;
            remaining[k].store(static_cast<int>(schedule.deps[k].size()),
                               std::memory_order_relaxed);
        }
        for (std::size_t k = program.runStart; k < program.code.size(); ++k) {
            if (streamOf[k] >= 0 && schedule.deps[k].empty())
                makeReady(static_cast<std::uint32_t>(k));
        }
    }

    /// The traced iteration's idle stretches: the gaps between each stream's work (its lanes
    /// together), each named by the latest-ending dependency of the work after it.
    std::vector<IdleStretch> idleStretches(double runStart, double runEnd) const {
        const std::size_t n = program.code.size();
        std::vector<double> endOf(n, -1);
        for (const Stream& stream : streams)
            for (const TimedEvent& event : stream.timed)
                endOf[event.instruction] = event.end;
        // The timed work k waited for: its dependencies, through untimed bookkeeping.
        auto latestProducer = [&](std::size_t k) {
            std::int64_t best = -1;
            std::vector<std::uint32_t> stack(schedule.deps[k].begin(), schedule.deps[k].end());
            std::vector<std::uint32_t> seen;
            while (!stack.empty()) {
                const std::uint32_t d = stack.back();
                stack.pop_back();
                if (std::find(seen.begin(), seen.end(), d) != seen.end())
                    continue;
                seen.push_back(d);
                if (endOf[d] >= 0) {
                    if (best < 0 || endOf[d] > endOf[static_cast<std::size_t>(best)])
                        best = d;
                } else {
                    stack.insert(stack.end(), schedule.deps[d].begin(), schedule.deps[d].end());
                }
            }
            return best;
        };
        std::vector<IdleStretch> idle;
        for (std::size_t s = 0; s < streams.size(); ++s) {
            std::vector<TimedEvent> timed = streams[s].timed;
            if (timed.empty())
                continue;
            std::sort(timed.begin(), timed.end(),
                      [](const TimedEvent& a, const TimedEvent& b) { return a.start < b.start; });
            double busyUntil = runStart;
            for (const TimedEvent& event : timed) {
                if (event.start - busyUntil >= kMinIdleMicros)
                    idle.push_back(IdleStretch{static_cast<int>(s), busyUntil, event.start,
                                               latestProducer(event.instruction)});
                busyUntil = std::max(busyUntil, event.end);
            }
            if (runEnd - busyUntil >= kMinIdleMicros)
                idle.push_back(IdleStretch{static_cast<int>(s), busyUntil, runEnd, -1});
        }
        return idle;
    }

    /// After the device synchronized: marker ids become times, and the stream's busy time is
    /// the union of its timed intervals (lanes overlap).
    void finishStream(Stream& stream) {
        Device* device = stream.device;
        if (device->timesAsynchronously()) {
            for (TimedEvent& event : stream.timed) {
                event.start = device->markTime(static_cast<int>(event.start));
                event.end = device->markTime(static_cast<int>(event.end));
            }
            for (MemorySample& sample : stream.memory)
                sample.time = device->markTime(static_cast<int>(sample.time));
        }
        std::vector<std::pair<double, double>> intervals;
        intervals.reserve(stream.timed.size());
        for (const TimedEvent& event : stream.timed)
            intervals.emplace_back(event.start, event.end);
        std::sort(intervals.begin(), intervals.end());
        stream.busy = 0;
        double coveredUntil = -1e300;
        for (const auto& [start, end] : intervals) {
            const double from = std::max(start, coveredUntil);
            if (end > from)
                stream.busy += end - from;
            coveredUntil = std::max(coveredUntil, end);
        }
    }
};

Executor::Executor() : m_impl(std::make_unique<Impl>()) {}
Executor::~Executor() = default;

Result<std::unique_ptr<Executor>> Executor::load(const Graph& graph, const DeviceSet& devices,
                                                 Program program, std::vector<Device*> mapping,
                                                 int onnxOpset, const LoadProgress& progress) {
    if (static_cast<int>(mapping.size()) != devices.size())
        return SourceError{"", 0, 0, "every virtual device needs a physical device"};
    std::unique_ptr<Executor> executor(new Executor());
    Impl& impl = *executor->m_impl;
    impl.graph = &graph;
    impl.devices = &devices;
    impl.program = std::move(program);
    impl.mapping = std::move(mapping);
    impl.onnxOpset = onnxOpset;
    impl.progress = &progress;
    // Nothing is allocated before the whole program is known to fit, host copies included.
    if (Status status = checkMemoryFits(impl.program, devices, impl.mapping,
                                        hostInputOutputBytes(impl.program), &graph, onnxOpset);
        !status.ok())
        return status.error();
    auto error = impl.loadAll();
    impl.progress = nullptr;
    if (error)
        return *error;
    return executor;
}

const Program& Executor::program() const {
    return m_impl->program;
}

const Schedule& Executor::schedule() const {
    return m_impl->schedule;
}

int Executor::streamOf(std::size_t instruction) const {
    return m_impl->streamOf[instruction];
}

std::string Executor::implementation(std::size_t instruction) const {
    if (const auto& atRun = m_impl->runTimeKernels[instruction])
        return atRun->implementation();
    if (m_impl->runTimeBodies[instruction])
        return "run-time:control flow, node by node";
    const auto& kernel = m_impl->kernels[instruction];
    return kernel ? kernel->implementation() : std::string();
}

Result<RunResult> Executor::run(const std::vector<HostTensor>& inputs, const RunOptions& options) {
    Impl& impl = *m_impl;
    const Program& program = impl.program;
    if (inputs.size() != program.inputs.size())
        return SourceError{"", 0, 0,
                           "the program takes " + std::to_string(program.inputs.size()) +
                               " inputs, not " + std::to_string(inputs.size())};
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Node& node = impl.graph->node(program.inputs[i]);
        if (inputs[i].type != node.outputs[0] ||
            static_cast<std::int64_t>(inputs[i].data.size()) != node.outputs[0].bytes())
            return SourceError{"", 0, 0,
                               "input '" + node.name + "' must be " +
                                   node.outputs[0].toShortString() + ", not " +
                                   inputs[i].type.toShortString()};
    }
    impl.inputs = &inputs;
    RunResult result;
    result.instrMicros.resize(program.code.size());
    for (Impl::Stream& stream : impl.streams) {
        stream.device->resetPeak();
        StreamInfo info;
        info.physical = stream.device->name();
        info.rank = stream.device->remoteRank() >= 0 ? stream.device->remoteRank() : localRank();
        info.virtuals = stream.virtuals;
        info.constantUploads = stream.constantUploads;
        result.streams.push_back(std::move(info));
    }
    const int total = std::max(0, options.warmup) + std::max(1, options.iterations);
    int completed = 0;
    RankTransport* ranks = options.acrossRanks ? rankTransport() : nullptr;
    for (int iteration = 0; iteration < total; ++iteration) {
        bool cancelled = options.cancelled && options.cancelled();
        if (ranks && ranks->size() > 1) {
            // The ranks start together (so that a copy between them measures the copy, not one
            // rank waiting for the other's previous iteration) and stop together.
            auto all = ranks->allGather(cancelled ? "cancel" : "");
            if (!all)
                return all.error();
            for (const std::string& said : all.value())
                cancelled = cancelled || !said.empty();
        }
        if (cancelled) {
            result.cancelled = true;
            break;
        }
        if (iteration > 0 && options.progress)
            options.progress(iteration, total);
        ++completed;
        const bool measured = iteration >= options.warmup;
        const bool last = iteration == total - 1;
        ++impl.epoch;
        impl.runNumber.store(impl.epoch);
        impl.tracing = last;
        for (Impl::Stream& stream : impl.streams) {
            stream.timed.clear();
            stream.memory.clear();
        }
        impl.startRun();
        const double start = hostClockMicros();
        for (std::size_t s = 0; s < impl.streams.size(); ++s) {
            if (!impl.streams[s].instructions.empty())
                impl.streams[s].device->enqueue([&impl, s] { impl.runStream(s); });
        }
        for (Impl::Stream& stream : impl.streams)
            stream.device->synchronize();
        const double end = hostClockMicros();
        for (Impl::Stream& stream : impl.streams) {
            // Times first: a device whose timing failed says so in its asynchronous error.
            impl.finishStream(stream);
            std::string asyncError = stream.device->takeAsyncError();
            if (!asyncError.empty())
                impl.fail(std::move(asyncError));
        }
        // Weights read in place from a file that was cut short (the pages past its end read as
        // zeros, io/MappedFile.h) or rewritten during the run: the run's results are not the
        // model's.
        for (const MappedPages* file : impl.readInPlace) {
            if (std::string why = file->changedOnDisk(); !why.empty())
                impl.fail("the run read weights in place: " + why);
        }
        if (impl.aborted.load()) {
            impl.aborted.store(false);
            std::string message;
            std::swap(message, impl.error);
            return SourceError{"", 0, 0, message};
        }
        if (!measured)
            continue;
        const int measuredIteration = static_cast<int>(result.latencyMicros.size());
        result.latencyMicros.push_back(end - start);
        for (std::size_t r = 0; r < impl.ranShape.size(); ++r) {
            if (!impl.ranShape[r])
                continue;
            auto& seen = result.ranShapes[static_cast<std::int32_t>(r)];
            if (seen.empty() || seen.back().shape != *impl.ranShape[r])
                seen.push_back(RunResult::RanShape{measuredIteration, *impl.ranShape[r]});
        }
        for (std::size_t s = 0; s < impl.streams.size(); ++s) {
            Impl::Stream& stream = impl.streams[s];
            result.streams[s].busyMicros.push_back(stream.busy);
            result.streams[s].livePeakBytes =
                std::max(result.streams[s].livePeakBytes, stream.livePeak);
            for (const TimedEvent& event : stream.timed)
                result.instrMicros[event.instruction].push_back(event.end - event.start);
            if (last) {
                result.trace.insert(result.trace.end(), stream.timed.begin(), stream.timed.end());
                result.memory.insert(result.memory.end(), stream.memory.begin(),
                                     stream.memory.end());
            }
        }
        if (last) {
            result.traceOrigin = start;
            result.traceEnd = end;
            result.idle = impl.idleStretches(start, end);
        }
    }
    for (std::size_t s = 0; s < impl.streams.size(); ++s)
        result.streams[s].peakBytes = impl.streams[s].device->peakBytes();
    if (options.progress && !result.cancelled)
        options.progress(total, total);
    // The results, copied out to the host.
    const Instruction& ret = program.code.back();
    for (std::int32_t r : ret.args) {
        if (completed == 0)
            break; // cancelled before anything ran
        // Another rank's result comes from that rank (the session gathers it).
        const int holder = impl.rankOf(impl.reg(r).device);
        result.outputRanks.push_back(holder);
        if (holder != localRank()) {
            result.outputs.push_back(HostTensor{impl.reg(r).type, {}});
            continue;
        }
        // A data-dependent result fills a prefix of its planned storage.
        const TensorType type = impl.typeAtRun(r);
        HostTensor out = HostTensor::zeros(type);
        Device* owner = impl.regOwner[static_cast<std::size_t>(r)];
        const std::byte* src = impl.regData[static_cast<std::size_t>(r)];
        if (owner && src && !out.data.empty()) {
            std::string error;
            owner->enqueue([owner, &out, src, &error] {
                try {
                    owner->copyOut(out.data.data(), src,
                                   static_cast<std::int64_t>(out.data.size()));
                } catch (const std::exception& e) {
                    error = e.what();
                }
            });
            owner->synchronize();
            if (!error.empty())
                return SourceError{"", 0, 0, "copying the results out: " + error};
        }
        result.outputs.push_back(std::move(out));
    }
    std::sort(result.trace.begin(), result.trace.end(),
              [](const TimedEvent& a, const TimedEvent& b) { return a.start < b.start; });
    return result;
}

} // namespace placer
