#!/usr/bin/env bash
# TensorRT's Python API from NVIDIA's files: the per-CPython extension wheel
# (tensorrt_bindings, which links libnvinfer, libnvinfer_plugin and
# libnvonnxparser) and the `tensorrt` module of the tensorrt-cu13 sdist that
# re-exports it. The libraries are conda-forge's, in the prefix's lib/:
# rattler-build points the extension's rpath there.
set -euo pipefail

"${PYTHON}" -m pip install tensorrt_cu13_bindings-*.whl --no-deps --no-build-isolation -vv

# The sdist's metadata also requires tensorrt_cu13_libs, NVIDIA's PyPI
# packaging of the libraries conda gets from libnvinfer & co.
module_dir="$(dirname "$(ls tensorrt-module/pyproject.toml tensorrt-module/*/pyproject.toml 2>/dev/null | head -1)")"
"${PYTHON}" - "${module_dir}/pyproject.toml" <<'EOF'
import pathlib, re, sys
path = pathlib.Path(sys.argv[1])
text = path.read_text()
patched = re.sub(r'^\s*"tensorrt_cu13_libs[^"]*",\n', "", text, flags=re.M)
if patched == text:
    sys.exit(f"{path}: no tensorrt_cu13_libs requirement found; check the sdist")
path.write_text(patched)
EOF
"${PYTHON}" -m pip install "./${module_dir}" --no-deps --no-build-isolation -vv

cp "$(ls "${SP_DIR}"/tensorrt_cu13_bindings-*.dist-info/LICENSE.txt "${SP_DIR}"/tensorrt_cu13_bindings-*.dist-info/licenses/LICENSE.txt 2>/dev/null | head -1)" \
  tensorrt-bindings-LICENSE.txt
