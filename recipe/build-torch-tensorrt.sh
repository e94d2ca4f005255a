#!/usr/bin/env bash
# Torch-TensorRT from its source (docs/conda.md, "Torch-TensorRT"):
#   1. libtorchtrt_runtime.so, its TorchScript runtime (the runtime
#      torch_tensorrt's ExecuTorch serialization requires), with upstream's
#      CMake against the prefix's libtorch, TensorRT and CUDA;
#   2. the Python package in upstream's Python-only mode (its other C++ parts
#      are Bazel builds), with that library in torch_tensorrt/lib/.
set -euo pipefail

case "${target_platform}" in
  linux-64) cuda_target=x86_64-linux ;;
  linux-aarch64) cuda_target=sbsa-linux ;;
  *) echo "build-torch-tensorrt.sh: no CUDA target directory known for ${target_platform}" >&2; exit 1 ;;
esac
cuda_root="${PREFIX}/targets/${cuda_target}"
nvcc_path="$(command -v nvcc || true)"
if [[ -z "${nvcc_path}" ]]; then
  echo "build-torch-tensorrt.sh: no nvcc on PATH; libtorch's CMake package enables CUDA" >&2
  exit 1
fi
torch_cmake="$("${PYTHON}" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"

# libtorch's CMake package enables CUDA for the toolkit of that nvcc (PyPI's
# torch with FindCUDA, whose headers must be that nvcc's version). The CUDA
# libraries' headers ATen includes (cuBLAS, cuSOLVER, cuSPARSE; NCCL in
# $PREFIX/include) come from the host prefix, after the toolkit's own.
# nvcc names its toolkit root (TOP) in its dry-run trace; nvcc on PATH may be a wrapper.
toolkit_root="${CUDA_HOME:-$("${nvcc_path}" -v --dryrun -x cu /dev/null 2>&1 | sed -n 's/^#\$ TOP=//p' | head -1)}"
toolkit_root="$(cd "${toolkit_root}" && pwd -P)"
echo "build-torch-tensorrt.sh: libtorchtrt_runtime.so against torch in ${torch_cmake}, CUDA toolkit ${toolkit_root}"
cmake -S . -B build-runtime -G Ninja ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="${torch_cmake};${PREFIX}" \
  -DCMAKE_CXX_FLAGS="${CXXFLAGS:-} -idirafter ${cuda_root}/include" \
  -DTensorRT_ROOT="${PREFIX}" \
  -DCMAKE_CUDA_COMPILER="${toolkit_root}/bin/nvcc" \
  -DCUDA_TOOLKIT_ROOT_DIR="${toolkit_root}" \
  -DCUDA_nvrtc_LIBRARY="${cuda_root}/lib/libnvrtc.so" \
  -DCUDA_NVRTC_LIB="${cuda_root}/lib/libnvrtc.so"
cmake --build build-runtime --target torchtrt_runtime --parallel "${CPU_COUNT:-2}"

echo "build-torch-tensorrt.sh: the Python package (Python only) with the runtime library"
cuda_tag="cu$(echo "${TTE_TORCH_TENSORRT_CUDA}" | tr -d .)"
PYTHON_ONLY=1 RELEASE=1 BUILD_VERSION="${PKG_VERSION}" CU_VERSION="${cuda_tag}" \
  "${PYTHON}" -m pip install . --no-deps --no-build-isolation -vv
package="${SP_DIR}/torch_tensorrt"
mkdir -p "${package}/lib"
install -m 755 build-runtime/lib/libtorchtrt_runtime.so "${package}/lib/libtorchtrt_runtime.so"

# The metadata names PyPI's packaging of TensorRT: `tensorrt` (the tensorrt
# output installs it as tensorrt-cu1x and tensorrt-cu1x-bindings, which stay)
# and tensorrt-cu1x-libs (conda-forge's libnvinfer and libnvinfer-plugin).
"${PYTHON}" - <<'PY'
import os, pathlib, re
sp = pathlib.Path(os.environ["SP_DIR"])
(metadata,) = sp.glob("torch_tensorrt-*.dist-info/METADATA")
text = metadata.read_text()
patched = re.sub(r"^Requires-Dist: tensorrt(-cu1[23]-libs)?(?=[<>=!~ ;]).*\n", "", text, flags=re.M)
dropped = len(text.splitlines()) - len(patched.splitlines())
if dropped != 2:
    raise SystemExit(f"{metadata}: expected to drop tensorrt and tensorrt-cu1x-libs, dropped {dropped} lines")
metadata.write_text(patched)
PY
