"""``lightning.fabric.utilities.exceptions``'s import path: accelplug's one ``MisconfigurationException``."""

from __future__ import annotations

from ...errors import MisconfigurationException

__all__ = ["MisconfigurationException"]
