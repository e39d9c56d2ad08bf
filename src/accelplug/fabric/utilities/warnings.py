"""``lightning.fabric.utilities.warnings``'s import path: the warning of a setting that is probably a mistake."""

from __future__ import annotations

from ...errors import PossibleUserWarning, disable_possible_user_warnings

__all__ = ["PossibleUserWarning", "disable_possible_user_warnings"]
