// The MPI transport (backends/mpi/MpiTransport.h): a queue of posted transfers and calls, and the
// communication thread that issues them and tests them to completion.
#include "backends/mpi/MpiTransport.h"

#include <mpi.h>
#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace placer::mpi {

namespace {

/// MPI counts are ints: larger messages go as several, in order, under one tag.
constexpr std::int64_t kChunk = std::int64_t(1) << 30;

std::string mpiError(int code) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
        return "MPI error " + std::to_string(code);
    return std::string(text, static_cast<std::size_t>(length));
}

} // namespace

bool launchedByMpirun() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
        if (std::getenv(name))
            return true;
    }
    return false;
}

struct MpiTransport::Impl {
    int rank = 0;
    int size = 1;
    int maxTag = 32767;
    std::vector<std::string> hosts;

    /// What the thread is asked to do: a transfer to post, or a call to make (a collective).
    struct Work {
        bool sending = false;
        int peer = 0;
        int tag = 0;
        std::byte* data = nullptr;
        std::int64_t bytes = 0;
        std::shared_ptr<Transfer> transfer;
        std::function<void()> call;
        /// Requests already posted by the caller (with MPI_THREAD_MULTIPLE), for the thread to
        /// test; `started` says so.
        bool started = false;
        std::vector<MPI_Request> posted;
        std::string error;
    };
    /// Whether callers may post their own requests (MPI_THREAD_MULTIPLE): a message is on its
    /// way without waiting for the thread to wake.
    bool direct = false;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Work> queue;
    bool stopping = false;
    std::thread thread;
    /// Workers of this rank waiting with nothing to run (workerWaits), and whether the first
    /// of them came since the thread last looked.
    std::atomic<int> waiters{0};
    bool urged = false;

    /// Posted requests, and per request the transfer it belongs to (a transfer is done when
    /// all its requests are).
    struct Pending {
        std::shared_ptr<Transfer> transfer;
        int requests = 0;
        bool failed = false;
        std::string error;
    };
    std::vector<MPI_Request> requests;
    std::vector<std::shared_ptr<Pending>> owners;

    void post(Work work) {
        {
            std::lock_guard lock(mutex);
            queue.push_back(std::move(work));
        }
        wake.notify_one();
    }

    /// Posts the transfer's requests (on the caller's thread where MPI allows it).
    static void start(Work& work) {
        work.started = true;
        for (std::int64_t offset = 0; offset < work.bytes; offset += kChunk) {
            const int count = static_cast<int>(std::min(kChunk, work.bytes - offset));
            MPI_Request request = MPI_REQUEST_NULL;
            const int code = work.sending
                                 ? MPI_Isend(work.data + offset, count, MPI_BYTE, work.peer,
                                             work.tag, MPI_COMM_WORLD, &request)
                                 : MPI_Irecv(work.data + offset, count, MPI_BYTE, work.peer,
                                             work.tag, MPI_COMM_WORLD, &request);
            if (code != MPI_SUCCESS) {
                work.error = mpiError(code);
                break;
            }
            work.posted.push_back(request);
        }
    }

    /// Takes the transfer's requests into the tested set (posting them first if the caller
    /// did not).
    void issue(Work& work) {
        if (!work.started)
            start(work);
        auto pending = std::make_shared<Pending>();
        pending->transfer = work.transfer;
        pending->failed = !work.error.empty();
        pending->error = work.error;
        for (MPI_Request request : work.posted) {
            requests.push_back(request);
            owners.push_back(pending);
            ++pending->requests;
        }
        if (pending->requests == 0) {
            if (pending->failed)
                work.transfer->fail(pending->error);
            else
                work.transfer->finish();
        }
    }

    /// Tests the posted requests; true when any finished.
    bool progress() {
        if (requests.empty())
            return false;
        std::vector<int> finished(requests.size());
        std::vector<MPI_Status> statuses(requests.size());
        int count = 0;
        const int code = MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count,
                                      finished.data(), statuses.data());
        if (count == MPI_UNDEFINED || count == 0)
            return false;
        for (int i = 0; i < count; ++i) {
            const auto index = static_cast<std::size_t>(finished[static_cast<std::size_t>(i)]);
            Pending& pending = *owners[index];
            if (code == MPI_ERR_IN_STATUS &&
                statuses[static_cast<std::size_t>(i)].MPI_ERROR != MPI_SUCCESS) {
                pending.failed = true;
                pending.error = mpiError(statuses[static_cast<std::size_t>(i)].MPI_ERROR);
            }
            if (--pending.requests == 0) {
                if (pending.failed)
                    pending.transfer->fail(pending.error);
                else
                    pending.transfer->finish();
            }
            owners[index].reset();
        }
        // Finished requests are MPI_REQUEST_NULL now: drop them.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (owners[i]) {
                requests[kept] = requests[i];
                owners[kept] = std::move(owners[i]);
                ++kept;
            }
        }
        requests.resize(kept);
        owners.resize(kept);
        return true;
    }

    /// Seconds of CPU time the calling thread has used (time it was not running is not
    /// counted, so a poll that was preempted does not look busy).
    static double threadCpuSeconds() {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
    }

    /// Seconds on a steady clock.
    static double now() {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    }

    /// Drives the transfers. Right after any activity (a post, a finished request, a poll that
    /// moved bytes, a worker starting to wait) it polls without sleeping for a moment, for 5 ms
    /// while a worker waits: the other side of a message is often microseconds away, MPI moves
    /// a message only while someone calls it (here a 4 MiB message moves in one read, once the
    /// receiver sees it), and a thread that sleeps wakes late on a virtual machine. Once quiet, it
    /// polls in short sleeps while a worker waits or for a millisecond after the activity, then in
    /// long ones: while every worker runs kernels, each poll takes a core from one, and nothing
    /// waits for the bytes yet. With nothing posted, it sleeps until something is.
    void loop() {
        // A sleep of 20 us is one: Linux lets a thread's timers fire up to 50 us late unless
        // the thread asks for less slack, and each poll's lateness adds to a message's time.
        prctl(PR_SET_TIMERSLACK, 1000UL, 0UL, 0UL, 0UL);
        // Measured on two ranks sharing two cores (bench_mpi): a longer spin or shorter sleeps
        // take the cores from the ranks' kernels; a shorter spin halves 1 MiB copies. Polls
        // every 20 us through a 7 ms kernel slowed it by a tenth; polls in 20 us sleeps, not
        // a spin, while a worker waited made 4 MiB copies a third slower.
        constexpr double kSpinAfterActivity = 2e-4, kSpinWhileWaited = 5e-3, kShortSleeps = 1e-3;
        // A poll that moved bytes: one that finds nothing takes under a microsecond of the
        // thread's time; those that copy fragments of a message moved in pieces (shared
        // memory without a single copy, TCP) take 1-8 us, most 2 us or more, so a message in
        // flight keeps counting. Such a poll is activity: the message is on its way, and a
        // sleep between its pieces stalls it (64 MiB copies over shared memory without a
        // single copy ran at a quarter of MPI's bandwidth when the spin ended 5 ms after the
        // last finished request).
        constexpr double kMovingPoll = 2e-6;
        double lastActivity = now();
        for (;;) {
            std::deque<Work> taken;
            {
                std::unique_lock lock(mutex);
                if (requests.empty() && queue.empty() && !stopping)
                    wake.wait(lock, [&] { return stopping || !queue.empty(); });
                if (stopping && queue.empty() && requests.empty())
                    return;
                taken.swap(queue);
                if (urged) {
                    urged = false;
                    lastActivity = now();
                }
            }
            for (Work& work : taken) {
                if (work.call)
                    work.call();
                else
                    issue(work);
            }
            const double cpuBefore = threadCpuSeconds();
            const bool finished = progress();
            const bool moved = threadCpuSeconds() - cpuBefore >= kMovingPoll;
            if (finished || moved || !taken.empty()) {
                lastActivity = now();
                continue;
            }
            const double quiet = now() - lastActivity;
            const bool waited = waiters.load(std::memory_order_acquire) > 0;
            if (quiet < (waited ? kSpinWhileWaited : kSpinAfterActivity)) {
                std::this_thread::yield();
                continue;
            }
            std::unique_lock lock(mutex);
            wake.wait_for(lock,
                          std::chrono::microseconds(waited || quiet < kShortSleeps ? 20 : 250),
                          [&] { return stopping || urged || !queue.empty(); });
        }
    }

    void workerWaits() {
        if (waiters.fetch_add(1, std::memory_order_acq_rel) == 0) {
            {
                std::lock_guard lock(mutex);
                urged = true;
            }
            wake.notify_one();
        }
    }

    /// A send or a receive: posted here where MPI allows it, tested by the thread.
    std::shared_ptr<Transfer> transfer(bool sending, int peer, int tag, std::byte* data,
                                       std::int64_t bytes) {
        auto transfer = std::make_shared<Transfer>();
        Work work;
        work.sending = sending;
        work.peer = peer;
        work.tag = tag;
        work.data = data;
        work.bytes = bytes;
        work.transfer = transfer;
        if (direct)
            start(work);
        post(std::move(work));
        return transfer;
    }

    /// Waits, on the thread, for a non-blocking collective, driving the transfers meanwhile: why
    /// it failed, or why it waits no longer (rankTimeoutSeconds()), or empty once done.
    std::string finishCollective(MPI_Request& request) {
        const double deadline = now() + rankTimeoutSeconds();
        for (int spins = 0;; ++spins) {
            int done = 0;
            if (const int code = MPI_Test(&request, &done, MPI_STATUS_IGNORE); code != MPI_SUCCESS)
                return mpiError(code);
            if (done)
                return {};
            progress();
            if (now() > deadline) {
                // A collective cannot be cancelled: the request is left to the run's end.
                request = MPI_REQUEST_NULL;
                char seconds[32];
                std::snprintf(seconds, sizeof seconds, "%.0f s", rankTimeoutSeconds());
                return std::string("not every rank answered within ") + seconds +
                       " (a rank stopped, failed or stopped answering)";
            }
            if (spins < 256)
                std::this_thread::yield();
            else
                std::this_thread::sleep_for(std::chrono::microseconds(20));
        }
    }

    /// Runs `call` on the communication thread and waits for it.
    void call(std::function<void()> call) {
        std::mutex done;
        std::condition_variable finished;
        bool ran = false;
        Work work;
        work.call = [&] {
            call();
            std::lock_guard lock(done);
            ran = true;
            finished.notify_one();
        };
        post(std::move(work));
        std::unique_lock lock(done);
        finished.wait(lock, [&] { return ran; });
    }
};

MpiTransport::MpiTransport() : m_impl(std::make_unique<Impl>()) {}

Result<std::shared_ptr<MpiTransport>> MpiTransport::start(int* argc, char*** argv) {
    int provided = 0;
    if (const int code = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
        code != MPI_SUCCESS)
        return SourceError::sentence("MPI did not start: " + mpiError(code));
    std::shared_ptr<MpiTransport> transport(new MpiTransport());
    Impl& impl = *transport->m_impl;
    impl.direct = provided == MPI_THREAD_MULTIPLE;
    if (provided < MPI_THREAD_SERIALIZED)
        return SourceError::sentence("this MPI offers no thread support beyond " +
                                     std::to_string(provided) +
                                     "; placer needs MPI_THREAD_SERIALIZED at least");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &impl.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &impl.size);
    int* tagUpperBound = nullptr;
    int found = 0;
    if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagUpperBound, &found) == MPI_SUCCESS &&
        found && tagUpperBound)
        impl.maxTag = *tagUpperBound;
    char host[MPI_MAX_PROCESSOR_NAME];
    int length = 0;
    MPI_Get_processor_name(host, &length);
    impl.thread = std::thread([&impl] { impl.loop(); });
    auto hosts = transport->allGather(std::string(host, static_cast<std::size_t>(length)));
    if (!hosts)
        return hosts.error();
    impl.hosts = hosts.take();
    return transport;
}

MpiTransport::~MpiTransport() {
    {
        std::lock_guard lock(m_impl->mutex);
        m_impl->stopping = true;
    }
    m_impl->wake.notify_one();
    if (m_impl->thread.joinable())
        m_impl->thread.join();
    // Requests a failed run left posted are cancelled; finalising waits for the others.
    for (MPI_Request& request : m_impl->requests) {
        MPI_Cancel(&request);
        MPI_Request_free(&request);
    }
    MPI_Finalize();
}

int MpiTransport::rank() const {
    return m_impl->rank;
}

int MpiTransport::size() const {
    return m_impl->size;
}

const std::string& MpiTransport::hostName(int rank) const {
    static const std::string unknown = "unknown";
    return rank >= 0 && static_cast<std::size_t>(rank) < m_impl->hosts.size()
               ? m_impl->hosts[static_cast<std::size_t>(rank)]
               : unknown;
}

std::shared_ptr<Transfer> MpiTransport::send(int peer, int tag, const void* data,
                                             std::int64_t bytes) {
    return m_impl->transfer(true, peer, tag,
                            const_cast<std::byte*>(static_cast<const std::byte*>(data)), bytes);
}

std::shared_ptr<Transfer> MpiTransport::receive(int peer, int tag, void* data, std::int64_t bytes) {
    return m_impl->transfer(false, peer, tag, static_cast<std::byte*>(data), bytes);
}

Result<std::vector<std::string>> MpiTransport::allGather(const std::string& mine) {
    std::vector<std::string> all;
    std::string error;
    m_impl->call([&] {
        const auto size = static_cast<std::size_t>(m_impl->size);
        long long length = static_cast<long long>(mine.size());
        std::vector<long long> lengths(size);
        MPI_Request request = MPI_REQUEST_NULL;
        int code = MPI_Iallgather(&length, 1, MPI_LONG_LONG, lengths.data(), 1, MPI_LONG_LONG,
                                  MPI_COMM_WORLD, &request);
        error = code != MPI_SUCCESS ? mpiError(code) : m_impl->finishCollective(request);
        if (!error.empty())
            return;
        long long total = 0;
        std::vector<int> counts(size), offsets(size);
        for (std::size_t r = 0; r < size; ++r) {
            offsets[r] = static_cast<int>(total);
            counts[r] = static_cast<int>(lengths[r]);
            total += lengths[r];
        }
        if (total > INT_MAX) {
            error = "the ranks' results are " + std::to_string(total) +
                    " bytes together, more than one MPI gather carries";
            return;
        }
        std::string gathered(static_cast<std::size_t>(total), '\0');
        code =
            MPI_Iallgatherv(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, gathered.data(),
                            counts.data(), offsets.data(), MPI_BYTE, MPI_COMM_WORLD, &request);
        error = code != MPI_SUCCESS ? mpiError(code) : m_impl->finishCollective(request);
        if (!error.empty())
            return;
        for (std::size_t r = 0; r < size; ++r)
            all.push_back(gathered.substr(static_cast<std::size_t>(offsets[r]),
                                          static_cast<std::size_t>(counts[r])));
    });
    if (!error.empty())
        return SourceError::sentence("gathering from every rank: " + error);
    return all;
}

void MpiTransport::workerWaits() {
    m_impl->workerWaits();
}

void MpiTransport::workerWaitEnds() {
    m_impl->waiters.fetch_sub(1, std::memory_order_acq_rel);
}

int MpiTransport::maxTag() const {
    return m_impl->maxTag;
}

void MpiTransport::abortAll(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

} // namespace placer::mpi
