#!/usr/bin/env bash
# Cross-compile the plugin, tte-run and the C++ unit tests for linux-aarch64
# with Debian's g++-aarch64-linux-gnu, against the aarch64 executorch and
# CUDA runtime wheels (unpacked into build/aarch64/site-packages, the layout
# pip gives them); check ELF machine, NEEDED and RUNPATH of what is
# installed; run the unit tests under qemu-user; build an aarch64 wheel the
# same way and check its tag.
#
# The native TensorRT provider is built as in the x86-64 build: against the
# TensorRT headers of $TensorRT_ROOT, else those beside the checkout
# (../shared/sdk/tensorrt-11.1); the headers do not depend on the
# architecture. Without headers it is left out, with a message.
#
# Needs (scripts/setup.sh installs them): g++-aarch64-linux-gnu,
# qemu-user-static, unzip, and libgtest-dev, whose sources
# (/usr/src/googletest) are built here for aarch64 with the cross compiler:
# the host's dpkg configuration (architectures, packages) is not changed.
# --jetpack 6 builds for JetPack 6 (Jetson Orin: CUDA 12.6, TensorRT 10.3,
# Ubuntu 22.04, glibc 2.35) instead, in build/aarch64-jetpack6: against the
# CUDA 12.6 runtime headers of PyPI's aarch64 wheels (nvidia-cuda-runtime-cu12,
# and the crt/ headers of nvidia-cuda-nvcc-cu12; versions.json: jetpack6), so
# the plugin's NEEDED libcudart.so.12 is JetPack's own at run time (no RUNPATH
# to a pip CUDA wheel); the wheel is built with TTE_JETPACK=6 (pyproject.toml:
# version +cu126, no nvidia-cuda-runtime requirement) and its readelf report
# (NEEDED, RUNPATH, the newest glibc symbol version) is printed and checked.
# Usage: scripts/ci/cross-aarch64.sh [--jetpack 6] [--no-wheel]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
wheel=1
jetpack=""
while [ $# -gt 0 ]; do
  case "$1" in
    --no-wheel) wheel=0 ;;
    --jetpack) jetpack="${2:?--jetpack needs a JetPack major: 6}"; shift ;;
    *) echo "usage: $0 [--jetpack 6] [--no-wheel]" >&2; exit 2 ;;
  esac
  shift
done
[ -z "$jetpack" ] || [ "$jetpack" = 6 ] || { echo "cross-aarch64: --jetpack $jetpack: only JetPack 6 has a build of its own (JetPack 7 runs the SBSA build)" >&2; exit 2; }

log() { printf '[cross-aarch64] %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }

command -v aarch64-linux-gnu-g++ >/dev/null || die "aarch64-linux-gnu-g++ missing: apt-get install g++-aarch64-linux-gnu"
command -v qemu-aarch64-static >/dev/null || die "qemu-aarch64-static missing: apt-get install qemu-user-static"
command -v unzip >/dev/null || die "unzip missing: apt-get install unzip"
[ -x .venv/bin/cmake ] || die "run scripts/setup.sh first (needs .venv with cmake, ninja and executorch)"
gtest_src=/usr/src/googletest
[ -f "$gtest_src/CMakeLists.txt" ] || die "GoogleTest sources missing ($gtest_src): apt-get install libgtest-dev"

py=.venv/bin/python
build=build/aarch64
[ -n "$jetpack" ] && build="build/aarch64-jetpack$jetpack"
site="$root/$build/site-packages"
wheels="$root/$build/wheels"
mkdir -p "$wheels"

# GoogleTest for aarch64, built once from the sources libgtest-dev ships
# (shared by both builds: it does not use CUDA).
gtest_prefix="$root/build/aarch64/googletest"
gtest_dir="$gtest_prefix/lib/cmake/GTest"
if [ ! -f "$gtest_dir/GTestConfig.cmake" ]; then
  log "building GoogleTest for aarch64 from $gtest_src into build/aarch64/googletest"
  mkdir -p build/aarch64
  { .venv/bin/cmake -S "$gtest_src" -B build/aarch64/googletest-build -G Ninja -DCMAKE_MAKE_PROGRAM="$root/.venv/bin/ninja" \
      -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake" -DCMAKE_BUILD_TYPE=Release \
      -DBUILD_GMOCK=OFF -DINSTALL_GTEST=ON -DCMAKE_INSTALL_PREFIX="$gtest_prefix" &&
    .venv/bin/cmake --build build/aarch64/googletest-build -j2 &&
    .venv/bin/cmake --install build/aarch64/googletest-build; } > build/aarch64/googletest.log 2>&1 ||
    { tail -30 build/aarch64/googletest.log; die "building GoogleTest for aarch64 failed (log: build/aarch64/googletest.log)"; }
fi

# The same versions as the x86-64 build in .venv.
version() { "$py" -c "import importlib.metadata as m; print(m.version('$1'))"; }
executorch_version="$(version executorch)"
download() {
  scripts/with-retries.sh scripts/pip-refetch.py "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux_2_28_aarch64 --platform manylinux_2_17_aarch64 --platform manylinux2014_aarch64 \
    -d "$wheels" "$@"
}
rm -rf "$site"
mkdir -p "$site"
download "executorch==$executorch_version"
unzip -q -o "$(ls "$wheels"/executorch-"$executorch_version"-*aarch64.whl)" \
  'executorch/lib/*' 'executorch/include/*' 'executorch/share/*' 'executorch/schema/*' 'executorch/version.py' \
  -d "$site"
if [ -n "$jetpack" ]; then
  # JetPack 6's CUDA: the runtime wheel's headers and libcudart.so.12 (to
  # link and to run the tests under qemu), with the crt/ headers its
  # cuda_runtime.h includes, which CUDA 12 ships in the nvcc wheel.
  cuda_version="$("$py" -c 'import json; print(json.load(open("versions.json"))["jetpack6"]["cuda_runtime"])')"
  log "aarch64 wheels: executorch $executorch_version, nvidia-cuda-runtime-cu12 and nvidia-cuda-nvcc-cu12 $cuda_version (JetPack 6)"
  download "nvidia-cuda-runtime-cu12==$cuda_version" "nvidia-cuda-nvcc-cu12==$cuda_version"
  unzip -q -o "$(ls "$wheels"/nvidia_cuda_runtime_cu12-"$cuda_version"-*aarch64*.whl)" 'nvidia/cuda_runtime/*' -d "$site"
  crt="$(mktemp -d)"
  unzip -q -o "$(ls "$wheels"/nvidia_cuda_nvcc_cu12-"$cuda_version"-*aarch64*.whl)" 'nvidia/cuda_nvcc/include/crt/*' -d "$crt"
  cp -r "$crt/nvidia/cuda_nvcc/include/crt" "$site/nvidia/cuda_runtime/include/"
  rm -rf "$crt"
  cuda_root="$site/nvidia/cuda_runtime"
else
  cudart_version="$(version nvidia-cuda-runtime)"
  crt_version="$(version nvidia-cuda-crt)"
  log "aarch64 wheels: executorch $executorch_version, nvidia-cuda-runtime $cudart_version, nvidia-cuda-crt $crt_version"
  download "nvidia-cuda-runtime==$cudart_version" "nvidia-cuda-crt==$crt_version"
  for w in "$wheels"/nvidia_cuda_runtime-"$cudart_version"-*aarch64*.whl "$wheels"/nvidia_cuda_crt-"$crt_version"-*aarch64*.whl; do
    unzip -q -o "$w" 'nvidia/*' -d "$site"
  done
  cuda_root="$site/nvidia/cu13"
fi
# flatc generates the .pte reader at build time, so it runs on this machine:
# the build machine's copy, as a conda cross build takes tools from BUILD_PREFIX.
mkdir -p "$site/executorch/data/bin"
cp "$("$py" -c 'import executorch, os; print(os.path.join(executorch.__path__[0], "data/bin/flatc"))')" \
  "$site/executorch/data/bin/flatc"

cross_args=(
  -DCMAKE_TOOLCHAIN_FILE="$root/cmake/aarch64-linux-gnu.cmake"
  -DCMAKE_FIND_ROOT_PATH="$site"
  -DEXECUTORCH_ROOT="$site/executorch"
  -DTTE_CUDA_ROOT="$cuda_root"
  -DTTE_NLOHMANN_JSON_INCLUDE_DIR=/usr/include
  -DGTest_DIR="$gtest_dir"
  -DTTE_CUDA_TEST_PROVIDER=OFF
)
# JetPack 6's build: CUDA 12, said outright (CMake checks the headers agree).
# Its libcudart.so.12 comes from the system (JetPack), not from the tree.
system_cuda=()
if [ -n "$jetpack" ]; then
  cross_args+=(-DTTE_CUDA_MAJOR=12)
  system_cuda=(--system libcudart.so.12)
fi

log "configure and build in $build (plugin, tte-run, C++ unit tests)"
.venv/bin/cmake -S . -B "$build/cmake" -G Ninja -DCMAKE_MAKE_PROGRAM="$root/.venv/bin/ninja" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTTE_BUILD_TESTS=ON -DCMAKE_INSTALL_PREFIX="$site" \
  "${cross_args[@]}" > "$build/configure.log" 2>&1 || { tail -40 "$build/configure.log"; die "configure failed"; }
.venv/bin/ninja -C "$build/cmake" -j2 > "$build/build.log" 2>&1 || { tail -40 "$build/build.log"; die "build failed"; }
# Per TensorRT major: "Native TensorRT 11 provider: TensorRT 11.1.0 headers ..."
# or why it is not built.
majors=()
for major in 11 10; do
  provider_line="$(grep -m1 -o "Native TensorRT $major provider: .*" "$build/configure.log" || true)"
  log "${provider_line:-Native TensorRT $major provider: no configure line}"
  case "$provider_line" in "Native TensorRT $major provider: TensorRT "*) majors+=("$major") ;; esac
done

log "C++ unit tests under qemu-aarch64-static -L /usr/aarch64-linux-gnu"
# The tests load provider libraries from TTE_TEST_PROVIDER_DIR when it is set
# (scripts/test.sh sets it to the x86-64 build): point it at the aarch64 ones.
# The programs the Program API tests load are copied from tests/fixtures/cpp/.
TTE_TEST_PROVIDER_DIR="$root/$build/cmake/cpp" .venv/bin/ctest --test-dir "$build/cmake" \
  --output-on-failure -j2

log "install and check ELF machine, NEEDED and RUNPATH (wheel layout: site-packages/)"
.venv/bin/cmake --install "$build/cmake" > /dev/null
pkg="$site/torch_tensorrt_executorch_runtime"
# manylinux: the C++ runtime comes from the system, like glibc.
installed=("$pkg/lib/libexecutorch_backend_tensorrt.so" "$pkg/bin/tte-run")
# The native provider: the same checks, and no NEEDED on TensorRT (it finds
# libnvinfer at run time), as the x86-64 wheel's.
for major in "${majors[@]}"; do
  provider="$pkg/lib/libtte_provider_tensorrt$major.so"
  [ -f "$provider" ] || die "the native TensorRT $major provider was built but not installed ($provider)"
  installed+=("$provider")
done
"$py" scripts/conda/elf-check.py --root "$site" --machine AArch64 --system libstdc++.so.6 --system libgcc_s.so.1 \
  "${system_cuda[@]}" --forbid libnvinfer "${installed[@]}"
if [ -n "$jetpack" ]; then
  # What a Jetson on JetPack 6 (Ubuntu 22.04: glibc 2.35, GCC 12's libstdc++)
  # must provide: JetPack's libcudart.so.12, no newer glibc or libstdc++.
  log "readelf report of the JetPack 6 build (target: glibc 2.35, GLIBCXX_3.4.30, libcudart.so.12)"
  "$py" scripts/ci/elf-floors.py --glibc 2.35 --glibcxx 3.4.30 --needs libcudart.so.12 "${installed[@]}" >&2
fi
# JetPack's libcudart.so.12 is found through the Jetson's ld.so.conf; under
# qemu the CUDA 12 wheel's copy stands in for it, by LD_LIBRARY_PATH.
run_env=()
[ -n "$jetpack" ] && run_env=("LD_LIBRARY_PATH=$cuda_root/lib")
env "${run_env[@]}" qemu-aarch64-static -L /usr/aarch64-linux-gnu "$pkg/bin/tte-run" --help > /dev/null
if [ -n "$jetpack" ]; then
  log "tte-run --help ran under qemu (RUNPATH found ExecuTorch; libcudart.so.12 stood in for JetPack's)"
else
  log "tte-run --help ran under qemu (no LD_LIBRARY_PATH: RUNPATH found everything)"
fi

# PyPI's real aarch64 lean runtimes of each major (versions.json:
# tensorrt_lean_checked; about 65 MB each, downloaded once into the build
# folder), found by the provider of their major through its override
# variable and reported by tte-run --list-providers under qemu.
if [ "${#majors[@]}" -gt 0 ]; then
  log "tte-run --list-providers under qemu with PyPI's aarch64 lean runtimes"
  lean_env=()
  declare -A lean_libraries=() lean_versions=()
  for major in "${majors[@]}"; do
    version="$("$py" -c 'import json, sys; print(json.load(open("versions.json"))["tensorrt_lean_checked"][sys.argv[1]])' "$major")"
    dir="$root/build/aarch64/tensorrt-lean/$version"  # shared by both builds
    library="$dir/tensorrt_lean_libs/libnvinfer_lean.so.$major"
    if [ ! -f "$library" ]; then
      rm -rf "$dir"
      mkdir -p "$dir"
      scripts/with-retries.sh scripts/pip-refetch.py "$py" -m pip download -q --no-deps --only-binary=:all: --platform manylinux_2_35_aarch64 \
        --python-version 3.12 -d "$dir" "tensorrt-lean-cu13-libs==$version" \
        || die "cannot download tensorrt-lean-cu13-libs==$version for aarch64"
      unzip -q "$dir"/*.whl 'tensorrt_lean_libs/*' -d "$dir" && rm -f "$dir"/*.whl
    fi
    lean_env+=("TORCH_TENSORRT_EXECUTORCH_TENSORRT${major}_LIBRARY=$library")
    lean_libraries[$major]="$library"
    lean_versions[$major]="$version"
  done
  listed="$(env "${run_env[@]}" "${lean_env[@]}" qemu-aarch64-static -L /usr/aarch64-linux-gnu "$pkg/bin/tte-run" --list-providers 2>&1)" \
    || { printf '%s\n' "$listed" >&2; die "tte-run --list-providers failed under qemu"; }
  printf '%s\n' "$listed" >&2
  for major in "${majors[@]}"; do
    wanted="tensorrt-native-$major: TensorRT ${lean_versions[$major]%.*} lean runtime from ${lean_libraries[$major]}"
    grep -qF "$wanted" <<<"$listed" || die "expected '$wanted' in tte-run --list-providers"
  done
  log "each native provider found its major's real aarch64 lean runtime"
fi

if [ "$wheel" = 1 ]; then
  log "aarch64 wheel (scikit-build-core, same CMake entry and toolchain)"
  rm -rf "$build/dist"
  defines=()
  for a in "${cross_args[@]}"; do defines+=("-Ccmake.define.${a#-D}"); done
  # TTE_JETPACK=6: pyproject.toml's JetPack 6 metadata (+cu126, no CUDA wheel).
  TTE_JETPACK="$jetpack" PATH="$root/.venv/bin:$PATH" "$py" -m pip wheel . --no-deps --no-build-isolation -q -w "$build/dist" \
    -Cbuild-dir="$build/wheel" -Cwheel.tags=cp310-abi3-manylinux_2_28_aarch64 "${defines[@]}" \
    > "$build/wheel.log" 2>&1 || { tail -40 "$build/wheel.log"; die "wheel build failed"; }
  whl="$(ls "$build"/dist/*.whl)"
  tag="$(unzip -p "$whl" '*.dist-info/WHEEL' | sed -n 's/^Tag: //p')"
  [ "$tag" = "cp310-abi3-manylinux_2_28_aarch64" ] || die "wheel tag is '$tag', expected cp310-abi3-manylinux_2_28_aarch64"
  log "wheel $(basename "$whl"): tag $tag"
  metadata="$(unzip -p "$whl" '*.dist-info/METADATA')"
  if [ -n "$jetpack" ]; then
    grep -qx "Version: $("$py" -c 'import json; print(json.load(open("versions.json"))["project"])')+cu126" <<<"$metadata" \
      || die "the JetPack 6 wheel's version is not labelled +cu126: $(grep '^Version:' <<<"$metadata")"
    ! grep -q '^Requires-Dist: nvidia-cuda-runtime' <<<"$metadata" \
      || die "the JetPack 6 wheel requires a pip CUDA runtime (JetPack brings its own)"
    log "JetPack 6 wheel: $(grep '^Version:' <<<"$metadata"), no nvidia-cuda-runtime requirement"
  fi
  rm -rf "$build/wheel-check"
  mkdir -p "$build/wheel-check"
  unzip -q "$whl" -d "$build/wheel-check"
  cp -a "$site/executorch" "$build/wheel-check/"
  [ -n "$jetpack" ] || cp -a "$site/nvidia" "$build/wheel-check/"
  in_wheel=("$build/wheel-check/torch_tensorrt_executorch_runtime/lib/libexecutorch_backend_tensorrt.so"
    "$build/wheel-check/torch_tensorrt_executorch_runtime/_native/_compiled.abi3.so")
  for major in "${majors[@]}"; do
    wheel_provider="$build/wheel-check/torch_tensorrt_executorch_runtime/lib/libtte_provider_tensorrt$major.so"
    [ -f "$wheel_provider" ] || die "the aarch64 wheel has no native TensorRT $major provider (lib/libtte_provider_tensorrt$major.so)"
    in_wheel+=("$wheel_provider")
  done
  "$py" scripts/conda/elf-check.py --root "$build/wheel-check" --machine AArch64 \
    --system libstdc++.so.6 --system libgcc_s.so.1 "${system_cuda[@]}" --forbid libnvinfer "${in_wheel[@]}"
  if [ -n "$jetpack" ]; then
    log "readelf report of the JetPack 6 wheel"
    "$py" scripts/ci/elf-floors.py --glibc 2.35 --glibcxx 3.4.30 "${in_wheel[@]}" >&2
    "$py" scripts/ci/elf-floors.py --needs libcudart.so.12 "${in_wheel[0]}" >/dev/null
  fi
fi
log "done"
