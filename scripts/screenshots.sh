#!/usr/bin/env bash
# Writes the screenshots the README and the manual show, offscreen, from the bundled models, with
# the program itself (placement-explorer --screenshot): never pasted by hand. Each one's size and
# the digest of what it shows (views/SceneDigest.h: the widgets' texts and the graph's items, not
# the pixels, the times or the fonts) go to docs/images/screenshots.txt. Run after a build
# (scripts/setup.sh), then look at each before committing it.
#   scripts/screenshots.sh [BUILD_DIR]          write them into docs/images
#   scripts/screenshots.sh --check [BUILD_DIR]  make them again elsewhere and fail when one
#                                               differs from the committed list, or a committed
#                                               image from its size there (CTest docs_screenshots)
set -euo pipefail

check=false
if [[ ${1:-} == --check ]]; then
    check=true
    shift
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-${PLACER_BUILD_DIR:-$root/build}}" && pwd)
gui=$build/app/placement-explorer
images=$root/docs/images
list=$images/screenshots.txt
export QT_QPA_PLATFORM=offscreen
# A workspace of a fixed name, since the window shows its path.
export XDG_DATA_HOME=/tmp/placer-screenshots
rm -rf "$XDG_DATA_HOME"
out=$images
if $check; then
    out=$(mktemp -d)
fi
trap 'rm -rf "$XDG_DATA_HOME"; if $check; then rm -rf "$out"; fi' EXIT
mkdir -p "$out"
: >"$out/screenshots.new"

# shot NAME ARGS...: the window (or dialog) for ARGS, as NAME; its line in the list.
shot() {
    local name=$1
    shift
    local line
    line=$(PLACER_SCENE_LINES=$out/$name.scene "$gui" "$@" --screenshot "$out/$name" | tail -n 1)
    echo "$name ${line#* }" >>"$out/screenshots.new"
}

# Paths relative to the source tree, since the window shows the prompt's path as given: the same
# on every checkout.
cd "$root"
models=resources/models
tests=tests/models
# The main window after a run: the convolutions on a, the rest on b, the timeline of both.
shot main-window.png "$models/tiny_resnet.onnx" --devices a:vcpu,b:vcpu --rule Conv=a \
    --fallback b --run
# A pipeline: the encoder's batch of four in four micro-batches over two devices, its timeline.
shot pipeline.png "$models/tiny_encoder_batch4.onnx" --devices a:vcpu,b:vcpu \
    --pin '/embed/*=a' --pin '/layers/layers.0/*=a' --pin '/layers/layers.1/*=b' \
    --micro-batches 4 --run
# Seed 003's shared input: %b read on both devices, the conflicts panel saying what it decided.
shot shared-input.png resources/examples/shared_input.relay --devices cpu:cpu,gpu:cuda
# A decoder generating token by token: the timeline drawn per token.
shot generate.png "$tests/tiny_decoder.onnx" --devices a:vcpu,b:vcpu \
    --pin 're:^/blocks\.0/=a' --pin 're:^/blocks\.1/=b' --generate "$tests/tiny_decoder.prompt.npy"
# ONNX Runtime's profile of the ResNet beside a run of ours: its times on the nodes, its lane
# under the run's on the timeline.
shot profile.png "$models/tiny_resnet.onnx" --devices a:vcpu --run \
    --profile "$tests/profiles/tiny_resnet.ort.json"
# A large graph in groups: the detector's 523 nodes collapsed by name scope, the backbone open.
shot large-graph.png "$tests/tiny_detector.onnx" --devices a:vcpu,b:vcpu --rule Conv=a \
    --fallback b --collapse --expand /backbone/
# Run ▸ Run on Hosts for two ranks of this machine, each device on the rank it proposes.
shot run-on-hosts.png "$models/tiny_resnet.onnx" --devices a:vcpu,b:vcpu --rule Conv=a \
    --fallback b --hosts-dialog 2

if ! $check; then
    mv "$out/screenshots.new" "$list"
    rm -f "$out"/*.scene
    echo "screenshots: wrote $(cut -d' ' -f1 "$list" | tr '\n' ' ')in $images"
    exit 0
fi
status=0
if ! diff -u "$list" "$out/screenshots.new"; then
    echo "screenshots: the program no longer shows what docs/images shows (above: committed," \
        "then now); run scripts/screenshots.sh, look at each, and commit them" >&2
    # What each one that differs shows now, as its digest reads it.
    while read -r name _; do
        if ! grep -qxF "$(grep "^$name " "$out/screenshots.new")" "$list"; then
            echo "--- $name now shows:" >&2
            cat "$out/$name.scene" >&2
            echo >&2
        fi
    done <"$out/screenshots.new"
    status=1
fi
# Each committed image is the size the list says (a PNG's width and height at bytes 16-23).
while read -r name size _; do
    actual=$(od -An -tu1 -j16 -N8 "$images/$name" |
        awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }')
    if [[ $actual != "$size" ]]; then
        echo "screenshots: docs/images/$name is $actual, the list says $size" >&2
        status=1
    fi
done <"$list"
[[ $status == 0 ]] && echo "screenshots: $(wc -l <"$list") current"
exit $status
