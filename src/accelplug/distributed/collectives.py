"""Collectives over every process, shared by the strategies (``LightningModule.all_gather``, ``strategy.reduce``,
``strategy.broadcast``) and Fabric (``fabric.all_reduce``...).

torch.distributed's own operations on the process group the strategy created; with one process (no group) each
is the identity, as in Lightning: ``all_gather`` then adds no leading dimension, ``all_reduce`` returns its input.
``all_gather`` stacks on a new first dimension; ``sync_grads=True`` gathers through an autograd function whose
backward hands each process the summed gradient of its own part, so a loss computed on the gathered tensor trains
every rank's inputs. ``all_reduce`` works in place like Lightning's, and averages over gloo (which has no ``AVG``)
by summing and dividing.
"""

from __future__ import annotations

from typing import Any

import torch

from ..errors import MisconfigurationException, did_you_mean

__all__ = ["all_reduce", "broadcast", "distributed", "gather_tensor", "reduce_op_for"]


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


_OPS = ("mean", "avg", "sum", "max", "min", "product")


def reduce_op_for(reduce_op: Any) -> tuple[Any, bool]:
    """torch's ``ReduceOp`` for ``reduce_op`` and whether to divide by the world size afterwards."""
    import torch.distributed as dist

    if reduce_op is None:
        return dist.ReduceOp.SUM, False
    if not isinstance(reduce_op, str):
        return reduce_op, False
    name = reduce_op.strip().lower()
    if name not in _OPS:
        raise MisconfigurationException(
            f"all_reduce(reduce_op={reduce_op!r}) is not a reduction. Accepted: {list(_OPS)} or a "
            f"torch.distributed.ReduceOp.{did_you_mean(name, _OPS)}"
        )
    if name in ("mean", "avg"):
        return dist.ReduceOp.SUM, True  # AVG exists only on some backends (not gloo); sum / n works on all
    return getattr(dist.ReduceOp, "PRODUCT" if name == "product" else name.upper()), False


def all_reduce(tensor: torch.Tensor, group: Any = None, reduce_op: Any = "mean") -> torch.Tensor:
    """``tensor`` reduced over the processes of ``group`` (default: all), in place; ``tensor`` itself without a
    process group (``reduce_op`` is checked either way)."""
    op, average = reduce_op_for(reduce_op)
    if not distributed():
        return tensor
    import torch.distributed as dist

    group = dist.group.WORLD if group is None else group
    dist.all_reduce(tensor, op=op, group=group)
    if not average:
        return tensor
    size = dist.get_world_size(group)
    if not torch.is_floating_point(tensor):
        return tensor.copy_(tensor / size)
    return tensor.div_(size)


def broadcast(obj: Any, src: int = 0) -> Any:
    if not distributed():
        return obj
    import torch.distributed as dist

    holder = [obj]
    dist.broadcast_object_list(holder, src=src)
    return holder[0]
