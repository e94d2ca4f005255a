"""Weight streaming (load option weight_streaming_budget), by the native provider's rules."""

from __future__ import annotations

import logging
from typing import Any

from ...errors import ExecutionError, InvalidArgumentError

logger = logging.getLogger("torch_tensorrt_executorch_runtime")


def apply_weight_streaming(engine: Any, budget: int | None) -> bool:
    """An explicit budget clamped to the streamable size, else TensorRT's own default left in place
    (streaming disabled, NvInferRuntime.h:3648); read back, since the binding drops the setter's result.
    Returns whether weights stream (enqueue then synchronizes and cannot be captured, NvInferRuntime.h:4642).
    Engine-wide: the first load's budget stays in force for every engine object sharing the engine."""
    streamable = int(getattr(engine, "streamable_weights_size", 0) or 0)
    if streamable <= 0:
        if budget is not None:
            logger.warning(
                "weight_streaming_budget=%d ignored: the engine was not built with weight streaming; "
                "all its weights stay on the device",
                budget,
            )
        return False
    if budget is not None and budget < 0:
        raise InvalidArgumentError(f"weight_streaming_budget must be a byte count >= 0, got {budget}")
    if budget is not None:
        wanted = min(int(budget), streamable)
        engine.weight_streaming_budget_v2 = wanted
        if int(engine.weight_streaming_budget_v2) != wanted:
            raise ExecutionError(
                f"TensorRT refused a weight streaming budget of {wanted} bytes (streamable weights: {streamable} bytes)"
            )
    applied = int(engine.weight_streaming_budget_v2)
    logger.info(
        "weight streaming: budget %d of %d streamable bytes (%s)",
        applied,
        streamable,
        "requested" if budget is not None else "TensorRT's default",
    )
    return applied < streamable
