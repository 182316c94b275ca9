#!/usr/bin/env bash
# Installs the Debian packages winkeye builds against, if any are missing; a no-op when all are there.
# Used by scripts/demo and scripts/test. Needs root or sudo only when something must be installed.
set -euo pipefail

PACKAGES=(libopencv-dev clang libclang-dev pkg-config libv4l-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "winkeye: installing system packages: ${missing[*]}" >&2
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "winkeye: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    SUDO=(sudo)
  fi
  "${SUDO[@]}" apt-get update -qq
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
  echo "winkeye: cargo not found; install a Rust toolchain (1.85 or newer) and run again" >&2
  exit 1
fi
