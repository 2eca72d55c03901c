#!/usr/bin/env bash
# Sets up Placement Explorer on Debian 12: installs the packages the build needs (only those
# missing), configures with CMake and builds with two jobs. Safe to run again.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLACER_BUILD_DIR:-$root/build}

# Each by name, with no recommended packages, so that this list alone is what a bare Debian 12
# (debootstrap --variant=minbase) needs; scripts/fresh-ci.sh proves it in such a root.
packages=(build-essential cmake ninja-build pkg-config git ca-certificates
          qt6-base-dev qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools qt6-l10n-tools
          libgraphviz-dev libsqlite3-dev libonnx-dev libprotobuf-dev protobuf-compiler
          # GLPK: the automatic placement's exact solver.
          libglpk-dev
          # oneDNN's CMake config requires OpenCL, which libdnnl-dev only recommends.
          libdnnl-dev ocl-icd-opencl-dev opencl-c-headers
          # The fuzz and sanitizer builds: clang with its sanitizer runtimes and OpenMP.
          clang libclang-rt-14-dev libomp-14-dev
          # The Python module: pybind11 against Debian's Python with numpy, tested with pytest.
          python3-dev python3-numpy pybind11-dev python3-pytest
          # Open MPI: runs whose devices span ranks (mpirun -np N placer run), and their tests.
          openmpi-bin libopenmpi-dev
          # ip: the test that makes two hosts of network namespaces.
          iproute2
          # cpack -G DEB (scripts/package-check.sh): dpkg-shlibdeps needs file.
          file
          # Fonts, so that screenshots and offscreen GUI tests render text.
          fonts-dejavu-core)

missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ((${#missing[@]} > 0)); then
    echo "setup: installing ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        sudo=(sudo)
    fi
    "${sudo[@]}" apt-get update -q -o Acquire::Retries=5
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q -o Acquire::Retries=5 --no-install-recommends "${missing[@]}"
fi

# Optimised, with line tables for backtraces and profilers (-g1): full debug information
# costs a fifth of the build's time on two cores.
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG"
cmake --build "$build" -j2
