#!/usr/bin/env bash
# Install the pure-Python part of the package (no CMake: the plugin is the
# libtorch-tensorrt-executorch output, in the environment's lib/, where the
# package finds it), then what the wheel build adds: the .pte reader's
# flatbuffer bindings.
set -euo pipefail

# The wheel's metadata requires executorch and nvidia-cuda-runtime from PyPI;
# here the plugin package (run dependency) brings ExecuTorch's runtime and the
# CUDA runtime, so they are taken out of the metadata pip records and checks.
"${PYTHON}" - <<'EOF'
import pathlib, re
path = pathlib.Path("pyproject.toml")
text = path.read_text()
deps = re.search(r"^dependencies = \[\n(.*?)^\]", text, re.S | re.M)
kept = [line for line in deps.group(1).splitlines(keepends=True)
        if not re.match(r'\s*"(executorch|nvidia-cuda-runtime)\b', line)]
path.write_text(text[:deps.start(1)] + "".join(kept) + text[deps.end(1):])
EOF
# pip also writes the wheel's `tte-run` console script (it execs the runner
# the wheel ships in the package's bin/); in conda, bin/tte-run is the runner
# itself (libtorch-tensorrt-executorch, in the host prefix): keep that one.
runner="${PREFIX}/bin/tte-run"
[ -e "${runner}" ] && mv "${runner}" tte-run.runner
# No CMake, so no binary: the wheel tag must name no CPython ABI (the
# release wheel is cp310-abi3 only because it carries the compiled binding).
"${PYTHON}" -m pip install . --no-deps --no-build-isolation -vv -C wheel.cmake=false -C wheel.py-api=py3
if [ -e tte-run.runner ]; then mv -f tte-run.runner "${runner}"; else rm -f "${runner}"; fi

package="${SP_DIR}/torch_tensorrt_executorch_runtime"
unzip -q -o executorch.whl 'executorch/schema/*' 'executorch/data/bin/flatc' 'executorch/version.py' -d wheel
"${PYTHON}" scripts/gen/pte-bindings.py --executorch-root wheel/executorch \
  --out "${package}/_generated"

# The CLI comes from build.python.entry_points, made at install time.
rm -f "${PREFIX}/bin/torch-tensorrt-executorch"
