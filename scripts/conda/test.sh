#!/usr/bin/env bash
# The conda checks that run without a conda channel: render the recipe for
# every variant offline and test the result (tests/conda, in .venv-conda),
# then build the plugin as the recipe does against a conda-like prefix and
# check it there (scripts/conda/prefix-check.sh).
# Usage: scripts/conda/test.sh [CUDA...]   (CUDA versions for the prefix check; default 13.0)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
scripts/conda/setup-tools.sh
.venv-conda/bin/python -m pytest -q -p no:cacheprovider tests/conda
scripts/conda/prefix-check.sh "$@"
