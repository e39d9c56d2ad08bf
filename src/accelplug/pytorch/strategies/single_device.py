"""``lightning.pytorch.strategies.single_device``'s path (imports only)."""

from __future__ import annotations

from ...strategies.single_device import SingleDeviceStrategy

__all__ = ["SingleDeviceStrategy"]
