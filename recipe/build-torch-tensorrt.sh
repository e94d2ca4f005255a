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
# libtorch's CMake package, of the torch the library links (the host's). A
# cross build's python is the build machine's, and so is the torch it imports
# (setup.py needs one): there the package comes from libtorch's layout in the
# host prefix, share/cmake/Torch, where conda-forge's libtorch installs it,
# and libtorch's FindCUDA takes the target's CUDA tree from
# $CUDA_TOOLKIT_ROOT/targets/<target> (the host prefix's), not from the
# build machine's toolkit.
if [[ "${CONDA_BUILD_CROSS_COMPILATION:-0}" == 1 ]]; then
  torch_cmake="${PREFIX}/share/cmake"
  if [[ ! -f "${torch_cmake}/Torch/TorchConfig.cmake" ]]; then
    echo "build-torch-tensorrt.sh: cross-compiling for ${target_platform}, but the host prefix has no libtorch CMake package (${torch_cmake}/Torch/TorchConfig.cmake)" >&2
    exit 1
  fi
  export CUDA_TOOLKIT_ROOT="${PREFIX}"
else
  torch_cmake="$("${PYTHON}" -c 'import torch.utils; print(torch.utils.cmake_prefix_path)')"
fi
# libtorch's CMake package turns this list into nvcc flags. The runtime
# library compiles no CUDA code, so any list serves; naming one spares its GPU
# detection, a try_run that a cross build cannot run.
export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-9.0}"

# libtorch's CMake package enables CUDA for the toolkit of that nvcc (PyPI's
# torch with FindCUDA, whose headers must be that nvcc's version). The CUDA
# libraries' headers ATen includes (cuBLAS, cuSOLVER, cuSPARSE; NCCL in
# $PREFIX/include) come from the host prefix, after the toolkit's own, and so
# do the libraries it links (libcudart, the package's cuda-cudart, and the
# libnvrtc libtorch's package names), which FindCUDAToolkit would look for in
# nvcc's toolkit, the build machine's when cross-compiling.
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
  -DCUDA_CUDART="${cuda_root}/lib/libcudart.so" \
  -DCUDA_cudart_LIBRARY="${cuda_root}/lib/libcudart.so" \
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
# and tensorrt-cu1x-libs (conda-forge's libnvinfer and libnvinfer-plugin),
# which setup.py names unless it runs on aarch64 (a native linux-aarch64
# build; a cross build runs it on the x86-64 build machine).
"${PYTHON}" - <<'PY'
import os, pathlib, platform, re
sp = pathlib.Path(os.environ["SP_DIR"])
(metadata,) = sp.glob("torch_tensorrt-*.dist-info/METADATA")
text = metadata.read_text()
pattern = re.compile(r"^Requires-Dist: tensorrt(-cu1[23]-libs)?(?=[<>=!~ ;]).*\n", re.M)
dropped = sorted(m.group(0).split()[1] for m in pattern.finditer(text))
expected = 1 if platform.machine() == "aarch64" else 2
if len(dropped) != expected:
    raise SystemExit(f"{metadata}: expected to drop tensorrt" + (" and tensorrt-cu1x-libs" if expected == 2 else "")
                     + f" ({expected} lines), found {dropped or 'none'}")
metadata.write_text(pattern.sub("", text))
PY
