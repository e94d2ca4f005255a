#!/usr/bin/env bash
# Build the libFuzzer harnesses (clang, ASan+UBSan) in build/fuzz and run one
# or all of them. Arguments after the name go to libFuzzer; without any, each
# runs for 60 seconds.
#   scripts/fuzz.sh blob -runs=20000
#   scripts/fuzz.sh blob -max_total_time=600
#   scripts/fuzz.sh all -runs=10000
# New inputs go to build/fuzz/corpus/<name>; the seeds in cpp/fuzz/corpus/<name>
# are read, never written. Crashes land in build/fuzz/artifacts/<name>/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TTE_FUZZ_BUILD:-$root/build/fuzz}"
name="${1:?usage: $0 NAME|all [libFuzzer flags...]   (names: blob)}"; shift
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-max_total_time=60)

# name -> harness target
declare -A targets=(
  [blob]=fuzz_blob_reader
)
if [ "$name" = all ]; then
  names=("${!targets[@]}")
elif [ -n "${targets[$name]:-}" ]; then
  names=("$name")
else
  echo "unknown fuzzer '$name'; known: ${!targets[*]}" >&2
  exit 2
fi

cc="${CC:-clang-14}"
cxx="${CXX:-clang++-14}"
if [ ! -f "$build/build.ninja" ]; then
  CC="$cc" CXX="$cxx" "$root/scripts/cmake-configure.sh" "$build" \
    -DTTE_BUILD_FUZZERS=ON -DTTE_BUILD_TESTS=OFF -DTTE_BUILD_TOOLS=OFF \
    -DTTE_CUDA_TEST_PROVIDER=OFF -DTTE_WITH_TENSORRT=OFF
fi
ninja_bin="$root/.venv/bin/ninja"
[ -x "$ninja_bin" ] || ninja_bin=ninja
to_build=()
for n in "${names[@]}"; do to_build+=("${targets[$n]}"); done
"$ninja_bin" -C "$build" -j"${TTE_JOBS:-2}" "${to_build[@]}"

for n in "${names[@]}"; do
  target="${targets[$n]}"
  work="$build/corpus/$n"
  artifacts="$build/artifacts/$n"
  mkdir -p "$work" "$artifacts"
  extra=()
  [ -f "$root/cpp/fuzz/$n.dict" ] && extra+=("-dict=$root/cpp/fuzz/$n.dict")
  echo "== $target ${flags[*]}"
  "$build/cpp/fuzz/$target" "${extra[@]}" -artifact_prefix="$artifacts/" "${flags[@]}" \
    "$work" "$root/cpp/fuzz/corpus/$n"
done
