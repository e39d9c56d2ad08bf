"""``lightning.pytorch.utilities.warnings``' names: the warning category for "this may be a mistake".

They live in :mod:`accelplug.errors`.
"""

from __future__ import annotations

from ..errors import (
    PossibleUserWarning,
    disable_possible_user_warnings,
)

__all__ = [
    "PossibleUserWarning",
    "disable_possible_user_warnings",
]
