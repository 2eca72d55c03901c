// A program's start and end as one rank of a run whose devices span ranks: under mpirun the MPI
// transport starts (device/Ranks.h) and only rank 0 writes to standard output; alone, nothing
// happens. Every front end calls these from main(); the backends themselves register as the
// program starts (backends/cpu/CpuRegistration.cpp, backends/cuda/CudaRegistration.cpp).
#pragma once

#include "ir/Result.h"

namespace placer::backends {

/// Under mpirun: starts the MPI transport, so that this process is one rank of a run whose
/// devices span ranks (device/Ranks.h), and leaves standard output to rank 0 alone. Alone, it
/// does nothing. An error says why this process cannot take its part (a build without MPI).
Status startRanks(int* argc, char*** argv);

/// Ends this rank: a failure where other ranks would wait for it ends them all at once (their
/// mpirun names this rank); otherwise MPI is finalised. Alone, it returns `code`.
int finishRanks(int code);

} // namespace placer::backends
