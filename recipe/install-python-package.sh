#!/usr/bin/env bash
# Install the pure-Python part of the package (no CMake: the plugin is the
# libtorch-tensorrt-executorch output), then what the wheel build adds:
# the .pte reader's flatbuffer bindings and the plugin in the package's lib/.
set -euo pipefail
# pip also writes the wheel's `tte-run` console script (it execs the runner
# the wheel ships in the package's bin/); in conda, bin/tte-run is the runner
# itself (libtorch-tensorrt-executorch, in the host prefix): keep that one.
runner="${PREFIX}/bin/tte-run"
[ -e "${runner}" ] && mv "${runner}" tte-run.runner
"${PYTHON}" -m pip install . --no-deps --no-build-isolation -vv -C wheel.cmake=false
if [ -e tte-run.runner ]; then mv -f tte-run.runner "${runner}"; else rm -f "${runner}"; fi

package="${SP_DIR}/torch_tensorrt_executorch_runtime"
unzip -q -o executorch.whl 'executorch/schema/*' 'executorch/data/bin/flatc' 'executorch/version.py' -d wheel
"${PYTHON}" scripts/gen/pte-bindings.py --executorch-root wheel/executorch \
  --out "${package}/_generated"

# The package loads lib/libexecutorch_backend_tensorrt.so; in conda that is a
# link to the prefix's lib/ (site-packages/<package>/lib is four levels
# below it), where the plugin's $ORIGIN rpath finds its dependencies.
mkdir -p "${package}/lib"
ln -sf ../../../../libexecutorch_backend_tensorrt.so "${package}/lib/libexecutorch_backend_tensorrt.so"
# The CLI comes from build.python.entry_points, made at install time.
rm -f "${PREFIX}/bin/torch-tensorrt-executorch"
