#!/usr/bin/env bash
# The wheel on every CPython its tag promises (cp310-abi3: 3.10 and later):
# for each of 3.10 to 3.14 found through pyenv or on PATH, a --target install
# of the wheel and what a run needs (executorch, nvidia-cuda-runtime, numpy,
# flatbuffers; no torch, so numpy-only use is what runs) imports the package
# and runs a packed program through the compiled binding, with owned outputs,
# views and a refused input. Versions that are not installed are listed, not
# failed. A step of scripts/test.sh (not of --quick).
# Usage: scripts/ci/check-cpythons.sh [WHEEL]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
[ -x .venv/bin/python ] || scripts/setup.sh
wheel="${1:-$(ls build/dist/torch_tensorrt_executorch_runtime-*.whl 2>/dev/null | head -1)}"
[ -f "$wheel" ] || { echo "[check-cpythons] no wheel: run scripts/build.sh first" >&2; exit 1; }
provider_dir="${TTE_TEST_PROVIDER_DIR:-$root/build/wheel/cpp}"
provider="$provider_dir/libtte_test_provider_host.so"
[ -f "$provider" ] || { echo "[check-cpythons] $provider is not built: run scripts/build.sh" >&2; exit 1; }
executorch="$(.venv/bin/python -c 'import json; print(json.load(open("versions.json"))["executorch"])')"
work=build/check-cpythons
rm -rf "$work"; mkdir -p "$work"
# Each install is a few hundred MB: gone when the check is.
trap 'rm -rf "$work"' EXIT

# Packed once, here: packing needs torch, which the checked installs lack.
.venv/bin/python - "$work/add_one.pte" <<'PY'
import sys
from torch_tensorrt_executorch_runtime.pack import TensorSpec, pack_program
from torch_tensorrt_executorch_runtime.testing import test_engine_spec
spec = test_engine_spec("add_one", [TensorSpec("x", "float32", [2, 4])], [TensorSpec("y", "float32", ["x:0", "x:1"])])
pack_program(sys.argv[1], [spec])
PY

find_python() {
  local version="$1" prefix
  if command -v pyenv >/dev/null && prefix="$(pyenv prefix "$version" 2>/dev/null)" &&
    [ -x "$prefix/bin/python$version" ]; then
    echo "$prefix/bin/python$version"
  elif command -v "python$version" >/dev/null; then
    command -v "python$version"
  fi
}

passed=(); failed=(); missing=()
for version in 3.10 3.11 3.12 3.13 3.14; do
  py="$(find_python "$version")"
  if [ -z "$py" ]; then
    missing+=("$version"); continue
  fi
  site="$work/site-$version"
  echo "[check-cpythons] CPython $version ($py)" >&2
  if ! scripts/with-retries.sh scripts/pip-refetch.py "$py" -m pip install -q --disable-pip-version-check \
      --no-deps --target "$site" "$wheel" \
      "executorch==$executorch" "nvidia-cuda-runtime>=13,<14" numpy flatbuffers; then
    failed+=("$version (install)"); continue
  fi
  if env -u TORCH_TENSORRT_EXECUTORCH_LIBRARY PYTHONPATH="$site" PYTHONNOUSERSITE=1 \
      "$py" - "$provider" "$work/add_one.pte" <<'PY'
import sys
import numpy as np
import torch_tensorrt_executorch_runtime as tte
from torch_tensorrt_executorch_runtime._native import _compiled, methods

assert _compiled.__file__.endswith(".abi3.so"), _compiled.__file__
assert "torch" not in sys.modules, "numpy-only use imported torch"
tte.register_provider_library(sys.argv[1])
program = tte.load(sys.argv[2])
x = np.arange(8, dtype=np.float32).reshape(2, 4)
(y,) = program.forward(x)
assert isinstance(y, np.ndarray) and (y == x + 1).all(), y
(view,) = program.run([x + 1], copy=False)
program.close()
assert (view == x + 2).all(), view
try:
    tte.load(sys.argv[2]).forward(np.zeros((2, 5), dtype=np.float32))
except tte.errors.InvalidArgumentError as error:
    assert "[2, 5]" in str(error), error
else:
    raise AssertionError("a wrong shape was accepted")
assert methods.stats()["protocol_inputs"] >= 2
print(f"CPython {sys.version.split()[0]}: imported, ran, refused (binding {_compiled.__file__.rsplit('/', 1)[1]})")
PY
  then passed+=("$version"); else failed+=("$version"); fi
done

echo "[check-cpythons] passed: ${passed[*]:-none}" >&2
[ ${#missing[@]} -eq 0 ] || echo "[check-cpythons] not installed here, not checked: ${missing[*]}" >&2
[ ${#failed[@]} -eq 0 ] || { echo "[check-cpythons] FAILED: ${failed[*]}" >&2; exit 1; }
