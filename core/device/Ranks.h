// Runs over several processes, as `mpirun -np N placer run` starts them: which rank this process
// is, the transport that carries every byte between ranks (MPI: backends/mpi/MpiTransport.h; core
// never names it), and the devices of other ranks as this rank sees them. A physical device may
// name its rank ("rank1/vcpu1", "rank1/cuda:0"); without one it is rank 0's. Every rank reads,
// plans and lowers the same program, runs the instructions of its own devices, and turns each copy
// between ranks into a send on the source's rank and a receive on the destination's
// (TensorFlow's Send/Recv pairs, keyed by the copy and the run).
#pragma once

#include "device/Device.h"
#include "ir/Result.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace placer {

/// One message between ranks, posted to the transport and finished by its communication thread.
class Transfer {
public:
    bool done() const { return m_state.load(std::memory_order_acquire) != kPending; }
    bool failed() const { return m_state.load(std::memory_order_acquire) == kFailed; }
    /// Why it failed (after done()).
    std::string error() const;
    /// Waits until it is done or `seconds` passed; false on the deadline.
    bool wait(double seconds) const;
    /// Calls `then` once the transfer is done: at once when it is, else from the transport's
    /// thread when it finishes or fails (so it must be quick and must not wait).
    void whenDone(std::function<void()> then);
    /// The transport's side.
    void finish();
    void fail(std::string why);

private:
    static constexpr int kPending = 0, kDone = 1, kFailed = 2;
    std::atomic<int> m_state{kPending};
    mutable std::mutex m_mutex;
    mutable std::condition_variable m_changed;
    std::string m_error;
    std::function<void()> m_then;
};

/// What carries bytes between the ranks of one run. Every call but send() and receive() is
/// collective: every rank makes it, in the same order.
class RankTransport {
public:
    virtual ~RankTransport() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    /// The host each rank runs on (gathered at start).
    virtual const std::string& hostName(int rank) const = 0;
    /// Non-blocking: `data` must stay as it is until the transfer is done. Messages between two
    /// ranks with one tag arrive in the order they were sent.
    virtual std::shared_ptr<Transfer> send(int peer, int tag, const void* data,
                                           std::int64_t bytes) = 0;
    /// Non-blocking: `data` (room for exactly `bytes`) is written until the transfer is done.
    virtual std::shared_ptr<Transfer> receive(int peer, int tag, void* data,
                                              std::int64_t bytes) = 0;
    /// Every rank's `mine`, in rank order.
    virtual Result<std::vector<std::string>> allGather(const std::string& mine) = 0;
    /// The largest tag send() and receive() take.
    virtual int maxTag() const = 0;
    /// A worker of this rank starts (or ends) waiting with nothing to run: for a transfer, or
    /// for work another one makes ready, often a receive. A transport that polls may poll
    /// slowly while every worker has work (its polls take cores from kernels), and must poll
    /// at once and often while any waits (its cores are free, and the wait is for the bytes).
    virtual void workerWaits() {}
    virtual void workerWaitEnds() {}
};

/// A worker's wait (RankTransport::workerWaits) for the scope's length; nothing without a
/// transport.
class TransportWait {
public:
    explicit TransportWait(RankTransport* transport) : m_transport(transport) {
        if (m_transport)
            m_transport->workerWaits();
    }
    ~TransportWait() {
        if (m_transport)
            m_transport->workerWaitEnds();
    }
    TransportWait(const TransportWait&) = delete;
    TransportWait& operator=(const TransportWait&) = delete;

private:
    RankTransport* m_transport;
};

/// The transport of this process's run, or null when it runs alone (rank 0 of 1).
void setRankTransport(std::shared_ptr<RankTransport> transport);
RankTransport* rankTransport();
int localRank();
int rankCount();
/// "rank 1 (host node2)".
std::string describeRank(int rank);
/// How long a wait for another rank may last before the run fails naming it:
/// PLACER_RANK_TIMEOUT_S, else 30 s.
double rankTimeoutSeconds();

/// "rank1/vcpu2" is rank 1's vcpu2; "vcpu2" is rank 0's. Fails on a malformed rank or one
/// beyond the run's ranks, saying how many there are.
Result<std::pair<int, std::string>> splitRank(std::string_view spec);

/// A device of another rank as this rank sees it: the executor runs none of its work here but
/// the sends of copies into it, and allocates nothing for it.
class RemoteDevice final : public Device {
public:
    /// `name` is the qualified one ("rank1/vcpu1"). `prototype`, where this rank's backend can
    /// make one, is the same device made here: the passes ask it what the device's kernels
    /// prefer (packed layouts, views), so that every rank optimises the graph alike.
    RemoteDevice(int rank, std::string name, DeviceKind kind, std::unique_ptr<Device> prototype);
    ~RemoteDevice() override;

    int remoteRank() const override { return m_rank; }
    const std::string& name() const override { return m_name; }
    DeviceKind kind() const override { return m_kind; }
    std::string description() const override;
    Result<std::byte*> allocate(std::int64_t bytes) override;
    void free(std::byte* data) override;
    std::int64_t bytesInUse() const override { return 0; }
    std::int64_t peakBytes() const override { return 0; }
    void resetPeak() override {}
    std::int64_t allocatableBytes() const override;
    void copyIn(std::byte* dst, const void* src, std::int64_t bytes) override;
    void copyOut(void* dst, const std::byte* src, std::int64_t bytes) override;
    void copyPeer(std::byte* dst, Device& source, const std::byte* src,
                  std::int64_t bytes) override;
    bool hostAccessible() const override;
    bool bindsHostConstants() const override;
    std::string packedLayout(const KernelSpec& spec, std::size_t input) override;
    bool takesViews(const KernelSpec& spec) override;
    Result<std::unique_ptr<Kernel>> prepare(const KernelSpec& spec) override;
    void enqueue(std::function<void()> task) override;
    void synchronize() override;
    std::unique_ptr<Event> createEvent() override;
    double now() const override;

private:
    int m_rank;
    std::string m_name;
    DeviceKind m_kind;
    std::unique_ptr<Device> m_prototype;
    std::unique_ptr<class WorkQueue> m_worker;
};

/// An FNV-1a hash, for the ranks' comparison of what each one runs.
std::uint64_t fnv1a(std::string_view bytes, std::uint64_t seed = 1469598103934665603ull);

/// What identifies this build of the program: its version and compile time.
std::string buildIdentity();

/// Checks that every rank runs the same build, model and plan: gathers (build, model, plan)
/// fingerprints and fails on rank 0 and every other rank with a message naming the first rank
/// that differs, its host and what differs. A no-op when the process runs alone.
Status checkRanksAgree(std::uint64_t modelHash, std::uint64_t planHash);

} // namespace placer
