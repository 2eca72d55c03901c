// The transport of runs that span ranks, over Open MPI (device/Ranks.h): every byte between
// ranks is an MPI message. One communication thread per rank makes every MPI call of a run
// (non-blocking sends and receives, driven with MPI_Testsome), so no device worker ever blocks in
// MPI and Open MPI needs no progress thread of its own. Errors are returned, never fatal.
#pragma once

#include "device/Ranks.h"
#include "ir/Result.h"

#include <memory>

namespace placer::mpi {

/// Whether mpirun (Open MPI, or any launcher that sets PMI's variables) started this process.
bool launchedByMpirun();

class MpiTransport final : public RankTransport {
public:
    /// Initialises MPI (asking for MPI_THREAD_MULTIPLE, needing at least
    /// MPI_THREAD_SERIALIZED), makes its errors return, gathers the hosts and starts the
    /// communication thread.
    static Result<std::shared_ptr<MpiTransport>> start(int* argc, char*** argv);
    /// Stops the thread and finalises MPI.
    ~MpiTransport() override;

    int rank() const override;
    int size() const override;
    const std::string& hostName(int rank) const override;
    std::shared_ptr<Transfer> send(int peer, int tag, const void* data,
                                   std::int64_t bytes) override;
    std::shared_ptr<Transfer> receive(int peer, int tag, void* data, std::int64_t bytes) override;
    Result<std::vector<std::string>> allGather(const std::string& mine) override;
    int maxTag() const override;
    void workerWaits() override;
    void workerWaitEnds() override;

    /// Ends every rank of the run at once with `code`: what a rank does when it fails where the
    /// others would wait for it.
    [[noreturn]] void abortAll(int code);

    struct Impl;

private:
    MpiTransport();
    std::unique_ptr<Impl> m_impl;
};

} // namespace placer::mpi
