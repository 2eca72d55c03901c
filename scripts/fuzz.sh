#!/usr/bin/env bash
# Runs one fuzz target for longer than the test suite does: a reader's (relay, onnx, json), the
# arithmetic of named dimensions (dim_expr), or shapes set by data, run (run_shapes).
#   scripts/fuzz.sh relay|onnx|json|dim_expr|run_shapes [RUNS]   (default 1000000 executions)
# Builds the fuzz targets in build-asan/ with clang (libFuzzer, ASan, UBSan) if needed; new inputs
# that reach new code are kept in build-asan/tests/fuzz/corpus_FORMAT, crashes are written to the
# current folder as crash-* (reproduce with: build-asan/tests/fuzz/fuzz_FORMAT_reader crash-...). Add an input
# that once crashed to tests/fuzz/seeds/FORMAT/ once it is fixed. libFuzzer's last lines say how
# many executions ran ("Done N runs in S second(s)").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
format=${1:?usage: scripts/fuzz.sh relay|onnx|json|dim_expr|run_shapes [RUNS]}
runs=${2:-1000000}
case "$format" in
relay|onnx|json) target=fuzz_${format}_reader corpus_name=corpus_$format ;;
dim_expr|run_shapes) target=fuzz_$format corpus_name=corpus_fuzz_$format ;;
*) echo "unknown target '$format'" >&2; exit 2 ;;
esac

"$root/scripts/setup.sh"
"$root/scripts/build-fuzzers.sh"
build=${PLACER_ASAN_BUILD_DIR:-$root/build-asan}
corpus=$build/tests/fuzz/$corpus_name
mkdir -p "$corpus"
# AddressSanitizer records every allocation's stack, 30 frames deep by default: with a grown
# corpus, that took a fifth of the ONNX reader's time (45 executions a second, against 157 with
# 2 frames). A report's own stack is whole either way; set ASAN_OPTIONS to have deeper
# allocation stacks when reproducing a crash.
export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2}
exec "$build/tests/fuzz/$target" -runs="$runs" -print_final_stats=1 \
    -rss_limit_mb=4096 -timeout=20 "$corpus" "$root/tests/fuzz/seeds/$format"
