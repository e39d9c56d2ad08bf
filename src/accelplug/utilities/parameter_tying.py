"""``lightning.pytorch.utilities.parameter_tying``'s path: tied weights found and restored.

They live in :mod:`accelplug.strategies.parameter_tying`.
"""

from __future__ import annotations

from ..strategies.parameter_tying import (
    find_shared_parameters,
    set_shared_parameters,
)

__all__ = [
    "find_shared_parameters",
    "set_shared_parameters",
]
