#!/usr/bin/env bash
# pixi's `test-native` task: checks the conda-native build of `pixi run build`
# in the environment it was installed into; with --installed, pixi's
# `test-packages` task: checks the conda packages installed in the
# environment (the `packages` environment, where pixi-build built them from
# recipe/), everything below but what needs the build tree (marked *):
#   - the C++ unit tests (ctest) of that build (*);
#   - every NEEDED library of the installed plugin, tte-run and the compiled
#     binding resolves inside the environment through $ORIGIN-relative
#     entries only, and the binding links no libpython (readelf);
#   - with nothing inherited from this shell (env -i: no LD_LIBRARY_PATH, no
#     CONDA_PREFIX), the plugin loads with RTLD_NOW and registers the native
#     TensorRT provider, tte-run runs a packed program through the host test
#     provider (*; with --installed, tte-run --help), the CLI's doctor and
#     inspect run, and a program runs from Python through the compiled
#     binding (recipe/tests/python-run);
#   - C++ programs build against the installed CMake packages and run (the
#     -devel packages' tests, recipe/tests/).
# Usage: pixi run test-native / test-packages (both: pixi run test), or in any conda
# environment: scripts/conda/env-test.sh [--installed]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
: "${CONDA_PREFIX:?not in a conda environment: run pixi run test}"
log() { printf '[env-test] %s\n' "$*" >&2; }
installed=0
case "${1:-}" in
  --installed) installed=1 ;;
  "") ;;
  *) log "unknown option $1 (usage: env-test.sh [--installed])"; exit 2 ;;
esac
if [ "$installed" = 1 ]; then
  work="${TTE_CONDA_BUILD_DIR:-$root/build/conda-packages}"
  mkdir -p "$work"
else
  work="${TTE_CONDA_BUILD_DIR:-$root/build/conda-env}"
  build="$work/cmake"
  [ -f "$build/CMakeCache.txt" ] || { log "no build in $build: run pixi run build first"; exit 1; }
fi
prefix="$CONDA_PREFIX"
plugin="$prefix/lib/libexecutorch_backend_tensorrt.so"
case "$(uname -m)" in
  x86_64) machine="Advanced Micro Devices X86-64" ;;
  aarch64) machine=AArch64 ;;
esac

if [ "$installed" = 0 ]; then
  log "C++ unit tests"
  ctest --test-dir "$build" --output-on-failure --parallel "${CPU_COUNT:-$(nproc)}"
fi

log "readelf: the installed binaries find their libraries in the environment"
binding="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch_tensorrt_executorch_runtime/_native/_compiled.abi3.so"
python scripts/conda/elf-check.py --root "$prefix" --machine "$machine" --forbid libpython "$plugin" \
  "$prefix/lib/libtte_provider_tensorrt11.so" "$prefix/bin/tte-run" "$binding"

clean=(env -i HOME="$HOME" PATH="$prefix/bin:/usr/bin:/bin")
log "with a clean environment"
"${clean[@]}" "$prefix/bin/python" - "$plugin" <<'EOF'
import ctypes, os, sys
plugin = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
plugin.tte_num_engine_providers.restype = ctypes.c_size_t
plugin.tte_engine_provider_name.restype = ctypes.c_char_p
plugin.tte_engine_provider_name.argtypes = [ctypes.c_size_t]
names = [plugin.tte_engine_provider_name(i).decode() for i in range(plugin.tte_num_engine_providers())]
assert "tensorrt-native-11" in names, f"the native TensorRT provider is not registered: {names}"
print(f"plugin loaded with RTLD_NOW; providers: {', '.join(names)}")
EOF
if [ "$installed" = 0 ]; then
  "${clean[@]}" "$prefix/bin/tte-run" --provider "$build/cpp/libtte_test_provider_host.so" \
    tests/fixtures/cpp/add_one.pte --input tests/fixtures/cpp/x_arange_2x4.npy
else
  # The host test provider is a test artifact of the build tree; no package ships it.
  "${clean[@]}" "$prefix/bin/tte-run" --help > /dev/null
fi
"${clean[@]}" "$prefix/bin/torch-tensorrt-executorch" doctor
"${clean[@]}" "$prefix/bin/torch-tensorrt-executorch" inspect tests/fixtures/cpp/two_methods.pte
"${clean[@]}" "$prefix/bin/python" recipe/tests/python-run/run_program.py tests/fixtures/cpp/add_one_dynamic.pte

log "C++ programs through the installed CMake packages"
for consumer in executorch-consumer plugin-consumer; do
  cmake -S "recipe/tests/$consumer" -B "$work/$consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
    > "$work/$consumer.log" 2>&1 && cmake --build "$work/$consumer" >> "$work/$consumer.log" 2>&1 \
    || { tail -30 "$work/$consumer.log"; log "$consumer failed to build"; exit 1; }
  "${clean[@]}" "$work/$consumer/$consumer"
done
log "all checks passed"
