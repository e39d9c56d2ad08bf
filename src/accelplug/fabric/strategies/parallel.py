"""``lightning.fabric.strategies.parallel``'s path (imports only)."""

from __future__ import annotations

from ...strategies.parallel import ParallelStrategy

__all__ = ["ParallelStrategy"]
