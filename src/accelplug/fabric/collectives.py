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

from ..data.batches import apply_to_tensors
from ..distributed.collectives import all_reduce as _reduce_tensor
from ..distributed.collectives import broadcast, distributed, gather_tensor, reduce_op_for

__all__ = ["all_gather", "all_reduce", "broadcast", "rank_zero_first"]


def all_reduce(data: Any, group: Any = None, reduce_op: Any = "mean") -> Any:
    """Each tensor of ``data`` reduced over the processes, in place (``data`` itself with one process)."""
    reduce_op_for(reduce_op)  # a wrong name is refused on one process too
    if not distributed():
        return data
    return apply_to_tensors(data, lambda tensor: _reduce_tensor(tensor, group, reduce_op))


def all_gather(data: Any, group: Any = None, sync_grads: bool = False) -> Any:
    return apply_to_tensors(data, lambda tensor: gather_tensor(tensor, group, sync_grads))


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
