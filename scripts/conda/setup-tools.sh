#!/usr/bin/env bash
# Create .venv-conda with the tools the conda checks use: py-rattler-build
# (renders and builds recipe/ without a rattler-build binary), py-rattler
# (indexes channels, solves and installs environments), PyYAML and pytest;
# and, as root with apt-get, the Debian tools the offline build needs
# (ccache, qemu-user, the aarch64 cross compiler, patchelf).
# Kept apart from .venv so these wheels never meet torch or executorch.
# Usage: scripts/conda/setup-tools.sh   (idempotent; PYTHON picks the interpreter)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$root/.venv-conda"

debian_packages=(ccache qemu-user-static g++-aarch64-linux-gnu patchelf unzip curl)
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  missing=()
  for p in "${debian_packages[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$(dpkg --print-architecture)" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "[setup-tools] installing Debian packages: ${missing[*]}" >&2
    "$root/scripts/with-retries.sh" apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive "$root/scripts/with-retries.sh" apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

if [ ! -x "$venv/bin/python" ]; then
  "${PYTHON:-python3}" -m venv "$venv"
fi
# The versions the checks were written against: their render output and
# Python API are what tests/conda reads.
"$root/scripts/with-retries.sh" "$root/scripts/pip-refetch.py" "$venv/bin/python" -m pip install --quiet --upgrade pip
"$root/scripts/with-retries.sh" "$root/scripts/pip-refetch.py" "$venv/bin/python" -m pip install --quiet "py-rattler-build==0.73.0" "py-rattler==0.28.0" pyyaml pytest
"$venv/bin/python" -c "import rattler_build; print('rattler-build', rattler_build.rattler_build_version())"
