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
.venv/bin/python -m pip wheel -q --no-build-isolation --no-deps \
  -Cbuild-dir=build/wheel \
  -Ccmake.build-type=Release \
  -Ccmake.define.TTE_BUILD_TESTS=ON \
  -w build/dist "$@" .
wheel="$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl)"
.venv/bin/python -m pip install -q --no-deps --force-reinstall "$wheel"
echo "[build] installed $(basename "$wheel")" >&2
