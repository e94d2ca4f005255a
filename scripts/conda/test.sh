#!/usr/bin/env bash
# The conda checks, for a machine without a conda channel (scripts/test.sh
# runs them; docs/conda.md says what each proves and what it cannot):
#   1. tests/conda: the recipe rendered offline under recipe/variants.yaml and
#      under conda-forge's global pinning, pixi.toml, versions;
#   2. the recipe's sha256 pins against PyPI's JSON API;
#   3. scripts/conda/offline-build.py: the recipe built, its sources mapped to
#      local archives (this checkout's release archive, Torch-TensorRT's tag),
#      for linux-64 (CUDA 12.9, 13.4) and linux-aarch64 (CUDA 13.4, cross,
#      tests under qemu-user) against stand-ins of conda-forge's packages,
#      every output's tests and link checks, a fresh install running the CLI
#      and a program from Python, and the pixi tasks' scripts.
# Usage: scripts/conda/test.sh [offline-build.py options]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
step() { printf '[conda-test %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

scripts/conda/setup-tools.sh
step "render checks (tests/conda)"
.venv-conda/bin/python -m pytest -q -p no:cacheprovider tests/conda
step "wheel pins against PyPI"
scripts/with-retries.sh .venv-conda/bin/python scripts/conda/pin-wheels.py --check
step "offline build, tests and installs"
.venv-conda/bin/python scripts/conda/offline-build.py "$@"
