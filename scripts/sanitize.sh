#!/usr/bin/env bash
# Builds the whole project with AddressSanitizer and UndefinedBehaviorSanitizer in build-asan/
# (CMake option PLACER_SANITIZE; no CUDA backend) and runs every Qt Test suite under them. Any
# memory error, leak of our own or undefined behaviour fails the suite that hit it. Run setup.sh
# first (scripts/test.sh does both).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_ASAN_BUILD_DIR:-$root/build-asan}
# -O1 and line tables only: a sanitizer's report names the file and line, and the build takes far
# less time than -O2 -g. The benchmarks are left out: their smoke runs are not made here.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLACER_SANITIZE=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DPLACER_BUILD_BENCHMARKS=OFF
cmake --build "$build" -j2
# ASan's instrumented frames are many times larger than plain ones: the readers' deepest
# permitted nesting (500 levels of Relay expression) needs more than the usual 8 MiB of stack.
ulimit -s 65536
# The planner's property test checks memory on 250 random graphs a row here (the main build's
# suite checks the properties on 1000).
PLACER_PROPERTY_GRAPHS=250 QT_QPA_PLATFORM=offscreen ctest --test-dir "$build" --output-on-failure -j2 -E '_smoke$'
