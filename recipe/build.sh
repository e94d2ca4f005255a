#!/usr/bin/env bash
# Build the plugin with the repository's CMakeLists.txt (the same entry the
# wheel's scikit-build-core build uses), run its C++ tests, and install it in
# conda's layout: lib/ (plugin), bin/ (tte-run), include/ and lib/cmake/ (for
# C++ users). The rpath is $ORIGIN: ExecuTorch, libcudart and libnvinfer all
# sit in lib/. scripts/conda/env-build.sh runs this same script in a pixi
# environment (PREFIX is the environment there).
set -euo pipefail

# TTE_ARM_VARIANT (the recipe passes arm_variant_type on linux-aarch64):
# sbsa servers, or tegra (Jetson: conda's CUDA under targets/aarch64-linux).
case "${target_platform}/${TTE_ARM_VARIANT:-}" in
  linux-64/*) cuda_target=x86_64-linux ;;
  linux-aarch64/tegra) cuda_target=aarch64-linux ;;
  linux-aarch64/*) cuda_target=sbsa-linux ;;
  *) echo "build.sh: no CUDA target directory known for ${target_platform}" >&2; exit 1 ;;
esac

# The native TensorRT provider of the variant's TensorRT major
# (TTE_TENSORRT_MAJOR, from the recipe). Where conda supplies TensorRT it is
# linked to the prefix's libnvinfer. tegra has no conda TensorRT: the
# provider is compiled against the TensorRT 10 headers of the build's
# TensorRT root ($TensorRT10_ROOT: JetPack 6's TensorRT 10.3, whose headers
# conda-forge does not publish for tegra) and finds JetPack's libnvinfer at
# run time.
: "${TTE_TENSORRT_MAJOR:?the recipe passes the TensorRT major of the variant (11, or 10 for tegra)}"
if [[ "${TTE_ARM_VARIANT:-}" == tegra ]]; then
  : "${TensorRT10_ROOT:?the tegra build needs TensorRT 10 headers: set TensorRT10_ROOT to a TensorRT 10.3 root (JetPack 6 ships 10.3)}"
  tensorrt_args=(-DTensorRT10_ROOT="${TensorRT10_ROOT}" -DTTE_TENSORRT_LINK=OFF)
else
  tensorrt_args=(-DTensorRT_ROOT="${PREFIX}" -DTTE_TENSORRT_LINK=ON)
fi

# The C++ unit tests run here unless the binaries are for another machine.
tests=ON
if [[ "${CONDA_BUILD_CROSS_COMPILATION:-0}" == 1 ]]; then
  tests=OFF
fi

build_dir="${TTE_CONDA_BUILD_DIR:-${SRC_DIR}/build-conda}"
# ${CMAKE_ARGS} carries conda's install prefix and, when cross-compiling,
# its toolchain settings; it is deliberately split into words.
# TTE_GLIBC_COMPAT pins symbol versions for manylinux wheels; conda's
# sysroot and libstdcxx set the floor here instead.
# shellcheck disable=SC2086
cmake -S "${SRC_DIR}" -B "${build_dir}" -G Ninja ${CMAKE_ARGS:-} \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="${PREFIX}" \
  -DCMAKE_PREFIX_PATH="${PREFIX}" \
  -DEXECUTORCH_ROOT="${PREFIX}" \
  -DTTE_CUDA_ROOT="${PREFIX}/targets/${cuda_target}" \
  -DTTE_WITH_TENSORRT=ON \
  -DTTE_TENSORRT_MAJORS="${TTE_TENSORRT_MAJOR}" \
  "${tensorrt_args[@]}" \
  -DTTE_CUDA_TEST_PROVIDER=OFF \
  -DTTE_GLIBC_COMPAT=OFF \
  -DTTE_BUILD_TESTS="${tests}" \
  -DTTE_BUILD_TOOLS=ON \
  -DTTE_INSTALL_RPATH='$ORIGIN' \
  -DTTE_INSTALL_LIBDIR=lib \
  -DTTE_INSTALL_INCLUDEDIR=include \
  -DTTE_INSTALL_BINDIR=bin
cmake --build "${build_dir}" --parallel "${CPU_COUNT:-2}"
if [[ "${tests}" == ON ]]; then
  ctest --test-dir "${build_dir}" --output-on-failure --parallel "${CPU_COUNT:-2}"
fi
cmake --install "${build_dir}"
