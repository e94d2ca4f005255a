#!/usr/bin/env bash
# Line coverage of the plugin's C++ by its C++ unit tests (ctest): a gcov build
# at -O0 in build/coverage (CPU only, as scripts/ci/sanitize.sh: no CUDA test
# provider; the native TensorRT providers where TensorRT headers are found,
# run against the fake TensorRT library), every ctest test, then gcovr. Prints
# line coverage per layer of cpp/src (and per native provider folder) and per
# file, and writes build/coverage/coverage.json (gcovr's per-line report).
#   scripts/coverage.sh [--pytest] [--min LAYER=PERCENT ...] [ctest args...]
#   e.g. scripts/coverage.sh --min backend=80 --min program=80
# --min fails (exit 1) when a layer's line coverage is below PERCENT.
# --pytest also counts the Python tests (tests/python, tests/pack,
# tests/reliability), run with this build's plugin and test providers in
# place of the installed wheel's (TORCH_TENSORRT_EXECUTORCH_LIBRARY): the
# lines the whole suite reaches, not only the C++ unit tests. GPU-only lines
# (device staging, CUDA streams and graphs) are not reached on a machine
# without a GPU either way.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TTE_COVERAGE_BUILD:-$root/build/coverage}"
jobs="${TTE_JOBS:-2}"
venv="$root/.venv/bin"
minimums=()
with_pytest=0
while [ $# -gt 0 ]; do
  case "$1" in
    --pytest) with_pytest=1; shift ;;
    --min) minimums+=("${2:?--min takes LAYER=PERCENT}"); shift 2 ;;
    --min=*) minimums+=("${1#--min=}"); shift ;;
    *) break ;;
  esac
done
for tool in gcovr ninja ctest; do
  [ -x "$venv/$tool" ] || { echo "coverage: $venv/$tool is missing: run scripts/setup.sh" >&2; exit 2; }
done

if [ ! -f "$build/build.ninja" ]; then
  echo "[coverage] configuring $build" >&2
  "$root/scripts/ci/cmake-configure.sh" "$build" \
    -DTTE_COVERAGE=ON -DTTE_BUILD_TESTS=ON -DTTE_BUILD_TOOLS=ON -DTTE_CUDA_TEST_PROVIDER=OFF
fi
echo "[coverage] building the C++ tests (gcov, -O0)" >&2
"$venv/ninja" -C "$build" -j"$jobs"

# Counters from an earlier run would add to this one.
find "$build" -name '*.gcda' -delete
# Notes of objects the build no longer makes (their source was removed or
# renamed since the build directory was made) would send gcovr after
# sources that are gone.
"$venv/ninja" -C "$build" -t targets all | sed -nE 's/^(.+\.o): .*/\1/p' | sort -u > "$build/objects.txt"
find "$build" -name '*.gcno' -printf '%P\n' | sed 's/\.gcno$/.o/' | sort |
  comm -23 - "$build/objects.txt" | while read -r stale; do
    echo "[coverage] dropping the notes of $stale (no longer built)" >&2
    rm -f "$build/${stale%.o}.gcno" "$build/$stale"
  done
echo "[coverage] running ctest" >&2
# One test at a time: run side by side, the processes that load the plugin
# and write its counters at exit lost some of them (program.cpp's coverage
# varied from run to run by 14 points).
"$venv/ctest" --test-dir "$build" --output-on-failure "$@"

if [ "$with_pytest" = 1 ]; then
  echo "[coverage] running pytest against this build's plugin" >&2
  (cd "$root" && TORCH_TENSORRT_EXECUTORCH_LIBRARY="$build/cpp/libexecutorch_backend_tensorrt.so" \
    TTE_TEST_PROVIDER_DIR="$build/cpp" PATH="$venv:$PATH" \
    "$venv/python" -m pytest -q -p no:cacheprovider --import-mode=importlib \
      tests/python tests/pack tests/reliability)
fi

echo "[coverage] collecting (gcovr)" >&2
# The generated ExecuTorch schema headers and the tests themselves are not
# the code under test.
"$venv/gcovr" --root "$root" --object-directory "$build" \
  --filter "$root/cpp/src/" --filter "$root/cpp/providers/" \
  --gcov-ignore-parse-errors=negative_hits.warn \
  --json "$build/coverage.json" >/dev/null

"$venv/python" - "$root" "$build/coverage.json" "$with_pytest" "${minimums[@]}" <<'PY'
import json
import os
import sys
from collections import defaultdict

root, report, with_pytest = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
minimums = {}
for spec in sys.argv[4:]:
    layer, _, percent = spec.partition("=")
    minimums[layer] = float(percent)

# A header reached through a layer's include root (a folder of links, see
# cpp/CMakeLists.txt) is recorded under that path: each file is counted once,
# under its real path, a line covered when any path's record covered it.
lines = defaultdict(dict)
for entry in json.load(open(report))["files"]:
    real = os.path.relpath(os.path.realpath(os.path.join(root, entry["file"])), root)
    for line in entry["lines"]:
        if line.get("gcovr/noncode"):
            continue
        number = line["line_number"]
        lines[real][number] = lines[real].get(number, 0) + int(line["count"])

def layer_of(path: str) -> str:
    parts = path.split("/")
    if parts[:2] == ["cpp", "src"] and len(parts) > 3:
        return parts[2]
    if parts[:2] == ["cpp", "providers"] and len(parts) > 3:
        return "providers/" + parts[2]
    return "/".join(parts[:-1])

layers = defaultdict(lambda: [0, 0])
files = []
for name, counts in lines.items():
    if not counts:
        continue
    covered, total = sum(1 for c in counts.values() if c > 0), len(counts)
    layers[layer_of(name)][0] += covered
    layers[layer_of(name)][1] += total
    files.append((name, covered, total))

print("line coverage by " + ("ctest and pytest" if with_pytest else "the C++ unit tests (ctest)"))
print(f"{'layer':<22} {'lines':>7} {'covered':>8} {'percent':>8}")
for layer in sorted(layers):
    covered, total = layers[layer]
    print(f"{layer:<22} {total:>7} {covered:>8} {100.0 * covered / total:>7.1f}%")
print()
print(f"{'file':<52} {'lines':>6} {'percent':>8}")
for name, covered, total in sorted(files):
    print(f"{name:<52} {total:>6} {100.0 * covered / total:>7.1f}%")

failed = []
for layer, wanted in minimums.items():
    if layer not in layers:
        failed.append(f"{layer}: no such layer (known: {', '.join(sorted(layers))})")
        continue
    covered, total = layers[layer]
    if 100.0 * covered / total < wanted:
        failed.append(f"{layer}: {100.0 * covered / total:.1f}% < {wanted:g}%")
for line in failed:
    print(f"coverage: {line}", file=sys.stderr)
sys.exit(1 if failed else 0)
PY
