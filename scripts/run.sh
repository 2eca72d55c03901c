#!/usr/bin/env bash
# Sets up (see setup.sh) and opens the bundled example: the shared-input program, planned with
# its first add on the CPU and its second on the GPU. Extra arguments go to `placer plan`.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
exec "$build/app/placer" plan "$root/resources/examples/shared_input.relay" \
    --devices cpu:cpu,gpu:cuda --default gpu "$@"
