#!/usr/bin/env bash
# Run every GPU test and benchmark on a machine with an NVIDIA GPU, from a
# folder of files made where the project builds (scripts/gpu-bundle.sh):
#   whl/        wheels: this package, executorch, nvidia-cuda-runtime, flatbuffers (+ pytest if missing)
#   providers/  libtte_test_provider_{host,cuda}.so
#   bin/        C++ GPU test binaries and tte-cuda-baselines
#   programs/   .pte files from tests/gpu/make_gpu_programs.py
#   cpp-fixtures/ the C++ tests' fixture programs
#   native/     the native TensorRT provider's test binary and unreadable.pte
#   serving/    (gpu-bundle.sh --serving) programs for the Triton serving check
# LEAN_DIR (gpu-bundle.sh --tensorrt-lean) holds tensorrt-lean-cu13-libs: installed
# beside the package, where the native provider finds TensorRT's lean runtime;
# for a serving bundle it is PYTRITON_DIR, the nvidia-pytriton wheel.
# The GPU machine needs no network and no build tools. Results go to OUT_DIR.
# Usage: scripts/gpu-check.sh BUNDLE_DIR OUT_DIR [LEAN_DIR]
set -uo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bundle="$(cd "${1:?usage: $0 BUNDLE_DIR OUT_DIR}" && pwd)"
out="${2:?usage: $0 BUNDLE_DIR OUT_DIR}"
mkdir -p "$out"
site="$(mktemp -d)/site"
py="${PYTHON:-python3}"
status=0

echo "[gpu-check] $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1); $($py --version)"
wheels=("$bundle"/whl/*.whl)
[ -n "${3:-}" ] && wheels+=("$(cd "$3" && pwd)"/*.whl)
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "${wheels[@]}" || exit 1
export PYTHONPATH="$site"
export TTE_TEST_PROVIDER_DIR="$bundle/providers"
export TTE_GPU_PROGRAMS="$bundle/programs"
libs="$site/torch_tensorrt_executorch_runtime/lib:$site/executorch/lib:$site/nvidia/cu13/lib"

echo "[gpu-check] doctor"
$py -m torch_tensorrt_executorch_runtime doctor 2>&1 | tee "$out/doctor.log" || status=1

native_check() {
  local lean_lib
  lean_lib="$(ls "$site"/tensorrt_lean_libs/libnvinfer_lean.so.* 2>/dev/null | head -1)"
  echo "--- providers, as tte-run finds them with no options"
  "$site/torch_tensorrt_executorch_runtime/bin/tte-run" --list-providers || return 1
  echo "--- the provider test: runtime creation, unreadable plans refused (TensorRT: ${lean_lib:-none})"
  # The search-order tests need the stand-in libraries built beside the test
  # in the build tree; ctest runs them where the project builds.
  LD_LIBRARY_PATH="$libs" TORCH_TENSORRT_EXECUTORCH_TENSORRT_LIBRARY="$lean_lib" \
    TTE_TEST_TENSORRT_LEAN_LIBRARY="$lean_lib" "$bundle/native/test_native_tensorrt_provider" \
    --gtest_filter='NativeTensorRtProvider*:NativeTensorRtLibrary.LoadsARealLeanRuntime:NativeTensorRtLibrary.DecodesVersionsAsTensorRtPacksThem:NativeTensorRtLibrary.SaysWhereItLookedAndWhatToInstall' || return 1
  echo "--- tte-run, no options: the native provider is chosen and refuses the plan"
  local ran
  ran="$("$site/torch_tensorrt_executorch_runtime/bin/tte-run" "$bundle/native/unreadable.pte" 2>&1)"
  echo "$ran"
  if [ -n "$lean_lib" ]; then
    grep -q "'tensorrt-native': TensorRT 11\.[0-9.]* (lean) could not deserialize" <<<"$ran" || return 1
  fi
  echo "--- tte.load with no options: the same"
  $py - "$bundle/native/unreadable.pte" "$lean_lib" <<'PY' || return 1
import sys
import numpy
import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime import _native
from torch_tensorrt_executorch_runtime.errors import Error
print("providers:", tte.providers.providers())
print("tensorrt-native:", _native.provider_runtime("tensorrt-native"))
try:
    tte.load(sys.argv[1]).run([numpy.ones((2, 4), "float32")])
    sys.exit("the unreadable plan ran")
except Error as exc:
    print(type(exc).__name__, exc)
    if sys.argv[2] and "'tensorrt-native': TensorRT 11" not in str(exc):
        sys.exit("the native provider did not refuse the plan with its TensorRT")
PY
}

if [ -d "$bundle/serving" ]; then
  # Triton's Python backend stub ignores PYTHONPATH: it sees the site-packages of the python3
  # first on PATH. So the serving check runs from a venv (over the machine's torch, numpy and
  # cuda-bindings) holding the same wheels; server_process puts its bin first on PATH.
  venv="$(dirname "$site")/venv"
  $py -m venv --without-pip --system-site-packages "$venv" || exit 1
  vsite="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$vsite" "${wheels[@]}" || exit 1
  # The machine's python3 may itself be a venv, whose packages --system-site-packages misses.
  env -u PYTHONPATH $py -c 'import site, sysconfig; print("\n".join(dict.fromkeys(site.getsitepackages() + [sysconfig.get_paths()["purelib"]])))' \
    > "$vsite/machine-site-packages.pth"
  echo "[gpu-check] Triton serving: the CUDA test provider, device-resident programs"
  (cd "$root" && env -u PYTHONPATH TTE_SERVING_PROVIDER=test-cuda TTE_SERVING_PLACEMENT=device_resident \
    TTE_SERVING_PROGRAMS="$bundle/serving" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    --import-mode=importlib -rs -s tests/serving/test_triton.py) 2>&1 | tee "$out/serving-tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  echo "[gpu-check] serving benchmark"
  env -u PYTHONPATH "$venv/bin/python" "$root/bench/bench_serving.py" --provider test-cuda --placement device_resident \
    --provider-library "$bundle/providers/libtte_test_provider_cuda.so" --out "$out/bench-serving.json" 2>&1 \
    | tee "$out/bench-serving.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  echo "[gpu-check] done (serving bundle), status $status"
  exit $status
fi

if [ -f "$bundle/native/test_native_tensorrt_provider" ]; then
  echo "[gpu-check] native TensorRT provider"
  native_check 2>&1 | tee "$out/native.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if [ ! -d "$bundle/bin" ] || [ -z "$(ls "$bundle/bin" 2>/dev/null)" ]; then
  echo "[gpu-check] done (native bundle), status $status"
  exit $status
fi

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

echo "[gpu-check] done, status $status"
exit $status
