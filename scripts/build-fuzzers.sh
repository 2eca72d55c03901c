#!/usr/bin/env bash
# Configures and builds the libFuzzer targets in build-fuzz/ with clang (run setup.sh first).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLACER_BUILD_TESTS=OFF \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DPLACER_BUILD_FUZZERS=ON
cmake --build "$root/build-fuzz" -j2 --target fuzz_relay_reader fuzz_onnx_reader fuzz_json_reader \
    fuzz_dim_expr fuzz_run_shapes
