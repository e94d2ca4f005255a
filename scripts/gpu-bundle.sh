#!/usr/bin/env bash
# Collect what scripts/gpu-check.sh needs on a GPU machine (Python 3.12, no
# network) into one folder: wheels, test providers, GPU test binaries,
# benchmark baselines and packed programs, and native/ for the native
# TensorRT providers (one test binary per TensorRT major, and programs whose
# plans say TensorRT 10.16.1 and 11.4.0 and which no TensorRT can read).
# Run after scripts/build.sh.
#
# --tensorrt-lean LEAN10_DIR LEAN11_DIR makes a bundle for the native
# providers only (the wheels and native/, without the other GPU tests) and
# puts PyPI's lean runtimes (tensorrt-lean-cu13-libs, 44 MB each) of
# TensorRT 10 and 11 (versions.json: tensorrt_lean_checked) in the two folders: one call
# to a GPU machine carries at most 64 MiB with the working tree, so the
# three folders travel in three calls (copy the first two to ~ there).
# gpu-check.sh BUNDLE OUT LEAN10_DIR LEAN11_DIR then creates both runtimes in
# one process and checks that the plan's header picks the provider.
# --serving PYTRITON_DIR makes a bundle for the Triton serving check only
# (tests/serving/test_triton.py with the CUDA test provider, and
# bench/bench_serving.py): its wheels (tritonclient and what it needs), the
# test providers and programs in serving/, and the nvidia-pytriton wheel
# (53 MB: tritonserver and the Python backend stubs) alone in PYTRITON_DIR,
# which travels in a call of its own first (copied to ~ there).
# Usage: scripts/gpu-bundle.sh [--tensorrt-lean LEAN10_DIR LEAN11_DIR | --serving PYTRITON_DIR] OUT_DIR [PYTHON_VERSION]   (default 3.12)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
lean=""
lean10=""
serving=""
if [ "${1:-}" = "--tensorrt-lean" ]; then
  lean10="${2:?--tensorrt-lean needs two folders: LEAN10_DIR LEAN11_DIR}"
  lean="${3:?--tensorrt-lean needs two folders: LEAN10_DIR LEAN11_DIR}"
  shift 3
elif [ "${1:-}" = "--serving" ]; then
  serving="${2:?--serving needs a folder}"; shift 2
fi
out="${1:?usage: $0 [--tensorrt-lean LEAN10_DIR LEAN11_DIR | --serving PYTRITON_DIR] OUT_DIR [PYTHON_VERSION]}"
pyver="${2:-3.12}"
build=build/wheel/cpp
py=.venv/bin/python
rm -rf "$out"; mkdir -p "$out"/{whl,providers,bin,programs,cpp-fixtures,native}
[ -n "$(ls build/dist/*.whl 2>/dev/null)" ] || { echo "run scripts/build.sh first" >&2; exit 1; }
cp build/dist/torch_tensorrt_executorch_runtime-*.whl "$out/whl/"
download() {
  local into="$1"; shift
  scripts/with-retries.sh scripts/pip-refetch.py $py -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$into" "$@"
}
if [ -n "$serving" ]; then
  rm -rf "$serving"; mkdir -p "$serving" "$out/serving"
  # Its only wheel is manylinux_2_35 (glibc 2.35 or newer on the GPU machine).
  scripts/with-retries.sh scripts/pip-refetch.py $py -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" --implementation cp \
    --platform manylinux_2_35_x86_64 -d "$serving" nvidia-pytriton==0.7.0
  # tritonclient[http,grpc] and its dependencies (the GPU machine has numpy and torch).
  download "$out/whl" executorch==1.5.1 "nvidia-cuda-runtime==13.0.96" flatbuffers pytest pluggy iniconfig packaging \
    "tritonclient[http,grpc]==2.73.0" geventhttpclient "greenlet<3.4" gevent zope.event zope.interface grpcio \
    "protobuf>=6.30,<7" python-rapidjson "ml-dtypes<=0.5.4" urllib3 aiohttp multidict yarl frozenlist aiosignal \
    propcache aiohappyeyeballs attrs idna brotli certifi psutil
  for p in libtte_test_provider_host.so libtte_test_provider_cuda.so; do
    strip -o "$out/providers/$p" "$build/$p"
  done
  $py tests/serving/make_serving_programs.py "$out/serving" device_resident
  # The serving benchmark's program (the GPU machine cannot pack).
  serving_programs="$(cd "$out/serving" && pwd)"
  (cd bench && ../$py -c 'import sys; from pathlib import Path; from bench_serving import pack_add_one
pack_add_one(Path(sys.argv[1]), "device_resident")' "$serving_programs") >/dev/null
  [ -f "$serving_programs/add_one_256.pte" ] || { echo "gpu-bundle: the serving benchmark's program was not packed" >&2; exit 1; }
  rmdir "$out"/{bin,programs,cpp-fixtures,native}
  du -sh "$out" "$serving"
  exit 0
fi
if [ -n "$lean" ]; then
  rm -rf "$lean" "$lean10"; mkdir -p "$lean" "$lean10"
  # The versions the checks use (versions.json).
  lean_pin() { $py -c 'import json, sys; print(json.load(open("versions.json"))["tensorrt_lean_checked"][sys.argv[1]])' "$1"; }
  download "$lean10" "tensorrt-lean-cu13-libs==$(lean_pin 10)"
  download "$lean" "tensorrt-lean-cu13-libs==$(lean_pin 11)"
  download "$out/whl" executorch==1.5.1 "nvidia-cuda-runtime==13.0.96" flatbuffers
else
  download "$out/whl" executorch==1.5.1 "nvidia-cuda-runtime==13.0.96" flatbuffers pytest pluggy iniconfig packaging
fi

# The native providers: their test binaries (TensorRT is found at run time)
# and, per major, a program whose engine is a TensorRT-looking plan that says
# which TensorRT built it and that no TensorRT can read.
majors=""
for major in 10 11; do
  [ -f "$build/libtte_provider_tensorrt$major.so" ] || continue
  majors="$majors $major"
  strip -o "$out/native/test_native_tensorrt${major}_provider" "$build/tests/test_native_tensorrt${major}_provider"
done
if [ -n "$majors" ]; then
  for version in 10.16.1 11.4.0; do
    $py - "$out/native/unreadable-$version.plan" "$version" <<'PY'
import random, sys
plan = bytearray(random.Random(7).getrandbits(8) for _ in range(4096))
plan[0:8] = b"ftrt" + bytes(4)       # TensorRT's plan tag, serialization version 0
plan[24:28] = bytes([int(v) for v in sys.argv[2].split(".")] + [0])  # "built by TensorRT <version>"
open(sys.argv[1], "wb").write(bytes(plan))
PY
    .venv/bin/torch-tensorrt-executorch pack "$out/native/unreadable-$version.pte" \
      --engine "$out/native/unreadable-$version.plan" --input x:float32:2,4 --output y:float32:x:0,4 >/dev/null 2>&1
    rm "$out/native/unreadable-$version.plan"
  done
  echo "[gpu-bundle] native TensorRT providers:$majors" >&2
else
  echo "[gpu-bundle] this build has no native TensorRT provider: native/ stays empty" >&2
fi
if [ -n "$lean" ]; then
  du -sh "$out" "$lean10" "$lean"
  exit 0
fi

for p in libtte_test_provider_host.so libtte_test_provider_cuda.so; do
  strip -o "$out/providers/$p" "$build/$p"
done
for t in test_backend_gpu test_program_gpu test_cuda_test_provider test_shared_engines_gpu test_scratch_arenas; do
  strip -o "$out/bin/$t" "$build/tests/$t"
done
cp build/wheel/bench/tte-cuda-baselines "$out/bin/"
# bench/cuda_call_counts.py preloads it (gpu-check.sh).
gcc -O2 -shared -fPIC -o "$out/bin/libcuda_call_counter.so" bench/cuda_call_counter.c -ldl
$py tests/fixtures/make_cpp_fixtures.py "$out/cpp-fixtures" >/dev/null
$py tests/gpu/make_gpu_programs.py "$out/programs" >/dev/null
# The load-memory program (64 MiB of engine, mostly padding): gzipped, since
# a call carries at most 64 MiB; gpu-check.sh unpacks it.
large="$(mktemp -d)"
(cd bench && ../$py -c 'import sys; from pathlib import Path; from load_memory import pack_large_program
pack_large_program(Path(sys.argv[1]) / "large.pte", 64)' "$large") >/dev/null
gzip -1 -c "$large/large.pte" > "$out/programs/large.pte.gz"
cp "$large/large-warm.pte" "$out/programs/"
rm -rf "$large"
du -sh "$out"
