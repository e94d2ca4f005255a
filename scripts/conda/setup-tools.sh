#!/usr/bin/env bash
# Create .venv-conda with the tools the conda checks use: py-rattler-build
# (renders and builds recipe/ without a rattler-build binary), py-rattler
# (indexes and installs from a local channel) and pytest.
# Kept apart from .venv so these wheels never meet torch or executorch.
# Usage: scripts/conda/setup-tools.sh   (idempotent; PYTHON picks the interpreter)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv-conda"
if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet py-rattler-build py-rattler pytest
"$venv/bin/python" -c "import rattler_build; print('rattler-build', rattler_build.rattler_build_version())"
