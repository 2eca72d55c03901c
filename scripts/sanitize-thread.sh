#!/usr/bin/env bash
# Builds the runtime's suites with ThreadSanitizer in build-tsan/ (CMake option
# PLACER_SANITIZE_THREAD; no GUI, CUDA backend, Python module or benchmarks) and runs them: the
# executor and its lanes (tst_runtime), the schedule (tst_schedule), pipelines of micro-batches
# (tst_pipeline) and the session's runs (tst_session). Any data race or lock misuse fails the
# suite that hit it. Run setup.sh first (scripts/test.sh does both).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_TSAN_BUILD_DIR:-$root/build-tsan}
suites=(tst_runtime tst_schedule tst_pipeline tst_session)
# GCC's time goes to the headers (ONNX's protobufs, the functors) as much here as in the main
# build, so the libraries compile in unity batches as there.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPLACER_SANITIZE_THREAD=ON \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DPLACER_BUILD_BENCHMARKS=OFF \
    -DPLACER_BUILD_GUI=OFF -DPLACER_UNITY_BUILD=ON
cmake --build "$build" -j2 --target "${suites[@]}"
export QT_QPA_PLATFORM=offscreen
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 exitcode=66 suppressions=$root/tests/sanitizers/tsan.supp"
for suite in "${suites[@]}"; do
    echo "== $suite under ThreadSanitizer"
    (cd "$build" && "./tests/$suite")
done
