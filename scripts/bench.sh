#!/usr/bin/env bash
# Run the GPU benchmarks (bench/bench_gpu.py) on this machine; every figure is
# a ratio against a baseline measured in the same run. Needs an NVIDIA GPU
# and a build (scripts/build.sh). For a GPU machine without build tools or
# network, make a bundle with scripts/gpu-bundle.sh and run
# scripts/gpu-check.sh there instead.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py=.venv/bin/python
if ! $py -c "import torch_tensorrt_executorch_runtime as t, sys; sys.exit(0 if t.cuda_device_count() > 0 else 1)"; then
  echo "bench: no CUDA device here; the benchmarks need an NVIDIA GPU (see docs/benchmarks.md)" >&2
  exit 2
fi
programs="$(mktemp -d)"
$py tests/gpu/make_gpu_programs.py "$programs" >/dev/null
exec $py bench/bench_gpu.py --programs "$programs" --providers build/wheel/cpp --bin build/wheel/bench \
  --tte-run "$($py -c 'import torch_tensorrt_executorch_runtime as t, pathlib; print(pathlib.Path(t.__file__).parent / "bin" / "tte-run")')" "$@"
