"""``lightning.pytorch.utilities.parsing``'s path: a hyper-parameter found wherever a project keeps it.

They live in :mod:`accelplug.tuner.attributes`.
"""

from __future__ import annotations

from ..tuner.attributes import (
    AttributeNotFound,
    lightning_getattr,
    lightning_hasattr,
    lightning_setattr,
)

__all__ = [
    "AttributeNotFound",
    "lightning_getattr",
    "lightning_hasattr",
    "lightning_setattr",
]
