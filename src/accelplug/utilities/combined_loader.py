"""``lightning.pytorch.utilities.combined_loader``'s path: the ``CombinedLoader`` the Trainer itself uses."""

from __future__ import annotations

from ..data.combined_loader import CombinedLoader

__all__ = ["CombinedLoader"]
