"""``lightning.pytorch.serve.servable_module``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.serving import ServableModule

__all__ = ["ServableModule"]
