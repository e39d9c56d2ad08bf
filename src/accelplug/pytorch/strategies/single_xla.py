"""``lightning.pytorch.strategies.single_xla``'s path (imports only)."""

from __future__ import annotations

from ...backends import SingleDeviceXLAStrategy

__all__ = ["SingleDeviceXLAStrategy"]
