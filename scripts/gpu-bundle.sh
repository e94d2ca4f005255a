#!/usr/bin/env bash
# Collect what scripts/gpu-check.sh needs on a GPU machine (Python 3.12, no
# network) into one folder: wheels, test providers, GPU test binaries,
# benchmark baselines and packed programs. Run after scripts/build.sh.
# Usage: scripts/gpu-bundle.sh OUT_DIR [PYTHON_VERSION]   (default 3.12)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="${1:?usage: $0 OUT_DIR [PYTHON_VERSION]}"
pyver="${2:-3.12}"
build=build/wheel/cpp
py=.venv/bin/python
rm -rf "$out"; mkdir -p "$out"/{whl,providers,bin,programs,cpp-fixtures}
[ -n "$(ls build/dist/*.whl 2>/dev/null)" ] || { echo "run scripts/build.sh first" >&2; exit 1; }
cp build/dist/torch_tensorrt_executorch_runtime-*.whl "$out/whl/"
$py -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$out/whl" executorch==1.5.1 "nvidia-cuda-runtime==13.0.96" flatbuffers pytest pluggy iniconfig packaging
for p in libtte_test_provider_host.so libtte_test_provider_cuda.so; do
  strip -o "$out/providers/$p" "$build/$p"
done
for t in test_backend_gpu test_program_gpu test_cuda_test_provider; do
  strip -o "$out/bin/$t" "$build/tests/$t"
done
cp build/wheel/bench/tte-cuda-baselines "$out/bin/"
$py tests/fixtures/make_cpp_fixtures.py "$out/cpp-fixtures" >/dev/null
$py tests/gpu/make_gpu_programs.py "$out/programs" >/dev/null
du -sh "$out"
