"""``lightning.pytorch.utilities.model_helpers``'s path (imports only)."""

from __future__ import annotations

from ...core.overridden import is_overridden
from ...demos.vision import get_torchvision_model

__all__ = ["get_torchvision_model", "is_overridden"]
