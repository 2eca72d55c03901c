#!/usr/bin/env bash
# The checks that need an NVIDIA GPU, in steps that may run on different machines:
#
#   scripts/gpu-check.sh build   configures and builds placer, the tests and the benchmarks
#                                without the GUI in build-gpu/ (needs the CUDA toolkit; run
#                                scripts/setup.sh first for the other packages)
#   scripts/gpu-check.sh bundle DIR
#                                copies what the run step needs from build-gpu/ into DIR (the
#                                programs, and every shared library they need that is not the C
#                                and C++ runtime or the GPU driver), for a GPU machine without
#                                Debian's packages: run it there as
#                                PLACER_GPU_BUNDLE=DIR scripts/gpu-check.sh run
#   scripts/gpu-check.sh run     on the GPU machine, from the same checkout with build-gpu/ (or a
#                                bundle): `placer devices`, the CUDA tests (every CUDA kernel
#                                against the CPU's on random shapes, the tiny models on cuda:0
#                                alone and split with the host), the models of resources/models
#                                and tests/models through `placer run` on cuda:0 alone, split
#                                with the host and split over two virtual devices on one GPU
#                                (each checked against a CPU reference), the CUDA tests under
#                                compute-sanitizer where it is installed, and the CUDA benchmark
#                                (ResNet-50 when $PLACER_ONNX_MODELS holds resnet50.onnx and
#                                resnet50_batch32.onnx)
#
# The run step's parts can be chosen with PLACER_GPU_PARTS, a list of tests, models, table,
# sanitizer, bench, optimes and engines (default: all but table, optimes and engines; table
# exports a dozen full-size models with PyTorch and compares each on cuda:0 with PyTorch eager on
# the same GPU; optimes sums each op's node times on cuda:0 for EfficientNet-B0, BERT-base and
# ResNet-50 at batch 32, to show where the time goes; engines runs the convolution networks with
# cuDNN's legacy algorithms only and with the fastest way, its graph's engines included). Without
# a step it builds and runs. The run step exits
# non-zero when a test or a model run fails, when compute-sanitizer reports an error, or when
# there is no usable GPU.
#
# A GPU machine that cannot export the full-size models itself (or receive 1 GB of weights):
# `scripts/pack_gpu_models.py models.tar.xz` here (12 MB), then PLACER_GPU_MODELS_ARCHIVE=
# models.tar.xz on the run step unpacks it into $PLACER_ONNX_MODELS first.
#
# Where the usual build (scripts/setup.sh) found the CUDA toolkit, it has the CUDA backend too:
# PLACER_GPU_BUILD_DIR=build scripts/gpu-check.sh bundle DIR bundles it, the GUI included.
# Do not put the machine's own cuDNN folder on LD_LIBRARY_PATH for the run step: PyTorch then
# loads that cuDNN instead of its own, refuses it, and its timings are not cuDNN's.
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_GPU_BUILD_DIR:-$root/build-gpu}
step=${1:-all}

build_step() {
    set -e
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPLACER_BUILD_GUI=OFF -DPLACER_BUILD_CUDA=ON
    if ! grep -q 'placer_cuda' "$build/build.ninja"; then
        echo "gpu-check: CMake found no usable CUDA toolkit; see the configure output" >&2
        exit 1
    fi
    cmake --build "$build" -j"${PLACER_JOBS:-2}" --target placer tst_cuda tst_cudaops bench_cuda
}

programs=(app/placer tests/tst_cuda tests/tst_cudaops tests/benchmarks/bench_cuda)

bundle_step() {
    local dir=${1:?usage: scripts/gpu-check.sh bundle DIR}
    set -e
    mkdir -p "$dir/lib"
    local program needs=()
    for program in "${programs[@]}"; do
        mkdir -p "$dir/$(dirname "$program")"
        objcopy --strip-debug "$build/$program" "$dir/$program"
        needs+=("$build/$program")
    done
    # The GUI, where this build has it (PLACER_BUILD_GUI=ON), for a screenshot after a run on the
    # GPU: Qt's offscreen platform, Graphviz's plugins and a font. Run it with
    # QT_PLUGIN_PATH=DIR/plugins GVBINDIR=DIR/graphviz and FONTCONFIG_FILE=DIR/fonts/fonts.conf
    # (made by the run step).
    if [ -x "$build/app/placement-explorer" ]; then
        local qtPlugins gvPlugins
        qtPlugins=$(qtpaths6 --query QT_INSTALL_PLUGINS 2>/dev/null ||
            echo /usr/lib/x86_64-linux-gnu/qt6/plugins)
        gvPlugins=$(dirname "$(ldconfig -p | awk '/libgvc\.so\./ { print $NF; exit }')")/graphviz
        objcopy --strip-debug "$build/app/placement-explorer" "$dir/app/placement-explorer"
        mkdir -p "$dir/plugins/platforms" "$dir/graphviz" "$dir/fonts"
        cp "$qtPlugins/platforms/libqoffscreen.so" "$dir/plugins/platforms/"
        cp -L "$gvPlugins"/config6a "$gvPlugins"/libgvplugin_{core,dot_layout}.so.6 "$dir/graphviz/"
        cp /usr/share/fonts/truetype/dejavu/DejaVuSans{,-Bold}.ttf "$dir/fonts/"
        needs+=("$build/app/placement-explorer" "$dir/plugins/platforms/libqoffscreen.so"
            "$dir"/graphviz/*.so.6)
    fi
    # Every library the programs need but the C/C++ runtime and the driver, which the GPU
    # machine has in versions that match it.
    for program in "${needs[@]}"; do ldd "$program"; done |
        awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
        grep -Ev '/(libc|libm|libdl|librt|libpthread|libstdc\+\+|libgcc_s|ld-linux[^/]*|libcuda)\.so' |
        while read -r library; do
            objcopy --strip-debug "$library" "$dir/lib/$(basename "$library")"
        done
    du -sh "$dir"
}

failures=()
fail() {
    failures+=("$1")
    echo "gpu-check: FAILED: $1" >&2
}

# placer run of one model, checked against the single-device reference run.
run_model() {
    local label=$1
    shift
    echo "gpu-check: placer run $*"
    if ! timeout "${PLACER_GPU_MODEL_TIMEOUT:-120}" "$placer" run "$@" --iterations 3; then
        fail "$label"
    fi
}

models_part() {
    local python=${PLACER_PYTHON:-python3} model base file rest set value
    # Element-wise ops on the second device, so that the plans copy both ways.
    local rules=(--rule 'Add=ALT' --rule 'Relu=ALT' --rule 'Mul=ALT' --rule 'Concat=ALT'
        --rule 'NonZero=ALT' --rule 'Transpose=ALT')
    for model in "$root"/resources/models/*.onnx "$root"/tests/models/*.onnx; do
        base=${model%.onnx}
        # The data beside the model: BASE.input.npy (its first input), BASE.VALUE.npy, and sets of
        # inputs BASE.SET.VALUE.npy, one run each (the set "-" is the files without one). Files
        # that name no graph input are outputs.
        local graphInputs
        graphInputs=" $("$python" -c "import onnx,sys; print(' '.join(i.name for i in onnx.load(sys.argv[1]).graph.input))" "$model") "
        declare -A inputs=()
        for file in "$base".*.npy; do
            [ -f "$file" ] || continue
            rest=${file#"$base".}
            rest=${rest%.npy}
            if [ "$rest" = input ]; then
                set=- value=$(echo $graphInputs | cut -d' ' -f1)
            elif [[ $rest == *.* ]]; then
                set=${rest%%.*} value=${rest#*.}
                [ "$value" = input ] && value=$(echo $graphInputs | cut -d' ' -f1)
            else
                set=- value=$rest
            fi
            [[ $graphInputs == *" $value "* ]] || continue
            inputs[$set]+=" --input $value=$file"
        done
        [ ${#inputs[@]} -gt 0 ] || inputs[-]=""
        for set in "${!inputs[@]}"; do
            local name args
            name=$(basename "$base")
            [ "$set" = - ] || name+=" ($set)"
            read -ra args <<<"${inputs[$set]}"
            run_model "$name on cuda:0" "$model" "${args[@]}" --devices gpu:cuda,cpu:cpu \
                --default gpu
            run_model "$name split cpu/cuda:0" "$model" "${args[@]}" --devices gpu:cuda,cpu:cpu \
                --default gpu "${rules[@]//ALT/cpu}"
            run_model "$name on two virtual devices of cuda:0" "$model" "${args[@]}" \
                --devices a:cuda,b:cuda,cpu:cpu --map a=cuda:0 --map b=cuda:0 --default a "${rules[@]//ALT/b}"
        done
        unset inputs
    done
}

# Every full-size model on cuda:0 against PyTorch eager timed on the same GPU, as a Markdown table
# (scripts/gpu_models_table.py exports and times them; needs python3 with CUDA PyTorch), then
# the same model run twice in two processes, whose outputs must be bitwise identical (the
# convolution algorithms come from the cache the first process filled).
table_part() {
    local dir=${PLACER_ONNX_MODELS:-${TMPDIR:-/tmp}/placer-gpu-models} name torchms out ms
    mkdir -p "$dir"
    "${PLACER_PYTHON:-python3}" "$root/scripts/gpu_models_table.py" "$dir" || {
        fail "exporting and timing the models in PyTorch"
        return
    }
    echo "| model | cuda:0 (ms) | PyTorch eager (ms) | ratio | reference check |"
    echo "| --- | --- | --- | --- | --- |"
    while read -r name torchms; do
        out=$(timeout 120 "$placer" run "$dir/$name.onnx" --devices gpu:cuda,cpu:cpu --default gpu \
            --iterations 30 --warmup 3 2>&1)
        ms=$(echo "$out" | sed -n 's/^latency: \([0-9.]*\) ms median.*/\1/p')
        echo "$out" | grep -q '^reference check: ok' || fail "$name on cuda:0: $(echo "$out" | tail -1)"
        echo "| $name | $ms | $torchms | $(awk -v a="$ms" -v b="$torchms" 'BEGIN { if (b > 0 && a > 0) printf "%.2f", a / b }') | $(echo "$out" | grep -m1 -E '^reference check|error' | cut -c1-80) |"
    done <"$dir/torch_ms.txt"
    local first second
    first=$(mktemp -d) second=$(mktemp -d)
    for out in "$first" "$second"; do
        "$placer" run "$dir/resnet50.onnx" --devices gpu:cuda,cpu:cpu --default gpu --iterations 1 \
            --no-reference --save-outputs "$out" >/dev/null 2>&1 || fail "resnet50 --save-outputs"
    done
    if cmp -s "$first/output.npy" "$second/output.npy"; then
        echo "gpu-check: two processes' ResNet-50 outputs on cuda:0 are bitwise identical"
    else
        fail "two processes' ResNet-50 outputs on cuda:0 differ"
    fi
    rm -rf "$first" "$second"
}

# Each op's node times summed over a run on cuda:0 (placer run --csv), for the models where
# the GPU is furthest from PyTorch, so that the next kernel to improve is plain.
optimes_part() {
    local dir=${PLACER_ONNX_MODELS:-${TMPDIR:-/tmp}/placer-gpu-models} name csv
    for name in efficientnet_b0 bert_base_encoder resnet50_batch32; do
        [ -f "$dir/$name.onnx" ] || continue
        csv=$(mktemp --suffix=.csv)
        echo "gpu-check: where $name's time goes on cuda:0"
        timeout 60 "$placer" run "$dir/$name.onnx" --devices gpu:cuda --iterations 20 --warmup 3 \
            --no-reference --no-record --csv "$csv" | grep -E '^latency|busy' ||
            fail "$name on cuda:0 for optimes"
        "${PLACER_PYTHON:-python3}" - "$csv" <<'PY'
import collections, csv, sys
times = collections.defaultdict(lambda: [0, 0.0])
for row in csv.DictReader(open(sys.argv[1])):
    if row["kind"] == "node":
        times[row["op"]][0] += 1
        times[row["op"]][1] += float(row["median_ms"])
print(f"  sum of node medians {sum(t for _, t in times.values()):.3f} ms")
for op, (count, total) in sorted(times.items(), key=lambda item: -item[1][1])[:15]:
    print(f"  {op:24s} {count:4d} nodes {total:8.3f} ms")
PY
        rm -f "$csv"
    done
}

# cuDNN's legacy algorithms against the fastest of everything (its graph's engines,
# backends/cuda/ConvEngines.h, the legacy algorithms and cuBLAS for pointwise convolutions) on the
# convolution networks, in one run: each way's latency on cuda:0 from a fresh algorithm cache
# (so that each measures), and which way the convolutions took. With PLACER_GPU_LOG_DIR, each
# run's search (PLACER_CUDA_CONV_LOG) is kept there.
engines_part() {
    local dir=${PLACER_ONNX_MODELS:-${TMPDIR:-/tmp}/placer-gpu-models} name way out cache
    for name in resnet50 resnet50_batch32 inception_v3 efficientnet_b0 vgg11; do
        [ -f "$dir/$name.onnx" ] || continue
        for way in legacy fastest; do
            cache=$(mktemp -d)
            out=$(XDG_CACHE_HOME=$cache PLACER_CUDA_CONV_LOG=1 \
                PLACER_CUDA_CONV=$([ $way = legacy ] && echo legacy) timeout 300 "$placer" run \
                "$dir/$name.onnx" --devices gpu:cuda --iterations 30 --warmup 3 2>&1)
            echo "gpu-check: $name, $way: $(echo "$out" | grep -E '^latency|^reference check' |
                cut -c1-60 | tr '\n' ' ')"
            echo "$out" | grep -q '^reference check: ok' || fail "$name on cuda:0 ($way)"
            echo "$out" | sed -n 's/^placer: convolution .* -> \([a-z]*\).*/\1/p' | sort | uniq -c |
                awk '{ way = $2 == "e" ? "a graph engine" : $2 == "gemm" ? "cuBLAS" : "a legacy algorithm"
                       printf "  %d convolution shapes took %s\n", $1, way }'
            [ -n "${PLACER_GPU_LOG_DIR-}" ] && echo "$out" >"$PLACER_GPU_LOG_DIR/$name.$way.txt"
            rm -rf "$cache"
        done
    done
}

sanitizer_part() {
    local sanitizer tool test
    sanitizer=$(command -v compute-sanitizer || true)
    if [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ]; then
        sanitizer=/usr/local/cuda/bin/compute-sanitizer
    fi
    if [ -z "$sanitizer" ]; then
        echo "gpu-check: compute-sanitizer is not installed; skipping the sanitizer runs"
        return
    fi
    for tool in ${PLACER_GPU_SANITIZERS:-memcheck racecheck synccheck}; do
        for test in tst_cuda; do # tst_cudaops checks tables and calls no CUDA
            echo "gpu-check: $test under compute-sanitizer --tool $tool"
            timeout "${PLACER_GPU_SANITIZER_TIMEOUT:-900}" "$sanitizer" --tool "$tool" \
                --error-exitcode 1 --print-limit 20 "$tests/$test" ||
                fail "$test under compute-sanitizer --tool $tool"
        done
    done
}

run_step() {
    local bin=${PLACER_GPU_BUNDLE:-$build}
    placer=$bin/app/placer
    tests=$bin/tests
    if [ ! -x "$placer" ] || [ ! -x "$tests/tst_cuda" ]; then
        echo "gpu-check: no build in $bin; run 'scripts/gpu-check.sh build' first" >&2
        exit 1
    fi
    if [ -n "${PLACER_GPU_BUNDLE-}" ]; then
        export LD_LIBRARY_PATH=$PLACER_GPU_BUNDLE/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
        if [ -d "$PLACER_GPU_BUNDLE/fonts" ]; then
            export QT_PLUGIN_PATH=$PLACER_GPU_BUNDLE/plugins GVBINDIR=$PLACER_GPU_BUNDLE/graphviz
            export FONTCONFIG_FILE=$PLACER_GPU_BUNDLE/fonts/fonts.conf
            printf '<?xml version="1.0"?>\n<fontconfig><dir>%s</dir><cachedir>%s</cachedir></fontconfig>\n' \
                "$PLACER_GPU_BUNDLE/fonts" "${TMPDIR:-/tmp}/placer-fontconfig" >"$FONTCONFIG_FILE"
        fi
    fi
    export QT_QPA_PLATFORM=offscreen
    if [ -n "${PLACER_GPU_MODELS_ARCHIVE-}" ]; then
        export PLACER_ONNX_MODELS=${PLACER_ONNX_MODELS:-${TMPDIR:-/tmp}/placer-gpu-models}
        mkdir -p "$PLACER_ONNX_MODELS"
        tar -C "$PLACER_ONNX_MODELS" -xJf "$PLACER_GPU_MODELS_ARCHIVE" ||
            fail "unpacking $PLACER_GPU_MODELS_ARCHIVE"
    fi
    "$placer" devices
    if ! "$placer" devices | grep -q '^  cuda:0: '; then
        echo "gpu-check: cuda:0 is not usable here (see above)" >&2
        exit 1
    fi
    local parts=" ${PLACER_GPU_PARTS:-tests models sanitizer bench} "
    if [[ $parts == *" tests "* ]]; then
        timeout 600 "$tests/tst_cudaops" || fail tst_cudaops
        timeout 600 "$tests/tst_cuda" || fail tst_cuda
    fi
    [[ $parts == *" models "* ]] && models_part
    [[ $parts == *" table "* ]] && table_part
    [[ $parts == *" sanitizer "* ]] && sanitizer_part
    [[ $parts == *" optimes "* ]] && optimes_part
    [[ $parts == *" engines "* ]] && engines_part
    if [[ $parts == *" bench "* ]]; then
        timeout 900 "$tests/benchmarks/bench_cuda" || fail bench_cuda
    fi
    if [ ${#failures[@]} -gt 0 ]; then
        printf 'gpu-check: %d failed:\n' ${#failures[@]} >&2
        printf '  %s\n' "${failures[@]}" >&2
        exit 1
    fi
    echo "gpu-check: everything passed"
}

case $step in
build) build_step ;;
bundle) bundle_step "${2-}" ;;
run) run_step ;;
all) build_step && run_step ;;
*)
    echo "usage: scripts/gpu-check.sh [build|bundle DIR|run]" >&2
    exit 2
    ;;
esac
