#!/bin/sh
# Runs every model `scripts/export_models.py families DIR` wrote, as a user would: opened in the
# GUI (offscreen, a screenshot), then `placer run` on two vcpus with the batch it was exported
# at, its outputs compared with PyTorch's. One line per model, and a count at the end.
#
#   scripts/check_families.sh DIR [BUILD]     BUILD: the build folder (default: build)
#
# Needs /usr/bin/python3 with numpy (Debian's python3-numpy) for the comparison.
set -u
dir=${1:?usage: scripts/check_families.sh DIR [BUILD]}
build=${2:-build}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0
total=0
for model in "$dir"/*.onnx; do
    name=$(basename "$model" .onnx)
    [ -f "$dir/$name.expected.npy" ] || continue
    total=$((total + 1))
    if ! XDG_CONFIG_HOME="$out/xdg" XDG_DATA_HOME="$out/xdg" QT_QPA_PLATFORM=offscreen \
        "$build/app/placement-explorer" "$model" --devices a:vcpu,b:vcpu \
        --screenshot "$out/$name.png" >"$out/$name.gui" 2>&1 || [ ! -s "$out/$name.png" ]; then
        echo "$name: the GUI did not open it: $(tail -n 2 "$out/$name.gui")"
        continue
    fi
    start=$(date +%s%N)
    if ! "$build/app/placer" run "$model" --devices a:vcpu,b:vcpu --mode auto \
        --input "input=$dir/$name.input.npy" --warmup 0 --iterations 1 \
        --db "$out/workspace.db" --save-outputs "$out/$name" >"$out/$name.run" 2>&1; then
        echo "$name: placer run failed: $(grep -v warning "$out/$name.run" | tail -n 2)"
        continue
    fi
    millis=$((($(date +%s%N) - start) / 1000000))
    if /usr/bin/python3 - "$out/$name" "$dir/$name.expected.npy" "$name" "$millis" <<'EOF'; then
import os, sys
import numpy as np
folder, expected_path, name, millis = sys.argv[1:]
expected = np.load(expected_path)
files = [f for f in os.listdir(folder) if f.endswith(".npy")]
if len(files) != 1:
    sys.exit(f"{name}: {len(files)} outputs saved, 1 expected")
got = np.load(os.path.join(folder, files[0]))
if got.shape != expected.shape:
    sys.exit(f"{name}: output {got.shape}, PyTorch's {expected.shape}")
# Relative to the output's own size: random weights make some outputs tiny (1e-14).
scale = float(np.abs(expected).max())
error = float(np.abs(got.astype(np.float64) - expected).max())
ok = scale > 0 and error <= 1e-3 * scale
print(f"{name}: {'matches' if ok else 'DIFFERS from'} PyTorch (largest difference {error:.2e}, "
      f"outputs up to {scale:.3g}), {expected.shape}, run with its reference in {int(millis) / 1000:.1f} s")
sys.exit(0 if ok else 1)
EOF
        passed=$((passed + 1))
    fi
done
echo "$passed of $total models open in the GUI, run on two vcpus and match PyTorch"
[ "$passed" -eq "$total" ]
