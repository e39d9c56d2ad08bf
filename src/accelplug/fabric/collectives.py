"""Fabric's collectives: ``all_reduce``, ``all_gather``, ``broadcast`` and ``rank_zero_first``.

torch.distributed's own operations on the process group the strategy created; with one process (no group)
each is the identity, as in Lightning: ``all_gather`` then adds no leading dimension, ``all_reduce`` returns
its input. ``all_reduce`` works in place like Lightning's, and averages over gloo (which has no ``AVG``) by
summing and dividing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import torch

from ..data.batches import apply_to_tensors
from ..distributed.collectives import distributed, gather_tensor
from ..errors import MisconfigurationException, did_you_mean

__all__ = ["all_gather", "all_reduce", "broadcast", "rank_zero_first"]

_OPS = ("mean", "avg", "sum", "max", "min", "product")


def _reduce_op(reduce_op: Any) -> tuple[Any, bool]:
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


def all_reduce(data: Any, group: Any = None, reduce_op: Any = "mean") -> Any:
    op, average = _reduce_op(reduce_op)
    if not distributed():
        return data
    import torch.distributed as dist

    group = dist.group.WORLD if group is None else group
    size = dist.get_world_size(group)

    def reduce(tensor: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(tensor, op=op, group=group)
        if not average:
            return tensor
        if not torch.is_floating_point(tensor):
            return tensor.copy_(tensor / size)
        return tensor.div_(size)

    return apply_to_tensors(data, reduce)


def all_gather(data: Any, group: Any = None, sync_grads: bool = False) -> Any:
    return apply_to_tensors(data, lambda tensor: gather_tensor(tensor, group, sync_grads))


def broadcast(obj: Any, src: int = 0) -> Any:
    if not distributed():
        return obj
    import torch.distributed as dist

    holder = [obj]
    dist.broadcast_object_list(holder, src=src)
    return holder[0]


@contextlib.contextmanager
def rank_zero_first(rank: int) -> Iterator[None]:
    """Rank 0 (``rank`` is the global or local rank) runs the block first, the others after it finished.

    The wait uses a gloo group of its own with a timeout of days, because what rank 0 does first (a download)
    may take far longer than the default group's collective timeout.
    """
    if not distributed():
        yield
        return
    import torch.distributed as dist

    group = dist.new_group(backend="gloo", timeout=timedelta(days=365))
    try:
        if rank > 0:
            dist.barrier(group=group)
        yield
        if rank == 0:
            dist.barrier(group=group)
    finally:
        dist.destroy_process_group(group)
