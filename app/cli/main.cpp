// Entry point of the `placer` command-line tool.
#include "cli/Backends.h"
#include "cli/PlacerCli.h"

#include <iostream>

int main(int argc, char** argv) {
    placer::cli::registerBuiltBackends();
    std::vector<std::string> args(argv + 1, argv + argc);
    return placer::cli::runPlacer(args, std::cin, std::cout, std::cerr);
}
