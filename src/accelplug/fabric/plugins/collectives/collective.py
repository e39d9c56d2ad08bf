"""``lightning.fabric.plugins.collectives.collective``'s path (imports only)."""

from __future__ import annotations

from ....distributed.collective import Collective

__all__ = ["Collective"]
