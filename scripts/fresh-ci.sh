#!/usr/bin/env bash
# Runs the README's two commands the way a brand-new user would: inside a fresh Debian 12 root
# made with `debootstrap --variant=minbase bookworm`, with nothing installed but the base system.
# A package that scripts/setup.sh forgets fails here, however much the host machine has.
#
#   sudo scripts/fresh-ci.sh [--keep] [--work DIR] [--skip-run]
#
# What it does, in order:
#   1. installs debootstrap on the host when it is missing;
#   2. makes the root in DIR (default: a new folder under /var/tmp), from the Debian mirror the
#      host's apt already uses (debootstrap's default mirror when the host names none), retrying
#      downloads;
#   3. clones this checkout's HEAD into the root at /src/placement-explorer, with ../shared beside
#      it (bind-mounted read-only, when the host has it), and /usr/local/cuda bind-mounted
#      read-only when the host has a CUDA toolkit, so that the CUDA backend is still compiled;
#   4. inside the root, as root with a clean environment and no display: ./scripts/run.sh (which
#      writes its screenshot, copied out to build-fresh/placement-explorer.png here), then
#      ./scripts/test.sh; then ./scripts/package-check.sh, which builds the .deb (cpack), installs
#      it with apt and runs placer, placement-explorer and `import placer` from the package;
#   5. unmounts everything on exit, failure included, and removes the root unless --keep.
#
# It needs root (mounts and chroot); .ci/run calls it, and CI runs as root. Exit status: that of
# the first command that failed inside the root, or non-zero when the root could not be made.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
keep=0
skip_run=0
work=""
while (($# > 0)); do
    case $1 in
    --keep) keep=1 ;;
    --skip-run) skip_run=1 ;;
    --work)
        work=${2:?--work needs a folder}
        shift
        ;;
    -h | --help)
        sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "fresh-ci: unknown option '$1' (see --help)" >&2
        exit 2
        ;;
    esac
    shift
done

if [ "$(id -u)" -ne 0 ]; then
    echo "fresh-ci: needs root for debootstrap, mounts and chroot; run it with sudo" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
log() { echo "fresh-ci: $*"; }
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

retry() { # retry N COMMAND...: runs COMMAND up to N times, 15 s apart
    local tries=$1 attempt=1
    shift
    until "$@"; do
        if ((attempt >= tries)); then
            return 1
        fi
        log "'$1' failed (attempt $attempt of $tries); trying again in 15 s"
        attempt=$((attempt + 1))
        sleep 15
    done
}

if ! command -v debootstrap >/dev/null 2>&1; then
    log "installing debootstrap on the host"
    retry 3 apt-get update -q -o Acquire::Retries=5
    retry 3 apt-get install -y -q -o Acquire::Retries=5 \
        --no-install-recommends debootstrap
fi

# The mirror the host's apt uses for bookworm (deb822 or one-line sources), so the root is made
# from wherever this machine already gets its packages.
host_mirror() {
    local file
    for file in /etc/apt/sources.list.d/*.sources; do
        [ -f "$file" ] || continue
        awk 'BEGIN { RS = ""; FS = "\n" }
             /(^|\n)Suites:[^\n]*bookworm( |\n|$)/ && /(^|\n)Types:[^\n]*deb( |\n|$)/ {
                 for (i = 1; i <= NF; i++)
                     if ($i ~ /^URIs:/) { split($i, f, /[ \t]+/); print f[2]; exit }
             }' "$file"
    done | grep -v -- '-security' | head -n 1
    if [ -f /etc/apt/sources.list ]; then
        awk '$1 == "deb" && $3 == "bookworm" { for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) { print $i; exit } }' \
            /etc/apt/sources.list
    fi
}
mirror=$(host_mirror | head -n 1 || true)

if [ -z "$work" ]; then
    work=$(mktemp -d /var/tmp/placer-fresh-ci.XXXXXX)
fi
mkdir -p "$work"
rootfs=$work/root
mounts=()

cleanup() {
    local status=$?
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" 2>/dev/null ||
            echo "fresh-ci: could not unmount ${mounts[i]}" >&2
    done
    if ((keep == 0)); then
        # Only once nothing is mounted inside any more: never delete through a bind mount.
        if ! grep -q " $rootfs/" /proc/mounts; then
            rm -rf "$work"
        else
            echo "fresh-ci: $rootfs still has mounts; left in place" >&2
        fi
    else
        log "the root is kept in $rootfs"
    fi
    log "finished with status $status after $(elapsed)"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bind() { # bind SOURCE TARGET [ro]
    mkdir -p "$2"
    mount --bind "$1" "$2"
    mounts+=("$2")
    if [ "${3:-}" = ro ]; then
        mount -o remount,bind,ro "$2"
    fi
}

log "making a minbase Debian 12 root in $rootfs${mirror:+ from $mirror}"
make_root() {
    rm -rf "$rootfs"
    debootstrap --variant=minbase bookworm "$rootfs" ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 ||
        {
            tail -n 20 "$work/debootstrap.log" >&2
            return 1
        }
}
retry 3 make_root
log "root made after $(elapsed)"

# apt inside the root retries its downloads; name resolution as on the host.
echo 'Acquire::Retries "5";' >"$rootfs/etc/apt/apt.conf.d/80retries"
cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"

mount -t proc proc "$rootfs/proc"
mounts+=("$rootfs/proc")
mount -t sysfs sysfs "$rootfs/sys"
mounts+=("$rootfs/sys")
bind /dev "$rootfs/dev"
bind /dev/pts "$rootfs/dev/pts"
mount -t tmpfs -o mode=1777 tmpfs "$rootfs/dev/shm"
mounts+=("$rootfs/dev/shm")

# The project as a fresh clone of this checkout's HEAD (what CI submits), ../shared beside it.
mkdir -p "$rootfs/src"
git clone -q --no-hardlinks "$repo" "$rootfs/src/placement-explorer"
if [ -d "$repo/../shared" ]; then
    bind "$(cd "$repo/../shared" && pwd)" "$rootfs/src/shared" ro
fi
if [ -d /usr/local/cuda ]; then
    bind "$(readlink -f /usr/local/cuda)" "$rootfs/usr/local/cuda" ro
    log "the host's CUDA toolkit is mounted read-only at /usr/local/cuda"
fi

# Runs a command in the root as a new user would: root, no display, a clean environment; the
# ONNX conformance suite is required there (its test fails rather than skips without it).
inside() {
    chroot "$rootfs" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        ${CI:+CI="$CI"} PLACER_REQUIRE_ONNX_BACKEND_TESTS=1 \
        bash -c "cd /src/placement-explorer && $1"
}

mkdir -p "$repo/build-fresh"
if ((skip_run == 0)); then
    log "./scripts/run.sh (after $(elapsed))"
    inside ./scripts/run.sh
    shot=$rootfs/src/placement-explorer/build/placement-explorer.png
    if [ ! -s "$shot" ]; then
        echo "fresh-ci: ./scripts/run.sh wrote no screenshot" >&2
        exit 1
    fi
    cp "$shot" "$repo/build-fresh/placement-explorer.png"
    log "the screenshot is in build-fresh/placement-explorer.png"
fi
log "./scripts/test.sh (after $(elapsed))"
inside ./scripts/test.sh
log "both commands passed in a fresh Debian 12 root"
# The Debian package of that build, installed into the root and run from there.
log "./scripts/package-check.sh (after $(elapsed))"
inside ./scripts/package-check.sh
log "the package installs and runs in the fresh root"
