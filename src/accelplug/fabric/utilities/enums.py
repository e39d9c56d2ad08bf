"""``lightning.fabric.utilities.enums``'s path (imports only)."""

from __future__ import annotations

from ...enums import LightningEnum

__all__ = ["LightningEnum"]
