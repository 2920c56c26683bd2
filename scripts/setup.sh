#!/usr/bin/env bash
# Installs what strobe needs on Debian 12 (only what is missing; apt-get as root) and builds it
# into ${STROBE_BUILD_DIR:-build}. Extra arguments go to cmake's configure step.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config lldb-19 liblldb-19-dev python3-lldb-19 gdb
  gdbserver libprotobuf-dev protobuf-compiler libfmt-dev libgtest-dev libcapstone-dev pybind11-dev
  python3-dev zlib1g-dev libisal-dev clang libclang-rt-dev)
# For the tests under qemu-user only (AArch64 remote targets, the codec on a CPU without
# x86-64-v3): without them those tests are skipped.
optional=(qemu-user gdb-multiarch gcc-aarch64-linux-gnu libc6-dev-arm64-cross)

missing() {
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || echo "$p"
  done
}
apt_install() {
  local sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  echo "setup: installing $*"
  "${sudo_cmd[@]}" apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq \
      --no-install-recommends "$@"
}
mapfile -t required < <(missing "${packages[@]}")
((${#required[@]} == 0)) || apt_install "${required[@]}"
mapfile -t extra < <(missing "${optional[@]}")
((${#extra[@]} == 0)) || apt_install "${extra[@]}" ||
  echo "setup: could not install ${extra[*]}; the qemu-user tests will be skipped"

build="${STROBE_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build"
