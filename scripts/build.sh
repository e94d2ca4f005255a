#!/usr/bin/env bash
# Build the plugin, tte-run, the test providers and the C++ tests in
# build/wheel, and install the Python package from that same build into .venv
# (what users get from the wheel, plus the test targets).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
[ -x .venv/bin/python ] || scripts/setup.sh
export PATH="$root/.venv/bin:$PATH"
echo "[build] configuring and building in build/wheel (first build takes a few minutes)" >&2
.venv/bin/python -m pip install -q --no-build-isolation --no-deps \
  -Cbuild-dir=build/wheel \
  -Ccmake.build-type=RelWithDebInfo \
  -Ccmake.define.TTE_BUILD_TESTS=ON \
  "$@" .
echo "[build] installed $(.venv/bin/python -c 'import importlib.metadata as m; print("torch-tensorrt-executorch-runtime", m.version("torch-tensorrt-executorch-runtime"))')" >&2
