"""``lightning.fabric.strategies.registry``'s path (imports only)."""

from __future__ import annotations

from ...registry_views import STRATEGY_REGISTRY

__all__ = ["STRATEGY_REGISTRY"]
