#!/usr/bin/env bash
# TensorRT's Python API from NVIDIA's files: the per-CPython extension wheel
# (tensorrt_bindings, which links libnvinfer, libnvinfer_plugin and
# libnvonnxparser) and the `tensorrt` module of the tensorrt-cu<major> sdist
# that re-exports it, for the build's CUDA major (12 or 13). The libraries are
# conda-forge's, in the prefix's lib/: rattler-build points the extension's
# rpath there.
set -euo pipefail

cuda_major="${TTE_TENSORRT_CUDA%%.*}"
case "${cuda_major}" in
  12|13) ;;
  *) echo "install-tensorrt-bindings.sh: NVIDIA publishes no TensorRT bindings for CUDA '${TTE_TENSORRT_CUDA:-}'" >&2; exit 1 ;;
esac
dist="tensorrt_cu${cuda_major}"
wheels=("${dist}"_bindings-*.whl)
if [[ ${#wheels[@]} -ne 1 || ! -f "${wheels[0]}" ]]; then
  echo "install-tensorrt-bindings.sh: expected one ${dist}_bindings wheel in the work directory, found: ${wheels[*]}" >&2
  exit 1
fi
"${PYTHON}" -m pip install "${wheels[0]}" --no-deps --no-build-isolation -vv

# The sdist's metadata also requires tensorrt_cu<major>_libs, NVIDIA's PyPI
# packaging of the libraries conda gets from libnvinfer & co.
module_dir="$(dirname "$(ls tensorrt-module/pyproject.toml tensorrt-module/*/pyproject.toml 2>/dev/null | head -1)")"
"${PYTHON}" - "${module_dir}/pyproject.toml" "${dist}_libs" <<'EOF'
import pathlib, re, sys
path, libs = pathlib.Path(sys.argv[1]), sys.argv[2]
text = path.read_text()
patched = re.sub(r'^\s*"' + re.escape(libs) + r'[^"]*",\n', "", text, flags=re.M)
if patched == text:
    sys.exit(f"{path}: no {libs} requirement found; check the sdist")
path.write_text(patched)
EOF
"${PYTHON}" -m pip install "./${module_dir}" --no-deps --no-build-isolation -vv

cp "$(ls "${SP_DIR}/${dist}"_bindings-*.dist-info/LICENSE.txt "${SP_DIR}/${dist}"_bindings-*.dist-info/licenses/LICENSE.txt 2>/dev/null | head -1)" \
  tensorrt-bindings-LICENSE.txt
