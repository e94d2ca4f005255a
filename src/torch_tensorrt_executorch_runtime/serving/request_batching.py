"""Requests concatenated along dim 0 into one run, and the outputs split back.

Every tensor is a numpy array or a torch tensor (on the device where the
server gave device tensors); a batch is made in the library of its tensors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def _is_numpy(value) -> bool:
    return type(value).__module__ == "numpy"


def rows(tensor) -> int:
    """Size of dim 0 (0 for a scalar)."""
    shape = tuple(tensor.shape)
    return shape[0] if shape else 0


def concatenate(requests: Sequence[Sequence]) -> list:
    """One input list from several requests' inputs (same order in each): input i of every request, along dim 0."""
    if len(requests) == 1:
        return list(requests[0])
    batched: list[Any] = []  # numpy arrays or torch tensors
    for column in zip(*requests, strict=False):
        if all(_is_numpy(t) for t in column):
            import numpy

            batched.append(numpy.concatenate(column, axis=0))
        else:
            import torch

            batched.append(torch.cat([torch.as_tensor(t) for t in column], dim=0))
    return batched


def split(outputs: Sequence, sizes: Sequence[int]) -> list[list]:
    """Per request (dim-0 sizes `sizes`, in order), its slice of every output."""
    if len(sizes) == 1:
        return [list(outputs)]
    total = sum(sizes)
    for tensor in outputs:
        if rows(tensor) != total:
            raise ValueError(
                f"an output has {rows(tensor)} rows in dim 0 for a batch of {total}: the program does not keep "
                "dim 0 as the batch, so requests cannot be batched (repository made without --max-batch?)"
            )
    per_request: list[list] = [[] for _ in sizes]
    for tensor in outputs:
        start = 0
        for i, size in enumerate(sizes):
            per_request[i].append(tensor[start : start + size])
            start += size
    return per_request
