#!/usr/bin/env bash
# Build the plugin exactly as the conda recipe does (recipe/build.sh and the
# recipe's install scripts) against a prefix laid out like a conda-forge
# environment, populated from the pip wheels of the same components:
#   lib/ include/ share/cmake/   ExecuTorch (recipe/install-executorch-wheel.sh)
#   targets/<arch>-linux/        CUDA runtime and crt headers, libcudart linked into lib/
#   lib/libstdc++.so.6 ...       what conda-forge's libstdcxx and libgcc put there
#   bin/python, site-packages    the interpreter (a venv), numpy, flatbuffers
# Then readelf checks that every NEEDED library resolves inside the prefix
# through $ORIGIN-relative paths, and the plugin, tte-run, the Python package,
# its CLI and C++ programs using the CMake packages run with a clean
# environment (no LD_LIBRARY_PATH). TensorRT headers are not installable here,
# so the native provider is off (the recipe builds it against libnvinfer-devel).
#
# Usage: scripts/conda/prefix-check.sh [CUDA...]   CUDA: 13.0 (default), 12.9
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cudas=("$@")
[ ${#cudas[@]} -gt 0 ] || cudas=(13.0)

log() { printf '[conda-prefix-check] %s\n' "$*" >&2; }
[ -x .venv/bin/cmake ] || { log "run scripts/setup.sh first (needs .venv with cmake and ninja)"; exit 1; }
py=.venv/bin/python
executorch_version="$($py -c 'import json; print(json.load(open("versions.json"))["executorch"])')"
wheels="$root/build/conda-wheels"
mkdir -p "$wheels"

# pip download, cached: NAME SPEC PLATFORM-TAGS...
fetch() {
  local spec="$1"; shift
  local plats=()
  for p in "$@"; do plats+=(--platform "$p"); done
  "$py" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 "${plats[@]}" \
    -d "$wheels" "$spec" >&2
}
manylinux=(manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_12_x86_64 manylinux2010_x86_64)
fetch "executorch==$executorch_version" manylinux_2_28_x86_64
et_wheel="$(ls "$wheels"/executorch-"$executorch_version"-cp312-*x86_64.whl)"

for cuda in "${cudas[@]}"; do
  base="$root/build/conda-prefix/cuda${cuda//./}"
  prefix="$base/env"
  work="$base/work"
  log "CUDA $cuda: prefix $prefix"
  rm -rf "$base"
  mkdir -p "$work"

  # The recipe's source: the files git does not ignore, as rattler-build copies them.
  git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$work"

  python3 -m venv "$prefix"
  pythonver="$("$prefix/bin/python" -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
  site="$prefix/lib/$pythonver/site-packages"

  # libexecutorch + libexecutorch-devel
  cp "$et_wheel" "$work/executorch.whl"
  (cd "$work" && PREFIX="$prefix" bash recipe/install-executorch-wheel.sh)

  # cuda-cudart, cuda-cudart-dev, cuda-crt-dev_linux-64
  target="$prefix/targets/x86_64-linux"
  mkdir -p "$target/include" "$target/lib" "$base/cuda"
  case "$cuda" in
    13.*)
      fetch "nvidia-cuda-runtime==$cuda.*" "${manylinux[@]}"
      fetch "nvidia-cuda-crt==$cuda.*" "${manylinux[@]}"
      for w in "$wheels"/nvidia_cuda_runtime-"$cuda".*.whl "$wheels"/nvidia_cuda_crt-"$cuda".*.whl; do
        unzip -q -o "$w" -d "$base/cuda"
      done
      cuda_dir="$base/cuda/nvidia/cu13"
      cp -a "$cuda_dir/include/." "$target/include/"
      soname=libcudart.so.13 ;;
    12.*)
      fetch "nvidia-cuda-runtime-cu12==$cuda.*" "${manylinux[@]}"
      # CUDA 12 keeps crt/ with nvcc; conda-forge ships it as cuda-crt-dev.
      fetch "nvidia-cuda-nvcc-cu12==$cuda.*" "${manylinux[@]}"
      unzip -q -o "$(ls "$wheels"/nvidia_cuda_runtime_cu12-"$cuda".*.whl)" -d "$base/cuda"
      unzip -q -o "$(ls "$wheels"/nvidia_cuda_nvcc_cu12-"$cuda".*.whl)" 'nvidia/cuda_nvcc/include/crt/*' -d "$base/cuda"
      cuda_dir="$base/cuda/nvidia/cuda_runtime"
      cp -a "$cuda_dir/include/." "$target/include/"
      cp -a "$base/cuda/nvidia/cuda_nvcc/include/crt" "$target/include/"
      soname=libcudart.so.12 ;;
    *) log "unknown CUDA version $cuda (use 13.0 or 12.9)"; exit 1 ;;
  esac
  cp -L "$cuda_dir/lib/$soname" "$target/lib/"
  ln -s "$soname" "$target/lib/libcudart.so"
  ln -s "../targets/x86_64-linux/lib/$soname" "$prefix/lib/$soname"

  # nlohmann_json (header-only, with its CMake package)
  cp -a /usr/include/nlohmann "$prefix/include/"
  mkdir -p "$prefix/share/cmake"
  cp -a /usr/share/cmake/nlohmann_json "$prefix/share/cmake/"

  # libstdcxx, libgcc
  for lib in libstdc++.so.6 libgcc_s.so.1; do
    cp -L "$(gcc -print-file-name="$lib")" "$prefix/lib/"
  done

  # Host requirements of the Python output.
  "$prefix/bin/python" -m pip install -q numpy flatbuffers scikit-build-core

  log "CUDA $cuda: recipe/build.sh"
  (cd "$work" && env SRC_DIR="$work" PREFIX="$prefix" target_platform=linux-64 CPU_COUNT=2 \
     CMAKE_ARGS="-DCMAKE_PREFIX_PATH=$prefix" TTE_RUN_TESTS=OFF TTE_WITH_TENSORRT=OFF \
     PATH="$root/.venv/bin:$PATH" bash recipe/build.sh > "$base/build.log" 2>&1) \
    || { tail -40 "$base/build.log"; log "recipe/build.sh failed (log: $base/build.log)"; exit 1; }
  log "CUDA $cuda: recipe/install-python-package.sh"
  (cd "$work" && env PREFIX="$prefix" PYTHON="$prefix/bin/python" SP_DIR="$site" \
     bash recipe/install-python-package.sh > "$base/python.log" 2>&1) \
    || { tail -40 "$base/python.log"; log "recipe/install-python-package.sh failed (log: $base/python.log)"; exit 1; }
  # What conda makes at install time from the recipe's build.python.entry_points.
  printf '#!%s\nimport sys\nfrom torch_tensorrt_executorch_runtime.cli import main\nsys.exit(main())\n' \
    "$prefix/bin/python" > "$prefix/bin/torch-tensorrt-executorch"
  chmod +x "$prefix/bin/torch-tensorrt-executorch"

  log "CUDA $cuda: readelf: every NEEDED library inside the prefix, \$ORIGIN-relative"
  "$py" scripts/conda/elf-check.py --root "$prefix" --machine "Advanced Micro Devices X86-64" \
    "$prefix/lib/libexecutorch_backend_tensorrt.so" "$prefix/bin/tte-run" \
    "$site/torch_tensorrt_executorch_runtime/lib/libexecutorch_backend_tensorrt.so"

  # What a user of the environment runs, with nothing inherited from this shell.
  clean=(env -i HOME="$HOME" PATH="$prefix/bin:/usr/bin:/bin")
  log "CUDA $cuda: load, import and run with a clean environment"
  "${clean[@]}" "$prefix/bin/python" - "$prefix/lib/libexecutorch_backend_tensorrt.so" <<'EOF'
import ctypes, os, sys
plugin = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)
plugin.tte_c_api_version.restype = ctypes.c_uint32
print(f"plugin loaded with RTLD_NOW, C API version {plugin.tte_c_api_version()}")
EOF
  "${clean[@]}" "$prefix/bin/tte-run" --help > /dev/null
  echo "tte-run --help: ok"
  "${clean[@]}" "$prefix/bin/python" -c \
    'import torch_tensorrt_executorch_runtime as t, torch_tensorrt_executorch_runtime._library as l; print("imported", t.__name__, "plugin", l.loaded_plugin() is not None and l.plugin_path())'
  "${clean[@]}" "$prefix/bin/torch-tensorrt-executorch" --help > /dev/null
  echo "torch-tensorrt-executorch --help: ok"
  "${clean[@]}" "$prefix/bin/torch-tensorrt-executorch" doctor
  echo "torch-tensorrt-executorch doctor: exit 0"

  log "CUDA $cuda: C++ programs through the CMake packages (the -devel outputs' tests)"
  for consumer in executorch-consumer plugin-consumer; do
    .venv/bin/cmake -S "recipe/tests/$consumer" -B "$base/$consumer" -G Ninja \
      -DCMAKE_MAKE_PROGRAM="$root/.venv/bin/ninja" -DCMAKE_PREFIX_PATH="$prefix" > "$base/$consumer.log" 2>&1 \
      && .venv/bin/cmake --build "$base/$consumer" >> "$base/$consumer.log" 2>&1 \
      || { tail -30 "$base/$consumer.log"; log "$consumer failed to build"; exit 1; }
    "${clean[@]}" "$base/$consumer/$consumer"
  done
  log "CUDA $cuda: all checks passed"
done
