#!/usr/bin/env bash
# Sets up (see setup.sh) and runs the whole test suite with CTest: the Qt Test suites, then a
# short run of each reader fuzz target (built with clang in build-fuzz/), then every Qt Test suite
# again under AddressSanitizer and UndefinedBehaviorSanitizer (scripts/sanitize.sh, build-asan/),
# then the runtime's suites under ThreadSanitizer (scripts/sanitize-thread.sh, build-tsan/).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
export QT_QPA_PLATFORM=offscreen
ctest --test-dir "$build" --output-on-failure -j2
"$root/scripts/build-fuzzers.sh"
ctest --test-dir "$root/build-fuzz" -L fuzz --output-on-failure -j2
"$root/scripts/sanitize.sh"
"$root/scripts/sanitize-thread.sh"
