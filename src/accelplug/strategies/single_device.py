"""Everything on one device in this process: the base ``Strategy`` behaviour, unchanged."""

from __future__ import annotations

from .base import Strategy

__all__ = ["SingleDeviceStrategy"]


class SingleDeviceStrategy(Strategy):
    name = "single_device"
    description = "one device, one process"
