#!/usr/bin/env bash
# valgrind memcheck of the CPU path: tte-run with the host test provider on
# programs from the fuzz seed corpus (packed test-engine plans: static,
# dynamic, zero-size, several dtypes, two chained delegates, a portable
# epilogue, an engine that fails). Fails on any memory error and on memory
# definitely lost.
# About 20 s; scripts/test.sh runs it on its build (build/wheel).
#   scripts/ci/valgrind-check.sh [BUILD_DIR]   (default build/valgrind; configured
#                                            and built here when absent)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build/valgrind}"
command -v valgrind >/dev/null || { echo "valgrind-check: valgrind is not installed (scripts/setup.sh installs it)" >&2; exit 1; }
ninja_bin="$root/.venv/bin/ninja"
[ -x "$ninja_bin" ] || ninja_bin=ninja
if [ ! -f "$build/build.ninja" ]; then
  "$root/scripts/ci/cmake-configure.sh" "$build" -DTTE_BUILD_TESTS=OFF -DTTE_BUILD_TOOLS=ON \
    -DTTE_CUDA_TEST_PROVIDER=OFF -DTTE_WITH_TENSORRT=OFF
fi
"$ninja_bin" -C "$build" -j"${TTE_JOBS:-2}" tte-run tte_test_provider_host

corpus="$root/cpp/fuzz/corpus/program"
provider="$build/cpp/libtte_test_provider_host.so"
status=0
run() {
  local expect="$1"; shift
  local log
  log="$(mktemp)"
  local rc=0
  valgrind --tool=memcheck --error-exitcode=99 --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --track-origins=yes \
    "$build/cpp/tte-run" --provider "$provider" "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 99 ] || { [ "$rc" -ne "$expect" ]; }; then
    echo "FAIL (exit $rc, expected $expect): tte-run $*"
    cat "$log"
    status=1
  else
    echo "ok   (exit $rc): tte-run ${*#--provider }"
  fi
  rm -f "$log"
}
run 0 "$corpus/add-one-static.pte" --num-runs 3
run 0 "$corpus/add-one-dynamic.pte" --num-runs 3
run 0 "$corpus/add-one-zero-size.pte" --num-runs 2
run 0 "$corpus/identity-three-dtypes.pte" --num-runs 2
run 0 "$corpus/two-methods-chained.pte" --method plus_two --num-runs 2
run 0 "$corpus/portable-epilogue.pte" --num-runs 2 --json
run 0 "$corpus/kv-cache-alias.pte" --num-runs 2
run 1 "$corpus/enqueue-fails.pte"
run 1 "$root/tests/fuzz/regressions/program/delegate-without-processed-data.pte"
exit "$status"
