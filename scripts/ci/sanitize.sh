#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer build of the plugin, the host
# test provider, tte-run and the C++ tests in build/sanitize, then ctest.
# Separate from the normal build; CPU only (no CUDA test provider, no native
# TensorRT provider). Any sanitizer report fails the test that triggered it.
#   scripts/ci/sanitize.sh [ctest args...]     e.g. scripts/ci/sanitize.sh -R ProgramApi
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TTE_SANITIZE_BUILD:-$root/build/sanitize}"
jobs="${TTE_JOBS:-2}"
ninja_bin="$root/.venv/bin/ninja"
[ -x "$ninja_bin" ] || ninja_bin=ninja
ctest_bin="$root/.venv/bin/ctest"
[ -x "$ctest_bin" ] || ctest_bin=ctest

if [ ! -f "$build/build.ninja" ]; then
  "$root/scripts/ci/cmake-configure.sh" "$build" \
    -DTTE_SANITIZE=address,undefined -DTTE_BUILD_TESTS=ON -DTTE_BUILD_TOOLS=ON \
    -DTTE_CUDA_TEST_PROVIDER=OFF -DTTE_WITH_TENSORRT=OFF
fi
# Only what ctest runs: the test binaries, tte-run and the host provider
# (listed after regenerating, so targets added since the last run appear).
"$ninja_bin" -C "$build" build.ninja
mapfile -t targets < <("$ninja_bin" -C "$build" -t targets all |
  sed -nE 's/^(test_[A-Za-z0-9_]+|tte-run|tte_test_provider_host): phony$/\1/p' | sort -u)
"$ninja_bin" -C "$build" -j"$jobs" "${targets[@]}"

export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The fixture step packs the test programs in Python, which then loads the
# sanitized plugin: the ASan runtime must come first in that process, and
# the interpreter's own allocations are not ours to report. libstdc++ comes
# right after it, so ASan finds the C++ runtime it intercepts (__cxa_throw).
cxx="${CXX:-c++}"
preload="$("$cxx" -print-file-name=libasan.so):$("$cxx" -print-file-name=libstdc++.so)"
LD_PRELOAD="$preload" ASAN_OPTIONS="detect_leaks=0" \
  "$ctest_bin" --test-dir "$build" -R '^cpp_program_fixtures$' --output-on-failure
# Everything else with leak checking on; -FS: the fixtures are already made.
ASAN_OPTIONS="detect_leaks=1:abort_on_error=0" \
  "$ctest_bin" --test-dir "$build" -FS tte_cpp_programs -E '^cpp_program_fixtures$' \
  -j"$jobs" --output-on-failure "$@"
