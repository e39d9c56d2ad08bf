"""``lightning.pytorch.plugins.precision.fsdp``'s path: ``FSDPPrecision``.

They live in :mod:`accelplug.precision.lightning.fsdp`.
"""

from __future__ import annotations

from ...precision.lightning.fsdp import (
    FSDPPrecision,
)

__all__ = [
    "FSDPPrecision",
]
