#!/usr/bin/env bash
# A short fuzz pass for CI: each harness (scripts/ci/fuzz.sh) for a few seconds
# from its seeds, plus a replay of every input the fuzzers once found
# (tests/fuzz/regressions/). About a minute and a half in all; a finding
# fails it.
#   scripts/ci/fuzz-smoke.sh [SECONDS_PER_HARNESS]   (default 15)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-15}"
build="${TTE_FUZZ_BUILD:-$root/build/fuzz}"
for name in blob program data-file pte-reader; do
  TTE_FUZZ_BUILD="$build" "$root/scripts/ci/fuzz.sh" "$name" -seed=1 -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=4096
done
# Found inputs, replayed on the libFuzzer harnesses (a crash fails the step):
# programs, and the .ptd files of program/data pairs (with the harness's
# program; tests/reliability replays each pair as found).
regressions="$root/tests/fuzz/regressions"
if compgen -G "$regressions/program/*.pte" >/dev/null; then
  "$build/cpp/fuzz/fuzz_program_load" -runs=1 "$regressions"/program/*.pte
fi
if compgen -G "$regressions/program-with-data/*.ptd" >/dev/null; then
  "$build/cpp/fuzz/fuzz_data_file_load" -runs=1 "$regressions"/program-with-data/*.ptd
fi
