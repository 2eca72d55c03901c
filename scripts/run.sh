#!/usr/bin/env bash
# Sets up Placement Explorer (see setup.sh) and opens the desktop GUI on the bundled example (a
# ResNet-style block on a cpu and a gpu). Extra arguments go to placement-explorer, e.g.
#   ./scripts/run.sh resources/models/tiny_inception.onnx --rule 'Conv=gpu' --fallback cpu
# Without a display it says so and writes a screenshot of the window instead.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ -z "${QT_QPA_PLATFORM:-}" ]; then
    echo "run: no display here; writing the window to $build/placement-explorer.png instead"
    exec "$build/app/placement-explorer" --screenshot "$build/placement-explorer.png" "$@"
fi
exec "$build/app/placement-explorer" "$@"
