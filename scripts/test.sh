#!/usr/bin/env bash
# Sets up (see setup.sh) and runs the whole test suite with CTest: the Qt Test suites, then every
# Qt Test suite again under AddressSanitizer and UndefinedBehaviorSanitizer and a short run of
# each fuzz target (scripts/sanitize.sh: one clang build in build-asan/ for both), then the
# runtime's suites under ThreadSanitizer (scripts/sanitize-thread.sh, build-tsan/).
# Each step says how long it took, so that CI's time can be read off its log.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}

started=$(date +%s)
step() { # step NAME COMMAND...: runs COMMAND, then says how long it took
    local name=$1 from
    shift
    from=$(date +%s)
    "$@"
    echo "test: $name took $(($(date +%s) - from)) s (all steps so far: $(($(date +%s) - started)) s)"
}

step setup "$root/scripts/setup.sh"
export QT_QPA_PLATFORM=offscreen
step suites ctest --test-dir "$build" --output-on-failure -j2
step asan-and-fuzz "$root/scripts/sanitize.sh"
step tsan "$root/scripts/sanitize-thread.sh"
