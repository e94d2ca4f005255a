#!/usr/bin/env bash
# Run every GPU test and benchmark on a machine with an NVIDIA GPU, from a
# folder of files made where the project builds (scripts/gpu-bundle.sh):
#   whl/        wheels: this package, executorch, nvidia-cuda-runtime, flatbuffers (+ pytest if missing)
#   providers/  libtte_test_provider_{host,cuda}.so
#   bin/        C++ GPU test binaries and tte-cuda-baselines
#   programs/   .pte files from tests/gpu/make_gpu_programs.py
#   cpp-fixtures/ the C++ tests' fixture programs
#   native/     the native TensorRT providers' test binaries (one per major) and
#               unreadable-10.16.1.pte, unreadable-11.4.0.pte
# LEAN10_DIR and LEAN11_DIR (gpu-bundle.sh --tensorrt-lean) hold
# tensorrt-lean-cu13-libs of TensorRT 10 and 11, one distribution, so pip
# holds one at a time: 11 is installed beside the package (where the 11
# provider finds it), 10 into a folder of its own that
# TORCH_TENSORRT_EXECUTORCH_TENSORRT10_LIBRARY names to the 10 provider. Both
# runtimes are then created in one process.
#   serving/    (gpu-bundle.sh --serving) programs for the Triton serving check;
#               for a serving bundle the third argument is PYTRITON_DIR, the
#               nvidia-pytriton wheel.
# The GPU machine needs no network and no build tools. Results go to OUT_DIR.
# Usage: scripts/gpu-check.sh BUNDLE_DIR OUT_DIR [LEAN10_DIR LEAN11_DIR | PYTRITON_DIR]
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
lean10_site=""
if [ -d "$bundle/serving" ]; then
  [ -n "${3:-}" ] && wheels+=("$(cd "$3" && pwd)"/*.whl)
elif [ -n "${3:-}" ]; then
  wheels+=("$(cd "${4:?LEAN10_DIR needs LEAN11_DIR}" && pwd)"/*.whl)
  lean10_site="$(mktemp -d)/lean10"
  $py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$lean10_site" \
    "$(cd "$3" && pwd)"/*.whl || exit 1
fi
$py -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$site" "${wheels[@]}" || exit 1
export PYTHONPATH="$site"
export TTE_TEST_PROVIDER_DIR="$bundle/providers"
export TTE_GPU_PROGRAMS="$bundle/programs"
libs="$site/torch_tensorrt_executorch_runtime/lib:$site/executorch/lib:$site/nvidia/cu13/lib"

# The 10 provider is pointed at its own copy (the site holds 11's), for
# every process from here on.
if [ -n "$lean10_site" ]; then
  export TORCH_TENSORRT_EXECUTORCH_TENSORRT10_LIBRARY="$lean10_site/tensorrt_lean_libs/libnvinfer_lean.so.10"
fi

echo "[gpu-check] doctor"
$py -m torch_tensorrt_executorch_runtime doctor 2>&1 | tee "$out/doctor.log" || status=1

native_check() {
  local lean11 lean10 ran major
  lean11="$(ls "$site"/tensorrt_lean_libs/libnvinfer_lean.so.11 2>/dev/null | head -1)"
  lean10="${TORCH_TENSORRT_EXECUTORCH_TENSORRT10_LIBRARY:-}"
  echo "--- providers, as tte-run finds them with no options"
  "$site/torch_tensorrt_executorch_runtime/bin/tte-run" --list-providers || return 1
  for major in 10 11; do
    local binary="$bundle/native/test_native_tensorrt${major}_provider" lib
    [ -x "$binary" ] || continue
    lib="$lean11"; [ "$major" = 10 ] && lib="$lean10"
    echo "--- the TensorRT $major provider's test: runtime creation, unreadable plans refused (TensorRT: ${lib:-none})"
    # The search-order tests need the stand-in libraries built beside the
    # test in the build tree; ctest runs them where the project builds.
    env LD_LIBRARY_PATH="$libs" "TORCH_TENSORRT_EXECUTORCH_TENSORRT${major}_LIBRARY=$lib" \
      "TTE_TEST_TENSORRT${major}_LEAN_LIBRARY=$lib" "$binary" \
      --gtest_filter='NativeTensorRtProvider*:NativeTensorRtLibrary.LoadsARealLeanRuntime:NativeTensorRtLibrary.DecodesVersionsAsTensorRtPacksThem:NativeTensorRtLibrary.SaysWhereItLookedAndWhatToInstall' || return 1
  done
  for version in 10.16.1 11.4.0; do
    major="${version%%.*}"
    echo "--- tte-run, no options: the plan built by TensorRT $version goes to tensorrt-native-$major"
    ran="$("$site/torch_tensorrt_executorch_runtime/bin/tte-run" "$bundle/native/unreadable-$version.pte" 2>&1)"
    echo "$ran"
    if [ -n "$lean10" ] && [ -n "$lean11" ]; then
      grep -q "'tensorrt-native-$major': TensorRT $major\.[0-9.]* (lean) could not deserialize" <<<"$ran" || return 1
    fi
  done
  echo "--- tte.load in one process: both runtimes, the plan's header picks, each refuses the other's plans"
  $py - "$bundle/native" "$lean10" "$lean11" <<'PY' || return 1
import re
import sys
import numpy
import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime import _native
from torch_tensorrt_executorch_runtime.errors import Error

folder, lean10, lean11 = sys.argv[1:4]
real = bool(lean10 and lean11)
print("providers:", tte.providers.providers())
for name in ("tensorrt-native-10", "tensorrt-native-11"):
    print(f"{name}:", _native.provider_runtime(name))


def refusal(version, options=None):
    """The message of loading and running the plan that says TensorRT `version`."""
    try:
        tte.load(f"{folder}/unreadable-{version}.pte", options=options).run([numpy.ones((2, 4), "float32")])
    except Error as exc:
        print(f"{version} {options or ''}: {type(exc).__name__}: {exc}")
        return str(exc)
    sys.exit(f"the unreadable plan of TensorRT {version} ran")


failures = []
for version, major in (("10.16.1", 10), ("11.4.0", 11)):
    other = 11 if major == 10 else 10
    # No option, and "tensorrt-native": the provider of the plan's major, whose
    # TensorRT (created in this process) refuses the bytes.
    for options in (None, {"provider": "tensorrt-native"}):
        text = refusal(version, options)
        if real and not re.search(
            rf"'tensorrt-native-{major}'[^;]*TensorRT {major}\.[0-9.]+ \(lean\) could not deserialize", text
        ):
            failures.append(f"{version} {options}: not refused by tensorrt-native-{major}'s TensorRT")
    # The other major's provider, named: refused before its TensorRT sees it.
    text = refusal(version, {"provider": f"tensorrt-native-{other}"})
    wanted = f"the plan was built by TensorRT {version}, and tensorrt-native-{other} runs TensorRT {other} plans only"
    if wanted not in text:
        failures.append(f"{version} on tensorrt-native-{other}: expected '{wanted}'")
if real:
    for name, major in (("tensorrt-native-10", 10), ("tensorrt-native-11", 11)):
        if not _native.provider_runtime(name).startswith(f"TensorRT {major}."):
            failures.append(f"{name} found no TensorRT {major}")
if failures:
    sys.exit("; ".join(failures))
print("both majors served in one process" if real else "no lean runtimes given: routing checked only")
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
    --provider-library "$bundle/providers/libtte_test_provider_cuda.so" --program "$bundle/serving/add_one_256.pte" \
    --out "$out/bench-serving.json" 2>&1 \
    | tee "$out/bench-serving.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  echo "[gpu-check] done (serving bundle), status $status"
  exit $status
fi

if ls "$bundle"/native/test_native_tensorrt*_provider >/dev/null 2>&1; then
  echo "[gpu-check] native TensorRT providers"
  native_check 2>&1 | tee "$out/native.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
if [ ! -d "$bundle/bin" ] || [ -z "$(ls "$bundle/bin" 2>/dev/null)" ]; then
  echo "[gpu-check] done (native bundle), status $status"
  exit $status
fi

step_start=$SECONDS
took() { echo "[gpu-check] $1 took $((SECONDS - step_start)) s"; step_start=$SECONDS; }

echo "[gpu-check] C++ GPU tests"
: > "$out/cpp-gpu-tests.log"
for t in "$bundle"/bin/test_*; do
  [ -x "$t" ] || continue
  echo "--- $(basename "$t")" | tee -a "$out/cpp-gpu-tests.log"
  LD_LIBRARY_PATH="$libs:$bundle/providers" TTE_CPP_FIXTURE_DIR="$bundle/cpp-fixtures" "$t" 2>&1 | tail -n 40 | tee -a "$out/cpp-gpu-tests.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done

took "C++ GPU tests"

echo "[gpu-check] Python GPU tests"
(cd "$root" && $py -m pytest -q -p no:cacheprovider --import-mode=importlib -rs tests/gpu) 2>&1 | tee "$out/python-gpu-tests.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1

took "Python GPU tests"

# bench_gpu.py: every comparison in interleaved rounds (median and spread),
# the fresh-tensor CUDA-graph loop, load_host_memory with the CUDA provider.
echo "[gpu-check] benchmarks"
large="$(mktemp -d)"
gunzip -c "$bundle/programs/large.pte.gz" > "$large/large.pte" && cp "$bundle/programs/large-warm.pte" "$large/"
$py "$root/bench/bench_gpu.py" --programs "$bundle/programs" --providers "$bundle/providers" \
  --bin "$bundle/bin" --tte-run "$site/torch_tensorrt_executorch_runtime/bin/tte-run" \
  --load-memory-program "$large/large.pte" --out "$out/bench.json" 2>&1 | tee "$out/bench.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
took "benchmarks"

# Which CUDA calls a run makes (a diagnostic: the counting costs time).
echo "[gpu-check] CUDA calls per run"
counter="$bundle/bin/libcuda_call_counter.so"
LD_PRELOAD="$counter" CUDA_CALL_COUNTER="$counter" $py "$root/bench/cuda_call_counts.py" \
  --programs "$bundle/programs" --providers "$bundle/providers" \
  --load-memory-program "$large/large.pte" 2>&1 | tee "$out/cuda-calls.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
took "CUDA calls per run"

echo "[gpu-check] done, status $status"
exit $status
