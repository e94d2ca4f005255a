#!/usr/bin/env bash
# Build the conda packages of recipe/ with rattler-build into output/.
# Needs rattler-build (pixi's default environment has it) and conda-forge.
# Usage: scripts/conda/build.sh [CUDA] [rattler-build build options...]
#   CUDA: 12.9 or 13.0 (default: $TTE_CONDA_CUDA, set by the pixi environment,
#   else every CUDA version in recipe/variants.yaml). Cross-compile with e.g.
#   --target-platform linux-aarch64.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
cuda="${TTE_CONDA_CUDA:-}"
if [[ "${1:-}" =~ ^[0-9]+\.[0-9]+$ ]]; then
  cuda="$1"
  shift
fi
if ! command -v rattler-build >/dev/null; then
  echo "conda-build: rattler-build not found. Run it in the pixi workspace (pixi run build-conda)," \
       "or install it: conda install -c conda-forge rattler-build" >&2
  exit 1
fi
variant=()
[ -n "$cuda" ] && variant=(--variant "cuda_compiler_version=$cuda")
exec rattler-build build --recipe recipe/recipe.yaml --variant-config recipe/variants.yaml \
  --output-dir output -c conda-forge "${variant[@]}" "$@"
