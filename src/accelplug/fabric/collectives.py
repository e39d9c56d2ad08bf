"""Fabric's ``rank_zero_first``: rank 0 runs a block before the others (``all_reduce``, ``all_gather`` and
``broadcast`` go through the strategy's methods of those names, as in Lightning Fabric)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import timedelta

from ..distributed.collectives import distributed

__all__ = ["rank_zero_first"]


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
