#!/usr/bin/env bash
# The main job (README): set up, build and install the package, make sure a
# TensorRT builder is installed (TensorRT-RTX builds engines without a GPU),
# then build a tiny engine, pack it, inspect it and run it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup.sh
scripts/build.sh
py=.venv/bin/python
if ! $py -c "import tensorrt" 2>/dev/null && ! $py -c "import tensorrt_rtx" 2>/dev/null; then
  rtx="$($py -c "import json;v=json.load(open('versions.json'));print(f\"tensorrt-rtx-cu13>={v['tensorrt_rtx_min']},<{v['tensorrt_rtx_max_exclusive']}\")")"
  echo "[demo] no TensorRT builder installed; installing $rtx (about 100 MB)" >&2
  $py -m pip install -q "$rtx"
fi
exec $py scripts/demo.py "$@"
