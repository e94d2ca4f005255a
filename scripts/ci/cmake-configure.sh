#!/usr/bin/env bash
# Configure a CMake build of the plugin against the project venv.
# Usage: scripts/ci/cmake-configure.sh BUILD_DIR [extra cmake args...]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:?usage: $0 BUILD_DIR [cmake args]}"; shift
py="${TTE_PYTHON:-$root/.venv/bin/python}"
cmake_bin="$(dirname "$py")/cmake"
[ -x "$cmake_bin" ] || cmake_bin=cmake
"$cmake_bin" -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${TTE_BUILD_TYPE:-RelWithDebInfo}" \
  -DPython3_EXECUTABLE="$py" -DCMAKE_MAKE_PROGRAM="$(dirname "$py")/ninja" "$@"
