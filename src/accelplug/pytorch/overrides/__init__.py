"""``lightning.pytorch.overrides``'s path (imports only): its ``distributed`` module holds the public names."""

from __future__ import annotations

from ..._import_paths import lazy_submodules

__all__ = ["distributed"]

__getattr__ = lazy_submodules(__name__, ("distributed",))
