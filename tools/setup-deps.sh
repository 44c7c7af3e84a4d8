#!/usr/bin/env bash
# Installs the Debian 12 packages arenascope needs, only the missing ones (apt-get; sudo when
# not root), then the Python linter (ruff's WebAssembly build, npm ci in tools/lint) unless
# tools/lint/node_modules already holds the pinned version. Used by tools/demo.sh and
# tools/test.sh; safe to run again, and offline once everything is there.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  cmake make g++ gdb python3 python3-pytest python3-pyelftools python3-jsonschema libgtest-dev nlohmann-json3-dev
  gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-newlib qemu-system-arm gdb-multiarch
  libimgui-dev libglfw3-dev libgl1-mesa-dri libfmt-dev xvfb xauth python3-pil libbenchmark-dev
  flatbuffers-compiler libflatbuffers-dev clang clang-format openocd pkg-config python3-hypothesis
  chromium fonts-dejavu-core python3-intelhex time python3-yaml python3-pykwalify python3-kconfiglib
  python3-venv python3-pip python3-setuptools python3-wheel git pkgconf libxml2-utils
  gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf qemu-system-misc mypy python3-typeshed
)
# mypy: the type check (tools/typecheck.sh); python3-typeshed, which mypy only recommends: the
# stubs of GDB's `gdb` module that acquire/gdbtarget.py is checked against.

# The linter's node and npm go by command, not by package: a node from elsewhere (NodeSource's
# nodejs ships npm inside) serves as well, and Debian's npm would conflict with it.
lint_node() {
  if [ ! -d tools/lint/node_modules ] || ! node tools/lint/ruff.mjs --installed; then
    echo "arenascope: installing the Python linter (npm ci in tools/lint)"
    (cd tools/lint && npm ci --no-audit --no-fund --loglevel=error) ||
      echo "arenascope: npm ci failed in tools/lint: the python_lint test will fail until it succeeds" >&2
  fi
}

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -eq 0 ]; then
  lint_node
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
lint_node
