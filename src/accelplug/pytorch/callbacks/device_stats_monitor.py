"""``lightning.pytorch.callbacks.device_stats_monitor``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.monitors import DeviceStatsMonitor, _prefix_metric_keys  # noqa: F401 - its key helper, as Lightning's

__all__ = ["DeviceStatsMonitor"]
