#!/usr/bin/env bash
# Build the fuzz harnesses (clang, ASan+UBSan) in build/fuzz and run one or
# all of them. Arguments after the name go to libFuzzer (atheris takes the
# same flags); without any, each runs for 60 seconds.
#   scripts/ci/fuzz.sh blob -runs=20000
#   scripts/ci/fuzz.sh program -max_total_time=3600
#   scripts/ci/fuzz.sh pte-reader -max_total_time=600
#   scripts/ci/fuzz.sh all -runs=10000
# Harnesses: blob (cpp/fuzz/fuzz_blob_reader.cpp), program (.pte loading
# through the Program C API, cpp/fuzz/fuzz_program_load.cpp), pte-reader
# (inspect's Python reader, tests/fuzz/fuzz_pte_reader.py: atheris when it is
# installed, else a byte-mutation loop for the -max_total_time given).
# New inputs go to build/fuzz/corpus/<name>; the seeds in cpp/fuzz/corpus/
# are read, never written. Crashes land in build/fuzz/artifacts/<name>/.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TTE_FUZZ_BUILD:-$root/build/fuzz}"
name="${1:?usage: $0 NAME|all [libFuzzer flags...]   (names: blob program pte-reader)}"; shift
flags=("$@")
[ ${#flags[@]} -gt 0 ] || flags=(-max_total_time=60)

# name -> build target (the pte-reader harness is Python over the plugin)
declare -A targets=(
  [blob]=fuzz_blob_reader
  [program]=fuzz_program_load
  [pte-reader]=executorch_backend_tensorrt
)
# name -> seed folder under cpp/fuzz/corpus
declare -A seeds=(
  [blob]=blob
  [program]=program
  [pte-reader]=program
)
if [ "$name" = all ]; then
  names=(blob program pte-reader)
elif [ -n "${targets[$name]:-}" ]; then
  names=("$name")
else
  echo "unknown fuzzer '$name'; known: ${!targets[*]}" >&2
  exit 2
fi

cc="${CC:-clang-14}"
cxx="${CXX:-clang++-14}"
if [ ! -f "$build/build.ninja" ]; then
  CC="$cc" CXX="$cxx" "$root/scripts/ci/cmake-configure.sh" "$build" \
    -DTTE_BUILD_FUZZERS=ON -DTTE_BUILD_TESTS=OFF -DTTE_BUILD_TOOLS=OFF \
    -DTTE_CUDA_TEST_PROVIDER=OFF -DTTE_WITH_TENSORRT=OFF
fi
ninja_bin="$root/.venv/bin/ninja"
[ -x "$ninja_bin" ] || ninja_bin=ninja
python_bin="${TTE_PYTHON:-$root/.venv/bin/python}"
to_build=()
for n in "${names[@]}"; do to_build+=("${targets[$n]}"); done
"$ninja_bin" -C "$build" -j"${TTE_JOBS:-2}" "${to_build[@]}"

for n in "${names[@]}"; do
  work="$build/corpus/$n"
  artifacts="$build/artifacts/$n"
  seed_dir="$root/cpp/fuzz/corpus/${seeds[$n]}"
  mkdir -p "$work" "$artifacts"
  extra=()
  [ -f "$root/cpp/fuzz/$n.dict" ] && extra+=("-dict=$root/cpp/fuzz/$n.dict")
  echo "== $n ${flags[*]}"
  if [ "$n" = pte-reader ]; then
    # The harness reads the source tree; its flatbuffer bindings are generated
    # (the build does it for installed packages), so make them here if missing.
    generated="$root/src/torch_tensorrt_executorch_runtime/_generated"
    [ -f "$generated/program_generated.py" ] ||
      "$python_bin" "$root/scripts/gen/pte-bindings.py" --out "$generated" >/dev/null
    export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
    export TORCH_TENSORRT_EXECUTORCH_LIBRARY="$build/cpp/libexecutorch_backend_tensorrt.so"
    if "$python_bin" -c "import atheris" 2>/dev/null; then
      "$python_bin" "$root/tests/fuzz/fuzz_pte_reader.py" -artifact_prefix="$artifacts/" "${flags[@]}" \
        "$work" "$seed_dir"
    else
      seconds=60
      for f in "${flags[@]}"; do
        case "$f" in -max_total_time=*) seconds="${f#-max_total_time=}" ;; esac
      done
      "$python_bin" "$root/tests/fuzz/fuzz_pte_reader.py" --mutate --seconds "$seconds" \
        --crash-dir "$artifacts" "$seed_dir"
    fi
  else
    "$build/cpp/fuzz/${targets[$n]}" "${extra[@]}" -artifact_prefix="$artifacts/" "${flags[@]}" \
      "$work" "$seed_dir"
  fi
done
