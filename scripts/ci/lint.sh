#!/usr/bin/env bash
# Static checks that need no build: Python (ruff when installed, else a byte
# compile), shell scripts (bash -n, shellcheck when installed), C++ formatting
# (clang-format when installed and a .clang-format exists), that the
# manifests parse, and the layering: no import or #include circle, no plugin
# layer including one above it (check-layers.py). Usage: scripts/ci/lint.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
py=python3
[ -x .venv/bin/python ] && py=.venv/bin/python
status=0
run() { echo "+ $*" >&2; "$@" || status=1; }

python_dirs=(src tests scripts recipe/tests)
if command -v ruff >/dev/null; then
  run ruff check "${python_dirs[@]}"
else
  # Byte-compiled files go to a scratch folder, not next to the sources.
  PYTHONPYCACHEPREFIX="$(mktemp -d)" run "$py" -m compileall -q "${python_dirs[@]}"
fi

mapfile -t shell_scripts < <(git ls-files -co --exclude-standard '*.sh' .ci/run)
for s in "${shell_scripts[@]}"; do
  [ -f "$s" ] && run bash -n "$s"
done
if command -v shellcheck >/dev/null; then
  run shellcheck "${shell_scripts[@]}"
fi

clang_format="$(command -v clang-format || command -v clang-format-14 || true)"
if [ -n "$clang_format" ] && [ -f .clang-format ]; then
  mapfile -t cpp_files < <(git ls-files -co --exclude-standard 'cpp/*.cpp' 'cpp/*.h' 'cpp/*.cu')
  run "$clang_format" --dry-run --Werror "${cpp_files[@]}"
fi

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
