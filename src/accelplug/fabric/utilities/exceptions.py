"""``lightning.fabric.utilities.exceptions``'s path (imports only)."""

from __future__ import annotations

from ...errors import MisconfigurationException

__all__ = ["MisconfigurationException"]
