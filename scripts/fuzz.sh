#!/usr/bin/env bash
# Runs one reader fuzz target for longer than the test suite does.
#   scripts/fuzz.sh relay|onnx|json [SECONDS]   (default 600)
# Builds build-fuzz/ with clang (libFuzzer, ASan, UBSan) if needed; new inputs that reach new
# code are kept in build-fuzz/tests/fuzz/corpus_FORMAT, crashes are written to the current folder
# as crash-* (reproduce with: build-fuzz/tests/fuzz/fuzz_FORMAT_reader crash-...).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
format=${1:?usage: scripts/fuzz.sh relay|onnx|json [SECONDS]}
seconds=${2:-600}
case "$format" in relay|onnx|json) ;; *) echo "unknown format '$format'" >&2; exit 2 ;; esac

"$root/scripts/setup.sh"
"$root/scripts/build-fuzzers.sh"
exec "$root/build-fuzz/tests/fuzz/fuzz_${format}_reader" -max_total_time="$seconds" \
    -rss_limit_mb=4096 -timeout=20 "$root/build-fuzz/tests/fuzz/corpus_$format" \
    "$root/tests/fuzz/seeds/$format"
