// Starting and ending a program as one rank (ProcessRanks.h).
#include "backends/ProcessRanks.h"

#include "device/Ranks.h"

#if PLACER_HAVE_MPI
#include "backends/mpi/MpiTransport.h"
#endif

#include <sched.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

namespace placer::backends {

Status startRanks(int* argc, char*** argv) {
#if PLACER_HAVE_MPI
    if (!mpi::launchedByMpirun())
        return {};
    auto transport = mpi::MpiTransport::start(argc, argv);
    if (!transport)
        return transport.error();
    if (transport.value()->rank() != 0 && !std::freopen("/dev/null", "w", stdout))
        return SourceError::sentence("rank " + std::to_string(transport.value()->rank()) +
                                     " cannot silence its standard output");
    setRankTransport(transport.take());
    // mpirun binds each of two or fewer ranks to one core by default: a rank's device workers
    // and its communication thread then share it, and devices of one rank never run at once.
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) == 1 &&
        cores > 1)
        std::fprintf(stderr,
                     "placer: warning: %s may use 1 of this host's %d cores (mpirun binds each "
                     "rank to a core unless told otherwise): its devices and its messages share "
                     "it; start mpirun with --bind-to none\n",
                     describeRank(localRank()).c_str(), cores);
#else
    (void)argc, (void)argv;
    if (std::getenv("OMPI_COMM_WORLD_SIZE") && std::atoi(std::getenv("OMPI_COMM_WORLD_SIZE")) > 1)
        return SourceError::sentence(
            "mpirun started this placer, but it was built without MPI (install Open MPI's "
            "libopenmpi-dev and build again)");
#endif
    return {};
}

int finishRanks(int code) {
#if PLACER_HAVE_MPI
    if (auto* transport = dynamic_cast<mpi::MpiTransport*>(rankTransport())) {
        std::fflush(stdout);
        std::fflush(stderr);
        if (code != 0 && transport->size() > 1)
            transport->abortAll(code);
        setRankTransport(nullptr);
    }
#endif
    return code;
}

} // namespace placer::backends
