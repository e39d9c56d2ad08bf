"""``lightning.pytorch.callbacks.device_stats_monitor``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.monitors import DeviceStatsMonitor

__all__ = ["DeviceStatsMonitor"]
