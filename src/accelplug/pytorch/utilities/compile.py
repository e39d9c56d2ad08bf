"""``lightning.pytorch.utilities.compile``'s path (imports only)."""

from __future__ import annotations

from ...core.compiled import from_compiled, to_uncompiled

__all__ = ["from_compiled", "to_uncompiled"]
