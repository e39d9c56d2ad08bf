"""``lightning.fabric.accelerators.registry``'s path (imports only)."""

from __future__ import annotations

from ...registry_views import ACCELERATOR_REGISTRY

__all__ = ["ACCELERATOR_REGISTRY"]
