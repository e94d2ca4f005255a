#!/usr/bin/env bash
# Set up a fresh machine for building and testing: Debian packages (when run
# as root with apt-get) and the project venv .venv.
# Idempotent: a second run installs nothing new. What it changes on the
# machine: it installs the Debian packages below (apt-get update, then
# apt-get install), nothing else outside the checkout; the venv is .venv.
# Not root, or no apt-get: it names what is missing and stops if the build
# cannot work without it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

log() { printf '[setup] %s\n' "$*" >&2; }

py="${PYTHON:-python3}"
# The build (scripts/build.sh, scripts/demo.sh) and its ctest (also part of
# scripts/test.sh --quick): a C++ compiler, GoogleTest, the venv module,
# readelf (binutils: ctest's symbol-version checks, left out of the build
# without it); the full test run (scripts/test.sh) adds the rest.
build_packages=(g++ libgtest-dev binutils)
test_packages=(git unzip nlohmann-json3-dev clang-14 libclang-rt-14-dev g++-aarch64-linux-gnu qemu-user-static
               patchelf ninja-build valgrind)
# Debian's python3 makes venvs only with python3-venv (ensurepip).
needs_venv_package=0
if [ ! -x .venv/bin/python ] && ! "$py" -c 'import ensurepip, venv' 2>/dev/null; then
  needs_venv_package=1
  build_packages+=(python3-venv)
fi

installed() {
  # A machine with a second dpkg architecture needs the native one spelled out
  # for architecture-specific packages.
  dpkg -s "$1" >/dev/null 2>&1 || dpkg -s "$1:$(dpkg --print-architecture)" >/dev/null 2>&1
}

if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  missing=()
  for p in "${build_packages[@]}" "${test_packages[@]}"; do
    installed "$p" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing Debian packages: ${missing[*]}"
    scripts/with-retries.sh apt-get update -q >/dev/null
    DEBIAN_FRONTEND=noninteractive scripts/with-retries.sh apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  # Not root or not Debian: check the commands and files themselves.
  missing_build=() missing_test=()
  command -v g++ >/dev/null || missing_build+=("g++ (a C++17 compiler)")
  if ! command -v readelf >/dev/null; then
    log "not root or no apt-get, and readelf is missing: ctest (scripts/test.sh --quick too) leaves out its" \
        "symbol-version checks without it; install binutils"
  fi
  [ -f /usr/src/googletest/CMakeLists.txt ] || [ -d /usr/include/gtest ] || missing_build+=("libgtest-dev (GoogleTest)")
  [ "$needs_venv_package" = 0 ] || missing_build+=("python3-venv (for $py -m venv)")
  for tool in git:git unzip:unzip clang-14:clang-14 aarch64-linux-gnu-g++:g++-aarch64-linux-gnu \
              qemu-aarch64-static:qemu-user-static patchelf:patchelf valgrind:valgrind; do
    command -v "${tool%%:*}" >/dev/null || missing_test+=("${tool#*:} (${tool%%:*})")
  done
  if [ ${#missing_test[@]} -gt 0 ]; then
    log "not root or no apt-get; scripts/test.sh's later steps need these Debian packages: ${missing_test[*]}"
  fi
  if [ ${#missing_build[@]} -gt 0 ]; then
    log "not root or no apt-get, and the build needs: ${missing_build[*]}"
    log "install them (Debian: sudo apt-get install ${build_packages[*]}), then run this again"
    exit 1
  fi
fi

if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($py --version)"
  "$py" -m venv .venv
  scripts/with-retries.sh scripts/pip-refetch.py .venv/bin/python -m pip install -q --upgrade pip
fi
stamp=.venv/.requirements-dev.sha256
want="$(sha256sum requirements-dev.txt | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  log "installing requirements-dev.txt into .venv (torch is large: this takes a few minutes)"
  scripts/with-retries.sh scripts/pip-refetch.py .venv/bin/python -m pip install -q -r requirements-dev.txt
  echo "$want" > "$stamp"
fi
# The serving tests run the tritonserver binary and Python backend stub that
# nvidia-pytriton bundles; --no-deps: its Python API (unused) pins numpy<2.
pytriton_version=0.7.0
if [ "$(.venv/bin/python -c 'import importlib.metadata as m; print(m.version("nvidia-pytriton"))' 2>/dev/null)" != "$pytriton_version" ]; then
  log "installing nvidia-pytriton $pytriton_version (tritonserver for the serving tests) without its dependencies"
  scripts/with-retries.sh scripts/pip-refetch.py .venv/bin/python -m pip install -q --no-deps "nvidia-pytriton==$pytriton_version"
fi
log "ready: $(.venv/bin/python -c 'import torch, importlib.metadata as m; print("torch", torch.__version__, "executorch", m.version("executorch"))')"
