#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in two steps that may run on different machines:
#
#   scripts/gpu-check.sh build   configures and builds placer, the tests and the benchmarks
#                                without the GUI in build-gpu/ (needs the CUDA toolkit; run
#                                scripts/setup.sh first for the other packages)
#   scripts/gpu-check.sh run     on the GPU machine, from the same checkout with build-gpu/:
#                                `placer devices`, the CUDA tests (every CUDA kernel against the
#                                CPU's on random shapes, the tiny models on cuda:0 alone and split
#                                with the host), the same under compute-sanitizer where it is
#                                installed, and the CUDA benchmark (ResNet-50 when
#                                $PLACER_ONNX_MODELS holds resnet50.onnx and
#                                resnet50_batch32.onnx)
#
# Without a step it does both. The run step exits non-zero when a test fails, when
# compute-sanitizer reports an error, or when there is no usable GPU.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_GPU_BUILD_DIR:-$root/build-gpu}
step=${1:-all}

build_step() {
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPLACER_BUILD_GUI=OFF -DPLACER_BUILD_CUDA=ON
    if ! grep -q 'placer_cuda' "$build/build.ninja"; then
        echo "gpu-check: CMake found no usable CUDA toolkit; see the configure output" >&2
        exit 1
    fi
    cmake --build "$build" -j"${PLACER_JOBS:-2}" --target placer tst_cuda tst_cudaops bench_cuda
}

run_step() {
    local placer=$build/app/placer tests=$build/tests
    if [ ! -x "$placer" ] || [ ! -x "$tests/tst_cuda" ]; then
        echo "gpu-check: no build in $build; run 'scripts/gpu-check.sh build' first" >&2
        exit 1
    fi
    export QT_QPA_PLATFORM=offscreen
    "$placer" devices
    if ! "$placer" devices | grep -q '^  cuda:0: '; then
        echo "gpu-check: cuda:0 is not usable here (see above)" >&2
        exit 1
    fi
    "$tests/tst_cudaops"
    "$tests/tst_cuda"
    local sanitizer
    sanitizer=$(command -v compute-sanitizer || true)
    if [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
        sanitizer=/usr/local/cuda/bin/compute-sanitizer
    fi
    if [ -n "$sanitizer" ]; then
        for tool in memcheck racecheck synccheck; do
            echo "gpu-check: tst_cuda under compute-sanitizer --tool $tool"
            "$sanitizer" --tool "$tool" --error-exitcode 1 --print-limit 20 "$tests/tst_cuda"
        done
    else
        echo "gpu-check: compute-sanitizer is not installed; skipping the sanitizer runs"
    fi
    "$tests/benchmarks/bench_cuda"
}

case $step in
build) build_step ;;
run) run_step ;;
all) build_step && run_step ;;
*)
    echo "usage: scripts/gpu-check.sh [build|run]" >&2
    exit 2
    ;;
esac
