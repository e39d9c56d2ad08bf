"""``lightning.fabric.utilities.warnings``'s path (imports only)."""

from __future__ import annotations

from ...errors import PossibleUserWarning, disable_possible_user_warnings

__all__ = ["PossibleUserWarning", "disable_possible_user_warnings"]
