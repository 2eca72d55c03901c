#!/usr/bin/env bash
# Configures build-asan/ (clang, AddressSanitizer and UndefinedBehaviorSanitizer, libFuzzer's
# coverage instrumentation; scripts/sanitize.sh builds the rest of it and runs its suites) and
# builds the libFuzzer targets there. One instrumented build serves both the fuzz targets and the
# Qt Test suites under the sanitizers: the libraries compile once, not once for each. Run
# setup.sh first.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_ASAN_BUILD_DIR:-$root/build-asan}
# -O1 and line tables only: a sanitizer's report names the file and line, and the build takes far
# less time than -O2 -g. The benchmarks are left out: their smoke runs are not made here.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DPLACER_SANITIZE=ON -DPLACER_BUILD_FUZZERS=ON -DPLACER_BUILD_BENCHMARKS=OFF
cmake --build "$build" -j2 --target fuzz_relay_reader fuzz_onnx_reader fuzz_json_reader \
    fuzz_dim_expr fuzz_run_shapes
