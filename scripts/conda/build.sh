#!/usr/bin/env bash
# Build every conda package of recipe/ for one platform with rattler-build
# into output/, with recipe/variants.yaml (both CUDA variants on linux-64),
# against conda-forge. Needs rattler-build (pixi's default environment has it:
# pixi run build-conda) and a reachable conda-forge.
# Usage: scripts/conda/build.sh [rattler-build build options...]
#   e.g. --target-platform linux-aarch64 (cross-compiles on linux-64; its
#   tests need qemu-user registered with binfmt_misc, or --test skip).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
if ! command -v rattler-build >/dev/null; then
  echo "conda/build.sh: rattler-build not found. Run it in the pixi workspace (pixi run build-conda)," \
       "or install it: conda install -c conda-forge rattler-build" >&2
  exit 1
fi
exec rattler-build build --recipe recipe/recipe.yaml --variant-config recipe/variants.yaml \
  --output-dir output -c conda-forge "$@"
