"""``lightning.fabric.strategies.strategy``'s path (imports only)."""

from __future__ import annotations

from ...strategies.base import Strategy

__all__ = ["Strategy"]
