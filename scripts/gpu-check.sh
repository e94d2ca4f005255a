#!/usr/bin/env bash
# Run every GPU test and benchmark on a machine with an NVIDIA GPU, from a
# folder of files made where the project builds (scripts/gpu-bundle.sh):
#   whl/        wheels: this package, executorch, nvidia-cuda-runtime, flatbuffers (+ pytest if missing)
#   providers/  libtte_test_provider_{host,cuda}.so
#   bin/        C++ GPU test binaries and tte-cuda-baselines
#   programs/   .pte files from tests/gpu/make_gpu_programs.py
#   cpp-fixtures/ the C++ tests' fixture programs
#   native/     optional: the plugin built with the native TensorRT provider, its test, libnvinfer_lean
# The GPU machine needs no network and no build tools. Results go to OUT_DIR.
# Usage: scripts/gpu-check.sh BUNDLE_DIR OUT_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$(cd "${1:?usage: $0 BUNDLE_DIR OUT_DIR}" && pwd)"
out="${2:?usage: $0 BUNDLE_DIR OUT_DIR}"
mkdir -p "$out"
site="$(mktemp -d)/site"
py="${PYTHON:-python3}"
status=0

echo "[gpu-check] $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($py --version)"
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "$bundle"/whl/*.whl || exit 1
export PYTHONPATH="$site"
export TTE_TEST_PROVIDER_DIR="$bundle/providers"
export TTE_GPU_PROGRAMS="$bundle/programs"
libs="$site/torch_tensorrt_executorch_runtime/lib:$site/executorch/lib:$site/nvidia/cu13/lib"

echo "[gpu-check] doctor"
$py -m torch_tensorrt_executorch_runtime doctor 2>&1 | tee "$out/doctor.log" || status=1

echo "[gpu-check] C++ GPU tests"
: > "$out/cpp-gpu-tests.log"
for t in "$bundle"/bin/test_*; do
  [ -x "$t" ] || continue
  echo "--- $(basename "$t")" | tee -a "$out/cpp-gpu-tests.log"
  LD_LIBRARY_PATH="$libs:$bundle/providers" TTE_CPP_FIXTURE_DIR="$bundle/cpp-fixtures" "$t" 2>&1 | tail -n 40 | tee -a "$out/cpp-gpu-tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done

echo "[gpu-check] Python GPU tests"
(cd "$root" && $py -m pytest -q -p no:cacheprovider --import-mode=importlib -rs tests/gpu) 2>&1 | tee "$out/python-gpu-tests.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

echo "[gpu-check] benchmarks"
$py "$root/bench/bench_gpu.py" --programs "$bundle/programs" --providers "$bundle/providers" \
  --bin "$bundle/bin" --tte-run "$site/torch_tensorrt_executorch_runtime/bin/tte-run" \
  --out "$out/bench.json" 2>&1 | tee "$out/bench.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

if [ -d "$bundle/native" ] && [ -x "$bundle/native/run.sh" ]; then
  echo "[gpu-check] native TensorRT provider"
  bash "$bundle/native/run.sh" "$out" 2>&1 | tail -n 60 | tee "$out/native.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
echo "[gpu-check] done, status $status"
exit $status
