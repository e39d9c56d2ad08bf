"""``lightning.pytorch.serve.servable_module_validator``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.serving import ServableModule, ServableModuleValidator

__all__ = ["ServableModule", "ServableModuleValidator"]
