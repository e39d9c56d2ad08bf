"""``lightning.fabric.plugins.precision.transformer_engine``'s path (imports only)."""

from __future__ import annotations

from ....precision.lightning.quantized import TransformerEnginePrecision

__all__ = ["TransformerEnginePrecision"]
