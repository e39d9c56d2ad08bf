"""``lightning.pytorch.utilities.combined_loader``'s path: the ``CombinedLoader`` the Trainer itself uses, and its
modes (under Lightning's private names, which projects type a ``mode`` argument with)."""

from __future__ import annotations

from ..data.combined_loader import MODES as _SUPPORTED_MODES
from ..data.combined_loader import CombinedLoader
from ..data.combined_loader import Mode as _LITERAL_SUPPORTED_MODES

__all__ = ["_LITERAL_SUPPORTED_MODES", "_SUPPORTED_MODES", "CombinedLoader"]
