#!/usr/bin/env bash
# Set up a fresh machine for building and testing: Debian packages (when run
# as root with apt-get available) and the project venv .venv.
# Idempotent: a second run installs nothing new.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

log() { printf '[setup] %s\n' "$*" >&2; }

debian_packages=(libgtest-dev nlohmann-json3-dev clang-14 libclang-rt-14-dev
                 g++-aarch64-linux-gnu qemu-user-static patchelf ninja-build valgrind)
if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  missing=()
  for p in "${debian_packages[@]}"; do
    # With a second architecture enabled (the aarch64 cross build adds arm64),
    # dpkg needs the native one spelled out for architecture-specific packages.
    dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$(dpkg --print-architecture)" >/dev/null 2>&1 ||
      missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  log "not root or no apt-get: make sure these are installed: ${debian_packages[*]}"
fi

py="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($py --version)"
  "$py" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
stamp=.venv/.requirements-dev.sha256
want="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing requirements-dev.txt into .venv (torch is large: this takes a few minutes)"
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
log "ready: $(.venv/bin/python -c 'import torch, importlib.metadata as m; print("torch", torch.__version__, "executorch", m.version("executorch"))')"
