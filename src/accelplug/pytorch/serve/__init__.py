"""``lightning.pytorch.serve``'s path (imports only)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...callbacks.serving import ServableModule, ServableModuleValidator

__all__ = ["ServableModule", "ServableModuleValidator"]

__getattr__ = lazy_submodules(__name__, ("servable_module", "servable_module_validator"))
