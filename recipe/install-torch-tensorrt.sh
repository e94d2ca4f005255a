#!/usr/bin/env bash
# Torch-TensorRT from its upstream wheel, made to load against conda-forge's
# pytorch and TensorRT from the prefix's lib/ (docs/conda.md, "Torch-TensorRT").
set -euo pipefail

"${PYTHON}" -m pip install torch_tensorrt-*.whl --no-deps --no-build-isolation -vv
package="${SP_DIR}/torch_tensorrt"

# Each binary: drop the NEEDED entry on PyPI torch's libtorch_nvshmem.so (no
# symbol of these files binds to it, and conda-forge's pytorch has no
# NVSHMEM) and the rpaths into Bazel's build tree. rattler-build then points
# the rpaths at the prefix's lib/, where libtorch, libnvinfer and libcudart are.
while IFS= read -r -d '' file; do
  [[ "$(head -c 4 "${file}" | tr -d "\177")" == ELF ]] || continue
  if patchelf --print-needed "${file}" | grep -qx 'libtorch_nvshmem.so'; then
    patchelf --remove-needed libtorch_nvshmem.so "${file}"
    if patchelf --print-needed "${file}" | grep -qx 'libtorch_nvshmem.so'; then
      echo "install-torch-tensorrt.sh: ${file} still needs libtorch_nvshmem.so" >&2
      exit 1
    fi
  fi
  kept="$(patchelf --print-rpath "${file}" | tr ':' '\n' | { grep -v -e '_solib_' -e '\.runfiles/' || true; } | paste -sd: -)"
  patchelf --set-rpath "${kept}" "${file}"
done < <(find "${package}" -type f \( -name '*.so' -o -path "${package}/bin/*" \) -print0)

# The wheel's metadata names PyPI's packaging of the TensorRT libraries,
# which conda gets from libnvinfer and libnvinfer-plugin.
"${PYTHON}" - <<'EOF'
import os, pathlib, re
metadata = next(pathlib.Path(os.environ["SP_DIR"]).glob("torch_tensorrt-*.dist-info/METADATA"))
text = metadata.read_text()
patched = re.sub(r"^Requires-Dist: tensorrt-cu13-libs\b.*\n", "", text, flags=re.M)
if patched == text:
    raise SystemExit(f"{metadata}: no tensorrt-cu13-libs requirement to drop")
metadata.write_text(patched)
EOF

cp "${SP_DIR}"/torch_tensorrt-*.dist-info/licenses/LICENSE torch-tensorrt-LICENSE
