#!/usr/bin/env bash
# Installs everything pykern and its tests need on Debian/Ubuntu: binutils' ld (links cpu-target
# kernels into shared libraries), the LLVM tools that check
# code objects, ld.lld, the ROCm device libraries, the HIP runtime library and headers (used
# by the no-device tests), clang (compiles the HIP/C++ device code kernels link), then the package
# itself with its test extras. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
APT_PKGS="binutils lld-22 llvm-22 rocm-device-libs libamdhip64-5 libamdhip64-dev clang-22"
missing=""
for p in $APT_PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing
fi
python3 -m pip install -q --disable-pip-version-check -e ".[test]"
# Optional: torch (CPU build) for the DLPack/torch interop tests. Only on request,
# since without a local wheel pip would fetch a multi-GB CUDA build.
if [ "${PYKERN_WITH_TORCH:-0}" = "1" ] && ! python3 -c "import torch" >/dev/null 2>&1; then
  python3 -m pip install -q --disable-pip-version-check "torch==2.13.0"
fi
