// Entry point of the `placer` command-line tool. Under mpirun, each process is one rank of the
// run (backends/ProcessRanks.h); rank 0 alone writes to standard output.
#include "cli/PlacerCli.h"

#include "backends/ProcessRanks.h"

#include "device/Ranks.h"

#include <iostream>
#include <sstream>

int main(int argc, char** argv) {
    if (placer::Status ranks = placer::backends::startRanks(&argc, &argv); !ranks.ok()) {
        std::cerr << "placer: " << ranks.error().message << "\n";
        return 1;
    }
    std::vector<std::string> args(argv + 1, argv + argc);
    if (placer::localRank() == 0)
        return placer::backends::finishRanks(
            placer::cli::runPlacer(args, std::cin, std::cout, std::cerr));
    // Another rank's messages name it, line by line.
    std::ostringstream err;
    const int code = placer::cli::runPlacer(args, std::cin, std::cout, err);
    std::istringstream lines(err.str());
    for (std::string line; std::getline(lines, line);)
        std::cerr << placer::describeRank(placer::localRank()) << ": " << line << "\n";
    return placer::backends::finishRanks(code);
}
