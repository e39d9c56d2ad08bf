"""Distributed data parallel: one process per device, gradients all-reduced by torch.distributed."""

from __future__ import annotations

from .base import Strategy

__all__ = ["DDPStrategy"]


class DDPStrategy(Strategy):
    name = "ddp"
    description = "one process per device, gradients averaged with torch.distributed"
    is_distributed = True
