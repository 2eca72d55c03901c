#!/usr/bin/env bash
# Runs one reader fuzz target for longer than the test suite does.
#   scripts/fuzz.sh relay|onnx|json [RUNS]   (default 1000000 executions)
# Builds build-fuzz/ with clang (libFuzzer, ASan, UBSan) if needed; new inputs that reach new
# code are kept in build-fuzz/tests/fuzz/corpus_FORMAT, crashes are written to the current folder
# as crash-* (reproduce with: build-fuzz/tests/fuzz/fuzz_FORMAT_reader crash-...). Add an input
# that once crashed to tests/fuzz/seeds/FORMAT/ once it is fixed. libFuzzer's last lines say how
# many executions ran ("Done N runs in S second(s)").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
format=${1:?usage: scripts/fuzz.sh relay|onnx|json [RUNS]}
runs=${2:-1000000}
case "$format" in relay|onnx|json) ;; *) echo "unknown format '$format'" >&2; exit 2 ;; esac

"$root/scripts/setup.sh"
"$root/scripts/build-fuzzers.sh"
corpus=$root/build-fuzz/tests/fuzz/corpus_$format
mkdir -p "$corpus"
exec "$root/build-fuzz/tests/fuzz/fuzz_${format}_reader" -runs="$runs" -print_final_stats=1 \
    -rss_limit_mb=4096 -timeout=20 "$corpus" "$root/tests/fuzz/seeds/$format"
