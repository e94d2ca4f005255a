#!/usr/bin/env bash
# Run every test that can run on this machine: set up, build, C++ unit tests
# (ctest), Python tests (pytest), then the CI steps in scripts/ci/ (static
# checks, the wheel as users get it and on every CPython installed, the
# sanitizer build, valgrind, a fuzz smoke pass, the linux-aarch64 cross
# build under qemu, also for JetPack 6) and the conda checks (scripts/conda/test.sh).
# GPU-only tests skip with a message here; scripts/gpu-check.sh runs them on
# a GPU machine. Usage: scripts/test.sh [--quick]   (--quick: build + ctest + pytest only)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
quick=0
[ "${1:-}" = "--quick" ] && quick=1

started=$SECONDS
step() { printf '\n=== %s (%s, %d min in)\n' "$*" "$(date +%H:%M:%S)" $(((SECONDS - started) / 60)) >&2; }

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

if [ "$quick" = 1 ]; then step "quick tests passed"; exit 0; fi

step "static checks (Python, shell, manifests)"
scripts/ci/lint.sh
step "the wheel as users get it (tag, size, RUNPATH, auditwheel, fresh venvs: default and minimal install)"
scripts/ci/check-wheel.sh "$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl)"
step "the wheel on every CPython 3.10+ installed here (import and run, numpy only)"
scripts/ci/check-cpythons.sh "$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl)"
step "sanitizers (ASan + UBSan build of the plugin and its C++ tests)"
scripts/ci/sanitize.sh
step "valgrind memcheck of tte-run on the host test provider"
scripts/ci/valgrind-check.sh build/wheel
step "fuzz smoke pass"
scripts/ci/fuzz-smoke.sh
step "conda: recipe render checks, offline build and tests of every output (linux-64, linux-aarch64), pixi tasks"
scripts/conda/test.sh
step "linux-aarch64 cross build, C++ tests under qemu"
scripts/ci/cross-aarch64.sh
step "linux-aarch64 JetPack 6 (CUDA 12) cross build, C++ tests under qemu, readelf report"
scripts/ci/cross-aarch64.sh --jetpack 6
step "all tests passed"
