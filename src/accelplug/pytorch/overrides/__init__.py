"""``lightning.pytorch.overrides``'s path (imports only): its ``distributed`` module is the one with public names."""

from __future__ import annotations

__all__: list[str] = []
