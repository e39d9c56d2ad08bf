"""Gathering tensors from every process, shared by ``LightningModule.all_gather`` (through the strategy) and Fabric.

torch.distributed's own ``all_gather`` on the process group the strategy created, stacked on a new first
dimension; without a process group the tensor comes back as it is (no dimension added), as in Lightning.
``sync_grads=True`` gathers through an autograd function whose backward hands each process the summed
gradient of its own part, so a loss computed on the gathered tensor trains every rank's inputs.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["distributed", "gather_tensor"]


def distributed() -> bool:
    """Whether a process group exists (collectives talk to other processes)."""
    import torch.distributed as dist

    return dist.is_available() and dist.is_initialized()


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
