"""The main job: build a tiny TensorRT engine (y = x + 1) with whatever TensorRT
builder is installed, pack it into an ExecuTorch .pte, inspect it, and run it,
or say exactly why it cannot run on this machine.

Usage: python scripts/demo.py [OUT_DIR]   (default build/demo)
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

BUILDERS = ("tensorrt", "tensorrt_rtx")


def find_builder():
    for name in BUILDERS:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    sys.exit("no TensorRT builder installed: pip install tensorrt-cu13 (needs NVIDIA's index) "
             "or pip install tensorrt-rtx-cu13 (builds engines without a GPU)")


def cuda_device_count() -> int:
    import torch_tensorrt_executorch_runtime as tte

    return tte.cuda_device_count()


def build_engine(trt) -> bytes:
    import numpy as np

    logger = trt.Logger(trt.Logger.WARNING)
    builder = trt.Builder(logger)
    network = builder.create_network(0)
    x = network.add_input("x", trt.float32, (2, 3))
    one = network.add_constant((1, 1), trt.Weights(np.ones((1, 1), dtype=np.float32)))
    y = network.add_elementwise(x, one.get_output(0), trt.ElementWiseOperation.SUM).get_output(0)
    y.name = "y"
    network.mark_output(y)
    config = builder.create_builder_config()
    if trt.__name__ == "tensorrt_rtx":
        # TensorRT-RTX builds ahead of time on the CPU for a chosen GPU
        # generation; CURRENT needs a GPU to ask.
        config.num_compute_capabilities = 1
        cc = trt.ComputeCapability.CURRENT if cuda_device_count() > 0 else trt.ComputeCapability.SM89
        config.set_compute_capability(cc, 0)
    plan = builder.build_serialized_network(network, config)
    if plan is None:
        sys.exit(f"{trt.__name__} {trt.__version__} failed to build the engine (see its log above)")
    return bytes(plan)


def main(out: Path) -> int:
    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    out.mkdir(parents=True, exist_ok=True)
    trt = find_builder()
    print(f"[demo] building y = x + 1 with {trt.__name__} {trt.__version__}")
    plan = build_engine(trt)
    (out / "tiny.plan").write_bytes(plan)
    pte = out / "tiny.pte"
    pack_program(pte, [EngineSpec(plan, [TensorSpec("x", "float32", (2, 3))], [TensorSpec("y", "float32", (2, 3))])])
    print(f"[demo] packed {len(plan)} engine bytes into {pte} ({pte.stat().st_size} bytes)")
    cli = [sys.executable, "-m", "torch_tensorrt_executorch_runtime"]
    print("[demo] inspect:", flush=True)
    subprocess.run(cli + ["inspect", str(pte)], check=True)
    print("[demo] run:", flush=True)
    run = subprocess.run(cli + ["run", str(pte), "--num-runs", "10"], capture_output=True, text=True)
    sys.stdout.write(run.stdout)
    if run.returncode == 0:
        print("[demo] the engine ran on this machine")
        return 0
    reason = (run.stderr.strip().splitlines() or ["(no message)"])[-1]
    print(f"[demo] the engine cannot run on this machine: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("build/demo")))
