#!/usr/bin/env bash
# Build the release wheel in build/wheel (with the C++ tests, test providers
# and benchmark baselines beside it in the same CMake build), keep it in
# build/dist, and install it into .venv: the tests run what users get.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -x .venv/bin/python ] || scripts/setup.sh
export PATH="$root/.venv/bin:$PATH"
echo "[build] configuring and building in build/wheel (first build takes a few minutes)" >&2
rm -rf build/dist
# The native TensorRT provider builds against TensorRT's headers only; CI and
# developers have the TensorRT 11.1 headers beside the checkout. Without them
# the wheel is built without the provider (CMake says so).
# $TensorRT_ROOT, when set, names other headers (CMake reads it itself).
tensorrt_args=()
tensorrt_headers="$root/../shared/sdk/tensorrt-11.1"
if [ -n "${TensorRT_ROOT:-}" ]; then
  echo "[build] native TensorRT provider: headers from \$TensorRT_ROOT=$TensorRT_ROOT" >&2
elif [ -f "$tensorrt_headers/include/NvInferRuntime.h" ]; then
  tensorrt_args=(-Ccmake.define.TensorRT_ROOT="$(cd "$tensorrt_headers" && pwd)")
  echo "[build] native TensorRT provider: headers in $tensorrt_headers" >&2
else
  echo "[build] native TensorRT provider: no TensorRT headers beside the checkout; building without it" >&2
fi
.venv/bin/python -m pip wheel -q --no-build-isolation --no-deps \
  -Cbuild-dir=build/wheel \
  -Ccmake.build-type=Release \
  -Ccmake.define.TTE_BUILD_TESTS=ON \
  "${tensorrt_args[@]}" \
  -w build/dist "$@" .
wheel="$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl)"
.venv/bin/python -m pip install -q --no-deps --force-reinstall "$wheel"
echo "[build] installed $(basename "$wheel")" >&2
