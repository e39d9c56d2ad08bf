"""``lightning.fabric.utilities.types``'s path (imports only)."""

from __future__ import annotations

from ...core.types import CollectibleGroup, Optimizable, Steppable, UntypedStorage

__all__ = ["CollectibleGroup", "Optimizable", "Steppable", "UntypedStorage"]
