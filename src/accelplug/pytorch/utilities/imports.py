"""``lightning.pytorch.utilities.imports``' path: the flags of ``accelplug.utilities.imports``, the same objects."""

from __future__ import annotations

from typing import Any

from ...utilities import imports as _flags

__all__: list[str] = []  # private names, as in Lightning: reached by explicit import only


def __getattr__(name: str) -> Any:
    """``from ...utilities.imports import _TORCHVISION_AVAILABLE`` after the import swap: the one object."""
    try:
        return getattr(_flags, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
