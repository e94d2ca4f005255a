#!/usr/bin/env bash
# Build the release wheel and check it as users get it: tag, size, contents,
# RUNPATH, `auditwheel repair` (with the dependency wheels' libraries
# excluded) changing nothing, a fresh venv with only the wheel and its
# dependencies importing it and passing `doctor`, and the import beside the
# torch-tensorrt 2.14 wheel. Slow: the fresh venv downloads the wheel's
# dependencies. A step of scripts/test.sh (not of --quick).
# Usage: scripts/ci/check-wheel.sh [--no-venv] [WHEEL]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
[ -x .venv/bin/python ] || scripts/setup.sh
export PATH="$root/.venv/bin:$PATH"

skip_venv=0
if [ "${1:-}" = "--no-venv" ]; then skip_venv=1; shift; fi
if [ $# -ge 1 ]; then
  wheel="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
else
  out=build/check-wheel/dist
  rm -rf "$out"
  echo "[check-wheel] building the release wheel in build/check-wheel (a few minutes)" >&2
  python -m pip wheel -q --no-build-isolation --no-deps -w "$out" -Cbuild-dir=build/check-wheel/build .
  wheel="$(ls "$out"/*.whl)"
fi
echo "[check-wheel] checking $wheel" >&2

export TTE_WHEEL="$wheel" TTE_SLOW_TESTS=1
[ "$skip_venv" = 1 ] && export TTE_WHEEL_SKIP_VENV=1
# The tests import the package from this wheel, and take the host test
# provider from a build tree (the wheel ships none).
site=build/check-wheel/site
rm -rf "$site"
python -m pip install -q --no-deps --target "$site" "$wheel"
export PYTHONPATH="$root/$site${PYTHONPATH:+:$PYTHONPATH}"
if [ -z "${TTE_TEST_PROVIDER_DIR:-}" ]; then
  for dir in build/check-wheel/build/cpp build/wheel/cpp; do
    if [ -f "$dir/libtte_test_provider_host.so" ]; then export TTE_TEST_PROVIDER_DIR="$root/$dir"; break; fi
  done
fi
python -m pytest -q -p no:cacheprovider --import-mode=importlib \
  tests/python/test_wheel.py tests/python/test_torch_tensorrt.py
