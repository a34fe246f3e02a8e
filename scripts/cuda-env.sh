# Sourced (by env.sh): makes the pip-installed nvcc 13.0 build and link on its own, with no CUDA toolkit.
# The wheels put nvcc, cicc, the headers and libcudart side by side in nvidia/cu13/. nvcc.profile finds the
# compilers and headers there, but searches for libraries in lib64/ (the wheel has lib/), and the wheel ships
# libcudart.so.13 without the unversioned libcudart.so link that `-cudart shared` needs.
# Exports REPRISE_NVCC and REPRISE_NVCC_FLAGS, and puts the flags in NVCC_PREPEND_FLAGS so that a plain
# `$REPRISE_NVCC ...` works.
cuda_deps=${REPRISE_DEPS:-$HOME/.cache/reprise}
if [ -z "${REPRISE_NVCC:-}" ]; then
  cuda_nvcc=$(ls "$cuda_deps"/venv/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -n 1 || true)
  if [ -n "$cuda_nvcc" ]; then export REPRISE_NVCC="$cuda_nvcc"; fi
fi
if [ -n "${REPRISE_NVCC:-}" ]; then
  cuda_lib="$(dirname "$(dirname "$REPRISE_NVCC")")/lib"
  if [ -f "$cuda_lib/libcudart.so.13" ]; then
    cuda_link="$cuda_deps/cuda-link"
    mkdir -p "$cuda_link" && ln -sfn "$cuda_lib/libcudart.so.13" "$cuda_link/libcudart.so"
    # rpath: a `-cudart shared` program finds the wheel's libcudart when run here.
    export REPRISE_NVCC_FLAGS="-L$cuda_lib -L$cuda_link -Xlinker -rpath=$cuda_lib"
    export NVCC_PREPEND_FLAGS="$REPRISE_NVCC_FLAGS"
  fi
fi
unset cuda_deps cuda_nvcc cuda_lib cuda_link
