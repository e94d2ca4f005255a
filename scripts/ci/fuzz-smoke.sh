#!/usr/bin/env bash
# A short fuzz pass for CI: each harness (scripts/ci/fuzz.sh) for a few seconds
# from its seeds, plus a replay of every input the fuzzers once found
# (tests/fuzz/regressions/). About a minute in all; a finding fails it.
#   scripts/ci/fuzz-smoke.sh [SECONDS_PER_HARNESS]   (default 20)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-20}"
build="${TTE_FUZZ_BUILD:-$root/build/fuzz}"
for name in blob program pte-reader; do
  TTE_FUZZ_BUILD="$build" "$root/scripts/ci/fuzz.sh" "$name" -max_total_time="$seconds" -timeout=25 \
    -rss_limit_mb=4096
done
# Found inputs, replayed on the libFuzzer harness (a crash fails the step).
regressions="$root/tests/fuzz/regressions/program"
if compgen -G "$regressions/*" >/dev/null; then
  "$build/cpp/fuzz/fuzz_program_load" -runs=1 "$regressions"/*
fi
