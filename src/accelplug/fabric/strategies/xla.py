"""``lightning.fabric.strategies.xla``'s path (imports only)."""

from __future__ import annotations

from ...backends import XLAStrategy

__all__ = ["XLAStrategy"]
