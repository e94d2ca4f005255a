#!/usr/bin/env bash
# Unpack ExecuTorch's C++ runtime from its wheel into conda's layout. The
# wheel's executorch/ folder is a package root (lib/, include/, share/cmake/),
# and its CMake config finds that root relative to itself, so the three folders
# move into the prefix unchanged. Python modules and tools are left behind.
set -euo pipefail
unzip -q -o executorch.whl 'executorch/lib/*' 'executorch/include/*' 'executorch/share/*' \
  'executorch-*.dist-info/licenses/*' -d wheel
mkdir -p "${PREFIX}/lib" "${PREFIX}/include" "${PREFIX}/share"
cp -a wheel/executorch/lib/. "${PREFIX}/lib/"
cp -a wheel/executorch/include/. "${PREFIX}/include/"
cp -a wheel/executorch/share/. "${PREFIX}/share/"
cp wheel/executorch-*.dist-info/licenses/LICENSE executorch-LICENSE
