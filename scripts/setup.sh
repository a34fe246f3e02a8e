#!/usr/bin/env bash
# One-time set-up of a fresh Debian machine with Rust: system packages (the Level Zero loader and
# headers, clang-15 and llvm-spirv-15 for SPIR-V kernels among them), the OpenCL runtimes
# (PoCL from Debian, Intel's CPU runtime from PyPI), pyopencl, dpctl (Intel's SYCL runtime), and nvcc 13.0
# from PyPI with the CUDA C++ core libraries' headers (cooperative groups need them).
# Idempotent: a second run only checks. Prints the environment to use, which scripts/env.sh also sets.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
deps=${REPRISE_DEPS:-$HOME/.cache/reprise}

apt_packages=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo gcc g++ graphviz libze-dev clang-15 llvm-spirv-15 python3-venv)
missing=()
for p in "${apt_packages[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""; [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -q "${missing[@]}"
fi

# A private virtual environment keeps the 1.5 GB of Intel runtimes (OpenCL, SYCL under dpctl) and nvcc
# out of the system Python.
venv="$deps/venv"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
stamp="$venv/.reprise-setup-4"
if [ ! -f "$stamp" ]; then
  echo "setup: installing Python packages into $venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
    intel-opencl-rt intel-cmplr-lib-rt pyopencl numpy mako dpctl \
    "nvidia-cuda-nvcc==13.0.*" "nvidia-cuda-runtime==13.0.*" "nvidia-cuda-crt==13.0.*" "nvidia-nvvm==13.0.*" \
    "nvidia-cuda-cccl==13.0.*"
  touch "$stamp"
fi

command -v cargo >/dev/null || { echo "setup: cargo not found: install Rust (rustup) first" >&2; exit 2; }
command -v cargo-nextest >/dev/null || cargo install --locked cargo-nextest

# shellcheck source=env.sh
. "$here/env.sh"
echo "setup: done (Intel OpenCL: ${REPRISE_INTEL_OCL:-missing}; nvcc: ${REPRISE_NVCC:-missing})"
