#!/usr/bin/env bash
# pixi's `build` task: the conda-native build, in the active environment.
# Runs the recipe's own build script (recipe/build.sh: the plugin, tte-run and
# the C++ tests, built and run) against the environment's CUDA, TensorRT
# (native provider on) and ExecuTorch runtime, and installs them into the
# environment the way the conda packages lay them out (lib/, bin/, include/,
# lib/cmake/; rpath $ORIGIN), then the Python package the way the recipe's
# Python output installs it (with its compiled binding). The build tree is
# build/conda-env.
# Usage: pixi run build   (or, in any conda environment: scripts/conda/env-build.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
: "${CONDA_PREFIX:?not in a conda environment: run pixi run build}"
log() { printf '[env-build] %s\n' "$*" >&2; }

case "$(uname -m)" in
  x86_64) target_platform=linux-64 ;;
  aarch64) target_platform=linux-aarch64 ;;
  *) log "no conda platform known for $(uname -m)"; exit 1 ;;
esac
work="${TTE_CONDA_BUILD_DIR:-$root/build/conda-env}"
mkdir -p "$work"

# conda's compiler activation links with -Wl,-rpath,$CONDA_PREFIX/lib, which
# rattler-build rewrites after a package build; installed here as built, the
# plugin keeps only the $ORIGIN rpath its CMake build sets.
ldflags=()
for flag in ${LDFLAGS:-}; do
  [[ "$flag" == -Wl,-rpath,* ]] || ldflags+=("$flag")
done
export LDFLAGS="${ldflags[*]:-}"

log "recipe/build.sh against $CONDA_PREFIX"
# The workspace's TensorRT is conda-forge's 11 (pixi.toml), as in the recipe's
# CUDA variants other than tegra.
env PREFIX="$CONDA_PREFIX" SRC_DIR="$root" target_platform="$target_platform" \
  CPU_COUNT="${CPU_COUNT:-$(nproc)}" TTE_CONDA_BUILD_DIR="$work/cmake" TTE_TENSORRT_MAJOR=11 \
  bash recipe/build.sh

# The Python package, as recipe/install-python-package.sh installs it: in a
# copy of the sources (the script edits pyproject.toml), with the executorch
# wheel the recipe pins (the .pte reader's schema and flatc come from it).
src="$work/python-src"
rm -rf "$src"
mkdir -p "$src"
git ls-files -z -co --exclude-standard | tar --null -T - -cf - 2>/dev/null | tar -xf - -C "$src"
# The wheel of this machine's architecture: its flatc runs here.
python - "$root/recipe/recipe.yaml" "$src/executorch.whl" "$work" "$(uname -m)" <<'EOF'
import hashlib, pathlib, re, shutil, sys, urllib.request
recipe, dest, cache = pathlib.Path(sys.argv[1]).read_text(), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
source = recipe.split("name: torch-tensorrt-executorch-runtime", 1)[1]
arch = sys.argv[4]
pins = re.findall(r"url: (\S+executorch-\S+_(x86_64|aarch64)\.whl)\s+sha256: ([0-9a-f]{64})", source)
picked = [(url, sha) for url, pinned_arch, sha in pins if pinned_arch == arch]
if len(picked) != 1:
    sys.exit(f"recipe/recipe.yaml pins no executorch wheel for this machine ({arch}) in the Python package's source")
url, sha = picked[0]
cached = cache / url.rsplit("/", 1)[1]
if not cached.exists() or hashlib.sha256(cached.read_bytes()).hexdigest() != sha:
    with urllib.request.urlopen(url, timeout=300) as reply:
        cached.write_bytes(reply.read())
if hashlib.sha256(cached.read_bytes()).hexdigest() != sha:
    sys.exit(f"{cached.name}: sha256 differs from the recipe's pin")
shutil.copy(cached, dest)
EOF
site="$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
log "the Python package into $site"
# The compiled binding is abi3 for the environment's CPython (the recipe
# builds it against python_min, whose headers this environment may not have).
sabi="$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
(cd "$src" && env PREFIX="$CONDA_PREFIX" PYTHON="$(command -v python)" SP_DIR="$site" \
  TTE_PYTHON_SABI="$sabi" CPU_COUNT="${CPU_COUNT:-$(nproc)}" \
  bash recipe/install-python-package.sh > "$work/python-package.log" 2>&1) \
  || { tail -30 "$work/python-package.log"; log "installing the Python package failed"; exit 1; }
# The CLI entry point, which conda makes from the recipe at install time.
printf '#!%s\nimport sys\nfrom torch_tensorrt_executorch_runtime.cli import main\nsys.exit(main())\n' \
  "$CONDA_PREFIX/bin/python" > "$CONDA_PREFIX/bin/torch-tensorrt-executorch"
chmod +x "$CONDA_PREFIX/bin/torch-tensorrt-executorch"
log "installed into $CONDA_PREFIX; pixi run test-native (a part of pixi run test) checks it there"
