"""The torch/exir half of the packer: imported only when something is packed.

Each engine is stood for by a custom op, `tte_pack::engine(inputs, key)`,
whose fake kernel computes the output shapes from the engine's specs (found
by `key`), so torch.export traces a graph of engine calls with real dynamic
dims. `_EnginePartitioner` gives every engine call its own delegation tag and
`TensorRTBackend.preprocess` writes that engine's blob, with the bindings in
the delegate's argument order.
"""

from __future__ import annotations

import contextlib
import itertools
import operator
import tempfile
import threading
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast, final

import torch
from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult
from executorch.exir.backend.compile_spec_schema import CompileSpec
from executorch.exir.backend.partitioner import DelegationSpec, Partitioner, PartitionResult
from executorch.exir.passes import MemoryPlanningPass
from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
from executorch.exir.passes.propagate_device_config import PropagateDeviceConfig

from .. import _dtypes
from .plan import MethodPlan
from .specs import DimRange, EngineSpec, PackError, TensorSpec, parse_reference, upper_bound

OP_NAMESPACE = "tte_pack"
OP_SCHEMA_NAME = f"{OP_NAMESPACE}::engine"
# Prefix of the mutable buffers that hold aliased inputs ("buffer" alias mode);
# InitializedMutableBufferPass matches it to serialize their zero initial state.
STATE_PREFIX = "tte_alias_state_"
EPILOGUE_PREFIX = "epilogue_"

# Engines of the pack in progress, by op key. One pack at a time (_lock).
_engines: dict[str, EngineSpec] = {}
_lock = threading.Lock()
_keys = itertools.count()


def _output_shape(
    spec: EngineSpec, output: TensorSpec, inputs: Sequence[torch.Tensor], data_dependent=None
) -> list:
    """The output's shape; `data_dependent(bound)` gives a "<=N" dim (eager: N)."""
    positions = {s.name: i for i, s in enumerate(spec.inputs)}
    shape = []
    for dim in output.shape:
        bound = upper_bound(dim)
        if bound is not None:
            shape.append(data_dependent(bound) if data_dependent is not None else bound)
        elif isinstance(dim, str):
            name, index = parse_reference(dim)
            shape.append(inputs[positions[name]].shape[index])
        else:
            shape.append(dim)
    return shape


def _spec_for(key: str) -> EngineSpec:
    try:
        return _engines[key]
    except KeyError:
        raise RuntimeError(f"{OP_SCHEMA_NAME} called outside of pack_program (unknown engine key '{key}')") from None


@torch.library.custom_op(OP_SCHEMA_NAME, mutates_args=())
def engine_op(inputs: list[torch.Tensor], key: str) -> list[torch.Tensor]:
    # Eager calls only happen when someone runs the traced module by hand; the
    # engine itself never runs here, so its outputs are zeros of the right shape.
    spec = _spec_for(key)
    return [torch.zeros(_output_shape(spec, o, inputs), dtype=_dtypes.torch_dtype(o.dtype)) for o in spec.outputs]


@engine_op.register_fake
def _engine_op_fake(inputs, key):
    spec = _spec_for(key)
    # A data-dependent dim is an unbacked size in [0, N]: exir plans its
    # buffer for N and marks the tensor DYNAMIC_BOUND.
    def data_dependent(bound):
        return torch.library.get_ctx().new_dynamic_size(min=0, max=bound)

    return [
        inputs[0].new_empty(_output_shape(spec, o, inputs, data_dependent), dtype=_dtypes.torch_dtype(o.dtype))
        for o in spec.outputs
    ]


def _is_engine_node(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return node.op == "call_function" and schema is not None and schema.name == OP_SCHEMA_NAME


@final
class TensorRTBackend(BackendDetails):
    """Writes one engine's blob; exir finds it by this class name."""

    @staticmethod
    def preprocess(edge_program, compile_specs: list[CompileSpec]) -> PreprocessResult:
        graph = edge_program.graph_module.graph
        nodes = [node for node in graph.nodes if _is_engine_node(node)]
        if len(nodes) != 1:
            raise PackError(f"a TensorRTBackend partition holds exactly one engine, found {len(nodes)}")
        node = nodes[0]
        spec = _spec_for(node.args[1])
        # Delegate arguments are the partition's placeholders in graph order,
        # which need not be the engine's input order.
        slots = {n: i for i, n in enumerate(n for n in graph.nodes if n.op == "placeholder")}
        input_nodes = list(node.args[0])
        if len(slots) != len(input_nodes) or any(n not in slots for n in input_nodes):
            raise PackError("engine inputs are not the delegate's arguments one to one")
        order = sorted(range(len(input_nodes)), key=lambda i: slots[input_nodes[i]])
        input_names = [spec.inputs[i].name for i in order]
        output_node = next(n for n in graph.nodes if n.op == "output")
        indices: list[int] = []
        for returned in output_node.args[0]:
            if not (
                isinstance(returned, torch.fx.Node)
                and returned.target is operator.getitem
                and returned.args[0] is node
            ):
                raise PackError(f"delegate output {returned} is not an output of the engine")
            # The index of a getitem on the engine call's tuple of results: an int.
            indices.append(cast(int, returned.args[1]))
        if sorted(indices) != list(range(len(spec.outputs))):
            raise PackError(f"delegate returns engine outputs {indices}; every output must be returned once")
        output_names = [spec.outputs[i].name for i in indices]
        return PreprocessResult(processed_bytes=spec.blob(input_names, output_names))


# The delegate id in the program: exir takes it from the class name.
BACKEND_ID = TensorRTBackend.__name__


class _EnginePartitioner(Partitioner):
    """One delegate per engine call, with that engine's compile specs."""

    def __init__(self, compile_specs: dict[str, list[CompileSpec]]):
        super().__init__()
        self._compile_specs = compile_specs

    def partition(self, exported_program) -> PartitionResult:
        tags: dict[str, Any] = {}  # delegation tag -> DelegationSpec
        for node in exported_program.graph_module.graph.nodes:
            if not _is_engine_node(node):
                continue
            tag = f"tensorrt_{len(tags)}"
            node.meta["delegation_tag"] = tag
            for user in node.users:
                user.meta["delegation_tag"] = tag
            tags[tag] = DelegationSpec(BACKEND_ID, self._compile_specs[node.args[1]])
        # Aliased inputs held as buffers stay untagged: they are the method's
        # mutable state, owned above the delegate (as upstream keeps KV caches).
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)


@contextlib.contextmanager
def _only_our_backend():
    """Hide other classes named TensorRTBackend (e.g. Torch-TensorRT's) from exir's lookup.

    exir resolves a backend id with BackendDetails.__subclasses__(); a class
    attribute of that name shadows type's method for the duration.
    """
    original = type.__subclasses__
    previous = BackendDetails.__dict__.get("__subclasses__")

    def visible():
        return [c for c in original(BackendDetails) if c.__name__ != BACKEND_ID or c is TensorRTBackend]

    BackendDetails.__subclasses__ = staticmethod(visible)
    try:
        yield
    finally:
        if previous is None:
            del BackendDetails.__subclasses__
        else:
            BackendDetails.__subclasses__ = previous


class _MethodModule(torch.nn.Module):
    def __init__(self, plan: MethodPlan, keys: dict[int, str]):
        super().__init__()
        self._plan = plan
        self._keys = keys
        self._state = {}
        for i, spec in enumerate(plan.buffers):
            attribute = f"{STATE_PREFIX}{i}"
            # A buffer has a static shape (plan_program refuses dynamic ones): ints only.
            shape = cast(list[int], list(spec.shape))
            self.register_buffer(attribute, torch.zeros(shape, dtype=_dtypes.torch_dtype(spec.dtype)))
            self._state[spec.name] = attribute
        self._epilogue = {}
        for output_index, values in plan.epilogue:
            attribute = f"{EPILOGUE_PREFIX}{output_index}"
            dtype = _dtypes.torch_dtype(plan.outputs[output_index].dtype)
            setattr(self, attribute, torch.nn.Parameter(torch.tensor(values, dtype=dtype), requires_grad=False))
            self._epilogue[output_index] = attribute

    def forward(self, *inputs):
        values = dict(zip((spec.name for spec in self._plan.inputs), inputs, strict=False))
        for name, attribute in self._state.items():
            values[name] = getattr(self, attribute)
        for engine in self._plan.engines:
            args = [values[spec.name] for spec in engine.spec.inputs]
            results = torch.ops.tte_pack.engine(args, self._keys[engine.index])
            for spec, result in zip(engine.spec.outputs, results, strict=False):
                values[spec.name] = result
        for output, source in self._plan.mutations:
            getattr(self, self._state[source]).copy_(values[output])
        results = []
        for i, spec in enumerate(self._plan.outputs):
            result = values[spec.name]
            if i in self._epilogue:
                result = result * getattr(self, self._epilogue[i])
            results.append(result)
        return tuple(results)


def _example_size(dim) -> int:
    if isinstance(dim, int):
        return dim
    low, opt, high = dim
    # torch.export specializes example sizes 0 and 1.
    return opt if opt >= 2 else max(2, low)


def _export_method(plan: MethodPlan, keys: dict[int, str]):
    examples = []
    shapes = []
    dim_names = itertools.count()
    for spec in plan.inputs:
        examples.append(torch.zeros([_example_size(d) for d in spec.shape], dtype=_dtypes.torch_dtype(spec.dtype)))
        dynamic = {}
        for i, dim in enumerate(spec.shape):
            if not isinstance(dim, int):
                dim_range = cast(DimRange, dim)  # an input's dim: an int or a range (EngineSpec)
                dynamic[i] = torch.export.Dim(f"d{next(dim_names)}", min=dim_range[0], max=dim_range[2])
        shapes.append(dynamic or None)
    module = _MethodModule(plan, keys)
    try:
        return torch.export.export(module, tuple(examples), dynamic_shapes=(tuple(shapes),), strict=False)
    except Exception as error:  # torch.export reports constraint problems with many types
        raise PackError(f"method '{plan.name}': torch.export failed on the engine graph: {error}") from error


def _backend_config(plans: Sequence[MethodPlan], data_name: str | None) -> ExecutorchBackendConfig:
    memory_planning = {}
    propagate = {}
    for plan in plans:
        if plan.placement == "device_resident":
            memory_planning[plan.name] = MemoryPlanningPass(alloc_graph_input=False, alloc_graph_output=False)
            propagate[plan.name] = PropagateDeviceConfig(
                skip_h2d_for_method_inputs=True, skip_d2h_for_method_outputs=True
            )
        else:
            memory_planning[plan.name] = MemoryPlanningPass()
            propagate[plan.name] = PropagateDeviceConfig()
    passes = []
    if any(plan.buffers for plan in plans):
        passes.append(InitializedMutableBufferPass([STATE_PREFIX]))
    return ExecutorchBackendConfig(
        passes=passes,
        memory_planning_pass=memory_planning,
        propagate_device_config=propagate,
        external_constants=(lambda node: data_name) if data_name is not None else False,
    )


def _data_files(manager) -> dict[str, bytes]:
    # exir keeps external data as Cords keyed by tag; write_tensor_data_to_file
    # is its public way out.
    if not getattr(manager, "_tensor_data", None):
        return {}
    with tempfile.TemporaryDirectory() as scratch:
        manager.write_tensor_data_to_file(scratch)
        return {path.name: path.read_bytes() for path in sorted(Path(scratch).iterdir())}


def lower(
    plans: Sequence[MethodPlan], *, epilogue_backend: str, data_name: str | None
) -> tuple[bytes, dict[str, bytes]]:
    """The .pte bytes of the planned methods and the .ptd files they need ({file name: bytes})."""
    with _lock:
        keys_by_method = {}
        compile_specs = {}
        try:
            for plan in plans:
                keys = {}
                for engine in plan.engines:
                    key = f"engine{next(_keys)}"
                    _engines[key] = engine.spec
                    keys[engine.index] = key
                    compile_specs[key] = [CompileSpec(k, v) for k, v in engine.spec.compile_specs(plan.placement)]
                keys_by_method[plan.name] = keys
            exported = {plan.name: _export_method(plan, keys_by_method[plan.name]) for plan in plans}
            partitioners = {}
            for plan in plans:
                partitioners[plan.name] = [_EnginePartitioner(compile_specs)]
                if plan.epilogue and epilogue_backend == "xnnpack":
                    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

                    partitioners[plan.name].append(XnnpackPartitioner())
            with _only_our_backend():
                edge = to_edge_transform_and_lower(
                    exported,
                    partitioner=partitioners,
                    compile_config=EdgeCompileConfig(_check_ir_validity=False),
                )
            for plan in plans:
                _check_lowered(edge.exported_program(plan.name), plan, epilogue_backend)
            with warnings.catch_warnings():
                # exir warns that mutated buffers start undefined; ours are
                # serialized (InitializedMutableBufferPass).
                warnings.filterwarnings("ignore", message="Mutation on a buffer in the model is detected")
                manager = edge.to_executorch(_backend_config(plans, data_name))
            return bytes(manager.buffer), _data_files(manager)
        finally:
            for keys in keys_by_method.values():
                for key in keys.values():
                    _engines.pop(key, None)


def _check_lowered(program, plan: MethodPlan, epilogue_backend: str) -> None:
    backends = []
    for node in program.graph_module.graph.nodes:
        if _is_engine_node(node):
            raise PackError(f"method '{plan.name}': an engine call was not delegated to TensorRTBackend")
        if node.op == "get_attr":
            module = getattr(program.graph_module, node.target, None)
            backend_id = getattr(module, "backend_id", None)
            if backend_id is not None:
                backends.append(backend_id)
    if backends.count(BACKEND_ID) != len(plan.engines):
        raise PackError(
            f"method '{plan.name}': expected {len(plan.engines)} TensorRTBackend delegates, "
            f"got {backends.count(BACKEND_ID)}"
        )
    if plan.epilogue and epilogue_backend == "xnnpack" and "XnnpackBackend" not in backends:
        dtypes = sorted({plan.outputs[i].dtype for i, _ in plan.epilogue})
        raise PackError(
            f"method '{plan.name}': XNNPACK did not take the epilogue (output dtypes {', '.join(dtypes)}); "
            "XNNPACK multiplies float32 and float16, use epilogue_backend='portable' for others"
        )
