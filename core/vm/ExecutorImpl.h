// The executor's state, shared by the files that do its jobs (vm/Executor.h for what it does):
//   ExecutorLoad.cpp      storages, constants, kernels and the schedule, once per load;
//   ExecutorDispatch.cpp  a run: each device's worker takes ready work and readies what follows;
//   ExecutorRanks.cpp     the roles of ranks and the messages of copies between them;
//   ExecutorRunTime.cpp   shapes found at run time: memory, kernels and control flow then;
//   Executor.cpp          the public interface: load() and run().
// Private to core/vm.
#pragma once

#include "vm/Executor.h"

#include "device/Ranks.h"
#include "vm/ConstantCache.h"
#include "vm/RunTimeBodies.h"
#include "vm/RunTimeShapes.h"
#include "vm/Schedule.h"

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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
        /// At this iteration (RunOptions::faults): non-empty, every kernel fails so, as its
        /// device would; above 1, each kernel takes that many times as long.
        std::string failing;
        DeviceFailure::Kind failingKind = DeviceFailure::Kind::Error;
        double slowdown = 1;
        /// This iteration: how long it had ready work and ran nothing (its worker woken late,
        /// or its core taken by another process), and when its last work ended.
        double stalled = 0;
        double lastEnd = 0;
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
    /// Per instruction, this run: when it became ready (host clock, µs); and when the run began.
    std::vector<double> readyAt;
    double runStartedAt = 0;
    std::vector<int> laneOf;  ///< per instruction: its lane on the device, or -1
    std::vector<int> eventOf; ///< per instruction: the event it records, or -1
    std::vector<std::unique_ptr<Event>> events;
    std::vector<std::unique_ptr<Kernel>> kernels; ///< per instruction (Invoke only)
    std::vector<std::byte*> storages;
    std::vector<Device*> storageOwner;
    std::vector<const char*> borrowed; ///< per storage: the constant bytes it points at, or null
    /// The program runs at any sizes of its inputs' named dimensions (Executor::load).
    bool sizesAtRun = false;
    /// Per program input: its shape is the run's (an input with named dimensions, sizesAtRun).
    std::vector<bool> inputSized;
    /// Per register: a constant folded from the sizes (Node::symbolicData), evaluated at each
    /// run's sizes into `sizedConstants`, which its readers read instead of the graph's bytes.
    std::vector<bool> valuesAtRun;
    std::vector<std::shared_ptr<const TensorData>> sizedConstants;
    /// The sizes of this run (the graph's, overlaid with RunOptions::sizes).
    SymbolValues runSizes;
    /// Evaluates the constants folded from the sizes at `sizes` (a run of sizesAtRun).
    std::optional<SourceError> evaluateSizedConstants(const SymbolValues& sizes);
    /// The bytes a reader of constant register r reads at this run: the graph's, or their
    /// value at the run's sizes.
    const TensorData* constantData(std::int32_t r) const;
    /// Constants kept on their devices across loads (vm/ConstantCache.h), or null; per
    /// LoadConst: the cached constant it binds, and whether it is written already (no upload).
    std::shared_ptr<ConstantCache> constantCache;
    std::vector<std::shared_ptr<CachedConstant>> cachedAt;
    std::vector<std::uint8_t> cachedWritten;
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
    /// Per Invoke prepared at run time, on a device whose memory the host reads: the signature
    /// of its last run (its inputs' types and the values that set shapes, as numbers) and the
    /// kernel found for it, so that a run at the sizes of the last one (every op of a decoder
    /// whose shapes do not follow the cache) finds it without naming the signature again.
    struct LastSignature {
        std::vector<std::int64_t> key;
        const RunTimeKernel* entry = nullptr;
    };
    std::vector<LastSignature> lastSignature;
    /// Writes instruction k's signature into `key`; false where a value it reads is not in host
    /// memory (the named signature is found then).
    bool quickSignature(std::size_t k, const Device& device, std::vector<std::int64_t>& key) const;
    std::vector<std::vector<const std::byte*>> argPointers; ///< per Invoke, reused
    std::vector<std::vector<std::byte*>> resultPointers;

    std::uint32_t epoch = 0;
    /// The run in progress, for the transport's thread: a receive finishing after its run was
    /// abandoned makes nothing ready in the next.
    std::atomic<std::uint32_t> runNumber{0};
    std::atomic<bool> aborted{false};
    std::mutex errorMutex;
    std::string error;
    /// The stream whose device failed and aborted the run (a DeviceFailure), or -1, and how.
    int faultStream = -1;
    DeviceFailure::Kind faultKind = DeviceFailure::Kind::Error;
    const std::vector<HostTensor>* inputs = nullptr;
    bool tracing = false;

    /// Per instruction, what this rank does with it when the run spans ranks (device/Ranks.h):
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

    ~Impl();

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

    std::optional<SourceError> loadAll();

    /// The rank whose device runs instructions of virtual device `d`.
    int rankOf(DeviceId d) const;

    /// Which instructions are this rank's, and the copies between ranks, numbered alike on every
    /// rank (every rank lowers the same program).
    void assignRankRoles();

    /// Copies between ranks stay within the transport's tags.
    std::optional<SourceError> checkCopiesBetweenRanks() const;

    /// Constants that their device uses where they lie (bindsHostConstants): the storage that
    /// holds nothing else is not allocated but points at the constant's bytes. Those must be
    /// aligned for their element type; a constant that is not is copied as elsewhere.
    void findBorrowedConstants();

    /// Per storage, how many registers it holds; per register, its storage (or -1).
    void storageUsers(std::vector<int>* users, std::vector<std::int32_t>* storageOf) const;

    /// Constants the cache holds (or is to hold) on a device that does not use them where they
    /// lie, or uses them packed: their storages are the cache's memory, written once.
    std::optional<SourceError> findCachedConstants();

    /// Every host storage that a copy moves to or from a device the host cannot address (a GPU)
    /// is offered to that device to pin, once per pair.
    void pinCopiedStorages();

    std::optional<SourceError> loadInstruction(std::size_t k, Device* device);

    void bind(const Instruction& instr);

    /// Prepares the kernel of every Invoke whose shapes are known at load, and marks the
    /// registers whose shapes are found at run time: the outputs of a kernel that finds its
    /// extent (NonZero), the outputs the model sizes from values it computes, and their copies.
    /// An Invoke reading such a register, or writing one that no kernel bounds, is prepared at
    /// run time instead (vm/RunTimeShapes.h).
    std::optional<SourceError> prepareKernels();
    /// For sizesAtRun: the inputs whose shapes the run brings, and the constants folded from
    /// the sizes; an error where the program cannot run so (a device not in host memory).
    std::optional<SourceError> markSizedRegisters();

    /// Memory for register r, whose shape at this run is `type`, on `device`: its planned
    /// storage where that holds it, else a buffer of its own. Throws when the device cannot
    /// give it, naming the tensor, its size and the device.
    std::byte* memoryAtRun(std::int32_t r, const TensorType& type, Device* device);

    /// Gives register r's run buffer back to its device once r is dead.
    void releaseRunBuffer(std::int32_t r);

    /// An If or Loop whose bodies run node by node (vm/RunTimeBodies.h): its results are
    /// copied into the memory their registers get for the shapes they have.
    void controlFlowAtRunTime(std::size_t k, Device* device, const std::string& offender);

    /// An Invoke prepared at run time: its inputs' shapes as they are now, the values of the
    /// inputs that set shapes read on the host, the kernel for that signature, and its outputs
    /// placed where they fit.
    void invokeAtRunTime(std::size_t k, Device* device, const std::string& offender);
    /// Runs instruction k's kernel found for this run's signature: its results' memory found
    /// (grown where a shape outgrows its storage), and the shapes the kernel found kept.
    void runFound(std::size_t k, const RunTimeKernel& entry, Device* device,
                  const std::string& offender);

    /// Register r's shape at the last run: what its kernel found, or the planned one.
    TensorType typeAtRun(std::int32_t r) const;

    std::optional<SourceError> prepareKernel(std::size_t k);

    ScheduleInput scheduleInput() const;

    /// The dependence graph and priorities (vm/Schedule.h), and an event for every
    /// instruction another lane waits for.
    void buildRunSchedule();

    void fail(std::string message);
    /// The run fails because stream `s`'s device did (kernels/Kernel.h DeviceFailure).
    void failDevice(std::size_t s, const DeviceFailure& failure);
    /// Sets each stream's injected failure or slowdown for the measured iteration `number`
    /// (RunOptions::faults), where the fault names its device or one of its virtual devices.
    void injectFaults(const std::vector<InjectedFault>& faults, int number);

    /// Makes `k` ready on its stream, waking that stream's worker if it sleeps. A copy from
    /// another rank posts its receive now: its memory is free to be written.
    /// Another rank's work is nothing to do here: it is done where it becomes ready, by the
    /// thread that readied it, and not left to its stream's thread. On a rank whose cores are
    /// busy with kernels, a thread woken for it would wait for a core for as long as the
    /// scheduler's slice (milliseconds), and a send behind it (a copy into another rank's memory
    /// follows its allocation there) with it. Chains of it are walked with a work list, not
    /// recursion: this rank sees the other ranks' whole programs.
    void makeReady(std::uint32_t k);

    /// Counts an instruction of stream `s` done where it became ready, and wakes the stream's
    /// thread when that was its last.
    void finishedElsewhere(std::size_t s);

    void insertReady(std::uint32_t k);

    /// Whether `k` can run on a host worker now: every asynchronous producer it waits for is
    /// done. (An asynchronous device waits in its lanes, so anything ready can be issued.)
    /// A receive from another rank is made ready only once its data is here (makeReady).
    bool runnable(std::uint32_t k, bool asynchronous) const;

    static constexpr std::int64_t kAllDone = -2;

    /// The next instruction for stream `s` to run, -1 when the run was aborted, or kAllDone
    /// once every instruction of the stream was taken or done elsewhere (makeReady). Blocks
    /// while nothing is ready; polls while all that is ready waits for another device's work.
    std::int64_t take(std::size_t s, bool asynchronous);

    /// A receive of stream `s` waited for past rankTimeoutSeconds(), or -1.
    std::int64_t overdueReceiveOf(std::size_t s) const;

    /// Posts the receive of copy `k` from another rank: into its register where the host can
    /// write that memory, else into staging memory that execute() copies in.
    void postReceive(std::size_t k);

    std::string describeCopy(std::size_t k) const;

    std::string receiveOverdue(std::size_t k) const;

    static std::string formatSeconds(double seconds);

    /// Posts the send of copy `k` to another rank, from this rank's source register (staged
    /// through host memory where the host cannot read the source's).
    void postSend(std::size_t k);

    /// The send of copy `k` (posted here unless makeReady did): returns once the transport is
    /// done with the source's memory. Runs on the destination's stream, a worker of its own.
    void sendToRank(std::size_t k);

    /// The bytes of copy `k` from another rank, whose shape came first (postReceive): memory for
    /// that shape, then the bytes, waited for here.
    void receiveFoundSize(std::size_t k, Device* device);

    std::string ownerName(std::int32_t r) const;

    /// Throws when register r is not in `device`'s memory.
    void checkOwner(std::int32_t r, const Device* device, const std::string& offender) const;

    void execute(std::size_t k, Stream& stream);

    void runStream(std::size_t s);

    /// Starts a run: every instruction's count of dependencies, and the ones with none ready.
    void startRun();

    /// The traced iteration's idle stretches: the gaps between each stream's work (its lanes
    /// together), each named by the latest-ending dependency of the work after it.
    std::vector<IdleStretch> idleStretches(double runStart, double runEnd) const;

    /// After the device synchronized: marker ids become times, and the stream's busy time is
    /// the union of its timed intervals (lanes overlap).
    void finishStream(Stream& stream);
};

} // namespace placer
