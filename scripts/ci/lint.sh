#!/usr/bin/env bash
# Static checks that need no build (CONTRIBUTING.md): Python lint (ruff) and
# types (mypy over src/), C and C++ formatting (clang-format, .clang-format),
# shell scripts (bash -n, shellcheck when installed), that the manifests
# parse, and the layering: no import or #include circle, no layer importing
# or including one above it (check-layers.py). ruff, mypy and clang-format
# are the versions requirements-dev.txt pins, from .venv (scripts/setup.sh).
# The pre-commit hooks (.pre-commit-config.yaml) run the same commands.
# Usage: scripts/ci/lint.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
status=0
run() { echo "+ $*" >&2; "$@" || status=1; }

tool() {
  if [ ! -x ".venv/bin/$1" ]; then
    echo "lint: .venv/bin/$1 is missing: run scripts/setup.sh (it installs requirements-dev.txt)" >&2
    exit 2
  fi
  echo ".venv/bin/$1"
}

ruff="$(tool ruff)"
mypy="$(tool mypy)"
clang_format="$(tool clang-format)"

python_dirs=(src tests scripts bench recipe)
run "$ruff" check "${python_dirs[@]}"
# Files, strictness per module and third-party stubs: pyproject.toml [tool.mypy].
run "$mypy"

mapfile -t shell_scripts < <(git ls-files -co --exclude-standard '*.sh' .ci/run)
for s in "${shell_scripts[@]}"; do
  [ -f "$s" ] && run bash -n "$s"
done
if command -v shellcheck >/dev/null; then
  run shellcheck "${shell_scripts[@]}"
fi

mapfile -t c_files < <(git ls-files -co --exclude-standard '*.c' '*.cc' '*.cpp' '*.h' '*.hpp' '*.cu' '*.cuh')
run "$clang_format" --dry-run --Werror "${c_files[@]}"

run "$py" scripts/ci/check-layers.py

run "$py" - <<'PY'
import json, tomllib
for path in ("pixi.toml", "pyproject.toml"):
    with open(path, "rb") as f:
        tomllib.load(f)
json.load(open("versions.json"))
PY
[ "$status" = 0 ] && echo "lint: ok" >&2
exit "$status"
