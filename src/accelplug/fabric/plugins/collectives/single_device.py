"""``lightning.fabric.plugins.collectives.single_device``'s path (imports only)."""

from __future__ import annotations

from ....distributed.collective import SingleDeviceCollective

__all__ = ["SingleDeviceCollective"]
