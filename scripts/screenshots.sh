#!/usr/bin/env bash
# Writes the screenshots the README and the manual show, offscreen, from the bundled models, with
# the program itself (placement-explorer --screenshot): never pasted by hand. Run after a build
# (scripts/setup.sh), then look at each before committing it.
#   scripts/screenshots.sh [BUILD_DIR]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${PLACER_BUILD_DIR:-$root/build}}
gui=$build/app/placement-explorer
images=$root/docs/images
mkdir -p "$images"
export QT_QPA_PLATFORM=offscreen
workspace=$(mktemp -d)
trap 'rm -rf "$workspace"' EXIT
export XDG_DATA_HOME=$workspace

# The main window after a run: the convolutions on a, the rest on b, the timeline of both.
"$gui" "$root/resources/models/tiny_resnet.onnx" --devices a:vcpu,b:vcpu --rule Conv=a \
    --fallback b --run --screenshot "$images/main-window.png"
echo "screenshots: wrote $images/main-window.png"
