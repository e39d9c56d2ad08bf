"""Gathering tensors from every process, shared by ``LightningModule.all_gather`` (through the strategy) and Fabric.

torch.distributed's own ``all_gather`` on the process group the strategy created, stacked on a new first
dimension; without a process group the tensor comes back as it is (no dimension added), as in Lightning.
``sync_grads=True`` gathers through an autograd function whose backward hands each process the summed
gradient of its own part, so a loss computed on the gathered tensor trains every rank's inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

__all__ = ["apply_to_tensors", "as_tensors", "distributed", "gather_tensor"]


def distributed() -> bool:
    """Whether a process group exists (collectives talk to other processes)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


def apply_to_tensors(data: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``data`` with ``fn`` applied to every tensor in it (dicts, lists, tuples and named tuples kept)."""
    if isinstance(data, torch.Tensor):
        return fn(data)
    if isinstance(data, tuple):
        items = [apply_to_tensors(x, fn) for x in data]
        return type(data)(*items) if hasattr(data, "_fields") else tuple(items)
    if isinstance(data, list):
        return [apply_to_tensors(x, fn) for x in data]
    if isinstance(data, dict):
        return type(data)({k: apply_to_tensors(v, fn) for k, v in data.items()})
    return data


#: Lightning's conversions: a bool becomes uint8 (NCCL has no bool), an int int32, a float float32.
_NUMBER_DTYPES = ((bool, torch.uint8), (int, torch.int32), (float, torch.float32))


def as_tensors(data: Any, device: torch.device) -> Any:
    """Numbers and NumPy arrays made tensors (Lightning's dtypes) and every tensor moved to ``device``."""
    for kind, dtype in _NUMBER_DTYPES:
        if isinstance(data, kind):
            return torch.tensor(data, dtype=dtype, device=device)
    if type(data).__name__ == "ndarray" and type(data).__module__ == "numpy":
        return torch.from_numpy(data).to(device)
    if isinstance(data, torch.Tensor):
        return data.to(device)
    if isinstance(data, tuple):
        items = [as_tensors(x, device) for x in data]
        return type(data)(*items) if hasattr(data, "_fields") else tuple(items)
    if isinstance(data, list):
        return [as_tensors(x, device) for x in data]
    if isinstance(data, dict):
        return type(data)({k: as_tensors(v, device) for k, v in data.items()})
    return data


def gather_tensor(tensor: torch.Tensor, group: Any = None, sync_grads: bool = False) -> torch.Tensor:
    """``tensor`` from every process of ``group`` (default: all), stacked; ``tensor`` itself without a group."""
    if not distributed():
        return tensor
    import torch.distributed as dist

    group = dist.group.WORLD if group is None else group
    tensor = tensor.contiguous()
    if sync_grads:
        return _GatherWithGradients.apply(tensor, group)  # type: ignore[no-any-return,no-untyped-call]
    parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group))]
    dist.all_gather(parts, tensor, group=group)
    return torch.stack(parts)


class _GatherWithGradients(torch.autograd.Function):
    """``all_gather`` whose backward sends each process the gradient of its own part, summed over processes."""

    @staticmethod
    def forward(ctx: Any, tensor: torch.Tensor, group: Any) -> torch.Tensor:
        import torch.distributed as dist

        ctx.group = group
        parts = [torch.empty_like(tensor) for _ in range(dist.get_world_size(group))]
        dist.all_gather(parts, tensor, group=group)
        return torch.stack(parts)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        import torch.distributed as dist

        grad = grad.contiguous().clone()
        dist.all_reduce(grad, op=dist.ReduceOp.SUM, group=ctx.group)
        return grad[dist.get_rank(ctx.group)], None
