#!/usr/bin/env bash
# Builds the Debian package of the build tree (`cpack -G DEB`, prefix /usr), installs it with apt
# (which brings its dependencies), and runs what it installed, from outside the source tree:
# `placer --help` and a plan, `placement-explorer --screenshot` on an installed model,
# `python3 -c 'import placer'` and a run from Python; then checks the man pages, the desktop
# entry, the MIME types, the icons and the bash completion, and removes the package again.
# fresh-ci.sh runs it in the fresh root after the test suite. Needs root, or sudo.
#
#   scripts/package-check.sh [--keep-installed]
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}
keep=0
if [[ ${1:-} == --keep-installed ]]; then
    keep=1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
    sudo=(sudo)
fi
fail() {
    echo "package-check: $*" >&2
    exit 1
}

"$root/scripts/setup.sh"

# The package installs under /usr (the Python module in /usr/lib/python3/dist-packages); the
# build folder's own prefix is put back afterwards. Nothing is compiled again for it.
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
restore() {
    cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX="${prefix:-/usr/local}" >/dev/null
}
trap restore EXIT
cmake -S "$root" -B "$build" -DCMAKE_INSTALL_PREFIX=/usr >/dev/null
cmake --build "$build" -j2
rm -f "$build"/placement-explorer_*.deb
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls "$build"/placement-explorer_*.deb)
echo "package-check: built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
dpkg-deb --field "$deb" Depends | sed 's/^/package-check: depends on /'

contents=$(dpkg-deb --contents "$deb" | awk '{print $6}')
for path in ./usr/bin/placer ./usr/bin/placement-explorer \
    ./usr/lib/python3/dist-packages/placer/__init__.py \
    ./usr/lib/python3/dist-packages/placer/__init__.pyi \
    ./usr/share/applications/placement-explorer.desktop \
    ./usr/share/icons/hicolor/scalable/apps/placement-explorer.svg \
    ./usr/share/icons/hicolor/48x48/apps/placement-explorer.png \
    ./usr/share/icons/hicolor/256x256/apps/placement-explorer.png \
    ./usr/share/mime/packages/placement-explorer.xml \
    ./usr/share/man/man1/placer.1.gz ./usr/share/man/man1/placement-explorer.1.gz \
    ./usr/share/bash-completion/completions/placer \
    ./usr/share/placement-explorer/translations/placement_explorer_de.qm \
    ./usr/share/placement-explorer/models/tiny_resnet.onnx; do
    grep -qx -- "$path" <<<"$contents" || fail "the package lacks $path"
done
grep -q '^\./usr/lib/python3/dist-packages/placer/_placer\..*\.so$' <<<"$contents" ||
    fail "the package lacks the Python module's native part"

# apt resolves the package's dependencies (all of them are already here after setup.sh).
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q --no-install-recommends \
    "$deb" >/dev/null
uninstall() {
    if ((keep == 0)); then
        DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get remove -y -q placement-explorer \
            >/dev/null || true
    fi
    restore
}
trap uninstall EXIT

# From an empty folder, with nothing of the build on any path.
work=$(mktemp -d)
cd "$work"
export HOME=$work XDG_DATA_HOME=$work/data QT_QPA_PLATFORM=offscreen
[[ $(command -v placer) == /usr/bin/placer ]] || fail "placer is not /usr/bin/placer"
/usr/bin/placer --help | grep -q '^usage: placer COMMAND' || fail "placer --help says no usage"
/usr/bin/placer plan /usr/share/placement-explorer/models/tiny_resnet.onnx \
    --devices a:vcpu,b:vcpu --rule Conv=a --fallback b --json >plan.json
grep -q '"copies"' plan.json || fail "placer plan wrote no report"
/usr/bin/placement-explorer /usr/share/placement-explorer/models/tiny_resnet.onnx \
    --screenshot shot.png 2>/dev/null
[[ -s shot.png ]] || fail "placement-explorer --screenshot wrote nothing"
/usr/bin/python3 - <<'EOF'
import time

started = time.monotonic()
import placer

took = time.monotonic() - started
assert placer.__file__.startswith("/usr/lib/python3/dist-packages/"), placer.__file__
model = placer.load("/usr/share/placement-explorer/models/tiny_resnet.onnx", workspace="ws.db")
run = model.plan(devices="a:vcpu,b:vcpu", rules={"Conv": "a"}, fallback="b").run(iterations=2, reference=True)
assert run.reference_check["ok"]
print(f"package-check: import placer took {took:.3f} s; a run from the package: "
      f"{run.latency_ms:.3f} ms")
EOF
grep -q '^MimeType=application/x-onnx;text/x-tvm-relay;$' \
    /usr/share/applications/placement-explorer.desktop || fail "the desktop entry has no MIME types"
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate /usr/share/applications/placement-explorer.desktop
fi
if command -v update-mime-database >/dev/null; then
    # The trigger of shared-mime-info has compiled the package's types.
    [[ -f /usr/share/mime/application/x-onnx.xml ]] || fail "application/x-onnx is not registered"
fi
man_text=$(zcat -f /usr/share/man/man1/placer.1* 2>/dev/null || true)
grep -q 'placer run' <<<"$man_text" || fail "the man page of placer says nothing of placer run"
completions=$(bash -c 'source /usr/share/bash-completion/completions/placer
    COMP_WORDS=(placer run --no); COMP_CWORD=2; _placer; printf "%s\n" "${COMPREPLY[@]}"')
grep -qx -- '--no-reference' <<<"$completions" || fail "bash completion does not complete options"
cd /
rm -rf "$work"
echo "package-check: the package installs and runs"
