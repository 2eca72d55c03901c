#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/
# (clang; CMake options PLACER_SANITIZE and PLACER_BUILD_FUZZERS; no CUDA backend, MPI or Python)
# and runs every Qt Test suite under them, then each libFuzzer target briefly. Any memory error,
# leak of our own or undefined behaviour fails the suite that hit it. Run setup.sh first
# (scripts/test.sh does both).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_ASAN_BUILD_DIR:-$root/build-asan}
# Configures the tree and builds the fuzz targets; then the rest.
"$root/scripts/build-fuzzers.sh"
cmake --build "$build" -j2
# ASan's instrumented frames are many times larger than plain ones: the readers' deepest
# permitted nesting (500 levels of Relay expression) needs more than the usual 8 MiB of stack.
ulimit -s 65536
# The planner's property test checks memory on 250 random graphs a row here (the main build's
# suite checks the properties on 1000). Each fuzz target runs for PLACER_FUZZ_SECONDS (CMake; 20
# by default), seeded with tests/fuzz/seeds, in the same CTest run as the suites, so that the two
# cores stay busy to the end.
PLACER_PROPERTY_GRAPHS=250 QT_QPA_PLATFORM=offscreen ctest --test-dir "$build" --output-on-failure -j2 \
    -E '_smoke$'
