"""``lightning.pytorch.utilities.exceptions``'s path: accelplug's one exception hierarchy."""

from __future__ import annotations

from ..errors import MisconfigurationException

__all__ = ["MisconfigurationException"]
