"""Pack serialized TensorRT engines into ExecuTorch .pte programs.

Each engine becomes one `TensorRTBackend` delegate whose blob is byte-identical
to what Torch-TensorRT 2.14's exporter writes for the same metadata, so the
programs made here exercise a runtime exactly like upstream's files do.

    from torch_tensorrt_executorch_runtime.pack import EngineSpec, TensorSpec, pack_program

    engine = EngineSpec(plan_bytes,
                        inputs=[TensorSpec("x", "float32", [(1, 4, 8), 16])],
                        outputs=[TensorSpec("y", "float32", ["x:0", 16])])
    pack_program("model.pte", [engine], placement="device_planned")

Specs are checked here without torch; building needs torch and executorch's
exir, imported only then. Engines in one method are wired by tensor name: a
method input is an engine input that no earlier engine produces (in order of
first use), and the method outputs are the engine outputs that no later
engine consumes (in engine order, then output order).

Shapes: an input dim is an int or a (min, opt, max) range; ranges become
torch.export dims, so ExecuTorch plans their upper bound and the delegate
resizes outputs at run time. An output dim is an int or "input_name:dim",
the current size of a dim of one of the same engine's inputs.

Placements (ExecuTorch's device support, as Torch-TensorRT writes it):
- "host": no target_device compile spec; method I/O and delegate arguments
  are host memory, the delegate stages copies itself.
- "device_planned": compile spec target_device=cuda:<device_id>; exir's
  PropagateDevicePass inserts et_copy H2D/D2H ops and plans the delegate
  arguments in CUDA arenas, method I/O stays host.
- "device_resident": as device_planned, with
  PropagateDeviceConfig(skip_h2d_for_method_inputs=True,
  skip_d2h_for_method_outputs=True) and MemoryPlanningPass(alloc_graph_input=
  False, alloc_graph_output=False): method inputs and outputs are device
  memory the caller provides. Every method input must feed exactly one engine
  (an exir restriction), and no method output may have a data-dependent dim
  ("<=N"): exir still inserts a device-to-host copy for such an output and
  plans no memory for its source.

Aliased I/O (TR02): an engine output that TensorRT writes into one of its
inputs in place, e.g. a KV-cache update. `alias_mode` picks how the program
declares it:
- "buffer" (default, what Torch-TensorRT does for KV caches): the aliased
  input becomes a mutable buffer of the method, initialised to zeros, that
  persists across executions; the aliased output is declared a mutation of
  that buffer (ExecuTorch copies the delegate's aliased output back into it).
  Neither is a method input or output. Not available with "device_resident"
  (exir would run the write-back on device memory) and the input must be
  static and consumed by that one engine.
- "input": the aliased input stays a method input and the aliased output a
  method output. The delegate updates the input tensor in place: the
  caller's own buffer when the input is not memory-planned
  ("device_resident"), the method's planned copy of it otherwise; the
  updated value is also the aliased output.

Extra program content (the mixed-backend and external-data test programs):
- epilogue={"y": 2.0}: the method output "y" is returned multiplied by a
  constant tensor (a float gives shape [1]; a sequence of floats gives that
  vector, broadcast over the last dim). With epilogue_backend="xnnpack" the
  multiply is lowered to an XnnpackBackend delegate (float32/float16 only),
  with "portable" it stays an ExecuTorch CPU kernel.
- external_constants=True (or a name): the epilogue constants are stored in
  "<name>.ptd" beside the .pte (True: the .pte's stem) instead of in the
  .pte, looked up by their fully qualified name, "epilogue_<i>".

Backend lookup: exir finds a backend by class name, the first subclass of
BackendDetails called "TensorRTBackend" (and the last one on its multi-method
path). If Torch-TensorRT's own class is imported too, exir could pick it, so
while lowering, the packer hides every other class of that name from
BackendDetails.__subclasses__(). Packing holds a process-wide lock.
"""

from __future__ import annotations

from .build import EPILOGUE_BACKENDS, PackedProgram, build_program, pack_program
from .plan import ALIAS_MODES, PLACEMENTS, MethodPlan, plan_program
from .specs import DTYPES, EngineSpec, PackError, TensorSpec, this_platform

__all__ = [
    "ALIAS_MODES",
    "DTYPES",
    "EPILOGUE_BACKENDS",
    "EngineSpec",
    "MethodPlan",
    "PLACEMENTS",
    "PackError",
    "PackedProgram",
    "TensorSpec",
    "build_program",
    "pack_program",
    "plan_program",
    "this_platform",
]
