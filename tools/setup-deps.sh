#!/usr/bin/env bash
# Installs the Debian 12 packages arenascope needs, only the missing ones (apt-get; sudo when
# not root). Used by tools/demo.sh and tools/test.sh; safe to run again.
set -euo pipefail

PACKAGES=(
  cmake make g++ gdb python3 python3-pytest python3-pyelftools python3-jsonschema libgtest-dev nlohmann-json3-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm gdb-multiarch
  libimgui-dev libglfw3-dev libgl1-mesa-dri libfmt-dev xvfb xauth python3-pil libbenchmark-dev
  flatbuffers-compiler libflatbuffers-dev clang clang-format openocd pkg-config python3-hypothesis
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "arenascope: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "arenascope: these Debian packages are missing: ${missing[*]}" >&2
    echo "arenascope: you are not root and there is no sudo: install them as root (apt-get install ${missing[*]})," >&2
    echo "            or install sudo, then run this again" >&2
    exit 1
  fi
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
