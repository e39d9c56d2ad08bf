"""``lightning.pytorch.plugins.precision.precision_plugin``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.base import Precision
from ....precision.lightning.deprecated import PrecisionPlugin

__all__ = ["Precision", "PrecisionPlugin"]
