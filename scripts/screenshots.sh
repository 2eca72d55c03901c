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
# A pipeline: the encoder's batch of four in four micro-batches over two devices, its timeline.
"$gui" "$root/resources/models/tiny_encoder_batch4.onnx" --devices a:vcpu,b:vcpu \
    --pin '/embed/*=a' --pin '/layers/layers.0/*=a' --pin '/layers/layers.1/*=b' \
    --micro-batches 4 --run --screenshot "$images/pipeline.png"
# Seed 003's shared input: %b read on both devices, the conflicts panel saying what it decided.
"$gui" "$root/resources/examples/shared_input.relay" --devices cpu:cpu,gpu:cuda \
    --screenshot "$images/shared-input.png"
# A decoder generating token by token: the timeline drawn per token.
"$gui" "$root/tests/models/tiny_decoder.onnx" --devices a:vcpu,b:vcpu \
    --pin 're:^/blocks\.0/=a' --pin 're:^/blocks\.1/=b' --generate "$root/tests/models/tiny_decoder.prompt.npy" --screenshot "$images/generate.png"
# ONNX Runtime's profile of the ResNet beside a run of ours: its times on the nodes, its lane
# under the run's on the timeline.
"$gui" "$root/resources/models/tiny_resnet.onnx" --devices a:vcpu --run \
    --profile "$root/tests/models/profiles/tiny_resnet.ort.json" --screenshot "$images/profile.png"
echo "screenshots: wrote main-window.png, pipeline.png, shared-input.png, generate.png and" \
    "profile.png in $images"
