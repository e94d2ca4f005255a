#!/usr/bin/env bash
# Install the Python package: its Python sources (pip, without CMake: the
# plugin is the libtorch-tensorrt-executorch output, in the environment's
# lib/, where the package finds it), the compiled binding (cpp/python's
# CMake project, an abi3 module for CPython ${TTE_PYTHON_SABI} and later),
# and what the wheel build adds: the .pte reader's flatbuffer bindings.
set -euo pipefail
: "${TTE_PYTHON_SABI:?the lowest CPython of the abi3 binding, e.g. 3.10 (the recipe passes python_min)}"

# The wheel's metadata requires executorch and nvidia-cuda-runtime from PyPI;
# here the plugin package (run dependency) brings ExecuTorch's runtime and the
# CUDA runtime, so they are taken out of the metadata pip records and checks.
"${PYTHON}" recipe/strip-pypi-requirements.py pyproject.toml
# pip also writes the wheel's `tte-run` console script (it execs the runner
# the wheel ships in the package's bin/); in conda, bin/tte-run is the runner
# itself (libtorch-tensorrt-executorch, in the host prefix): keep that one.
runner="${PREFIX}/bin/tte-run"
[ -e "${runner}" ] && mv "${runner}" tte-run.runner
# pip installs the Python sources only (a pure wheel, whose tag names no
# CPython ABI nor, when cross-compiling, the build machine); the binding is
# built below. The tag is given outright: pyproject.toml's per-machine
# wheel.tags (the release wheels' manylinux tags) would otherwise win over
# wheel.py-api and, in a cross build, name the build machine's architecture,
# which `pip check` in the target's environment reports as "not supported on
# this platform".
"${PYTHON}" -m pip install . --no-deps --no-build-isolation -vv -C wheel.cmake=false -C wheel.py-api=py3 \
  -C wheel.tags=py3-none-any
if [ -e tte-run.runner ]; then mv -f tte-run.runner "${runner}"; else rm -f "${runner}"; fi

package="${SP_DIR}/torch_tensorrt_executorch_runtime"

# The compiled binding. ${CMAKE_ARGS} carries conda's install prefix and,
# when cross-compiling, its toolchain settings; it is deliberately split into
# words. Python's headers are the host prefix's (the target's); the
# interpreter ($PYTHON) is the build machine's when cross-compiling, and
# only its version is asked. TTE_GLIBC_COMPAT: conda's sysroot sets the
# glibc floor instead.
# shellcheck disable=SC2086
cmake -S cpp/python -B build-binding -G Ninja ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DTTE_PYTHON_SABI="${TTE_PYTHON_SABI}" \
  -DTTE_GLIBC_COMPAT=OFF \
  -DPython3_EXECUTABLE="${PYTHON}" \
  -DPython3_INCLUDE_DIR="${PREFIX}/include/python${TTE_PYTHON_SABI}" \
  -DTTE_PYTHON_BINDING_DIR="${package}/_native"
cmake --build build-binding --parallel "${CPU_COUNT:-2}"
cmake --install build-binding
test -f "${package}/_native/_compiled.abi3.so"

unzip -q -o executorch.whl 'executorch/schema/*' 'executorch/data/bin/flatc' 'executorch/version.py' -d wheel
"${PYTHON}" scripts/gen/pte-bindings.py --executorch-root wheel/executorch \
  --out "${package}/_generated"

# The CLI comes from build.python.entry_points, made at install time.
rm -f "${PREFIX}/bin/torch-tensorrt-executorch"
