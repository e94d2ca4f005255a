#!/usr/bin/env bash
# Run every test that can run on this machine: set up, build, C++ unit tests
# (ctest), Python tests (pytest), the sanitizer build, a fuzz smoke pass, the
# conda checks (scripts/conda/test.sh) and the linux-aarch64 cross build under qemu.
# GPU-only tests skip with a message here; scripts/gpu-check.sh runs them on
# a GPU machine. Usage: scripts/test.sh [--quick]   (--quick: build + ctest + pytest only)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

step() { printf '\n=== %s (%s)\n' "$*" "$(date +%H:%M:%S)" >&2; }

step "setup"
scripts/setup.sh
step "build"
scripts/build.sh
export PATH="$root/.venv/bin:$PATH"
export TTE_TEST_PROVIDER_DIR="$root/build/wheel/cpp"

step "C++ unit tests (ctest)"
ctest --test-dir build/wheel --output-on-failure -j2

step "Python tests (pytest)"
# --import-mode=importlib: the tests import the installed package, never src/.
python -m pytest -q -p no:cacheprovider --import-mode=importlib tests

if [ "$quick" = 1 ]; then exit 0; fi

step "the wheel as users get it (tag, size, RUNPATH, auditwheel, a fresh venv)"
scripts/check-wheel.sh "$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl)"
step "sanitizers (ASan + UBSan build of the plugin and its C++ tests)"
scripts/sanitize.sh
step "fuzz smoke pass"
scripts/fuzz-smoke.sh
step "conda: recipe render checks, offline build and tests of every output (linux-64, linux-aarch64), pixi tasks"
scripts/conda/test.sh
step "linux-aarch64 cross build, C++ tests under qemu"
scripts/cross-aarch64.sh
step "all tests passed"
