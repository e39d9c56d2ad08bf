"""``lightning.pytorch.accelerators.accelerator``'s path (imports only)."""

from __future__ import annotations

from ...accelerator import Accelerator

__all__ = ["Accelerator"]
