"""``lightning.fabric.plugins.precision.precision``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.base import Precision

__all__ = ["Precision"]
