// Entry point of the `placer` command-line tool.
#include "Backends.h"
#include "cli/PlacerCli.h"

#include <iostream>

int main(int argc, char** argv) {
    placer::app::registerBuiltBackends();
    std::vector<std::string> args(argv + 1, argv + argc);
    return placer::cli::runPlacer(args, std::cin, std::cout, std::cerr);
}
