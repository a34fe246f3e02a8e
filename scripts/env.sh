# Sourced by the scripts and CI: where set-up put the OpenCL runtimes, Python and nvcc, and the
# Level Zero test double (a driver for tests, built by cargo) for the Level Zero loader to find.
deps=${REPRISE_DEPS:-$HOME/.cache/reprise}
venv="$deps/venv"
if [ -f "$venv/lib/libintelocl.so" ]; then
  export REPRISE_INTEL_OCL="$venv/lib/libintelocl.so"
fi
if [ -x "$venv/bin/python" ]; then
  export REPRISE_PYTHON="$venv/bin/python"
  nvcc_bin=$(ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -n 1 || true)
  [ -n "$nvcc_bin" ] && export REPRISE_NVCC="$nvcc_bin"
fi
ze_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export ZE_ENABLE_ALT_DRIVERS="${CARGO_TARGET_DIR:-$ze_root/target}/${REPRISE_PROFILE:-debug}/libze_reprise_test.so"
. "$(dirname "${BASH_SOURCE[0]}")/cuda-env.sh"
